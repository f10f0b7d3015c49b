//! Helpers shared by the integration tests of the `asr-ctk` command.

use std::path::{Path, PathBuf};

/// A scratch directory of one test, removed with everything in it when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

/// A new, empty scratch directory named after the test binary (`kind`), the process and `name`.
pub fn scratch(kind: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("asr-ctk-{kind}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    Scratch(dir)
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
