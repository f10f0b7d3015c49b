//! The kit's own implementation, answering protocol requests with the stream checker: the
//! built-in adapter that `asr-ctk adapter reference` speaks for.

use crate::case::{Case, CaseError, Violation};
use crate::check::{CheckOptions, StreamReport, check_bytes, check_reader, check_related};
use crate::diagnostic::Severity;
use crate::protocol::{
    AnswerDiagnostic, CaseRequest, Implementation, PROTOCOL_VERSION, ProtocolRole, Reply,
    STREAMS_BY_PATH, StreamAnswer, base64_decode,
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
        roles: vec![ProtocolRole::Validator, ProtocolRole::Reader],
        format_versions: vec![crate::check::FORMAT_VERSION.into()],
        capabilities: vec![STREAMS_BY_PATH.into()],
        rule_aliases: std::collections::BTreeMap::new(),
    }
}

/// Answers one case: as a validator, checks its streams together, as `asr-ctk validate`
/// would (with `options`); as a reader, reads each stream.
pub fn answer(request: &CaseRequest, options: &CheckOptions) -> Reply {
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
        ProtocolRole::Reader => Reply::Answered {
            seq: request.seq,
            streams: streams
                .iter()
                .map(|bytes| read(bytes, options.max_line_bytes))
                .collect(),
        },
        ProtocolRole::Producer => Reply::Skipped {
            seq: request.seq,
            reason: "the reference implementation does not play the producer role".into(),
            issue: None,
        },
    }
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
