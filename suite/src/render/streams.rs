//! The streams of a run's failing cases, for the HTML report to show beside each failure: the
//! start of each file, read from the corpus directory only, and each file's length.

use super::sarif::StreamFiles;
use crate::conformance::{Outcome, RunReport};
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Component, Path};

/// The most bytes of one stream a report shows.
pub const STREAM_BYTES: usize = 16 << 10;

/// The start of one stream file of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamText {
    /// Its path relative to the corpus directory.
    pub file: String,
    /// Its first [`STREAM_BYTES`] bytes at most, invalid UTF-8 replaced.
    pub text: String,
    /// Its whole length in bytes.
    pub bytes: u64,
}

/// The stream files of some cases, by case name.
pub type StreamTexts = BTreeMap<String, Vec<StreamText>>;

/// The streams of each case of `report` that failed or was non-strict, as `files` names them
/// relative to the corpus directory `root`. A name that would lead out of the corpus (an
/// absolute path, `..`, a link to elsewhere) or a file that cannot be read is left out.
pub fn failing_streams(report: &RunReport, root: &Path, files: &StreamFiles) -> StreamTexts {
    let Ok(corpus) = root.canonicalize() else {
        return StreamTexts::new();
    };
    report
        .cases
        .iter()
        .filter(|c| c.outcome.is_failure() || c.outcome == Outcome::NonStrict)
        .filter_map(|case| {
            let texts: Vec<StreamText> = files
                .get(&case.name)?
                .iter()
                .filter_map(|file| read_within(&corpus, file))
                .collect();
            Some((case.name.clone(), texts))
        })
        .collect()
}

/// The start of `file` (relative) below the canonical directory `corpus`, if it is there.
fn read_within(corpus: &Path, file: &str) -> Option<StreamText> {
    let relative = Path::new(file);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let path = corpus.join(relative);
    if !matches!(crate::walk::refusal(corpus, &path), Ok(None)) {
        return None;
    }
    let handle = std::fs::File::open(&path).ok()?;
    let bytes = handle.metadata().ok()?.len();
    let mut start = Vec::new();
    handle
        .take(STREAM_BYTES as u64)
        .read_to_end(&mut start)
        .ok()?;
    Some(StreamText {
        file: file.to_owned(),
        text: String::from_utf8_lossy(&start).into_owned(),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::report;

    #[test]
    fn only_failing_cases_streams_within_the_corpus_are_read_and_cut() {
        let scratch = tempfile::Builder::new()
            .prefix("asr-streams-")
            .tempdir()
            .expect("mkdir");
        let dir = scratch.path().to_path_buf();
        let corpus = dir.join("corpus");
        std::fs::create_dir_all(corpus.join("messages")).expect("mkdir");
        std::fs::write(
            corpus.join("messages/a.jsonl"),
            "x".repeat(STREAM_BYTES + 10),
        )
        .expect("write");
        std::fs::write(corpus.join("messages/pass.jsonl"), "{}\n").expect("write");
        std::fs::write(dir.join("outside.jsonl"), "secret\n").expect("write");
        let files: StreamFiles = [
            (
                "messages/ASR-231/n_bad_role",
                vec!["messages/a.jsonl", "../outside.jsonl", "/etc/passwd"],
            ),
            (
                "messages/ASR-212/y_image_blob_only",
                vec!["messages/pass.jsonl"],
            ),
        ]
        .into_iter()
        .map(|(case, files)| {
            (
                case.to_owned(),
                files.into_iter().map(str::to_owned).collect(),
            )
        })
        .collect();
        let texts = failing_streams(&report(), &corpus, &files);
        assert_eq!(
            texts.keys().collect::<Vec<_>>(),
            ["messages/ASR-231/n_bad_role"]
        );
        let shown = &texts["messages/ASR-231/n_bad_role"];
        assert_eq!(shown.len(), 1, "nothing outside the corpus: {shown:?}");
        assert_eq!(shown[0].file, "messages/a.jsonl");
        assert_eq!(shown[0].text.len(), STREAM_BYTES);
        assert_eq!(shown[0].bytes, (STREAM_BYTES + 10) as u64);
    }
}
