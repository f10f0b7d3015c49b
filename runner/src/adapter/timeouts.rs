//! How long the kit waits for an adapter, one set of options for every command that talks to
//! one: an answer to a case, and the answer to `start`, which a process that loads an
//! interpreter or a model needs more time for than any single case.

use asr_suite::protocol::ProtocolRole;
use std::time::Duration;

/// The timeouts as command-line options.
#[derive(Debug, Clone, clap::Args)]
pub struct TimeoutArgs {
    /// Seconds to wait for each answer [default: 5 for validator and reader cases, 60 for
    /// producer cases, which convert a whole source session].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Seconds to wait for the answer to `start`, each time the adapter is started.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_START_SECONDS)]
    pub start_timeout: f64,
}

/// The timeouts of a command that puts no producer case (`diff`, `fuzz`): the same options
/// as [`TimeoutArgs`], with the help a reader of their `--help` needs.
#[derive(Debug, Clone, clap::Args)]
pub struct StreamTimeoutArgs {
    /// Seconds to wait for each answer [default: 5].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Seconds to wait for the answer to `start`, each time the adapter is started.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_START_SECONDS)]
    pub start_timeout: f64,
}

impl StreamTimeoutArgs {
    /// The timeouts these options set.
    pub fn timeouts(&self) -> anyhow::Result<Timeouts> {
        TimeoutArgs {
            timeout: self.timeout,
            start_timeout: self.start_timeout,
        }
        .timeouts()
    }
}

/// The timeouts in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// For an answer to a validator or a reader case.
    pub answer: Duration,
    /// For an answer to a producer case.
    pub producer: Duration,
    /// For the answer to `start`.
    pub start: Duration,
}

/// The default wait for an answer to a validator or reader case, in seconds.
pub const DEFAULT_ANSWER_SECONDS: f64 = 5.0;
/// The default wait for an answer to a producer case, in seconds.
pub const DEFAULT_PRODUCER_SECONDS: f64 = 60.0;
/// The default wait for `started`, in seconds.
pub const DEFAULT_START_SECONDS: f64 = 30.0;

impl TimeoutArgs {
    /// The timeouts these options set; `--timeout` given sets every role's.
    pub fn timeouts(&self) -> anyhow::Result<Timeouts> {
        let seconds = |value: f64, option: &str| {
            anyhow::ensure!(
                value > 0.0 && value.is_finite() && value < 1e9,
                "{option} must be a positive number of seconds"
            );
            Ok(Duration::from_secs_f64(value))
        };
        Ok(Timeouts {
            answer: seconds(self.timeout.unwrap_or(DEFAULT_ANSWER_SECONDS), "--timeout")?,
            producer: seconds(
                self.timeout.unwrap_or(DEFAULT_PRODUCER_SECONDS),
                "--timeout",
            )?,
            start: seconds(self.start_timeout, "--start-timeout")?,
        })
    }
}

impl Timeouts {
    /// The wait for an answer to a case of this role.
    pub fn answer(self, role: ProtocolRole) -> Duration {
        match role {
            ProtocolRole::Producer => self.producer,
            ProtocolRole::Validator | ProtocolRole::Reader => self.answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(timeout: Option<f64>, start: f64) -> TimeoutArgs {
        TimeoutArgs {
            timeout,
            start_timeout: start,
        }
    }

    #[test]
    fn producers_get_longer_by_default_and_the_option_sets_every_role() {
        let default = args(None, DEFAULT_START_SECONDS).timeouts().expect("valid");
        assert_eq!(
            default.answer(ProtocolRole::Validator),
            Duration::from_secs(5)
        );
        assert_eq!(default.answer(ProtocolRole::Reader), Duration::from_secs(5));
        assert_eq!(
            default.answer(ProtocolRole::Producer),
            Duration::from_secs(60)
        );
        assert_eq!(default.start, Duration::from_secs(30));
        let given = args(Some(2.5), 7.0).timeouts().expect("valid");
        assert_eq!(
            given.answer(ProtocolRole::Producer),
            Duration::from_millis(2500)
        );
        assert_eq!(
            given.answer(ProtocolRole::Reader),
            Duration::from_millis(2500)
        );
        assert_eq!(given.start, Duration::from_secs(7));
    }

    #[test]
    fn a_timeout_that_is_no_duration_is_refused() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(args(Some(bad), 30.0).timeouts().is_err(), "{bad}");
            assert!(args(None, bad).timeouts().is_err(), "{bad}");
        }
    }
}
