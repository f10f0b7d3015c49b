//! The reader of this format (not yet written: every file is of unknown kind).

use super::{Facts, Location};

/// Reads `files` into `facts`.
pub(super) fn read(files: &[&(String, Vec<u8>)], facts: &mut Facts) {
    for (name, _) in files {
        facts.unknown.push(Location::file(name, ""));
    }
}
