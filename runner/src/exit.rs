//! Exit statuses of `asr-ctk`.

/// Every stream checked is valid (or the command succeeded).
pub const OK: u8 = 0;
/// At least one stream has an error-severity finding.
pub const INVALID: u8 = 1;
/// The command line was wrong, or a file could not be read or written.
pub const USAGE_OR_IO: u8 = 2;
/// The implementation could not be put through the cases, so nothing is said of it: the
/// corpus did not load, no case matches the selection, or the adapter did not start (the
/// command is wrong, it exited, it did not answer `start` or answered it wrongly).
pub const HARNESS: u8 = 3;
/// The run was stopped by SIGINT or SIGTERM; the report of what ran was written.
pub const INTERRUPTED: u8 = 130;
