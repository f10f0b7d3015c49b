//! Texts kept (ASR-211): every stored text is in the output byte for byte, in the stream of
//! its session, in the source's order; a text the output holds changed is named with both
//! versions; a text it does not hold is declared lost or breaks the kit's decision.

use super::output::{Output, Place};
use super::{Broken, DECISION_CONTENT, DECISION_ORDER, DECISION_SESSIONS};
use crate::facts::{Facts, TextKind};
use crate::rule;
use std::collections::HashSet;
use unicode_normalization::UnicodeNormalization;

/// Where each item's texts are: for each item, for each of its texts, the places holding
/// it exactly (or as consecutive parts).
pub(super) type Found = Vec<Vec<Vec<Place>>>;

/// Finds every text, and charges the texts changed, lost, out of their session's stream
/// and out of order.
pub(super) fn check(facts: &Facts, out: &Output<'_>, broken: &mut Vec<Broken>) -> Found {
    let found: Found = facts
        .items
        .iter()
        .map(|item| {
            item.texts
                .iter()
                .map(|t| {
                    let exact = out.find(&t.text);
                    if exact.is_empty() {
                        out.find_joined(&t.text)
                    } else {
                        exact.to_vec()
                    }
                })
                .collect()
        })
        .collect();
    let mut canonical: Option<Vec<(&str, String, &Place)>> = None;
    let mut changed_at_home = HashSet::new();
    for (i, (item, places)) in facts.items.iter().zip(&found).enumerate() {
        let home_streams: Vec<usize> = (0..out.streams.len())
            .filter(|n| out.streams[*n].session == Some(item.session))
            .collect();
        for (t, (text, places)) in item.texts.iter().zip(places).enumerate() {
            // Kept exactly where it belongs, or somewhere when its session has no stream:
            // a copy in another session's stream (a child's answer that is also its
            // parent's tool result) does not hide a changed text in its own.
            let at_home = places.iter().any(|p| home_streams.contains(&p.stream));
            if at_home || (!places.is_empty() && home_streams.is_empty()) {
                continue;
            }
            let strings = canonical.get_or_insert_with(|| {
                out.strings()
                    .map(|(s, place)| (s, canonical_form(s), place))
                    .collect()
            });
            let wanted = canonical_form(&text.text);
            let changed = strings.iter().find(|(s, canon, place)| {
                *canon == wanted
                    && !s.is_empty()
                    && (places.is_empty() || home_streams.contains(&place.stream))
            });
            if let Some((s, _, place)) = changed {
                changed_at_home.insert((i, t));
                broken.push(Broken {
                    rule: rule::ASR_211,
                    decision: None,
                    warning: false,
                    message: format!(
                        "{} text is not kept exactly as the source stored it ({}): the source has {}, the output {} has {}",
                        with_article(kind_name(text.kind)),
                        how_changed(&text.text, s),
                        excerpt(&text.text),
                        place.pointer,
                        excerpt(s)
                    ),
                    stream: Some(out.streams[place.stream].name.to_owned()),
                    fact: Some(text.at.clone()),
                });
            } else if places.is_empty() && !declared_lost(&out.lossy(item.session), text.kind) {
                broken.push(Broken {
                    rule: rule::ASR_211,
                    decision: Some(DECISION_CONTENT),
                    warning: false,
                    message: format!(
                        "{} text of the source is in no output stream, and no producer.lossy entry declares {} lost: {}",
                        with_article(kind_name(text.kind)),
                        text.kind.lossy_names().join(" or "),
                        excerpt(&text.text)
                    ),
                    stream: None,
                    fact: Some(text.at.clone()),
                });
            }
        }
    }
    display(facts, out, &found, broken);
    placement(facts, out, &found, &changed_at_home, broken);
    order(facts, out, &found, broken);
    found
}

/// What the user saw is kept as `displayContent`: a user-facing text held only in content is
/// ASR-207 when the source holds nothing else of the item, else it breaks the decision that
/// what the source stores is kept.
fn display(facts: &Facts, out: &Output<'_>, found: &Found, broken: &mut Vec<Broken>) {
    for (item, places) in facts.items.iter().zip(found) {
        let only_display = item.texts.iter().all(|t| t.kind == TextKind::Display);
        for (text, places) in item.texts.iter().zip(places) {
            if text.kind != TextKind::Display
                || places.is_empty()
                || places
                    .iter()
                    .any(|p| p.pointer.starts_with("/displayContent"))
                || declared_lost(&out.lossy(item.session), TextKind::Display)
            {
                continue;
            }
            let place = &places[0];
            broken.push(if only_display {
                Broken {
                    rule: rule::ASR_207,
                    decision: None,
                    warning: false,
                    message: format!(
                        "the source holds only what the user saw of this message, but the output puts it at {}, not in displayContent: {}",
                        place.pointer,
                        excerpt(&text.text)
                    ),
                    stream: Some(out.streams[place.stream].name.to_owned()),
                    fact: Some(text.at.clone()),
                }
            } else {
                Broken {
                    rule: rule::ASR_211,
                    decision: Some(DECISION_CONTENT),
                    warning: false,
                    message: format!(
                        "what the user saw is not kept as displayContent (the text is only at {}): {}",
                        place.pointer,
                        excerpt(&text.text)
                    ),
                    stream: Some(out.streams[place.stream].name.to_owned()),
                    fact: Some(text.at.clone()),
                }
            });
        }
    }
}

/// Whether `lossy` declares texts of `kind` lost.
pub(super) fn declared_lost(lossy: &[&str], kind: TextKind) -> bool {
    lossy.iter().any(|entry| {
        kind.lossy_names().iter().any(|name| {
            *entry == *name
                || entry
                    .strip_prefix(name)
                    .is_some_and(|rest| matches!(rest, ".text" | ".summary" | ".output" | ".input"))
        })
    })
}

/// Each session's texts are in its own stream: a session whose texts are only in other
/// sessions' streams, or that has no stream, breaks the kit's decision.
fn placement(
    facts: &Facts,
    out: &Output<'_>,
    found: &Found,
    changed: &HashSet<(usize, usize)>,
    broken: &mut Vec<Broken>,
) {
    for (s, session) in facts.sessions.iter().enumerate() {
        let has_stream = out.streams.iter().any(|st| st.session == Some(s));
        let mut elsewhere: Option<(&crate::facts::Text, &Place)> = None;
        let mut texts = 0;
        for (i, (item, places)) in facts.items.iter().zip(found).enumerate() {
            if item.session != s {
                continue;
            }
            for (t, (text, places)) in item.texts.iter().zip(places).enumerate() {
                texts += 1;
                if changed.contains(&(i, t)) {
                    continue;
                }
                let home = places
                    .iter()
                    .any(|p| out.streams[p.stream].session == Some(s));
                if !home && elsewhere.is_none() {
                    elsewhere = places.first().map(|p| (text, p));
                }
            }
        }
        if texts == 0 {
            continue;
        }
        let lossy = out.lossy(s);
        let declared = lossy
            .iter()
            .any(|e| matches!(*e, "sessions" | "sidechains" | "subagents"));
        if let Some((text, place)) = elsewhere {
            let into = &out.streams[place.stream];
            broken.push(Broken {
                rule: rule::ASR_410,
                decision: Some(DECISION_SESSIONS),
                warning: false,
                message: format!(
                    "records of session {:?}{} are written into the stream of {}: e.g. {}",
                    session.id,
                    session
                        .scope
                        .as_deref()
                        .map(|s| format!(" (scope {s})"))
                        .unwrap_or_default(),
                    into.session
                        .and_then(|n| facts.sessions.get(n))
                        .map_or_else(
                            || "another session".to_owned(),
                            |o| format!("session {:?}", o.id)
                        ),
                    excerpt(&text.text)
                ),
                stream: Some(into.name.to_owned()),
                fact: Some(text.at.clone()),
            });
        } else if !has_stream && !declared {
            broken.push(Broken {
                rule: rule::ASR_410,
                decision: Some(DECISION_SESSIONS),
                warning: false,
                message: format!(
                    "session {:?} of the source has no output stream, and no producer.lossy entry (sessions, sidechains, subagents) declares it lost",
                    session.id
                ),
                stream: None,
                fact: Some(session.at.clone()),
            });
        }
    }
}

/// The items of each stream's session come in the source's order: the first item written
/// before an item the source has before it breaks the kit's decision (once per stream).
fn order(facts: &Facts, out: &Output<'_>, found: &Found, broken: &mut Vec<Broken>) {
    for (n, stream) in out.streams.iter().enumerate() {
        let Some(session) = stream.session else {
            continue;
        };
        let mut last: Option<(usize, &crate::facts::Item)> = None;
        for (item, places) in facts.items.iter().zip(found) {
            if item.session != session {
                continue;
            }
            let mut positions: Vec<usize> = places
                .iter()
                .flatten()
                .filter(|p| p.stream == n)
                .map(|p| p.record)
                .chain(super::output::records_of(item, stream))
                .collect();
            positions.sort_unstable();
            if positions.is_empty() {
                continue;
            }
            let floor = last.map_or(0, |(at, _)| at);
            if let Some(p) = positions.iter().find(|p| **p >= floor) {
                last = Some((*p, item));
            } else {
                {
                    let before = last.map(|(_, i)| i.at.to_string()).unwrap_or_default();
                    broken.push(Broken {
                        rule: rule::ASR_211,
                        decision: Some(DECISION_ORDER),
                        warning: false,
                        message: format!(
                            "the output puts the item at {} (line {}) before the item at {before}, which the source stores before it",
                            item.at,
                            stream.records[positions[0]].0
                        ),
                        stream: Some(stream.name.to_owned()),
                        fact: Some(item.at.clone()),
                    });
                    break;
                }
            }
        }
    }
}

/// The form two texts share when one is the other trimmed, re-flowed, normalised,
/// re-encoded or stripped of escape codes and invisible characters.
fn canonical_form(text: &str) -> String {
    let stripped = strip_escapes(text);
    let visible: String = stripped.chars().filter(|c| !invisible(*c)).collect();
    let mut out = String::with_capacity(visible.len());
    for word in visible.nfkc().collect::<String>().split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// How `to` differs from `from`, in words: the first single change that explains it.
fn how_changed(from: &str, to: &str) -> &'static str {
    type Test = (&'static str, fn(&str) -> String);
    let tests: [Test; 6] = [
        ("line endings converted", |s| {
            s.replace("\r\n", "\n").replace('\r', "\n")
        }),
        ("trimmed", |s| s.trim().to_owned()),
        ("Unicode-normalised", |s| s.nfkc().collect()),
        ("stripped of escape codes", strip_escapes),
        ("stripped of zero-width or bidirectional characters", |s| {
            s.chars().filter(|c| !invisible(*c)).collect()
        }),
        ("re-flowed: white space changed", |s| {
            s.split_whitespace().collect::<Vec<_>>().join(" ")
        }),
    ];
    tests
        .iter()
        .find(|(_, f)| f(from) == f(to))
        .map_or("changed in several ways", |(how, _)| how)
}

fn invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// The text without ANSI escape sequences (CSI, OSC and two-character ones).
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A text for a message: quoted, at most 80 characters of it.
pub(super) fn excerpt(text: &str) -> String {
    let cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        format!("{cut:?}... ({} bytes)", text.len())
    } else {
        format!("{cut:?}")
    }
}

/// `name` after "a" or "an".
fn with_article(name: &str) -> String {
    let an = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if an { "an" } else { "a" })
}

fn kind_name(kind: TextKind) -> &'static str {
    match kind {
        TextKind::Prompt => "prompt",
        TextKind::Answer => "answer",
        TextKind::Reasoning => "reasoning",
        TextKind::Summary => "summary",
        TextKind::ToolInput => "tool input",
        TextKind::ToolOutput => "tool output",
        TextKind::Notice => "notice",
        TextKind::Attachment => "attachment",
        TextKind::Instructions => "instructions",
        TextKind::Display => "user-facing",
        TextKind::Other => "stored",
    }
}
