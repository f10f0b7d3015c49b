//! The files below directories, for every command that walks one: the `.jsonl` streams that
//! `asr-ctk validate` checks, the sidecars of a corpus, and the `report.json` files that
//! `asr-ctk report site` publishes.
//!
//! A directory tree may hold symlinks back into itself, the same file under several names,
//! and FIFOs or sockets that would block or fail a read. Directories and files are known by
//! (device, inode), so a loop is walked once and a file is taken once; what is not a regular
//! file is left out while walking. A path given by name is read whatever it is: the user
//! asked for it. A walk confined to its root ([`Walk::confined`], a corpus) takes nothing a
//! link leads to outside that root: a planted link cannot make the kit read a file of the
//! user's into a report.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, Metadata};
use std::os::unix::fs::{DirEntryExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What the paths given stand for.
#[derive(Debug, Default)]
pub struct Walk {
    /// The files to check, in order, each once (`-` for standard input); empty after
    /// [`walk_each`], which gives them away as it goes.
    pub files: Vec<PathBuf>,
    /// How many files were taken.
    pub taken: usize,
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
    Failed(WalkError),
    /// A directory given that holds no file of the kind walked for: nothing to check
    /// is a failure, not a success.
    Empty {
        /// The directory, as given.
        dir: PathBuf,
        /// What was looked for.
        wanted: Wanted,
        /// Some of the other files seen below it (at most [`EMPTY_SEEN`]).
        seen: Vec<PathBuf>,
        /// How many other files were seen in all.
        others: usize,
    },
}

/// Which files a walk takes below the directories it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Files named `*.EXTENSION`.
    Extension(String),
    /// Files of exactly this name.
    Name(String),
}

impl Wanted {
    fn matches(&self, path: &Path) -> bool {
        match self {
            Wanted::Extension(extension) => path.extension().is_some_and(|e| *e == **extension),
            Wanted::Name(name) => path.file_name().is_some_and(|n| *n == **name),
        }
    }
}

impl fmt::Display for Wanted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wanted::Extension(extension) => write!(f, ".{extension} file"),
            Wanted::Name(name) => write!(f, "file named {name}"),
        }
    }
}

/// How many of the other files seen below an empty directory its note names.
pub const EMPTY_SEEN: usize = 5;

/// A path that could not be opened or listed.
#[derive(Debug, thiserror::Error)]
#[error("failed to {action} {}: {error}", path.display())]
pub struct WalkError {
    /// `open` or `list`.
    pub action: &'static str,
    /// The path.
    pub path: PathBuf,
    /// Why.
    pub error: std::io::Error,
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
    /// A link to a file or directory outside the root of a confined walk.
    Outside(PathBuf),
}

/// Expands the paths given, in order: a directory into the `.jsonl` files below it, sorted
/// by path and depth first; anything else stands for itself.
pub fn walk(paths: &[PathBuf]) -> Walk {
    walk_for(paths, Wanted::Extension("jsonl".to_owned()))
}

/// [`walk`], taking the files `wanted` below each directory given.
pub fn walk_for(paths: &[PathBuf], wanted: Wanted) -> Walk {
    walk_with(paths, wanted, None)
}

/// [`walk_for`], giving each file to `each` as soon as it is taken, in the walk's order,
/// and keeping none: a caller can start on the first files while the walk goes on, and
/// memory does not hold the paths of an archive.
pub fn walk_each(paths: &[PathBuf], wanted: Wanted, each: impl FnMut(&Path)) -> Walk {
    walk_with(paths, wanted, Some(Box::new(each)))
}

fn walk_with(paths: &[PathBuf], wanted: Wanted, each: Option<Each<'_>>) -> Walk {
    let mut walker = Walker::new(wanted);
    walker.each = each;
    for path in paths {
        let before = walker.walk.taken;
        walker.others = (0, Vec::new());
        walker.argument(path);
        let found = walker.walk.taken > before;
        let dir = path.as_os_str() != "-" && fs::metadata(path).is_ok_and(|m| m.is_dir());
        if dir && !found && !walker.walked_before(path) {
            let (others, seen) = std::mem::take(&mut walker.others);
            walker.walk.notes.push(Note::Empty {
                dir: path.clone(),
                wanted: walker.wanted.clone(),
                seen,
                others,
            });
        }
    }
    walker.walk
}

impl Walk {
    /// The files named `*.EXTENSION` below `root`, sorted by path, each once, none outside
    /// `root` (after following links), and no directory named one of `skip` walked.
    pub fn confined(root: &Path, extension: &str, skip: &[&str]) -> Walk {
        let mut walker = Walker::new(Wanted::Extension(extension.to_owned()));
        walker.skip_dirs = skip.iter().map(|s| (*s).to_owned()).collect();
        match fs::canonicalize(root) {
            Ok(canonical) => walker.confine = Some(canonical),
            Err(error) => {
                walker.fail("open", root, error);
                return walker.walk;
            }
        }
        walker.argument(root);
        walker.walk
    }
}

impl Note {
    /// Whether the note is an error (the run's exit status says so), not a deliberate skip.
    pub fn is_failure(&self) -> bool {
        matches!(self, Note::Failed(_) | Note::Empty { .. })
    }

    /// Whether the note says a file or directory was left out because reading it would be
    /// wrong (outside a confined root, not a regular file), not because it was seen already.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Note::Failed(_)
                | Note::Empty { .. }
                | Note::Skipped {
                    reason: Reason::Outside(_) | Reason::NotRegular(_),
                    ..
                }
        )
    }
}

/// Why `path` is not to be read as a file of the directory `root` (a canonical path), if it
/// is not: a link leading outside it, or something that is not a regular file (a FIFO would
/// block the read). The test every file of a corpus passes before it is read.
pub fn refusal(root: &Path, path: &Path) -> std::io::Result<Option<String>> {
    let real = fs::canonicalize(path)?;
    if !real.starts_with(root) {
        return Ok(Some(format!(
            "a link to {}, outside {}",
            real.display(),
            root.display()
        )));
    }
    Ok((!fs::metadata(&real)?.is_file()).then(|| "not a regular file".to_owned()))
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Skipped { path, reason } => write!(f, "skipped {}: {reason}", path.display()),
            Note::Failed(error) => write!(f, "{error:#}"),
            Note::Empty {
                dir,
                wanted,
                seen,
                others,
            } => {
                write!(f, "no {wanted} under {}: nothing to check", dir.display())?;
                if !seen.is_empty() {
                    let names: Vec<String> = seen.iter().map(|p| p.display().to_string()).collect();
                    let more = others.saturating_sub(seen.len());
                    write!(f, " (seen: {}", names.join(", "))?;
                    if more > 0 {
                        write!(f, " and {more} more")?;
                    }
                    write!(f, ")")?;
                }
                match wanted {
                    Wanted::Extension(extension) => write!(
                        f,
                        "; ASR streams are JSON Lines files named *.{extension} (exactly: .ndjson, .json and .JSONL are not read)"
                    ),
                    Wanted::Name(name) => write!(
                        f,
                        "; a report is the {name} a run writes in its --out directory"
                    ),
                }
            }
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
            Reason::Outside(to) => write!(
                f,
                "a link to {}, outside the directory walked: not read",
                to.display()
            ),
        }
    }
}

/// What a walk gives each file it takes to, as it takes it.
type Each<'a> = Box<dyn FnMut(&Path) + 'a>;

/// A file's or directory's identity: (device, inode).
type Key = (u64, u64);

struct Walker<'a> {
    walk: Walk,
    /// Given each file taken, as it is taken.
    each: Option<Each<'a>>,
    /// The files taken while walking.
    wanted: Wanted,
    /// The canonical root nothing is taken outside of, if the walk is confined.
    confine: Option<PathBuf>,
    /// Names of directories not walked.
    skip_dirs: Vec<String>,
    /// Files seen below the argument being walked that were not taken: how many, and the
    /// first few.
    others: (usize, Vec<PathBuf>),
    /// Every directory walked, with the path it was walked under.
    dirs: HashMap<Key, PathBuf>,
    /// Every file taken, with the path it was taken under.
    files: HashMap<Key, PathBuf>,
    /// The directories being walked, outermost first: a directory among them met again is
    /// a loop.
    open: Vec<(Key, PathBuf)>,
}

impl Walker<'_> {
    fn new(wanted: Wanted) -> Self {
        Walker {
            walk: Walk::default(),
            each: None,
            wanted,
            confine: None,
            skip_dirs: Vec::new(),
            others: (0, Vec::new()),
            dirs: HashMap::new(),
            files: HashMap::new(),
            open: Vec::new(),
        }
    }

    /// Whether the directory `path` was walked under another argument before this one (a
    /// directory given twice is not empty the second time).
    fn walked_before(&self, path: &Path) -> bool {
        self.walk.notes.last().is_some_and(|note| {
            matches!(note, Note::Skipped { path: p, reason: Reason::Already(_) } if p == path)
        })
    }

    /// Where `path` leads when it leads outside the confined root.
    fn outside(&self, path: &Path) -> Option<PathBuf> {
        let root = self.confine.as_ref()?;
        match fs::canonicalize(path) {
            Ok(real) if real.starts_with(root) => None,
            Ok(real) => Some(real),
            Err(_) => Some(path.to_owned()),
        }
    }

    fn argument(&mut self, path: &Path) {
        if path.as_os_str() == "-" {
            self.take(path);
            return;
        }
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => self.dir(path, &meta),
            Ok(meta) => self.file(path, &meta),
            Err(error) => self.fail("open", path, error),
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
                .map(|e| e.map(|e| (e.path(), e)))
                .collect::<Result<Vec<_>, _>>()
        });
        let mut entries = match listed {
            Ok(entries) => entries,
            Err(error) => {
                self.fail("list", path, error);
                return;
            }
        };
        entries.sort_by(|(a, _), (b, _)| a.cmp(b));
        self.open.push((key, path.to_owned()));
        for (path, entry) in entries {
            self.entry(&path, &entry, meta.dev());
        }
        self.open.pop();
    }

    /// An entry of a directory on the device `dev`.
    fn entry(&mut self, path: &Path, entry: &fs::DirEntry, dev: u64) {
        let stream = self.wanted.matches(path);
        let file_type = entry.file_type();
        // Most entries of an archive are regular files, and a regular file's entry says what
        // it is and its inode, on its directory's device: it costs no stat. (A file mounted
        // over another has the inode of the one below, which only a bind mount of a file
        // onto a file inside the tree makes differ.)
        if file_type.as_ref().is_ok_and(fs::FileType::is_file) {
            if !stream {
                self.other(path);
            } else if let Some(to) = self.outside(path) {
                self.skip(path, Reason::Outside(to));
            } else {
                self.file_known(path, (dev, entry.ino()));
            }
            return;
        }
        // What is no symlink is its own target: it is looked up from its directory, not
        // from the root again (a symlink is followed, by its path).
        let meta = match file_type {
            Ok(file_type) if !file_type.is_symlink() => entry.metadata(),
            _ => fs::metadata(path),
        };
        let counts = stream || meta.as_ref().is_ok_and(Metadata::is_dir);
        if counts && let Some(to) = self.outside(path) {
            self.skip(path, Reason::Outside(to));
            return;
        }
        match meta {
            Ok(meta) if meta.is_dir() => {
                let skipped = path
                    .file_name()
                    .is_some_and(|n| self.skip_dirs.iter().any(|s| n == s.as_str()));
                if !skipped {
                    self.dir(path, &meta);
                }
            }
            Ok(meta) if stream && meta.is_file() => self.file(path, &meta),
            Ok(meta) if stream => {
                let reason = Reason::NotRegular(kind(&meta));
                self.skip(path, reason);
            }
            Err(error) if stream => self.fail("open", path, error),
            Ok(meta) if meta.is_file() => self.other(path),
            // Not a stream by its name; a dangling symlink without one is not either.
            Ok(_) | Err(_) => {}
        }
    }

    /// A file that is not of the kind walked for.
    fn other(&mut self, path: &Path) {
        self.others.0 += 1;
        if self.others.1.len() < EMPTY_SEEN {
            self.others.1.push(path.to_owned());
        }
    }

    fn file(&mut self, path: &Path, meta: &Metadata) {
        self.file_known(path, key(meta));
    }

    /// A regular file known by `key`: taken unless it was taken before.
    fn file_known(&mut self, path: &Path, key: Key) {
        if let Some(first) = self.files.get(&key) {
            let reason = Reason::Already(first.clone());
            self.skip(path, reason);
            return;
        }
        self.files.insert(key, path.to_owned());
        self.take(path);
    }

    fn take(&mut self, path: &Path) {
        self.walk.taken += 1;
        match &mut self.each {
            Some(each) => each(path),
            None => self.walk.files.push(path.to_owned()),
        }
    }

    fn skip(&mut self, path: &Path, reason: Reason) {
        self.walk.notes.push(Note::Skipped {
            path: path.to_owned(),
            reason,
        });
    }

    fn fail(&mut self, action: &'static str, path: &Path, error: std::io::Error) {
        self.walk.notes.push(Note::Failed(WalkError {
            action,
            path: path.to_owned(),
            error,
        }));
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
