//! References to records (`r40`, `messageId=msg_01`) and to sessions
//! (`codex:019a...`, `t3-code:<namespace>:thread%3Ax#callId=c1`).

/// A reference to a record (ASR-062, not in hand).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ref<'a> {
    /// A record id: `r40`.
    Id(&'a str),
    /// A native id: `messageId=msg_01`.
    Native {
        /// The member that holds the native id (`messageId`, `callId`).
        key: &'a str,
        /// Its value.
        value: &'a str,
    },
}

/// Reads a reference; `None` for an empty string. `key=value` is a native id when the key
/// is a member name (a letter, then letters, digits or `_`); anything else is a record id.
pub fn parse_ref(text: &str) -> Option<Ref<'_>> {
    if text.is_empty() {
        return None;
    }
    if let Some((key, value)) = text.split_once('=') {
        let mut chars = key.chars();
        let is_name = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name && !value.is_empty() {
            return Some(Ref::Native { key, value });
        }
    }
    Some(Ref::Id(text))
}

/// What an element of a message's `derivedFrom` is (ASR-228: "each element of derivedFrom
/// MUST be a ref (ASR-062) or a session reference with a # part").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DerivedEntry<'a> {
    /// A ref to a record of this stream.
    Ref(Ref<'a>),
    /// A session reference with a `#` part: a record of another session.
    Session(SessionRef<'a>),
    /// A text with a `#` that is neither a ref nor a session reference.
    NotSessionRef(SessionRefError),
}

/// Reads an element of `derivedFrom`, by the grammar of refs and session references, never
/// by the characters a native id holds: a ref in `key=value` form (a member name, `=`, a
/// native id) is a ref whatever its id holds, `:` and `#` included (the spec's own message
/// ids have colons: `messageId=message:handoff:7c2e`); any other text with a `#` is a session
/// reference with a record part; the rest is a record id. `None` for an empty string.
///
/// ```
/// use asr_suite::refs::{DerivedEntry, Ref, derived_entry};
///
/// assert!(matches!(derived_entry("messageId=message:handoff:7c2e"), Some(DerivedEntry::Ref(Ref::Native { .. }))));
/// assert!(matches!(derived_entry("codex:019a#r4"), Some(DerivedEntry::Session(_))));
/// assert!(matches!(derived_entry("r40"), Some(DerivedEntry::Ref(Ref::Id("r40")))));
/// ```
pub fn derived_entry(text: &str) -> Option<DerivedEntry<'_>> {
    let reference = parse_ref(text)?;
    if matches!(reference, Ref::Native { .. }) || !text.contains('#') {
        return Some(DerivedEntry::Ref(reference));
    }
    Some(match parse_session_ref(text) {
        Ok(session) => DerivedEntry::Session(session),
        Err(e) => DerivedEntry::NotSessionRef(e),
    })
}

/// A session reference, split into its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionRef<'a> {
    /// The agent name, before the first `:`.
    pub agent: &'a str,
    /// What follows: an optional namespace and `:`, then the percent-encoded session id.
    pub path: &'a str,
    /// The reference after `#`, when there is one.
    pub fragment: Option<&'a str>,
}

impl SessionRef<'_> {
    /// The session named, without the `#` part, in the one spelling every spelling of it
    /// has: the one place where the kit decides when two session references are the same.
    ///
    /// A session reference encodes its ids ("The child's T3 thread ID contains : and %, which
    /// its session reference encodes"): a percent-escape stands for its octet, so two
    /// references name the same session when their agent names are equal and their parts
    /// between raw `:` (namespace, session id) decode to the same octets. That is RFC 3986's
    /// normalization (6.2.2.1 case, 6.2.2.2 percent-encoding) with this grammar's delimiters:
    /// `%3a` is `%3A`, and `%63` is `c`, but `%3A` is not a raw `:` (which ends a part), nor
    /// `%23` a raw `#` (which starts the record part). The spelling: each part decoded and
    /// encoded again, escaping only `%`, `:`, `#` and control characters, in upper case.
    ///
    /// ```
    /// use asr_suite::refs::parse_session_ref;
    ///
    /// let canonical = |text| parse_session_ref(text).expect("valid").canonical();
    /// assert_eq!(canonical("codex:%63hild%3a1"), "codex:child%3A1");
    /// assert_ne!(canonical("t3-code:ns:a"), canonical("t3-code:ns%3Aa"));
    /// ```
    pub fn canonical(&self) -> String {
        let mut out = String::with_capacity(self.agent.len() + 1 + self.path.len());
        out.push_str(self.agent);
        out.push(':');
        for (n, part) in self.path.split(':').enumerate() {
            if n > 0 {
                out.push(':');
            }
            // Most ids hold nothing escaped and nothing to escape: they are their spelling.
            if plain(part, true) {
                out.push_str(part);
                continue;
            }
            let octets = percent_decode(part);
            for chunk in octets.utf8_chunks() {
                escape_into(&mut out, chunk.valid(), true);
                for &octet in chunk.invalid() {
                    push_octet(&mut out, octet);
                }
            }
        }
        out
    }
}

/// The octets a part of a session reference spells: each `%` and two hex digits (as
/// [`parse_session_ref`] ensures) is its octet, every other character its UTF-8.
fn percent_decode(part: &str) -> Vec<u8> {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let Some(octet) = hex {
            out.push(octet);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    out
}

/// Writes `c` into a session reference: percent-encoded in upper case when a reference cannot
/// hold it raw (`%`, `#`, a control character, and `:` when `colon`), else as it is.
fn push_escaped(out: &mut String, c: char, colon: bool) {
    if escaped(c, colon) {
        let mut buf = [0u8; 4];
        for byte in c.encode_utf8(&mut buf).bytes() {
            push_octet(out, byte);
        }
    } else {
        out.push(c);
    }
}

/// Whether a reference cannot hold `c` raw.
fn escaped(c: char, colon: bool) -> bool {
    c == '%' || c == '#' || c.is_control() || (colon && c == ':')
}

/// `%` and the octet in two upper-case hex digits.
fn push_octet(out: &mut String, octet: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(octet >> 4)]));
    out.push(char::from(HEX[usize::from(octet & 0xf)]));
}

/// Why a string is not a session reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionRefError {
    /// No `:` after a non-empty agent name.
    NoAgent,
    /// Nothing after the agent name.
    NoId,
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// A control character or white space where none may be.
    BadCharacter,
    /// A `#` with nothing after it.
    EmptyFragment,
}

impl SessionRefError {
    /// What is wrong, in words.
    pub fn describe(self) -> &'static str {
        match self {
            SessionRefError::NoAgent => "it has no agent name before a `:`",
            SessionRefError::NoId => "it has no session id after the agent name",
            SessionRefError::BadEscape => "a `%` is not followed by two hex digits",
            SessionRefError::BadCharacter => {
                "it contains a control character or white space in the agent name"
            }
            SessionRefError::EmptyFragment => "its `#` part is empty",
        }
    }
}

/// Reads a session reference.
///
/// ```
/// use asr_suite::refs::parse_session_ref;
///
/// let child = parse_session_ref("t3-code:6f1d:thread%3Adelegated#callId=c1").expect("valid");
/// assert_eq!((child.agent, child.path, child.fragment), ("t3-code", "6f1d:thread%3Adelegated", Some("callId=c1")));
/// assert!(parse_session_ref("no-agent-name").is_err());
/// ```
pub fn parse_session_ref(text: &str) -> Result<SessionRef<'_>, SessionRefError> {
    let (head, fragment) = match text.split_once('#') {
        Some((head, fragment)) => {
            if fragment.is_empty() {
                return Err(SessionRefError::EmptyFragment);
            }
            (head, Some(fragment))
        }
        None => (text, None),
    };
    let (agent, path) = head.split_once(':').ok_or(SessionRefError::NoAgent)?;
    if agent.is_empty() || agent.contains('%') {
        return Err(SessionRefError::NoAgent);
    }
    // White space as the schemas' pattern has it (ECMA-262 `\s`, which holds U+FEFF), and
    // control characters: the validator and the reader read one grammar.
    if agent
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\u{feff}')
    {
        return Err(SessionRefError::BadCharacter);
    }
    if path.is_empty() {
        return Err(SessionRefError::NoId);
    }
    if path.chars().any(char::is_control) {
        return Err(SessionRefError::BadCharacter);
    }
    let bytes = path.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        if *byte == b'%' {
            let hex = bytes.get(at + 1..at + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return Err(SessionRefError::BadEscape);
            }
        }
    }
    Ok(SessionRef {
        agent,
        path,
        fragment,
    })
}

/// The canonical session reference of a stream, from its header's agent name, optional
/// namespace and session id. What a reference cannot hold raw is percent-encoded, in upper
/// case: `%`, `#` (it would start a record part) and control characters in both parts, and
/// `:` in the session id (it would end the namespace).
pub fn own_session_ref(agent: &str, namespace: Option<&str>, session_id: &str) -> String {
    let mut out = String::with_capacity(agent.len() + session_id.len() + 8);
    out.push_str(agent);
    out.push(':');
    if let Some(namespace) = namespace {
        escape_into(&mut out, namespace, false);
        out.push(':');
    }
    escape_into(&mut out, session_id, true);
    out
}

fn escape_into(out: &mut String, text: &str, colon: bool) {
    if plain(text, colon) {
        out.push_str(text);
        return;
    }
    // What needs no escape is copied a run at a time.
    let mut rest = text;
    while let Some((at, c)) = rest.char_indices().find(|&(_, c)| escaped(c, colon)) {
        out.push_str(&rest[..at]);
        push_escaped(out, c, colon);
        rest = &rest[at + c.len_utf8()..];
    }
    out.push_str(rest);
}

/// Whether `text` is all printable ASCII that [`push_escaped`] writes as it is (so `%`
/// escapes nothing in it). A `false` only sends it the long way.
fn plain(text: &str, colon: bool) -> bool {
    text.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'%' && b != b'#' && !(colon && b == b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_text_is_written_as_each_character_would_be() {
        let texts = [
            "",
            "abc",
            "a:b",
            "a%b",
            "a#b",
            "a b",
            "a\u{7f}",
            "a\tb",
            "\u{85}x",
            "été",
            "~!$&'()*+,;=@[]",
            "\u{1f}",
            "0123456789-._",
        ];
        for text in texts {
            for colon in [false, true] {
                let mut slow = String::new();
                for c in text.chars() {
                    push_escaped(&mut slow, c, colon);
                }
                let mut fast = String::new();
                escape_into(&mut fast, text, colon);
                assert_eq!(fast, slow, "{text:?} colon {colon}");
                // Plain only says so of what is surely written as it is.
                assert!(
                    !plain(text, colon) || slow == text,
                    "{text:?} colon {colon}"
                );
            }
        }
        assert!(plain("a:b", false) && !plain("a:b", true) && plain("~!$&'()*+,;=@[]", true));
    }

    #[test]
    fn refs_are_ids_or_native_ids() {
        assert_eq!(parse_ref("r40"), Some(Ref::Id("r40")));
        assert_eq!(
            parse_ref("messageId=msg_01"),
            Some(Ref::Native {
                key: "messageId",
                value: "msg_01"
            })
        );
        assert_eq!(
            parse_ref("a=b=c"),
            Some(Ref::Native {
                key: "a",
                value: "b=c"
            })
        );
        assert_eq!(parse_ref("=x"), Some(Ref::Id("=x")));
        assert_eq!(parse_ref("9a=x"), Some(Ref::Id("9a=x")));
        assert_eq!(parse_ref("k="), Some(Ref::Id("k=")));
        assert_eq!(parse_ref(""), None);
    }

    #[test]
    fn the_spec_examples_are_session_refs() {
        let t3 = "t3-code:6f1d2c3a-5b7e-4c21-9a0d-3e8f1b2c4d5e:thread%3Adelegated-task%3Acommand%253Amcp%253A9f2c";
        let parsed = parse_session_ref(t3).expect("valid");
        assert_eq!(parsed.agent, "t3-code");
        assert_eq!(parsed.fragment, None);
        assert_eq!(
            own_session_ref(
                "t3-code",
                Some("6f1d2c3a-5b7e-4c21-9a0d-3e8f1b2c4d5e"),
                "thread:delegated-task:command%3Amcp%3A9f2c"
            ),
            t3
        );
        let with = parse_session_ref("claude-code:0f3c#callId=toolu_01Z").expect("valid");
        assert_eq!(with.fragment, Some("callId=toolu_01Z"));
        assert_eq!(with.canonical(), "claude-code:0f3c");
    }

    #[test]
    fn malformed_session_refs_are_refused_with_a_reason() {
        assert_eq!(parse_session_ref("no-colon"), Err(SessionRefError::NoAgent));
        assert_eq!(parse_session_ref(":id"), Err(SessionRefError::NoAgent));
        assert_eq!(parse_session_ref("codex:"), Err(SessionRefError::NoId));
        assert_eq!(
            parse_session_ref("codex:a%zz"),
            Err(SessionRefError::BadEscape)
        );
        assert_eq!(
            parse_session_ref("codex:a%2"),
            Err(SessionRefError::BadEscape)
        );
        assert_eq!(
            parse_session_ref("codex:a#"),
            Err(SessionRefError::EmptyFragment)
        );
        assert_eq!(
            parse_session_ref("co dex:a"),
            Err(SessionRefError::BadCharacter)
        );
    }

    #[test]
    fn the_own_reference_escapes_what_a_reference_cannot_hold() {
        for (namespace, id) in [
            (Some("n#s"), "id"),
            (Some("50%"), "id"),
            (Some("tab\there"), "a\u{1}b"),
            (None, "line\nbreak:%#\u{7f}"),
        ] {
            let written = own_session_ref("codex", namespace, id);
            let parsed = parse_session_ref(&written).expect("a session reference");
            assert_eq!(
                (parsed.agent, parsed.fragment),
                ("codex", None),
                "{written}"
            );
            assert_eq!(parsed.canonical(), written);
        }
        assert_eq!(
            own_session_ref("codex", Some("n#s"), "a:b"),
            "codex:n%23s:a%3Ab"
        );
    }

    #[test]
    fn canonical_form_ignores_escape_case() {
        let a = parse_session_ref("x:a%3ab").expect("valid").canonical();
        let b = parse_session_ref("x:a%3Ab#r1").expect("valid").canonical();
        assert_eq!(a, b);
    }

    #[test]
    fn an_escape_is_its_octet_but_never_a_delimiter() {
        let canonical = |text: &str| parse_session_ref(text).expect("valid").canonical();
        // What needs no escape is the same escaped or not, in any case of hex.
        assert_eq!(canonical("codex:%63hild"), "codex:child");
        assert_eq!(canonical("codex:%C3%a9t%C3%A9"), "codex:été");
        assert_eq!(canonical("t3-code:ns:thread%2Dx"), "t3-code:ns:thread-x");
        // A raw `:` ends a part; an escaped one is in it. `%23` is no record part.
        assert_ne!(canonical("t3-code:ns:a"), canonical("t3-code:ns%3Aa"));
        assert_eq!(canonical("codex:a%23b"), "codex:a%23b");
        assert_eq!(canonical("codex:a%25%3A%7f"), "codex:a%25%3A%7F");
        // Octets that are no UTF-8 stay escaped.
        assert_eq!(canonical("codex:%ff%41"), "codex:%FFA");
        for text in ["codex:%63hild", "t3-code:ns:a b", "codex:%ff", "codex::x"] {
            let once = canonical(text);
            assert_eq!(canonical(&once), once, "{text}");
        }
    }
}

#[cfg(test)]
mod agreement {
    //! The validator (the schemas' `SessionRef` patterns) and the reader and checker
    //! ([`parse_session_ref`]) agree on what a session reference is: over every string of
    //! the corpus's streams that has a `:`, and over the hard ones.

    use super::parse_session_ref;
    use serde_json::Value;

    fn pattern_holds(name: &str, text: &str) -> bool {
        let common: Value =
            serde_json::from_str(include_str!("../../schemas/common.schema.json")).expect("JSON");
        let pattern = common["$defs"][name]["pattern"].clone();
        let schema = serde_json::json!({"type": "string", "pattern": pattern});
        jsonschema::validator_for(&schema)
            .expect("compiles")
            .is_valid(&Value::String(text.to_owned()))
    }

    fn agree(text: &str) -> Result<(), String> {
        let parsed = parse_session_ref(text);
        let by_schema = pattern_holds("SessionRef", text);
        let without = pattern_holds("SessionRefNoFragment", text);
        let with = pattern_holds("SessionRefWithFragment", text);
        let fragment = parsed.as_ref().is_ok_and(|r| r.fragment.is_some());
        if parsed.is_ok() == by_schema
            && without == (parsed.is_ok() && !fragment)
            && with == (parsed.is_ok() && fragment)
        {
            Ok(())
        } else {
            Err(format!(
                "{text:?}: the parser says {:?}, the schema {by_schema} (without a # part {without}, with one {with})",
                parsed.map(|r| r.canonical())
            ))
        }
    }

    #[test]
    fn the_schema_and_the_parser_agree_on_the_hard_ones() {
        let hard = [
            "codex:019a",
            "codex:a%3Ab",
            "codex:a%3",
            "codex:a%zz",
            "codex",
            ":id",
            "codex:",
            "codex:id#",
            "codex:id#callId=c1",
            "codex:id#line\nbreak",
            "co dex:id",
            "co\u{a0}dex:id",
            "co\u{feff}dex:id",
            "co\u{85}dex:id",
            "co\u{7f}dex:id",
            "codex:kid\u{85}x",
            "codex:kid\u{7f}x",
            "codex:kid\u{9f}x",
            "codex:kid\u{a0}x",
            "codex:kid\u{1}x",
            "codex:kid\tx",
            "codex:kid x",
            "codex:a#b#c",
            "a#b:c",
            "codex:ns:id",
            "codex:ns%3Aid",
            "t3-code:6f1d:thread%3Adelegated#callId=c1",
            "codex:\u{2028}",
            "co\u{2028}dex:id",
            "co\u{3000}dex:id",
            "c%d:id",
            "codex:%",
        ];
        let disagreements: Vec<String> = hard.iter().filter_map(|t| agree(t).err()).collect();
        assert!(disagreements.is_empty(), "{disagreements:#?}");
    }

    #[test]
    fn the_schema_and_the_parser_agree_on_every_session_string_of_the_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let mut texts = std::collections::BTreeSet::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir)
                .expect("a corpus directory")
                .flatten()
            {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    let bytes = std::fs::read(&path).expect("a stream");
                    for line in crate::lines::split(&bytes).bytes() {
                        if let Ok(value) = serde_json::from_slice::<Value>(line) {
                            crate::facts::each_string(&value, "", &mut |_, s| {
                                if s.contains(':') && s.len() < 300 {
                                    texts.insert(s.to_owned());
                                }
                            });
                        }
                    }
                }
            }
        }
        assert!(texts.len() > 200, "{} strings", texts.len());
        let disagreements: Vec<String> = texts.iter().filter_map(|t| agree(t).err()).collect();
        assert!(disagreements.is_empty(), "{disagreements:#?}");
    }
}
