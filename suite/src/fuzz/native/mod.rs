//! Native sessions for fuzzing producers: the source fixtures' native files and the real
//! sessions the kit carries (`fuzz/seeds/producer/<format>/`) are the seeds; each iteration
//! takes one seed of a format and mutates it on the format's structure ([`mutate`]): turns
//! (the lines of a JSON-lines file, the `messages[]` of a Gemini CLI document) added,
//! dropped, duplicated, split, reordered and spliced from another seed of the format; tool
//! calls, tool results, thinking blocks, sidechain and hook/meta lines added and dropped;
//! texts rewritten ([`text`]). The same (seed, iteration) gives the same session on every
//! machine. A session found to break a producer is shrunk on the same model ([`shrink`]):
//! fewest turns and array entries first, then shortest texts.
//!
//! ```
//! use asr_suite::fuzz::native;
//!
//! let one = native::generate("gemini-cli-json", 7, 3).expect("the kit carries Gemini seeds");
//! let again = native::generate("gemini-cli-json", 7, 3).expect("the same");
//! assert_eq!(one.native.files(), again.native.files());
//! assert!(one.native.files()[0].0.ends_with(".json"));
//! ```

pub mod mutate;
pub mod text;

use serde_json::Value;
use std::sync::OnceLock;

/// One native session: its files, each parsed on its shape, under the seed's file names.
#[derive(Debug, Clone, PartialEq)]
pub struct Native {
    /// The files, in name order.
    pub files: Vec<NativeFile>,
}

/// One native file.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeFile {
    /// Its name, as the seed has it.
    pub name: String,
    /// Its content, on its shape.
    pub body: Body,
}

/// A native file's content on its shape: by its name, `.jsonl` is JSON lines, `.json` one
/// JSON document; anything else, or a document that is no JSON, stays bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// One JSON value a line; a line that is none is kept as it is.
    Lines(Vec<Line>),
    /// One JSON document.
    Document(Value),
    /// Bytes the kit does not model.
    Raw(Vec<u8>),
}

/// One line of a JSON-lines file.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A JSON value.
    Json(Value),
    /// A line that is no JSON, kept byte for byte.
    Raw(Vec<u8>),
}

/// A seed: a native session the kit carries.
#[derive(Debug, Clone)]
pub struct Seed {
    /// Where it comes from: the fixture's directory below the corpus (`sources/<format>/
    /// <name>`), or `fuzz/seeds/producer/<format>/<file>`.
    pub origin: String,
    /// The session, parsed.
    pub native: Native,
}

/// A generated session.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Its format.
    pub format: String,
    /// The seed it was made from ([`Seed::origin`]).
    pub seed: String,
    /// The mutations made, in order, in words.
    pub mutations: Vec<String>,
    /// The session.
    pub native: Native,
}

/// The formats the kit has seeds of, sorted.
pub fn formats() -> Vec<&'static str> {
    let mut formats: Vec<&'static str> = all_seeds().iter().map(|(f, _)| *f).collect();
    formats.sort_unstable();
    formats.dedup();
    formats
}

/// The seeds of `format`, fixtures first, each in name order.
pub fn seeds(format: &str) -> Vec<&'static Seed> {
    all_seeds()
        .iter()
        .filter(|(f, _)| *f == format)
        .map(|(_, s)| s)
        .collect()
}

/// The session of iteration `iteration` under `seed` for `format`: a seed of the format
/// mutated one to four times, as bytes derived from both choose. `None` when the kit has no
/// seed of the format.
pub fn generate(format: &str, seed: u64, iteration: u64) -> Option<Generated> {
    let seeds = seeds(format);
    if seeds.is_empty() {
        return None;
    }
    let data = super::seeded_bytes(
        seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ iteration ^ name_hash(format),
        2048,
    );
    let mut u = arbitrary::Unstructured::new(&data);
    let base = seeds[mutate::pick(&mut u, seeds.len())];
    let mut native = base.native.clone();
    let count = 1 + mutate::pick(&mut u, 4);
    let mut mutations = Vec::with_capacity(count);
    for _ in 0..count {
        if let Some(done) = mutate::mutate(&mut native, &seeds, &mut u) {
            mutations.push(done);
        }
    }
    if native == base.native {
        // Every mutation chosen found nothing to work on (a seed without arrays, say): one
        // text is rewritten, so that the session differs from its seed.
        mutations.extend(mutate::rewrite_any_text(&mut native, &mut u));
    }
    Some(Generated {
        format: format.to_owned(),
        seed: base.origin.clone(),
        mutations,
        native,
    })
}

impl Native {
    /// Parses files (name and bytes) on their shapes.
    pub fn parse(files: &[(String, Vec<u8>)]) -> Native {
        let mut files: Vec<NativeFile> = files
            .iter()
            .map(|(name, bytes)| NativeFile {
                name: name.clone(),
                body: Body::parse(name, bytes),
            })
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Native { files }
    }

    /// The files as bytes, by name.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        self.files
            .iter()
            .map(|f| (f.name.clone(), f.body.to_bytes()))
            .collect()
    }

    /// A measure that every step of [`shrink`] makes smaller: turns and array entries first,
    /// then bytes.
    pub fn size(&self) -> (usize, usize) {
        let mut entries = 0;
        let mut bytes = 0;
        for file in &self.files {
            match &file.body {
                Body::Lines(lines) => {
                    entries += lines.len();
                    for line in lines {
                        if let Line::Json(value) = line {
                            entries += count_entries(value);
                        }
                    }
                }
                Body::Document(value) => entries += count_entries(value),
                Body::Raw(_) => {}
            }
            bytes += file.body.to_bytes().len();
        }
        (entries, bytes)
    }
}

impl Body {
    fn parse(name: &str, bytes: &[u8]) -> Body {
        if has_extension(name, "jsonl") {
            let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            if body.is_empty() {
                return Body::Lines(Vec::new());
            }
            Body::Lines(
                crate::lines::split(body)
                    .with_final_empty()
                    .bytes()
                    .map(|line| match serde_json::from_slice(line) {
                        Ok(value) => Line::Json(value),
                        Err(_) => Line::Raw(line.to_vec()),
                    })
                    .collect(),
            )
        } else if has_extension(name, "json") {
            serde_json::from_slice(bytes).map_or_else(|_| Body::Raw(bytes.to_vec()), Body::Document)
        } else {
            Body::Raw(bytes.to_vec())
        }
    }

    /// The bytes: each line and its newline; a document pretty-printed, as the agents that
    /// keep one document a session write it.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Body::Lines(lines) => {
                let mut out = Vec::new();
                for line in lines {
                    match line {
                        Line::Json(value) => out.extend(value.to_string().into_bytes()),
                        Line::Raw(bytes) => out.extend_from_slice(bytes),
                    }
                    out.push(b'\n');
                }
                out
            }
            Body::Document(value) => {
                let mut out = serde_json::to_vec_pretty(value).unwrap_or_default();
                out.push(b'\n');
                out
            }
            Body::Raw(bytes) => bytes.clone(),
        }
    }
}

/// The smallest session found that still has the property, trying at most `budget`
/// candidates: files dropped (one stays), then turns (lines, `messages[]` entries) in runs
/// and one at a time, then entries of any array inside them, then texts halved, longest
/// first. `holds` must hold for `native` itself.
pub fn shrink(native: &Native, mut holds: impl FnMut(&Native) -> bool, budget: usize) -> Native {
    let mut best = native.clone();
    let tries = std::cell::Cell::new(0usize);
    let mut attempt = |candidate: Native, best: &mut Native| -> bool {
        if tries.get() >= budget || candidate == *best {
            return false;
        }
        tries.set(tries.get() + 1);
        if holds(&candidate) {
            *best = candidate;
            true
        } else {
            false
        }
    };
    loop {
        let before = best.size();
        let mut at = 0;
        while best.files.len() > 1 && at < best.files.len() {
            let mut candidate = best.clone();
            candidate.files.remove(at);
            if !attempt(candidate, &mut best) {
                at += 1;
            }
        }
        for file in 0..best.files.len() {
            drop_turns(&mut best, file, &mut attempt);
        }
        drop_entries(&mut best, &mut attempt);
        halve_texts(&mut best, &mut attempt);
        if best.size() >= before || tries.get() >= budget {
            return best;
        }
    }
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A member.
    Key(String),
    /// An element.
    Index(usize),
}

/// The value at `path`.
pub fn at_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut node = value;
    for step in path {
        node = match (step, node) {
            (Step::Key(key), Value::Object(map)) => map.get_mut(key)?,
            (Step::Index(n), Value::Array(items)) => items.get_mut(*n)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The paths of every array inside `value` (itself included), outermost first.
pub fn array_paths(value: &Value) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut |path, v| {
        if v.is_array() {
            out.push(path.to_vec());
        }
    });
    out
}

/// The paths of every text inside `value` that is content: a string under a member that
/// holds what someone wrote or a tool said ([`text::CONTENT_KEYS`]), or an element of an
/// array under one. Ids, types, times and names are no content.
pub fn text_paths(value: &Value) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut |path, v| {
        if v.is_string() && is_content_path(path) {
            out.push(path.to_vec());
        }
    });
    out
}

fn is_content_path(path: &[Step]) -> bool {
    let key = path.iter().rev().find_map(|s| match s {
        Step::Key(k) => Some(k.as_str()),
        Step::Index(_) => None,
    });
    key.is_some_and(|k| text::CONTENT_KEYS.contains(&k))
}

fn walk(value: &Value, path: &mut Vec<Step>, visit: &mut impl FnMut(&[Step], &Value)) {
    visit(path, value);
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                path.push(Step::Key(key.clone()));
                walk(child, path, visit);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (n, child) in items.iter().enumerate() {
                path.push(Step::Index(n));
                walk(child, path, visit);
                path.pop();
            }
        }
        _ => {}
    }
}

fn count_entries(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.values().map(count_entries).sum(),
        Value::Array(items) => items.len() + items.iter().map(count_entries).sum::<usize>(),
        _ => 0,
    }
}

type Attempt<'a> = dyn FnMut(Native, &mut Native) -> bool + 'a;

/// The turns of a file, as a list: its lines, or a document's turn array.
fn turns_len(file: &NativeFile) -> usize {
    match &file.body {
        Body::Lines(lines) => lines.len(),
        Body::Document(doc) => mutate::turn_array(doc).map_or(0, Vec::len),
        Body::Raw(_) => 0,
    }
}

fn remove_turns(file: &mut NativeFile, range: std::ops::Range<usize>) {
    match &mut file.body {
        Body::Lines(lines) => {
            lines.drain(range);
        }
        Body::Document(doc) => {
            if let Some(turns) = mutate::turn_array_mut(doc) {
                turns.drain(range);
            }
        }
        Body::Raw(_) => {}
    }
}

/// Drops runs of turns of one file: halves, quarters, ... then single turns.
fn drop_turns(best: &mut Native, file: usize, attempt: &mut Attempt<'_>) {
    let mut chunk = (turns_len(&best.files[file]) / 2).max(1);
    loop {
        let mut at = 0;
        while at < turns_len(&best.files[file]) {
            let end = (at + chunk).min(turns_len(&best.files[file]));
            let mut candidate = best.clone();
            remove_turns(&mut candidate.files[file], at..end);
            if !attempt(candidate, best) {
                at = end;
            }
        }
        if chunk == 1 {
            return;
        }
        chunk /= 2;
    }
}

/// Every JSON value of the session with where it is: (file, line) and the value.
fn values_mut(native: &mut Native) -> Vec<&mut Value> {
    let mut out = Vec::new();
    for file in &mut native.files {
        match &mut file.body {
            Body::Lines(lines) => {
                for line in lines {
                    if let Line::Json(value) = line {
                        out.push(value);
                    }
                }
            }
            Body::Document(doc) => out.push(doc),
            Body::Raw(_) => {}
        }
    }
    out
}

/// Drops entries of arrays inside the values, one at a time, innermost arrays first.
fn drop_entries(best: &mut Native, attempt: &mut Attempt<'_>) {
    let count = values_mut(best).len();
    for index in 0..count {
        let paths = {
            let values = values_mut(best);
            let Some(value) = values.into_iter().nth(index) else {
                return;
            };
            let mut paths = array_paths(value);
            paths.reverse();
            paths
        };
        for path in paths {
            let len = {
                let values = values_mut(best);
                match values.into_iter().nth(index).and_then(|v| at_mut(v, &path)) {
                    Some(Value::Array(items)) => items.len(),
                    _ => 0,
                }
            };
            // From the last entry, so that removing one leaves the places before it right.
            for element in (0..len).rev() {
                let mut candidate = best.clone();
                let Some(value) = values_mut(&mut candidate).into_iter().nth(index) else {
                    break;
                };
                let Some(Value::Array(items)) = at_mut(value, &path) else {
                    break;
                };
                if element < items.len() {
                    items.remove(element);
                    attempt(candidate, best);
                }
            }
        }
    }
}

/// Empties texts, or else halves them, longest first, while the property holds.
fn halve_texts(best: &mut Native, attempt: &mut Attempt<'_>) {
    let count = values_mut(best).len();
    for index in 0..count {
        let mut paths: Vec<(usize, Vec<Step>)> = {
            let values = values_mut(best);
            let Some(value) = values.into_iter().nth(index) else {
                return;
            };
            let snapshot = value.clone();
            text_paths(&snapshot)
                .into_iter()
                .map(|p| {
                    let len = at_mut(value, &p)
                        .and_then(|v| v.as_str().map(str::len))
                        .unwrap_or(0);
                    (len, p)
                })
                .collect()
        };
        paths.sort_by_key(|(len, _)| std::cmp::Reverse(*len));
        for (_, path) in paths {
            let mut first = true;
            loop {
                let mut candidate = best.clone();
                let Some(value) = values_mut(&mut candidate).into_iter().nth(index) else {
                    break;
                };
                let Some(Value::String(text)) = at_mut(value, &path) else {
                    break;
                };
                let chars = text.chars().count();
                if chars == 0 {
                    break;
                }
                // Emptied first: a text the failure does not rest on goes in one try, not
                // one a halving (17 for a text of 64 KiB).
                *text = if first {
                    String::new()
                } else {
                    text.chars().take(chars / 2).collect()
                };
                let kept = attempt(candidate, best);
                if first {
                    first = false;
                    if kept {
                        break;
                    }
                    continue;
                }
                if !kept {
                    break;
                }
            }
        }
    }
}

/// Whether a file's name ends in `.<extension>`, in any case.
pub fn has_extension(name: &str, extension: &str) -> bool {
    std::path::Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The real sessions the kit carries as seeds, by format (`fuzz/seeds/producer/`).
const REAL_SEEDS: &[(&str, &str, &[u8])] = &[
    (
        "claude-code-jsonl",
        "claude-code__agentlogs__compact.jsonl",
        include_bytes!(
            "../../../producer-seeds/claude-code-jsonl/claude-code__agentlogs__compact.jsonl"
        ),
    ),
    (
        "claude-code-jsonl",
        "claude-code__agentlogs__subagent-inline-sidechain.jsonl",
        include_bytes!(
            "../../../producer-seeds/claude-code-jsonl/claude-code__agentlogs__subagent-inline-sidechain.jsonl"
        ),
    ),
    (
        "claude-code-jsonl",
        "claude-code__spotter__subagents-agent-acompact-e1f845.jsonl",
        include_bytes!(
            "../../../producer-seeds/claude-code-jsonl/claude-code__spotter__subagents-agent-acompact-e1f845.jsonl"
        ),
    ),
    (
        "codex-rollout",
        "codex__agentlogs__crud-rollout-v0.89.0.jsonl",
        include_bytes!(
            "../../../producer-seeds/codex-rollout/codex__agentlogs__crud-rollout-v0.89.0.jsonl"
        ),
    ),
    (
        "gemini-cli-json",
        "gemini__agent-history__real-session-01-redacted.json",
        include_bytes!(
            "../../../producer-seeds/gemini-cli-json/gemini__agent-history__real-session-01-redacted.json"
        ),
    ),
    (
        "pi-session-jsonl",
        "pi-openclaw-family__agentlogs__branched-v3.jsonl",
        include_bytes!(
            "../../../producer-seeds/pi-session-jsonl/pi-openclaw-family__agentlogs__branched-v3.jsonl"
        ),
    ),
];

/// Every seed, with its format: the fixtures' sources, then the real sessions.
fn all_seeds() -> &'static [(&'static str, Seed)] {
    static SEEDS: OnceLock<Vec<(&'static str, Seed)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = Vec::new();
        for dir in crate::embedded::fixture_dirs() {
            let Some(format) = dir.split('/').nth(1) else {
                continue;
            };
            let files: Vec<(String, Vec<u8>)> =
                crate::embedded::corpus_files(&format!("{dir}/source"))
                    .into_iter()
                    .map(|(name, bytes)| (name.to_owned(), bytes.to_vec()))
                    .collect();
            if !files.is_empty() {
                seeds.push((
                    format,
                    Seed {
                        origin: dir.to_owned(),
                        native: Native::parse(&files),
                    },
                ));
            }
        }
        for (format, name, bytes) in REAL_SEEDS {
            seeds.push((
                *format,
                Seed {
                    origin: format!("fuzz/seeds/producer/{format}/{name}"),
                    native: Native::parse(&[((*name).to_owned(), bytes.to_vec())]),
                },
            ));
        }
        seeds
    })
}

#[cfg(test)]
mod tests;
