//! The kit's own implementation, answering protocol requests with the stream checker: the
//! built-in adapter that `asr-ctk adapter reference` speaks for.

use crate::check::{CheckOptions, StreamReport, check_bytes, check_related};
use crate::protocol::{
    AnswerDiagnostic, CaseRequest, Implementation, PROTOCOL_VERSION, ProtocolRole, Reply,
    StreamAnswer, base64_decode,
};

/// The reference implementation's `started` message.
pub fn started() -> Reply {
    Reply::Started {
        protocol: PROTOCOL_VERSION,
        implementation: Implementation {
            name: "asr-ctk-reference".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            language: "rust".into(),
            homepage: Some("https://github.com/asr-ctk/asr-ctk".into()),
            issues: Some("https://github.com/asr-ctk/asr-ctk/issues".into()),
        },
        roles: vec![ProtocolRole::Validator],
        format_versions: vec![crate::check::FORMAT_VERSION.into()],
    }
}

/// Answers one case: checks its streams together, as `asr-ctk validate` would.
pub fn answer(request: &CaseRequest) -> Reply {
    if request.role != ProtocolRole::Validator {
        return Reply::Skipped {
            seq: request.seq,
            reason: format!(
                "the reference implementation does not play the {} role yet",
                request.role.as_str()
            ),
            issue: None,
        };
    }
    let options = CheckOptions::default();
    let mut reports: Vec<StreamReport> = Vec::with_capacity(request.streams.len());
    for stream in &request.streams {
        let bytes = match base64_decode(&stream.data) {
            Some(bytes) => bytes,
            None => match std::fs::read(&stream.path) {
                Ok(bytes) => bytes,
                Err(e) => {
                    return Reply::Error {
                        seq: request.seq,
                        message: format!("failed to read {}: {e}", stream.path),
                    };
                }
            },
        };
        reports.push(check_bytes(&bytes, &options));
    }
    check_related(&mut reports, &options);
    answer_reports(request.seq, &reports)
}

/// Answers one stream given as raw bytes (one-shot mode).
pub fn answer_bytes(bytes: &[u8]) -> Reply {
    answer_reports(0, &[check_bytes(bytes, &CheckOptions::default())])
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
