//! OpenClaw's cron run log (`cron/runs/<jobId>.jsonl`): one line per finished run of a job.

use super::super::Location;
use serde_json::{Map, Value};

/// Whether the parsed `lines` are a run log's: each names its job and its run or action.
pub(super) fn is_run_log(lines: &[(usize, Map<String, Value>)]) -> bool {
    !lines.is_empty()
        && lines.iter().all(|(_, line)| {
            line.contains_key("jobId")
                && (line.contains_key("runId") || line.contains_key("action"))
        })
}

/// Reads a run log: where its facts (status, summary, model, usage, delivery) belong.
///
/// A run's facts are its own session's, the job's background session (Rule 2 of
/// openclaw-transcript-ownership.md), which the files hold no transcript of: even a run
/// that names its `sessionId` gives no stream here. The chat whose transcript holds the
/// run's result copies only its run id, and a copied run id alone does not make the run's
/// facts the chat's (ASR-427). So no line is any session's item: each is left unassigned,
/// where no property reads it.
pub(super) fn read(file: &str, lines: &[(usize, Map<String, Value>)], unknown: &mut Vec<Location>) {
    for (n, _) in lines {
        unknown.push(Location::line(file, *n, ""));
    }
}
