//! Exit statuses of `asr-ctk`.

/// Every stream checked is valid (or the command succeeded).
pub const OK: u8 = 0;
/// At least one stream has an error-severity finding.
pub const INVALID: u8 = 1;
/// The command line was wrong, or a file could not be read or written.
pub const USAGE_OR_IO: u8 = 2;
