//! The kit's own implementation, answering protocol requests with the stream checker: the
//! built-in adapter that `asr-ctk adapter reference` speaks for.

use crate::check::{CheckOptions, StreamReport, check_bytes, check_related};
use crate::protocol::{
    AnswerDiagnostic, CaseRequest, Implementation, PROTOCOL_VERSION, ProtocolRole, Reply,
    STREAMS_BY_PATH, StreamAnswer, base64_decode,
};

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
        reading: serde_json::to_value(&outcome.reading).ok(),
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
