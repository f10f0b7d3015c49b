//! Messages and deliveries: a conversation is declared before it is used (ASR-227,
//! ASR-235), `derivedFrom` names records or session records (ASR-228), and a delivery's
//! `message` names a message (ASR-235, settled at the end).

use super::deferred::Wait;
use super::{Out, State};
use crate::check::{Finding, Place};
use crate::model::Record;
use crate::refs::{DerivedEntry, Ref, derived_entry, parse_session_ref};
use crate::rule::{self, RuleId};

impl State {
    pub(super) fn message(&mut self, place: &Place, record: &Record<'_>, out: &mut Out) {
        self.declared_conversation(record, rule::ASR_227, out);
        for (n, entry) in record.derived_from.into_iter().flatten().enumerate() {
            let Some(text) = entry.as_str() else {
                continue;
            };
            let pointer = format!("/derivedFrom/{n}");
            match derived_entry(text) {
                // Named with the sessions.
                Some(DerivedEntry::Session(_)) | None => {}
                Some(DerivedEntry::NotSessionRef(e)) => out.push((
                    Finding::error(
                        rule::ASR_228,
                        pointer,
                        format!(
                            "derivedFrom entry {text:?} has a # part but is no session reference: {}",
                            e.describe()
                        ),
                    ),
                    None,
                )),
                Some(DerivedEntry::Ref(reference)) => {
                    // A record id that names no record but reads as a session reference names
                    // a session, not a record: a session reference needs its # part here.
                    let session_like = matches!(reference, Ref::Id(_)) && parse_session_ref(text).is_ok();
                    self.wait(place, &pointer, text, Wait::DerivedFrom { session_like });
                }
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
