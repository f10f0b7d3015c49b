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

/// `code`, the command's verdict, once its output is printed (`printed`): a reader of its
/// output that stops early (`| head`) changes nothing, and nothing more is said of it; any
/// other failure to print is an error.
pub fn after_printing(code: u8, printed: anyhow::Result<()>) -> anyhow::Result<u8> {
    match printed {
        Ok(()) => Ok(code),
        Err(error) if is_broken_pipe(&error) => Ok(code),
        Err(error) => Err(error),
    }
}

/// Whether `error` is a write to a pipe whose reader has gone.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}
