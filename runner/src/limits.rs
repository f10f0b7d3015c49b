//! The kit's limits on untrusted input, one set for every command: the same options, the same
//! defaults, and the kit passes them on to its own reference adapter, so that the kit and its
//! reference never disagree about what is too long.

use asr_suite::check::DEFAULT_MAX_LINE_BYTES;

/// The limits as command-line options.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// The longest stream line kept, in bytes; a longer line is reported (ASR-X-006) and read
    /// through without being kept.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// The longest reply line read from an adapter, in bytes; a longer one is a protocol error
    /// [default: 4 x --max-line-bytes, at least 16 MiB].
    #[arg(long, value_name = "BYTES")]
    pub max_reply_bytes: Option<usize>,
}

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest stream line kept.
    pub max_line_bytes: usize,
    /// The longest reply line read from an adapter.
    pub max_reply_bytes: usize,
}

/// The least reply limit, whatever the line limit.
const MIN_REPLY_BYTES: usize = 16 << 20;

impl LimitArgs {
    /// The limits these options set. A reply may quote a whole line (a reader's reading holds
    /// a record's text), escaped as JSON: its default bound is a multiple of the line bound.
    pub fn limits(&self) -> anyhow::Result<Limits> {
        anyhow::ensure!(self.max_line_bytes > 0, "--max-line-bytes must be positive");
        let max_reply_bytes = self
            .max_reply_bytes
            .unwrap_or_else(|| self.max_line_bytes.saturating_mul(4).max(MIN_REPLY_BYTES));
        anyhow::ensure!(max_reply_bytes > 0, "--max-reply-bytes must be positive");
        Ok(Limits {
            max_line_bytes: self.max_line_bytes,
            max_reply_bytes,
        })
    }
}

impl Limits {
    /// The options that give an adapter started by the kit these limits.
    pub fn as_args(self) -> Vec<String> {
        vec!["--max-line-bytes".into(), self.max_line_bytes.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_bound_follows_the_line_bound() {
        let args = |line, reply| LimitArgs {
            max_line_bytes: line,
            max_reply_bytes: reply,
        };
        let default = args(DEFAULT_MAX_LINE_BYTES, None).limits().expect("valid");
        assert_eq!(default.max_reply_bytes, 4 * DEFAULT_MAX_LINE_BYTES);
        assert_eq!(
            args(1000, None).limits().expect("valid").max_reply_bytes,
            MIN_REPLY_BYTES
        );
        assert_eq!(
            args(1000, Some(77))
                .limits()
                .expect("valid")
                .max_reply_bytes,
            77
        );
        assert!(args(0, None).limits().is_err());
        assert!(args(10, Some(0)).limits().is_err());
    }
}
