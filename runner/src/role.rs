//! The roles an implementation plays under `run`, `diff` and `fuzz`, as the command line
//! names them.

use asr_suite::protocol::ProtocolRole;

/// A role an adapter plays for the kit's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleArg {
    /// Says whether streams are valid, with findings by rule.
    Validator,
    /// Says how it understood streams: a reading.
    Reader,
}

impl RoleArg {
    /// The role in the protocol's terms.
    pub fn protocol(self) -> ProtocolRole {
        match self {
            RoleArg::Validator => ProtocolRole::Validator,
            RoleArg::Reader => ProtocolRole::Reader,
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RoleArg::Validator => "validator",
            RoleArg::Reader => "reader",
        }
    }
}

/// A role `run` puts an implementation through: the stream roles, and producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunRole {
    /// Says whether streams are valid, with findings by rule.
    Validator,
    /// Says how it understood streams: a reading.
    Reader,
    /// Converts native sources (the kit's source fixtures) into streams.
    Producer,
}

impl RunRole {
    /// The role in the protocol's terms.
    pub fn protocol(self) -> ProtocolRole {
        match self {
            RunRole::Validator => ProtocolRole::Validator,
            RunRole::Reader => ProtocolRole::Reader,
            RunRole::Producer => ProtocolRole::Producer,
        }
    }
}
