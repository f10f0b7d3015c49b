//! The kit's own implementation, answering protocol requests with the stream checker: the
//! built-in adapter that `asr-ctk adapter reference` speaks for.

use crate::case::{Case, CaseError, Violation};
use crate::check::{CheckOptions, StreamReport, check_bytes, check_reader, check_related};
use crate::diagnostic::Severity;
use crate::protocol::{
    AnswerDiagnostic, CaseRequest, Implementation, OutputStream, PROTOCOL_VERSION, ProtocolRole,
    Reply, STREAMS_BY_PATH, StreamAnswer, base64_decode,
};
use std::fs::File;

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
        capabilities: vec![STREAMS_BY_PATH.into()],
        rule_aliases: std::collections::BTreeMap::new(),
    }
}

/// Answers one case: as a validator, checks its streams together, as `asr-ctk validate`
/// would (with `options`); as a reader, reads each stream; as a producer, answers with the
/// golden output of the kit's source fixture the files come from (it converts nothing: it
/// shows what a right answer is, and declines a source that is not one of the kit's).
pub fn answer(request: &CaseRequest, options: &CheckOptions) -> Reply {
    if request.role == ProtocolRole::Producer {
        return produce(request);
    }
    let mut streams = Vec::with_capacity(request.streams.len());
    for stream in &request.streams {
        let bytes = match &stream.data {
            Some(data) => base64_decode(data).ok_or_else(|| "`data` is not base64".to_owned()),
            None => std::fs::read(&stream.path).map_err(|e| e.to_string()),
        };
        match bytes {
            Ok(bytes) => streams.push(bytes),
            Err(e) => {
                return Reply::Error {
                    seq: request.seq,
                    message: format!("failed to read {}: {e}", stream.path),
                };
            }
        }
    }
    match request.role {
        ProtocolRole::Validator => {
            let mut reports: Vec<StreamReport> = streams
                .iter()
                .map(|bytes| check_bytes(bytes, options))
                .collect();
            check_related(&mut reports, options);
            answer_reports(request.seq, &reports)
        }
        ProtocolRole::Reader | ProtocolRole::Producer => Reply::Answered {
            seq: request.seq,
            streams: streams
                .iter()
                .map(|bytes| read(bytes, options.max_line_bytes))
                .collect(),
            outputs: Vec::new(),
        },
    }
}

/// The golden output of the source fixture the request's files come from: the one beside
/// their `source/` directory, or the kit's own (compiled in) when the files are its source
/// byte for byte.
fn produce(request: &CaseRequest) -> Reply {
    let beside = request
        .streams
        .first()
        .and_then(|file| std::path::Path::new(&file.path).parent())
        .filter(|dir| dir.file_name().is_some_and(|n| n == "source"))
        .and_then(std::path::Path::parent)
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
                let bytes = match &file.data {
                    Some(data) => base64_decode(data),
                    None => std::fs::read(&file.path).ok(),
                };
                let Some(bytes) = bytes else {
                    return Reply::Error {
                        seq: request.seq,
                        message: format!("failed to read {}", file.path),
                    };
                };
                files.push((file.part.clone(), bytes));
            }
            kits_golden(&request.case, &files)
        }
    };
    produced(request.seq, goldens)
}

/// A producer's answer in one-shot mode: the kit's golden output for the source fixture
/// named `case` (`ASR_CTK_CASE`) when `files` are its source byte for byte.
pub fn produce_oneshot(case: &str, files: &[(String, Vec<u8>)]) -> Reply {
    produced(0, kits_golden(case, files))
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
fn kits_golden(case: &str, files: &[(String, Vec<u8>)]) -> Option<Vec<(String, Vec<u8>)>> {
    let source = crate::embedded::corpus_files(&format!("{case}/source"));
    let same = source.len() == files.len()
        && source
            .iter()
            .all(|(name, bytes)| files.iter().any(|(n, b)| n == name && b == bytes));
    if !same || source.is_empty() {
        return None;
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

/// A reader's answer for one stream, with the kit's line limit (as `asr-ctk read` has).
fn read(bytes: &[u8], max_line: usize) -> StreamAnswer {
    let outcome = crate::reading::read_stream(bytes, max_line)
        .unwrap_or_else(|_| crate::reading::read_bytes(b""));
    StreamAnswer {
        valid: outcome.accepted,
        diagnostics: Vec::new(),
        reading: Some((&outcome.reading).into()),
    }
}

/// Answers one stream given as raw bytes (one-shot mode), for a role.
pub fn answer_bytes(bytes: &[u8], role: ProtocolRole, options: &CheckOptions) -> Reply {
    match role {
        ProtocolRole::Reader => Reply::Answered {
            seq: 0,
            streams: vec![read(bytes, options.max_line_bytes)],
            outputs: Vec::new(),
        },
        _ => answer_reports(0, &[check_bytes(bytes, options)]),
    }
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
                        rule: d.rule.clone(),
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
        reports.push(check_reader(file, &options).map_err(|e| CaseError::Io {
            path: path.clone(),
            error: std::io::Error::other(e.to_string()),
        })?);
    }
    check_related(&mut reports, &options);
    let mut found = Vec::new();
    for ((part, _), report) in case.streams.iter().zip(&reports) {
        for d in &report.diagnostics {
            if d.rule == "ASR-406" && d.severity == Severity::Notice {
                continue;
            }
            found.push(Violation {
                rule: d.rule.clone(),
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
