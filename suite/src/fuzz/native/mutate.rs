//! Mutations of a native session on its format's structure. A turn is a line of a
//! JSON-lines file (Claude Code, Codex rollouts, pi and OpenClaw sessions: each line one
//! object with a `type`, and a `message` or `payload`), or an entry of a document's turn
//! array (`messages[]` of a Gemini CLI session). Entries are the elements of any array
//! inside a turn or document: content blocks, tool calls, thoughts. Which kind of line or
//! entry is a tool call, a tool result or a thinking block is told by its `type`, its
//! `payload.type`, its role and the member that holds it, as the formats spell them.

use super::text::{REWRITES, Rewrite, rewrite};
use super::{Body, Line, Native, Seed, Step, array_paths, at_mut, text_paths};
use arbitrary::Unstructured;
use serde_json::Value;

/// One mutation of `native`, chosen by `u`, among seeds of its format (`seeds`, for
/// splicing); what it did, in words, or `None` when the session had nothing it works on.
pub fn mutate(native: &mut Native, seeds: &[&Seed], u: &mut Unstructured<'_>) -> Option<String> {
    match pick(u, 16) {
        0 => drop_turn(native, u),
        1 => duplicate_turn(native, u),
        2 => split_turn(native, u),
        3 => reorder_turns(native, u),
        4 => splice_turn(native, seeds, u),
        5 => entry(native, u, is_tool, Edit::Duplicate, "tool call or result"),
        6 => entry(native, u, is_tool, Edit::Remove, "tool call or result"),
        7 => entry(native, u, is_thinking, Edit::Duplicate, "thinking block"),
        8 => entry(native, u, is_thinking, Edit::Remove, "thinking block"),
        9 => sidechain(native, u),
        10 => meta_turn(native, u),
        11 => entry(native, u, |_, _| true, Edit::Swap, "array entry"),
        _ => rewrite_any_text(native, u),
    }
}

/// A number below `n` chosen by `u` (0 when its bytes are used up or `n` is 0).
pub fn pick(u: &mut Unstructured<'_>, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    u.choose_index(n).unwrap_or(0)
}

/// A document's turn array: `messages[]`, else the first array member, else the document
/// itself when it is an array.
pub fn turn_array(doc: &Value) -> Option<&Vec<Value>> {
    match doc {
        Value::Array(items) => Some(items),
        Value::Object(map) => map
            .get("messages")
            .and_then(Value::as_array)
            .or_else(|| map.values().find_map(Value::as_array)),
        _ => None,
    }
}

/// [`turn_array`], to change.
pub fn turn_array_mut(doc: &mut Value) -> Option<&mut Vec<Value>> {
    match doc {
        Value::Array(items) => Some(items),
        Value::Object(map) => {
            let key = if map.get("messages").is_some_and(Value::is_array) {
                "messages".to_owned()
            } else {
                map.iter().find(|(_, v)| v.is_array())?.0.clone()
            };
            map.get_mut(&key).and_then(Value::as_array_mut)
        }
        _ => None,
    }
}

/// One text of the session that is content, rewritten one of the ways of
/// [`super::text`]; `None` when it has none.
pub fn rewrite_any_text(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let roots = roots(native);
    let texts: Vec<(usize, Option<usize>, Vec<Step>)> = roots
        .iter()
        .flat_map(|(file, line, value)| {
            text_paths(value)
                .into_iter()
                .map(move |path| (*file, *line, path))
        })
        .collect();
    if texts.is_empty() {
        return None;
    }
    let (file, line, path) = texts[pick(u, texts.len())].clone();
    let mut how = REWRITES[pick(u, REWRITES.len())];
    // A 64 KiB text in one session in three that draw it: long sessions cost the producer
    // and the judge more, and most findings show on short ones.
    if how == Rewrite::Long && pick(u, 3) != 0 {
        how = Rewrite::Tabs;
    }
    let target = root_mut(native, file, line).and_then(|v| at_mut(v, &path))?;
    let old = target.as_str().unwrap_or_default().to_owned();
    *target = Value::String(rewrite(how, &old));
    Some(format!(
        "text {:?} of {} rewritten",
        how,
        place(native, file, line, &path)
    ))
}

/// The values of the session: each JSON line and each document, with their file and line.
fn roots(native: &Native) -> Vec<(usize, Option<usize>, &Value)> {
    let mut out = Vec::new();
    for (f, file) in native.files.iter().enumerate() {
        match &file.body {
            Body::Lines(lines) => {
                for (n, line) in lines.iter().enumerate() {
                    if let Line::Json(value) = line {
                        out.push((f, Some(n), value));
                    }
                }
            }
            Body::Document(doc) => out.push((f, None, doc)),
            Body::Raw(_) => {}
        }
    }
    out
}

fn root_mut(native: &mut Native, file: usize, line: Option<usize>) -> Option<&mut Value> {
    match (&mut native.files.get_mut(file)?.body, line) {
        (Body::Lines(lines), Some(n)) => match lines.get_mut(n)? {
            Line::Json(value) => Some(value),
            Line::Raw(_) => None,
        },
        (Body::Document(doc), None) => Some(doc),
        _ => None,
    }
}

fn place(native: &Native, file: usize, line: Option<usize>, path: &[Step]) -> String {
    let name = native.files.get(file).map_or("?", |f| f.name.as_str());
    let pointer: String = path
        .iter()
        .map(|s| match s {
            Step::Key(k) => format!("/{k}"),
            Step::Index(n) => format!("/{n}"),
        })
        .collect();
    match line {
        Some(n) => format!("{name} line {} {pointer}", n + 1),
        None => format!("{name} {pointer}"),
    }
}

/// The files with turns, and how many each has.
fn turn_files(native: &Native) -> Vec<(usize, usize)> {
    native
        .files
        .iter()
        .enumerate()
        .filter_map(|(f, file)| {
            let n = match &file.body {
                Body::Lines(lines) => lines.len(),
                Body::Document(doc) => turn_array(doc).map_or(0, Vec::len),
                Body::Raw(_) => 0,
            };
            (n > 0).then_some((f, n))
        })
        .collect()
}

/// A file with turns, chosen by `u`, and the number of its turns.
fn some_turns(native: &Native, u: &mut Unstructured<'_>) -> Option<(usize, usize)> {
    let files = turn_files(native);
    (!files.is_empty()).then(|| files[pick(u, files.len())])
}

/// Runs `edit` on the turns of file `f`: lines, or a document's turn array (its values).
fn with_turns<R>(
    native: &mut Native,
    f: usize,
    edit: impl FnOnce(&mut dyn Turns) -> R,
) -> Option<R> {
    match &mut native.files.get_mut(f)?.body {
        Body::Lines(lines) => Some(edit(lines)),
        Body::Document(doc) => turn_array_mut(doc).map(|t| edit(t)),
        Body::Raw(_) => None,
    }
}

/// A list of turns, lines or values alike.
trait Turns {
    fn len(&self) -> usize;
    fn remove(&mut self, at: usize);
    fn duplicate(&mut self, at: usize);
    fn swap(&mut self, a: usize, b: usize);
    fn value_mut(&mut self, at: usize) -> Option<&mut Value>;
    fn insert_value(&mut self, at: usize, value: Value);
}

impl Turns for Vec<Line> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn remove(&mut self, at: usize) {
        Vec::remove(self, at);
    }
    fn duplicate(&mut self, at: usize) {
        let copy = self[at].clone();
        self.insert(at + 1, copy);
    }
    fn swap(&mut self, a: usize, b: usize) {
        <[Line]>::swap(self, a, b);
    }
    fn value_mut(&mut self, at: usize) -> Option<&mut Value> {
        match self.get_mut(at)? {
            Line::Json(value) => Some(value),
            Line::Raw(_) => None,
        }
    }
    fn insert_value(&mut self, at: usize, value: Value) {
        self.insert(at, Line::Json(value));
    }
}

impl Turns for Vec<Value> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn remove(&mut self, at: usize) {
        Vec::remove(self, at);
    }
    fn duplicate(&mut self, at: usize) {
        let copy = self[at].clone();
        self.insert(at + 1, copy);
    }
    fn swap(&mut self, a: usize, b: usize) {
        <[Value]>::swap(self, a, b);
    }
    fn value_mut(&mut self, at: usize) -> Option<&mut Value> {
        self.get_mut(at)
    }
    fn insert_value(&mut self, at: usize, value: Value) {
        self.insert(at, value);
    }
}

fn drop_turn(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let (f, n) = some_turns(native, u)?;
    let at = pick(u, n);
    with_turns(native, f, |t| t.remove(at))?;
    Some(format!(
        "turn {} of {} dropped",
        at + 1,
        native.files[f].name
    ))
}

fn duplicate_turn(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let (f, n) = some_turns(native, u)?;
    let at = pick(u, n);
    with_turns(native, f, |t| t.duplicate(at))?;
    Some(format!(
        "turn {} of {} duplicated",
        at + 1,
        native.files[f].name
    ))
}

fn reorder_turns(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let (file, count) = some_turns(native, u)?;
    if count < 2 {
        return None;
    }
    let first = pick(u, count);
    // Mostly a neighbour (the order a writer could have got wrong), else anywhere.
    let second = if pick(u, 3) == 0 {
        pick(u, count)
    } else {
        (first + 1) % count
    };
    with_turns(native, file, |t| t.swap(first, second))?;
    Some(format!(
        "turns {} and {} of {} swapped",
        first + 1,
        second + 1,
        native.files[file].name
    ))
}

/// Where a turn keeps its content blocks, by format: `message.content` (Claude Code, pi,
/// OpenClaw), `payload.content` (Codex), `content` (Gemini CLI).
const CONTENT_PLACES: [[&str; 2]; 3] = [
    ["message", "content"],
    ["payload", "content"],
    ["content", ""],
];

/// A turn whose content has two blocks or more becomes two turns, the blocks shared out;
/// the second's id is new, and its parent the first (as Claude Code writes one response
/// split over lines).
fn split_turn(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let (f, n) = some_turns(native, u)?;
    let start = pick(u, n);
    let cut = u.int_in_range(1..=8u8).unwrap_or(1);
    with_turns(native, f, |turns| {
        for step in 0..turns.len() {
            let at = (start + step) % turns.len();
            let Some(turn) = turns.value_mut(at) else {
                continue;
            };
            for place in CONTENT_PLACES {
                let path: Vec<Step> = place
                    .iter()
                    .filter(|k| !k.is_empty())
                    .map(|k| Step::Key((*k).to_owned()))
                    .collect();
                let Some(Value::Array(blocks)) = at_mut(turn, &path) else {
                    continue;
                };
                if blocks.len() < 2 {
                    continue;
                }
                let k = usize::from(cut).min(blocks.len() - 1);
                let rest = blocks.split_off(k);
                let mut second = turn.clone();
                if let Some(Value::Array(b)) = at_mut(&mut second, &path) {
                    *b = rest;
                }
                renew_id(turn, &mut second);
                turns.insert_value(at + 1, second);
                return Some(format!("turn {} split after block {k}", at + 1));
            }
        }
        None
    })?
    .map(|done| format!("{done} of {}", native.files[f].name))
}

/// Gives `copy` an id of its own, its parent `turn` where the format records parents.
fn renew_id(turn: &Value, copy: &mut Value) {
    let Some(map) = copy.as_object_mut() else {
        return;
    };
    for (id, parent) in [("uuid", "parentUuid"), ("id", "parentId")] {
        if let Some(Value::String(own)) = turn.get(id) {
            map.insert(id.to_owned(), Value::String(format!("{own}-fz")));
            if map.contains_key(parent) {
                map.insert(parent.to_owned(), Value::String(own.clone()));
            }
        }
    }
}

/// A turn of another seed of the format (or of this one) put in at some place.
fn splice_turn(native: &mut Native, seeds: &[&Seed], u: &mut Unstructured<'_>) -> Option<String> {
    let (file, count) = some_turns(native, u)?;
    let lines = matches!(native.files[file].body, Body::Lines(_));
    let donor = seeds.get(pick(u, seeds.len()))?;
    let candidates: Vec<&Value> = donor
        .native
        .files
        .iter()
        .flat_map(|donated| -> Vec<&Value> {
            match (&donated.body, lines) {
                (Body::Lines(donated_lines), true) => donated_lines
                    .iter()
                    .filter_map(|line| match line {
                        Line::Json(value) => Some(value),
                        Line::Raw(_) => None,
                    })
                    .collect(),
                (Body::Document(doc), false) => turn_array(doc)
                    .map(|turns| turns.iter().collect())
                    .unwrap_or_default(),
                _ => Vec::new(),
            }
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let turn = candidates[pick(u, candidates.len())].clone();
    let at = pick(u, count + 1);
    with_turns(native, file, |t| t.insert_value(at, turn))?;
    Some(format!(
        "a turn of {} spliced in at {} of {}",
        donor.origin,
        at + 1,
        native.files[file].name
    ))
}

/// A sidechain line: one that says it is (`isSidechain`) flipped, or one made one.
fn sidechain(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let (f, n) = some_turns(native, u)?;
    if !matches!(native.files[f].body, Body::Lines(_)) {
        return None;
    }
    let at = pick(u, n);
    with_turns(native, f, |t| {
        let value = t.value_mut(at)?.as_object_mut()?;
        let now = value.get("isSidechain").and_then(Value::as_bool) != Some(true);
        value.insert("isSidechain".into(), Value::Bool(now));
        Some(now)
    })?
    .map(|now| {
        format!(
            "line {} of {} made {}",
            at + 1,
            native.files[f].name,
            if now {
                "a sidechain line"
            } else {
                "no sidechain line"
            }
        )
    })
}

/// A hook or meta turn: a copy of a turn, marked meta (`isMeta`, as Claude Code marks the
/// context a hook injects) with an id of its own, or, in a Gemini CLI document, made an
/// `info` message the CLI showed.
fn meta_turn(native: &mut Native, u: &mut Unstructured<'_>) -> Option<String> {
    let (f, n) = some_turns(native, u)?;
    let lines = matches!(native.files[f].body, Body::Lines(_));
    let at = pick(u, n);
    with_turns(native, f, |t| {
        let original = t.value_mut(at)?.clone();
        let mut copy = original.clone();
        renew_id(&original, &mut copy);
        let map = copy.as_object_mut()?;
        if lines {
            map.insert("isMeta".into(), Value::Bool(true));
        } else {
            map.insert("type".into(), Value::String("info".into()));
            map.retain(|k, _| ["id", "timestamp", "type", "content"].contains(&k.as_str()));
            map.insert(
                "content".into(),
                Value::String("<hook>context a hook added</hook>".into()),
            );
        }
        t.insert_value(at + 1, copy);
        Some(())
    })??;
    Some(format!(
        "a meta turn after turn {} of {}",
        at + 1,
        native.files[f].name
    ))
}

/// How an entry is changed.
#[derive(Debug, Clone, Copy)]
enum Edit {
    Duplicate,
    Remove,
    Swap,
}

/// Where an entry is: a line of a file, or an element of an array inside a value.
#[derive(Debug, Clone)]
enum Loc {
    Line {
        file: usize,
        at: usize,
    },
    Element {
        file: usize,
        line: Option<usize>,
        array: Vec<Step>,
        at: usize,
    },
}

/// One entry that `kind` accepts (given the entry and the member holding its array), edited.
fn entry(
    native: &mut Native,
    u: &mut Unstructured<'_>,
    kind: fn(&Value, Option<&str>) -> bool,
    edit: Edit,
    what: &str,
) -> Option<String> {
    let mut locs = Vec::new();
    for (f, file) in native.files.iter().enumerate() {
        if let Body::Lines(lines) = &file.body {
            for (n, line) in lines.iter().enumerate() {
                if let Line::Json(value) = line {
                    if kind(value, None) {
                        locs.push(Loc::Line { file: f, at: n });
                    }
                }
            }
        }
    }
    for (file, line, value) in roots(native) {
        for array in array_paths(value) {
            let holder = array.iter().rev().find_map(|s| match s {
                Step::Key(k) => Some(k.as_str()),
                Step::Index(_) => None,
            });
            let mut probe = value.clone();
            let Some(Value::Array(items)) = at_mut(&mut probe, &array) else {
                continue;
            };
            for (at, item) in items.iter().enumerate() {
                if kind(item, holder) {
                    locs.push(Loc::Element {
                        file,
                        line,
                        array: array.clone(),
                        at,
                    });
                }
            }
        }
    }
    if locs.is_empty() {
        return None;
    }
    let loc = locs[pick(u, locs.len())].clone();
    let other = pick(u, 1 << 16);
    match loc {
        Loc::Line { file, at } => {
            let Body::Lines(lines) = &mut native.files.get_mut(file)?.body else {
                return None;
            };
            edit_list(lines, at, edit, other);
            Some(format!(
                "{what} line {} of {} {}",
                at + 1,
                native.files[file].name,
                edit.said()
            ))
        }
        Loc::Element {
            file,
            line,
            array,
            at,
        } => {
            let Value::Array(items) =
                root_mut(native, file, line).and_then(|v| at_mut(v, &array))?
            else {
                return None;
            };
            edit_list(items, at, edit, other);
            let mut path = array;
            path.push(Step::Index(at));
            Some(format!(
                "{what} at {} {}",
                place(native, file, line, &path),
                edit.said()
            ))
        }
    }
}

fn edit_list<T: Clone>(items: &mut Vec<T>, at: usize, edit: Edit, other: usize) {
    match edit {
        Edit::Duplicate => {
            let copy = items[at].clone();
            items.insert(at + 1, copy);
        }
        Edit::Remove => {
            items.remove(at);
        }
        Edit::Swap => {
            let b = other % items.len();
            items.swap(at, b);
        }
    }
}

impl Edit {
    fn said(self) -> &'static str {
        match self {
            Edit::Duplicate => "duplicated",
            Edit::Remove => "dropped",
            Edit::Swap => "moved",
        }
    }
}

/// What kind of native item a value is, in the words its format uses: its `type`,
/// `payload.type`, `role`, `message.role` and `subtype`, lower case.
fn kind_words(value: &Value) -> String {
    let mut words = String::new();
    for path in [
        &["type"][..],
        &["payload", "type"],
        &["role"],
        &["message", "role"],
        &["subtype"],
    ] {
        let mut node = Some(value);
        for key in path {
            node = node.and_then(|n| n.get(key));
        }
        if let Some(word) = node.and_then(Value::as_str) {
            words.push_str(&word.to_ascii_lowercase());
            words.push(' ');
        }
    }
    words
}

/// A tool call or a tool result: Claude Code's `tool_use` and `tool_result` blocks, Codex's
/// `function_call`, `custom_tool_call` and their outputs, pi's `toolCall` blocks and
/// `toolResult` messages, Gemini CLI's `toolCalls[]`.
fn is_tool(value: &Value, holder: Option<&str>) -> bool {
    if matches!(holder, Some("toolCalls" | "tool_calls")) {
        return value.is_object();
    }
    let words = kind_words(value);
    ["tool", "function_call", "exec_command"]
        .iter()
        .any(|w| words.contains(w))
}

/// A thinking block: Claude Code's and pi's `thinking`, Codex's `reasoning` items, Gemini
/// CLI's `thoughts[]`.
fn is_thinking(value: &Value, holder: Option<&str>) -> bool {
    if holder == Some("thoughts") {
        return value.is_object();
    }
    let words = kind_words(value);
    ["thinking", "reasoning"].iter().any(|w| words.contains(w))
}
