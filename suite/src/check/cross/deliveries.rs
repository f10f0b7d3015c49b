//! Messages and deliveries: a conversation is declared before it is used (ASR-227,
//! ASR-235), `derivedFrom` names records or session records (ASR-228), and a delivery's
//! `message` names a message (ASR-235, settled at the end).

use super::deferred::Wait;
use super::{Out, State};
use crate::check::{Finding, Place};
use crate::model::Record;
use crate::refs::parse_session_ref;
use crate::rule::{self, RuleId};

impl State {
    pub(super) fn message(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) {
        self.declared_conversation(record, rule::ASR_227, out);
        for (n, entry) in record.derived_from.into_iter().flatten().enumerate() {
            let Some(entry) = entry.as_str().filter(|e| !e.is_empty()) else {
                continue;
            };
            let pointer = format!("/derivedFrom/{n}");
            if entry.contains('#') {
                // A valid session reference with a record part was named with the sessions.
                if let Err(e) = parse_session_ref(entry) {
                    out.push((
                        Finding::error(
                            rule::ASR_228,
                            pointer,
                            format!(
                                "derivedFrom entry {entry:?} has a # part but is no session reference: {}",
                                e.describe()
                            ),
                        ),
                        None,
                    ));
                }
            } else {
                let session_like = parse_session_ref(entry).is_ok();
                self.wait(place, &pointer, entry, Wait::DerivedFrom { session_like });
            }
        }
    }

    pub(super) fn delivery(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) {
        self.declared_conversation(record, rule::ASR_235, out);
        if let Some(message) = record.message {
            self.wait(place, "/message", message, Wait::DeliveryMessage);
        }
    }

    fn declared_conversation(&self, record: &Record<'_>, rule: RuleId, out: &mut Out) {
        if let Some(conversation) = record.conversation {
            if !self.conversations.contains(conversation) {
                out.push((
                    Finding::error(
                        rule,
                        "/conversation",
                        format!("conversation {conversation:?} is not declared in the header or an earlier declaration"),
                    ),
                    None,
                ));
            }
        }
    }
}
