//! The readers of OpenClaw's formats (not yet written: every file is of unknown kind).

use super::{Facts, Location};

/// Reads `files` of `format` into `facts`.
pub(super) fn read(format: &str, files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    let _ = format;
    for (name, _) in files {
        facts.unknown.push(Location::file(name, ""));
    }
}
