//! The findings of the streams checked, kept until the checks across streams are done: in
//! memory while they are few, then in an unnamed temporary file, so memory does not grow
//! with the findings of a whole archive.

use asr_suite::diagnostic::Diagnostic;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Cursor, Seek, Write};

/// Bytes kept in memory before the spool moves to a file.
pub const IN_MEMORY: usize = 8 << 20;

/// One stream's part of the spool.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Spooled {
    pub file: String,
    pub records: usize,
    pub diagnostics: Vec<Diagnostic>,
}

/// Findings written in order, read back in the same order.
pub enum Spool {
    Memory(Vec<u8>),
    File(BufWriter<File>),
}

impl Spool {
    pub fn new() -> Self {
        Spool::Memory(Vec::new())
    }

    /// Keeps one entry's line ([`Spooled::line`]).
    pub fn push(&mut self, line: &[u8]) -> io::Result<()> {
        if let Spool::Memory(bytes) = self {
            if bytes.len() > IN_MEMORY {
                let mut file = BufWriter::new(tempfile::tempfile()?);
                file.write_all(bytes)?;
                *self = Spool::File(file);
            }
        }
        match self {
            Spool::Memory(bytes) => bytes.extend_from_slice(line),
            Spool::File(file) => file.write_all(line)?,
        }
        Ok(())
    }

    /// The entries, in the order written.
    pub fn read(self) -> io::Result<Reader> {
        let inner: Box<dyn BufRead + Send> = match self {
            Spool::Memory(bytes) => Box::new(Cursor::new(bytes)),
            Spool::File(file) => {
                let mut file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
                file.rewind()?;
                Box::new(BufReader::with_capacity(1 << 20, file))
            }
        };
        Ok(Reader { inner })
    }
}

pub struct Reader {
    inner: Box<dyn BufRead + Send>,
}

impl Iterator for Reader {
    /// An entry's line, to be parsed with [`Spooled::parse`] on any thread.
    type Item = io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut line = Vec::new();
        match self.inner.read_until(b'\n', &mut line) {
            Ok(0) => None,
            Ok(_) => Some(Ok(line)),
            Err(error) => Some(Err(error)),
        }
    }
}

impl Spooled {
    /// The entry as a line of the spool, made on any thread.
    pub fn line(&self) -> io::Result<Vec<u8>> {
        let mut line = serde_json::to_vec(self).map_err(io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    }

    pub fn parse(line: &[u8]) -> io::Result<Spooled> {
        serde_json::from_slice(line).map_err(io::Error::other)
    }
}
