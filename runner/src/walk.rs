//! The files `asr-ctk validate` checks: the paths given, and the `.jsonl` files below the
//! directories among them.
//!
//! A directory tree may hold symlinks back into itself, the same file under several names,
//! and FIFOs or sockets that would block or fail a read. Directories and files are known by
//! (device, inode), so a loop is walked once and a file is checked once; what is not a
//! regular file is left out while walking. A path given by name is read whatever it is: the
//! user asked for it.

use anyhow::anyhow;
use std::collections::HashMap;
use std::fmt;
use std::fs::{self, Metadata};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What the paths given stand for.
#[derive(Debug, Default)]
pub struct Walk {
    /// The files to check, in order, each once (`-` for standard input).
    pub files: Vec<PathBuf>,
    /// What was left out or could not be examined, in the order it was met.
    pub notes: Vec<Note>,
}

/// A path left out of the check, or one that could not be examined.
#[derive(Debug)]
pub enum Note {
    /// Left out on purpose: checking it would loop, repeat a file or block.
    Skipped {
        /// The path as reached.
        path: PathBuf,
        /// Why.
        reason: Reason,
    },
    /// The path could not be listed or examined.
    Failed(anyhow::Error),
}

/// Why a path was left out.
#[derive(Debug)]
pub enum Reason {
    /// A directory that is one of the directories being walked around it.
    Loop {
        /// The directory it leads back to, as reached first.
        to: PathBuf,
        /// Whether the path is a symlink (a bind mount can loop too).
        symlink: bool,
    },
    /// A file or directory already taken under another path.
    Already(PathBuf),
    /// Found while walking, and not a regular file: a FIFO, a socket, a device.
    NotRegular(&'static str),
}

/// Expands the paths given, in order: a directory into the `.jsonl` files below it, sorted
/// by path and depth first; anything else stands for itself.
pub fn walk(paths: &[PathBuf]) -> Walk {
    let mut walker = Walker::default();
    for path in paths {
        walker.argument(path);
    }
    walker.walk
}

impl Note {
    /// Whether the note is an error (the run's exit status says so), not a deliberate skip.
    pub fn is_failure(&self) -> bool {
        matches!(self, Note::Failed(_))
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Skipped { path, reason } => write!(f, "skipped {}: {reason}", path.display()),
            Note::Failed(error) => write!(f, "{error:#}"),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Loop { to, symlink: true } => {
                write!(f, "a symlink loop back to {}", to.display())
            }
            Reason::Loop { to, symlink: false } => write!(f, "a loop back to {}", to.display()),
            Reason::Already(path) => write!(f, "already checked as {}", path.display()),
            Reason::NotRegular(kind) => write!(f, "not a regular file ({kind})"),
        }
    }
}

/// A file's or directory's identity: (device, inode).
type Key = (u64, u64);

#[derive(Default)]
struct Walker {
    walk: Walk,
    /// Every directory walked, with the path it was walked under.
    dirs: HashMap<Key, PathBuf>,
    /// Every file taken, with the path it was taken under.
    files: HashMap<Key, PathBuf>,
    /// The directories being walked, outermost first: a directory among them met again is
    /// a loop.
    open: Vec<(Key, PathBuf)>,
}

impl Walker {
    fn argument(&mut self, path: &Path) {
        if path.as_os_str() == "-" {
            self.walk.files.push(path.to_owned());
            return;
        }
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => self.dir(path, &meta),
            Ok(meta) => self.file(path, &meta),
            Err(error) => {
                self.fail(anyhow!(error).context(format!("failed to open {}", path.display())));
            }
        }
    }

    fn dir(&mut self, path: &Path, meta: &Metadata) {
        let key = key(meta);
        if let Some((_, to)) = self.open.iter().find(|(open, _)| *open == key) {
            let symlink = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            let reason = Reason::Loop {
                to: to.clone(),
                symlink,
            };
            self.skip(path, reason);
            return;
        }
        if let Some(first) = self.dirs.get(&key) {
            let reason = Reason::Already(first.clone());
            self.skip(path, reason);
            return;
        }
        self.dirs.insert(key, path.to_owned());
        let listed = fs::read_dir(path).and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
        });
        let mut entries = match listed {
            Ok(entries) => entries,
            Err(error) => {
                self.fail(anyhow!(error).context(format!("failed to list {}", path.display())));
                return;
            }
        };
        entries.sort();
        self.open.push((key, path.to_owned()));
        for entry in entries {
            self.entry(&entry);
        }
        self.open.pop();
    }

    fn entry(&mut self, path: &Path) {
        let stream = path.extension().is_some_and(|e| e == "jsonl");
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => self.dir(path, &meta),
            Ok(meta) if stream && meta.is_file() => self.file(path, &meta),
            Ok(meta) if stream => {
                let reason = Reason::NotRegular(kind(&meta));
                self.skip(path, reason);
            }
            Err(error) if stream => {
                self.fail(anyhow!(error).context(format!("failed to open {}", path.display())));
            }
            // Not a stream by its name; a dangling symlink without one is not either.
            Ok(_) | Err(_) => {}
        }
    }

    fn file(&mut self, path: &Path, meta: &Metadata) {
        let key = key(meta);
        if let Some(first) = self.files.get(&key) {
            let reason = Reason::Already(first.clone());
            self.skip(path, reason);
            return;
        }
        self.files.insert(key, path.to_owned());
        self.walk.files.push(path.to_owned());
    }

    fn skip(&mut self, path: &Path, reason: Reason) {
        self.walk.notes.push(Note::Skipped {
            path: path.to_owned(),
            reason,
        });
    }

    fn fail(&mut self, error: anyhow::Error) {
        self.walk.notes.push(Note::Failed(error));
    }
}

fn key(meta: &Metadata) -> Key {
    (meta.dev(), meta.ino())
}

fn kind(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_fifo() {
        "fifo"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_char_device() {
        "character device"
    } else {
        "unknown type"
    }
}
