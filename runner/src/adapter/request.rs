//! The request the kit sends for a case, the same from every command.

use asr_suite::case::Case;
use asr_suite::protocol::{CaseRequest, ProtocolRole, StreamInput, base64_encode};

/// The request for one case: its streams with their absolute paths, and their bytes in
/// base64 unless the adapter reads streams by path.
pub fn request(
    case: &Case,
    seq: u64,
    role: ProtocolRole,
    by_path: bool,
) -> Result<CaseRequest, String> {
    let mut streams = Vec::with_capacity(case.streams.len());
    for (part, path) in &case.streams {
        let absolute = std::fs::canonicalize(path)
            .map_err(|e| format!("failed to read {}: {e}", path.display()))?;
        let data = if by_path {
            None
        } else {
            let bytes = std::fs::read(path)
                .map_err(|e| format!("failed to read {}: {e}", path.display()))?;
            Some(base64_encode(&bytes))
        };
        streams.push(StreamInput {
            part: part.clone(),
            path: absolute.to_string_lossy().into_owned(),
            data,
        });
    }
    Ok(CaseRequest {
        seq,
        role,
        case: case.name.clone(),
        id: case.sidecar.id.clone(),
        rules: case.sidecar.rules.clone(),
        format: case.fixture.as_ref().map(|f| f.sidecar.format.clone()),
        streams,
    })
}
