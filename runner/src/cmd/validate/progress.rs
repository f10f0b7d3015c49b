//! Progress through a stream being checked, on a terminal: a stream of gigabytes takes
//! minutes, which should not pass in silence. Off a terminal nothing is printed, so logs
//! and pipes get the findings alone.

use asr_suite::check::{CheckError, CheckOptions, StreamReport, check_sized};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use std::fmt;
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Checks a stream as [`check_sized`] does, with a bar on stderr when `bars` is true (the
/// caller found stderr a terminal): the bytes read, of `len` when the size is known, and the
/// lines read.
pub fn check<R: Read>(
    reader: R,
    name: &str,
    len: Option<u64>,
    options: &CheckOptions,
    bars: bool,
) -> Result<StreamReport, CheckError> {
    if !bars {
        return check_sized(reader, len, options);
    }
    let lines = Arc::new(AtomicU64::new(0));
    let bar = bar(name, len, Arc::clone(&lines));
    let report = check_sized(
        Counted {
            inner: reader,
            bar: bar.clone(),
            lines,
        },
        len,
        options,
    );
    bar.finish_and_clear();
    report
}

fn bar(name: &str, len: Option<u64>, lines: Arc<AtomicU64>) -> ProgressBar {
    let (bar, template) = match len {
        Some(len) => (
            ProgressBar::new(len),
            "{bar:20} {bytes}/{total_bytes}, {lines} lines {wide_msg}",
        ),
        None => (
            ProgressBar::no_length(),
            "{spinner} {bytes}, {lines} lines {wide_msg}",
        ),
    };
    let style = ProgressStyle::with_template(template).map(|style| {
        style.with_key(
            "lines",
            move |_: &ProgressState, out: &mut dyn fmt::Write| {
                let _ = write!(out, "{}", lines.load(Ordering::Relaxed));
            },
        )
    });
    // The builders set all before the first draw, so no half-made bar flashes by.
    let bar = match style {
        Ok(style) => bar.with_style(style),
        Err(_) => bar,
    };
    bar.with_message(tail(name, NAME_CHARS))
}

/// The most of a stream's name shown: its end, where paths differ, in a line that leaves the
/// numbers room on an 80-column terminal.
const NAME_CHARS: usize = 32;

fn tail(name: &str, max: usize) -> String {
    let count = name.chars().count();
    if count <= max {
        return name.to_owned();
    }
    let rest: String = name.chars().skip(count - (max - 1)).collect();
    format!("…{rest}")
}

/// A reader that moves the bar by what passes through it. The checker reads ahead by a
/// buffer, so the count runs at most that far ahead of the lines checked.
struct Counted<R> {
    inner: R,
    bar: ProgressBar,
    lines: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            let newlines = memchr::memchr_iter(b'\n', &buf[..n]).count();
            self.lines.fetch_add(newlines as u64, Ordering::Relaxed);
            self.bar.inc(n as u64);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn a_long_name_keeps_its_end() {
        assert_eq!(tail("a.jsonl", 8), "a.jsonl");
        assert_eq!(tail("sessions/é/a.jsonl", 8), "…a.jsonl");
        assert_eq!(tail("sessions/é/a.jsonl", 8).chars().count(), 8);
    }
}
