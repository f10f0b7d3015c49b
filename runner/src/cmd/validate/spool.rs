//! The findings of the streams checked, kept until the checks across streams are done: in
//! memory while they are few, then in an unnamed temporary file, so memory does not grow
//! with the findings of a whole archive. Each stream's output is kept rendered beside its
//! findings: most streams are not changed by the checks across streams, and theirs is
//! written as it is, never read back and rendered again.

use asr_suite::check::StreamReport;
use asr_suite::diagnostic::Diagnostic;
use asr_suite::report::FileReport;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Cursor, Read, Seek, Write};

/// Bytes kept in memory before the spool moves to a file.
pub const IN_MEMORY: usize = 8 << 20;

/// The most bytes allocated for an entry before its bytes are read.
const RESERVED: usize = 1 << 20;

/// One stream's findings, as the spool keeps them.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Spooled {
    pub file: String,
    pub records: usize,
    pub diagnostics: Vec<Diagnostic>,
}

/// One stream's part of the spool: its findings ([`Spooled::line`]) and, unless the format
/// renders all streams at once, its output as rendered then, with its verdict.
pub struct Entry {
    pub findings: Vec<u8>,
    pub rendered: Option<(Vec<u8>, bool)>,
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

    /// Keeps one stream's entry.
    pub fn push(&mut self, entry: &Entry) -> io::Result<()> {
        self.framed(&entry.findings)?;
        match &entry.rendered {
            Some((text, valid)) => {
                self.write(&[1 + u8::from(*valid)])?;
                self.framed(text)
            }
            None => self.write(&[0]),
        }
    }

    /// Writes `bytes` after their length.
    fn framed(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write(&(bytes.len() as u64).to_le_bytes())?;
        self.write(bytes)
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
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
    /// A stream's entry, its findings to be parsed with [`Spooled::parse`] on any thread.
    type Item = io::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.inner.fill_buf() {
            Ok([]) => return None,
            Ok(_) => {}
            Err(error) => return Some(Err(error)),
        }
        Some(self.entry())
    }
}

impl Reader {
    fn entry(&mut self) -> io::Result<Entry> {
        let findings = self.framed()?;
        let mut kind = [0u8];
        self.inner.read_exact(&mut kind)?;
        let rendered = match kind[0] {
            0 => None,
            kind => Some((self.framed()?, kind == 2)),
        };
        Ok(Entry { findings, rendered })
    }

    fn framed(&mut self) -> io::Result<Vec<u8>> {
        let mut len = [0u8; 8];
        self.inner.read_exact(&mut len)?;
        let len = u64::from_le_bytes(len);
        // Allocated at once up to a bound, then read up to the length: an entry is one
        // allocation and one copy, and a damaged length asks for no more than the bound.
        let reserved = usize::try_from(len).map_or(RESERVED, |len| len.min(RESERVED));
        let mut bytes = Vec::with_capacity(reserved);
        (&mut self.inner).take(len).read_to_end(&mut bytes)?;
        if bytes.len() as u64 != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(bytes)
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

    /// The file's report as it is written: its records and findings.
    pub fn into_report(self) -> FileReport {
        let mut report = StreamReport::default();
        report.records = self.records;
        report.diagnostics = self.diagnostics;
        FileReport::new(self.file, report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries come back as they went in, in order, in memory and past it in a file: with
    /// and without a rendered output, either verdict, empty and long.
    #[test]
    fn entries_come_back_as_kept() {
        for count in [0usize, 3, 4_000] {
            let entry = |n: usize| Entry {
                findings: format!("{{\"n\":{n}}}\n").repeat(n % 7).into_bytes(),
                rendered: (n % 3 != 0).then(|| (vec![b'x'; (n * 997) % 9_000], n % 2 == 0)),
            };
            let mut spool = Spool::new();
            for n in 0..count {
                spool.push(&entry(n)).expect("kept");
            }
            assert_eq!(matches!(spool, Spool::File(_)), count == 4_000, "{count}");
            let back: Vec<Entry> = spool
                .read()
                .expect("read back")
                .collect::<io::Result<_>>()
                .expect("every entry");
            assert_eq!(back.len(), count);
            for (n, got) in back.into_iter().enumerate() {
                let want = entry(n);
                assert!(got.findings == want.findings, "entry {n}");
                assert!(got.rendered == want.rendered, "entry {n}");
            }
        }
    }

    /// A spool cut short is an error, not an entry made up.
    #[test]
    fn a_spool_cut_short_is_an_error() {
        let mut spool = Spool::new();
        spool
            .push(&Entry {
                findings: b"{}\n".to_vec(),
                rendered: Some((b"text".to_vec(), true)),
            })
            .expect("kept");
        let Spool::Memory(bytes) = &mut spool else {
            panic!("a small spool is in memory");
        };
        bytes.pop();
        let mut damaged = bytes.clone();
        let mut read = spool.read().expect("read back");
        assert!(matches!(read.next(), Some(Err(_))));
        // A length past anything there is an error too, and allocates nothing for it.
        damaged[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut read = Spool::Memory(damaged).read().expect("read back");
        assert!(matches!(read.next(), Some(Err(_))));
    }
}
