//! Revisions and copies: `supersedes` names the latest state of an earlier record of its
//! own type, once (ASR-X-014); a local `copiedFrom.record` has a lower seq (ASR-413).

use super::deferred::Wait;
use super::{Out, State};
use crate::check::{Finding, Place};
use crate::model::{Record, canonical_session};
use crate::rule;

impl State {
    /// ASR-X-014: supersedes names an earlier record of the same type, once. `judged`: the
    /// record's own rule (ASR-222, ASR-424) already found its `supersedes` wrong, and one
    /// fault is reported once; the record it names is not taken as superseded.
    pub(super) fn supersedes(
        &mut self,
        place: &Place,
        kind: Option<&str>,
        target: &str,
        judged: bool,
        out: &mut Out,
    ) {
        let found = self.index.resolve_before(target, None);
        self.outline_reference(place, "/supersedes", found.as_slice());
        if judged {
            return;
        }
        let Some(found) = found else {
            self.wait(place, "/supersedes", target, Wait::Supersedes);
            return;
        };
        let kind = kind.unwrap_or("");
        let theirs = self.index.kind(found).unwrap_or("");
        let found_id = self.index.id(found);
        if theirs != kind {
            out.push((
                Finding::error(
                    rule::ASR_X_014,
                    "/supersedes",
                    format!("supersedes {found_id}, a {theirs} record; a revision supersedes a record of its own type ({kind})"),
                ),
                None,
            ));
        } else if let Some(line) = self.superseded_at.get(&found) {
            out.push((
                Finding::error(
                    rule::ASR_X_014,
                    "/supersedes",
                    format!("supersedes {found_id}, which the record at line {line} already supersedes; a revision names the latest state"),
                ),
                None,
            ));
        } else if self
            .index
            .seq(found)
            .zip(place.seq)
            .is_some_and(|(theirs, ours)| theirs >= ours)
        {
            out.push((
                Finding::error(
                    rule::ASR_X_014,
                    "/supersedes",
                    format!("supersedes {found_id}, whose seq is not lower"),
                ),
                None,
            ));
        } else {
            self.superseded_at.insert(found, place.line);
        }
    }

    /// ASR-413: a local original has a lower seq.
    pub(super) fn copied_from(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) {
        let Some(copied) = record.copied_from.filter(|c| c.object) else {
            return;
        };
        let local = match copied.session {
            None => !copied.names_session,
            Some(session) => canonical_session(session)
                .is_some_and(|s| self.own_session.as_deref() == Some(s.as_str())),
        };
        let Some(target) = copied.record else {
            return;
        };
        if !local {
            return;
        }
        // The copy itself is not its original; a record that only shares its id (the copy
        // reusing the original's id, ASR-X-009) may well be.
        match self
            .index
            .resolve(target)
            .into_iter()
            .find(|&n| self.index.line(n) != place.line)
        {
            Some(found) => {
                let theirs = self.index.seq(found);
                if theirs
                    .zip(place.seq)
                    .is_some_and(|(theirs, ours)| theirs >= ours)
                {
                    out.push((
                        Finding::error(
                            rule::ASR_413,
                            "/copiedFrom/record",
                            format!(
                                "the original {} has a seq not lower than the copy's",
                                self.index.id(found)
                            ),
                        ),
                        None,
                    ));
                }
            }
            None => self.wait(place, "/copiedFrom/record", target, Wait::CopiedLocal),
        }
    }
}
