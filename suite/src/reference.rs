//! The kit's own implementation, answering protocol requests with the stream checker: the
//! built-in adapter that `asr-ctk adapter reference` speaks for.

use crate::case::{Case, CaseError, Violation};
use crate::check::{
    CheckOptions, StreamReport, check_bytes, check_file, check_reader, check_related,
};
use crate::diagnostic::Severity;
use crate::protocol::{
    AnswerDiagnostic, CaseRequest, Implementation, OutputStream, PIPELINED, PROTOCOL_VERSION,
    ProtocolRole, Reply, STREAMS_BY_PATH, StreamAnswer, StreamInput, base64_decode,
};
use crate::reading::{DEFAULT_MAX_COPY_BYTES, Scan, scan, scan_copying, temporary_file};
use crate::rule;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The reference implementation's `started` message.
pub fn started() -> Reply {
    Reply::Started {
        protocol: PROTOCOL_VERSION,
        implementation: Implementation {
            name: "asr-ctk-reference".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            language: "rust".into(),
            homepage: None,
            issues: None,
        },
        roles: vec![
            ProtocolRole::Validator,
            ProtocolRole::Reader,
            ProtocolRole::Producer,
        ],
        format_versions: vec![crate::check::FORMAT_VERSION.into()],
        capabilities: vec![STREAMS_BY_PATH.into(), PIPELINED.into()],
        rule_aliases: std::collections::BTreeMap::new(),
    }
}

/// Answers one case, writing the reply line (its `\n` included) to `out`, with the memory of
/// `asr-ctk validate` and `asr-ctk read`: no stream is held whole. As a validator, checks its
/// streams together, as `asr-ctk validate` would (with `options`), each read as it is
/// checked; as a reader, reads each stream as `asr-ctk read` does, in two passes over a file
/// (a stream given as `data` is one; a pipe or a device is copied to a temporary file as the
/// first pass reads it, at most [`DEFAULT_MAX_COPY_BYTES`]), the reading written as its
/// second pass goes, one record's text held at a time; as a producer, answers with the golden
/// output of the kit's source fixture the files come from (it converts nothing: it shows what
/// a right answer is, and declines a source that is not one of the kit's).
///
/// An error comes only from `out`, or from a stream that changed between the passes (the
/// reply line is then left unfinished); a stream that cannot be read is an `error` reply.
pub fn write_answer<W: Write>(
    request: &CaseRequest,
    options: &CheckOptions,
    out: &mut W,
) -> io::Result<()> {
    match request.role {
        ProtocolRole::Producer => send(out, &produce(request)),
        ProtocolRole::Validator => {
            let mut reports = Vec::with_capacity(request.streams.len());
            for stream in &request.streams {
                let report = match open(stream) {
                    Ok(Input::File(file)) => check_file(file, options),
                    Ok(Input::Bytes(bytes)) => Ok(check_bytes(&bytes, options)),
                    Err(message) => return send(out, &failed(request.seq, &message)),
                };
                match report {
                    Ok(report) => reports.push(report),
                    Err(e) => {
                        let message = format!("failed to read {}: {e}", stream.path);
                        return send(out, &failed(request.seq, &message));
                    }
                }
            }
            check_related(&mut reports, options);
            send(out, &answer_reports(request.seq, &reports))
        }
        ProtocolRole::Reader => {
            let mut readings = Vec::with_capacity(request.streams.len());
            for stream in &request.streams {
                let read = match open(stream) {
                    Ok(input) => first_pass(input, options.max_line_bytes),
                    Err(message) => return send(out, &failed(request.seq, &message)),
                };
                match read {
                    Ok(read) => readings.push(read),
                    Err(e) => {
                        let message = format!("failed to read {}: {e}", stream.path);
                        return send(out, &failed(request.seq, &message));
                    }
                }
            }
            write_readings(out, request.seq, readings)
        }
    }
}

/// Answers one stream read from `input` as it comes (one-shot mode: standard input), for a
/// role, writing the reply line to `out`, with the memory of [`write_answer`]: a reader
/// copies it to a temporary file as it reads it, to read it again.
pub fn write_oneshot_answer<R: Read, W: Write>(
    input: R,
    role: ProtocolRole,
    options: &CheckOptions,
    out: &mut W,
) -> io::Result<()> {
    match role {
        ProtocolRole::Reader => match copied(input, options.max_line_bytes) {
            Ok(read) => write_readings(out, 0, vec![read]),
            Err(e) => send(out, &failed(0, &e)),
        },
        _ => match check_reader(input, options) {
            Ok(report) => send(out, &answer_reports(0, &[report])),
            Err(e) => send(out, &failed(0, &e.to_string())),
        },
    }
}

/// A producer's answer in one-shot mode: the kit's golden output for the source fixture
/// named `case` (`ASR_CTK_CASE`) when the files at `paths` are its source byte for byte.
/// A file is read only as far as the fixture's file of its name goes.
pub fn produce_oneshot(case: &str, paths: &[PathBuf]) -> Reply {
    let files: Vec<(String, SourceFile<'_>)> = paths
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, SourceFile::Path(path))
        })
        .collect();
    produced(0, kits_golden(case, &files))
}

/// Writes one reply as its line.
pub fn send<W: Write>(out: &mut W, reply: &Reply) -> io::Result<()> {
    serde_json::to_writer(&mut *out, reply)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// A stream of a request, opened.
enum Input {
    /// The file at its path.
    File(File),
    /// Its `data`, decoded.
    Bytes(Vec<u8>),
}

/// Opens a stream of a request, or says why it cannot be read.
fn open(stream: &StreamInput) -> Result<Input, String> {
    match &stream.data {
        Some(data) => base64_decode(data)
            .map(Input::Bytes)
            .ok_or_else(|| format!("failed to read {}: `data` is not base64", stream.path)),
        None => File::open(&stream.path)
            .map(Input::File)
            .map_err(|e| format!("failed to read {}: {e}", stream.path)),
    }
}

/// A reader's first pass over one stream: a scan, with the stream to read again.
enum FirstPass {
    File(Scan, File),
    Bytes(Scan, Vec<u8>),
}

fn first_pass(input: Input, max_line: usize) -> Result<FirstPass, String> {
    Ok(match input {
        Input::File(file) if file.metadata().is_ok_and(|m| m.is_file()) => {
            FirstPass::File(scan(&file, max_line).map_err(|e| e.to_string())?, file)
        }
        Input::File(file) => copied(file, max_line)?,
        Input::Bytes(bytes) => FirstPass::Bytes(
            scan(bytes.as_slice(), max_line).map_err(|e| e.to_string())?,
            bytes,
        ),
    })
}

/// The first pass over a stream that cannot be read twice, copied to a temporary file as
/// `asr-ctk read` copies one.
fn copied<R: Read>(input: R, max_line: usize) -> Result<FirstPass, String> {
    let mut copy = temporary_file().map_err(|e| e.to_string())?;
    let scanned = scan_copying(input, max_line, DEFAULT_MAX_COPY_BYTES, &mut copy)
        .map_err(|e| e.to_string())?;
    Ok(FirstPass::File(scanned, copy))
}

/// Writes the `answered` line of a reader: for each stream, whether it was accepted and its
/// reading, members as `serde_json` writes a [`Reply`].
fn write_readings<W: Write>(out: &mut W, seq: u64, mut readings: Vec<FirstPass>) -> io::Result<()> {
    // The streams of one case are read as one set: each has the others' sessions.
    crate::reading::read_together(
        &mut readings
            .iter_mut()
            .map(|(FirstPass::File(scan, _) | FirstPass::Bytes(scan, _))| scan)
            .collect::<Vec<_>>(),
    );
    let mut out = io::BufWriter::with_capacity(64 << 10, out);
    write!(out, "{{\"type\":\"answered\",\"seq\":{seq}")?;
    let any = !readings.is_empty();
    if any {
        out.write_all(b",\"streams\":[")?;
    }
    for (n, read) in readings.into_iter().enumerate() {
        let comma = if n == 0 { "" } else { "," };
        let (FirstPass::File(scan, _) | FirstPass::Bytes(scan, _)) = &read;
        let valid = scan.accepted();
        // A refusal says why: the check each refused line breaks, and where.
        let diagnostics: Vec<serde_json::Value> = scan
            .refusals()
            .iter()
            .map(|r| {
                serde_json::json!({"rule": r.rule, "severity": "error",
                    "line": r.line.max(1), "message": r.reason})
            })
            .collect();
        write!(
            out,
            "{comma}{{\"valid\":{valid},\"diagnostics\":{},\"reading\":",
            serde_json::Value::Array(diagnostics)
        )?;
        match read {
            FirstPass::File(scan, mut file) => {
                file.rewind()?;
                scan.write_reading(&mut file, &mut out, false, 0)?;
            }
            FirstPass::Bytes(scan, bytes) => {
                scan.write_reading(io::Cursor::new(bytes), &mut out, false, 0)?;
            }
        }
        out.write_all(b"}")?;
    }
    out.write_all(if any { b"]}\n".as_slice() } else { b"}\n" })?;
    out.flush()
}

fn failed(seq: u64, message: &str) -> Reply {
    Reply::Error {
        seq,
        message: message.to_owned(),
    }
}

/// The golden output of the source fixture the request's files come from: the one beside
/// their `source/` directory, or the kit's own (compiled in) when the files are its source
/// byte for byte.
fn produce(request: &CaseRequest) -> Reply {
    let beside = request
        .streams
        .first()
        .and_then(|file| Path::new(&file.path).parent())
        .filter(|dir| dir.file_name().is_some_and(|n| n == "source"))
        .and_then(Path::parent)
        .filter(|dir| dir.join("expected").is_dir())
        .map(crate::source::goldens);
    let goldens = match beside {
        Some(Ok(goldens)) => Some(goldens),
        Some(Err(e)) => {
            return Reply::Error {
                seq: request.seq,
                message: e.to_string(),
            };
        }
        None => {
            let mut files = Vec::with_capacity(request.streams.len());
            for file in &request.streams {
                let source = match &file.data {
                    Some(data) => match base64_decode(data) {
                        Some(bytes) => SourceFile::Bytes(bytes),
                        None => {
                            return Reply::Error {
                                seq: request.seq,
                                message: format!(
                                    "failed to read {}: `data` is not base64",
                                    file.path
                                ),
                            };
                        }
                    },
                    None => SourceFile::Path(Path::new(&file.path)),
                };
                files.push((file.part.clone(), source));
            }
            kits_golden(&request.case, &files)
        }
    };
    produced(request.seq, goldens)
}

/// A file of a producer's source: where it is, or its bytes.
enum SourceFile<'a> {
    Path(&'a Path),
    Bytes(Vec<u8>),
}

impl SourceFile<'_> {
    /// Whether the file holds exactly `expected`. A file of another size is not read, and no
    /// file is read further than one byte past `expected`: a source of gigabytes is never
    /// the kit's fixture, and is never read whole.
    fn holds(&self, expected: &[u8]) -> bool {
        match self {
            SourceFile::Bytes(bytes) => bytes == expected,
            SourceFile::Path(path) => {
                let Ok(file) = File::open(path) else {
                    return false;
                };
                let size = file.metadata().ok().filter(std::fs::Metadata::is_file);
                if size.is_some_and(|m| m.len() != expected.len() as u64) {
                    return false;
                }
                let mut bytes = Vec::with_capacity(expected.len());
                file.take(expected.len() as u64 + 1)
                    .read_to_end(&mut bytes)
                    .is_ok_and(|_| bytes == expected)
            }
        }
    }
}

fn produced(seq: u64, goldens: Option<Vec<(String, Vec<u8>)>>) -> Reply {
    match goldens {
        Some(goldens) if !goldens.is_empty() => Reply::Answered {
            seq,
            streams: Vec::new(),
            outputs: goldens
                .into_iter()
                .map(|(name, bytes)| {
                    OutputStream::from_text(&name, &String::from_utf8_lossy(&bytes))
                })
                .collect(),
        },
        _ => Reply::Skipped {
            seq,
            reason: "the reference producer converts nothing: it answers the kit's own source fixtures with their golden outputs, and this source is not one of them".into(),
            issue: None,
        },
    }
}

/// The golden output the kit carries for the fixture `case` (`sources/<format>/<name>`),
/// when `files` are exactly its source files.
fn kits_golden(case: &str, files: &[(String, SourceFile<'_>)]) -> Option<Vec<(String, Vec<u8>)>> {
    let source = crate::embedded::corpus_files(&format!("{case}/source"));
    if source.is_empty() || source.len() != files.len() {
        return None;
    }
    for (name, bytes) in &source {
        let (_, file) = files.iter().find(|(n, _)| n == name)?;
        if !file.holds(bytes) {
            return None;
        }
    }
    let goldens = crate::embedded::corpus_files(&format!("{case}/expected"))
        .into_iter()
        .filter_map(|(name, bytes)| {
            let stem = name.strip_suffix(".jsonl")?;
            Some((
                (if stem == "stream" { "" } else { stem }).to_owned(),
                bytes.to_vec(),
            ))
        })
        .collect();
    Some(goldens)
}

fn answer_reports(seq: u64, reports: &[StreamReport]) -> Reply {
    Reply::Answered {
        seq,
        streams: reports
            .iter()
            .map(|report| StreamAnswer {
                valid: report.valid(),
                diagnostics: report
                    .diagnostics
                    .iter()
                    .map(|d| AnswerDiagnostic {
                        rule: d.rule.to_string(),
                        severity: d.severity,
                        line: d.line,
                        pointer: Some(d.pointer.clone()),
                        seq: d.seq,
                        id: d.id.clone(),
                        message: Some(d.message.clone()),
                    })
                    .collect(),
                reading: None,
            })
            .collect(),
        outputs: Vec::new(),
    }
}

/// Runs the reference validator on a case's streams, checked together, and returns its
/// verdict and what it found, in the sidecar's terms (the ASR-406 notices left out: they
/// say what another stream would resolve).
pub fn validate_case(case: &Case) -> Result<(bool, Vec<Violation>), CaseError> {
    let options = CheckOptions::default();
    let mut reports: Vec<StreamReport> = Vec::new();
    for (_, path) in &case.streams {
        let file = File::open(path).map_err(|source| CaseError::Io {
            path: path.clone(),
            error: source,
        })?;
        reports.push(check_file(file, &options).map_err(|e| CaseError::Io {
            path: path.clone(),
            error: io::Error::other(e.to_string()),
        })?);
    }
    check_related(&mut reports, &options);
    let mut found = Vec::new();
    for ((part, _), report) in case.streams.iter().zip(&reports) {
        for d in &report.diagnostics {
            if d.rule == rule::ASR_406 && d.severity == Severity::Notice {
                continue;
            }
            found.push(Violation {
                rule: d.rule.to_string(),
                severity: d.severity,
                line: d.line,
                pointer: d.pointer.clone(),
                file: (!part.is_empty()).then(|| part.clone()),
            });
        }
    }
    found.sort();
    Ok((reports.iter().all(StreamReport::valid), found))
}
