//! What a stream's header and declarations say of all its records, and the tags a record
//! has by them: the one account of a record's standing that the reference reader (its
//! originality) and the judge's kinds (the tags `x-asr-rule-by-kind` is keyed by) share.
//!
//! The header is the [`Layout`](super::Layout)'s: the first `session` record (PROTOCOL.md:
//! "The header is the first line of type `session` (the first line, in a right stream; a
//! reader may read past a byte order mark before it)").

use super::{Record, Standing};
use serde::{Deserialize, Serialize};

/// Whether a record is the session's own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Originality {
    /// The session's own.
    Original,
    /// A copy of a record of this or another session.
    Copy,
    /// Not known: never credited to the session.
    Unknown,
}

impl Originality {
    /// Its name in a reading, and as a record's tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Originality::Original => "original",
            Originality::Copy => "copy",
            Originality::Unknown => "unknown",
        }
    }
}

/// What the header and the declarations of a stream say of all its records, gathered in
/// stream order by [`Declared::take`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Declared {
    /// The header's id.
    pub header_id: Option<String>,
    /// The header says `authority: "mirror"`.
    pub mirror: bool,
    /// The effective `inherits`: the header's, replaced by each declaration's that is an
    /// object, the last one applying to the whole stream (decision `effective-inherits`).
    pub inherits: Option<DeclaredInherits>,
    /// Some line's lineage has `executedBy`: a wrapper ran the stream through a backing
    /// session (ASR-423).
    pub executed: bool,
    /// Some line's `lineage.inherits.mode` is `rendered`.
    pub rendered: bool,
}

/// The effective `inherits`, owned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeclaredInherits {
    /// `mode`, when it is a string.
    pub mode: Option<String>,
    /// `localThroughId`, when it is a non-empty string.
    pub local_through_id: Option<String>,
    /// `localThroughId` is there, whatever its JSON type.
    pub names_local_through: bool,
}

impl Declared {
    /// Takes the next record of the stream, standing as its layout says.
    pub fn take(&mut self, standing: Standing, record: &Record<'_>) {
        let is_header = standing == Standing::Header;
        if is_header {
            self.header_id = record.id.map(str::to_owned);
            self.mirror = record.header().mirror;
        }
        if let Some(inherits) = record
            .declared_lineage(is_header)
            .and_then(|lineage| lineage.inherits)
        {
            self.inherits = Some(DeclaredInherits {
                mode: inherits.mode.map(str::to_owned),
                local_through_id: inherits.local_through_id.map(str::to_owned),
                names_local_through: inherits.names_local_through,
            });
        }
        // Any line's, as the tags have always read them: what a reader may take from a
        // lineage it should not is still the rule of that lineage.
        if let Some(lineage) = record.lineage.map(super::Lineage::new) {
            self.executed |= lineage.object.contains_key("executedBy");
            self.rendered |= lineage.inherits.and_then(|i| i.mode) == Some("rendered");
        }
    }

    /// The effective `inherits.mode`.
    pub fn mode(&self) -> Option<&str> {
        self.inherits.as_ref().and_then(|i| i.mode.as_deref())
    }

    /// The stream declares a copied prefix: the effective mode is copied and names a
    /// `localThroughId` (ASR-415 then decides the originality of every record).
    pub fn prefix(&self) -> bool {
        self.inherits
            .as_ref()
            .is_some_and(|i| i.mode.as_deref() == Some("copied") && i.names_local_through)
    }

    /// The `localThroughId` that ends the copied prefix, when the effective mode is copied.
    pub fn prefix_end(&self) -> Option<&str> {
        self.inherits
            .as_ref()
            .filter(|i| i.mode.as_deref() == Some("copied"))
            .and_then(|i| i.local_through_id.as_deref())
    }

    /// A record's originality (PROTOCOL.md, `originality`): a copy when it has `copiedFrom`;
    /// else unknown in a mirror; else a copy when it is within the declared prefix
    /// (`in_prefix`); else original when the effective mode is none, referenced or rendered,
    /// or copied with a prefix end that names a record of the stream (`prefix_resolves`);
    /// otherwise unknown.
    pub fn originality(&self, copied: bool, in_prefix: bool, prefix_resolves: bool) -> Originality {
        if copied {
            Originality::Copy
        } else if self.mirror {
            Originality::Unknown
        } else if in_prefix {
            Originality::Copy
        } else {
            match self.mode() {
                Some("none" | "referenced" | "rendered") => Originality::Original,
                Some("copied") if prefix_resolves => Originality::Original,
                _ => Originality::Unknown,
            }
        }
    }

    /// The tags of a record other than the header, in this order: its type (`""` when it
    /// has none); `copied`, `mirror`, `prefix`, `executed`, `rendered` (a message of a
    /// rendered stream, or one with `derivedFrom`), `withdrawn`, `display` (a message with
    /// `displayContent`); then, when it is read (`read`: its originality, and whether a
    /// later record supersedes it), `original`, `copy` or `unknown`, and `superseded`.
    pub fn record_tags(
        &self,
        record: &Record<'_>,
        read: Option<(Originality, bool)>,
    ) -> Vec<String> {
        let kind = record.kind.unwrap_or("");
        let message = kind == "message";
        let mut tags = vec![kind.to_owned()];
        let mut tag = |on: bool, name: &str| {
            if on {
                tags.push(name.to_owned());
            }
        };
        tag(record.copied_from.is_some(), "copied");
        tag(self.mirror, "mirror");
        // ASR-415 decides the originality of every record of a stream declaring a copied
        // prefix, declarations too ("other than the header and declaration records").
        tag(self.prefix(), "prefix");
        tag(self.executed, "executed");
        tag(
            message && (self.rendered || record.object.contains_key("derivedFrom")),
            "rendered",
        );
        tag(record.str("status") == Some("withdrawn"), "withdrawn");
        // What the user saw beside (or instead of) what the model received: a reader that
        // reads it into the parts presents display as content (ASR-238, after ASR-207).
        tag(
            message && record.object.contains_key("displayContent"),
            "display",
        );
        if let Some((originality, superseded)) = read {
            tag(true, originality.as_str());
            tag(superseded, "superseded");
        }
        tags
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Layout;
    use serde_json::{Value, json};

    fn declared(lines: &[Value]) -> Declared {
        let mut layout = Layout::default();
        let mut declared = Declared::default();
        for (n, line) in lines.iter().enumerate() {
            let record = Record::new(line.as_object().expect("an object"));
            declared.take(layout.stand(n + 1, record.kind), &record);
        }
        declared
    }

    #[test]
    fn the_last_declared_inherits_applies_and_a_later_session_line_declares_nothing() {
        let stream = declared(&[
            json!({"type": "session", "id": "h", "authority": "mirror",
                "lineage": {"inherits": {"mode": "copied", "localThroughId": "r2"}}}),
            json!({"type": "session", "id": "h2", "lineage": {"inherits": {"mode": "none"}}}),
            json!({"type": "declaration", "id": "d", "lineage": {"inherits": {"mode": "copied", "localThroughId": 7}}}),
            json!({"type": "declaration", "id": "e", "lineage": {"inherits": null}}),
        ]);
        assert_eq!(stream.header_id.as_deref(), Some("h"));
        assert!(stream.mirror && stream.prefix() && !stream.rendered);
        assert_eq!(stream.prefix_end(), None);
        // A mirror reads unknown but for its copies.
        assert_eq!(stream.originality(false, true, true), Originality::Unknown);
        assert_eq!(stream.originality(true, false, false), Originality::Copy);
    }

    #[test]
    fn the_header_is_the_first_session_record_even_after_another() {
        let stream = declared(&[
            json!({"type": "message", "id": "m", "lineage": {"inherits": {"mode": "rendered"}}}),
            json!({"type": "session", "id": "h", "lineage": {"inherits": {"mode": "none"}}}),
        ]);
        assert_eq!(stream.header_id.as_deref(), Some("h"));
        assert_eq!(stream.mode(), Some("none"));
        // The tags read any line's lineage for a rendered stream.
        assert!(stream.rendered);
        assert_eq!(
            stream.originality(false, false, false),
            Originality::Original
        );
    }

    #[test]
    fn a_records_tags_say_what_decides_its_reading() {
        let stream = declared(&[json!({"type": "session", "id": "h",
            "lineage": {"inherits": {"mode": "copied", "localThroughId": "m"}}})]);
        let message = json!({"type": "message", "id": "m", "copiedFrom": null,
            "status": "withdrawn", "displayContent": [], "derivedFrom": []});
        let record = Record::new(message.as_object().expect("an object"));
        assert_eq!(
            stream.record_tags(&record, Some((Originality::Copy, true))),
            [
                "message",
                "copied",
                "prefix",
                "rendered",
                "withdrawn",
                "display",
                "copy",
                "superseded"
            ]
        );
        assert_eq!(
            stream.originality(false, false, true),
            Originality::Original
        );
        assert_eq!(
            stream.originality(false, false, false),
            Originality::Unknown
        );
    }
}
