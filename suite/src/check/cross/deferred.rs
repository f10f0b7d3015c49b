//! References that wait for the end of the stream, because what they name may come later:
//! settled once every record is known (ASR-X-014, ASR-X-015, ASR-228, ASR-235, ASR-409,
//! ASR-413).

use super::{Out, State};
use crate::check::{Finding, Place};
use crate::rule;
use std::collections::BTreeSet;

/// What a waiting reference is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wait {
    Supersedes,
    CopiedLocal,
    DeliveryMessage,
    DerivedFrom { session_like: bool },
    LocalThroughId,
}

/// A reference that waits for the end of the stream: where it is, and its texts (the
/// waiting record's id, the pointer, the reference) by number in [`State::waiting`], so that
/// it costs 40 bytes and the texts, not three allocations.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deferred {
    line: usize,
    seq: Option<u64>,
    id: u32,
    pointer: u32,
    target: u32,
    wait: Wait,
}

const NONE: u32 = u32::MAX;

impl State {
    pub(super) fn wait(&mut self, place: &Place, pointer: &str, target: &str, wait: Wait) {
        let mut text = |t: &str| u32::try_from(self.waiting.push(t.as_bytes())).unwrap_or(NONE);
        let id = place.id.as_deref().map_or(NONE, &mut text);
        let pointer = text(pointer);
        let target = text(target);
        self.deferred.push(Deferred {
            line: place.line,
            seq: place.seq,
            id,
            pointer,
            target,
            wait,
        });
    }

    pub(super) fn settle(&mut self, deferred: Deferred, out: &mut Out) {
        let text = |n: u32| self.waiting.text(n as usize);
        let place = Place {
            line: deferred.line,
            seq: deferred.seq,
            id: (deferred.id != NONE).then(|| text(deferred.id).to_owned()),
        };
        let pointer = text(deferred.pointer).to_owned();
        let target = text(deferred.target).to_owned();
        let found = match deferred.wait {
            Wait::LocalThroughId => self.index.find(&target).into_iter().collect(),
            _ => self.index.resolve(&target),
        };
        if matches!(deferred.wait, Wait::DeliveryMessage | Wait::LocalThroughId) {
            self.outline_reference(&place, &pointer, &found);
        }
        if let Some(finding) = self.judge(deferred.wait, &place, pointer, &target, &found) {
            out.push((finding, Some(place)));
        }
    }

    /// The finding a settled reference makes, if any.
    fn judge(
        &self,
        wait: Wait,
        place: &Place,
        pointer: String,
        target: &str,
        found: &[u32],
    ) -> Option<Finding> {
        let unresolved = || {
            Finding::warning(
                rule::ASR_X_015,
                pointer.clone(),
                format!("{target:?} names no record of this stream"),
            )
        };
        let finding = match wait {
            Wait::Supersedes => match found.last() {
                Some(&n) => Finding::error(
                    rule::ASR_X_014,
                    pointer,
                    format!("supersedes {}, a record that comes later", self.index.id(n)),
                ),
                None => unresolved(),
            },
            Wait::CopiedLocal => match found
                .iter()
                .find(|&&n| self.index.line(n) != place.line)
                .or(found.last())
            {
                // An original on a later line with a lower seq (seq out of line order, itself
                // ASR-X-008) has the lower seq ASR-413 asks for: seq decides, not the line.
                Some(&n)
                    if self.index.line(n) != place.line
                        && self
                            .index
                            .seq(n)
                            .zip(place.seq)
                            .is_some_and(|(theirs, ours)| theirs < ours) =>
                {
                    return None;
                }
                Some(&n) => Finding::error(
                    rule::ASR_413,
                    pointer,
                    format!(
                        "the original {} does not have a lower seq than the copy (it is the copy itself or comes later)",
                        self.index.id(n)
                    ),
                ),
                None => unresolved(),
            },
            Wait::DeliveryMessage => {
                if found.is_empty() {
                    unresolved()
                } else if found.iter().any(|&n| self.index.kind(n) == Some("message")) {
                    return None;
                } else {
                    let kinds: BTreeSet<_> = found
                        .iter()
                        .map(|&n| self.index.kind(n).unwrap_or(""))
                        .collect();
                    Finding::error(
                        rule::ASR_235,
                        pointer,
                        format!(
                            "the delivery's message {target:?} names a {} record, not a message",
                            kinds.into_iter().collect::<Vec<_>>().join("/")
                        ),
                    )
                }
            }
            Wait::DerivedFrom { session_like } => {
                if !found.is_empty() {
                    return None;
                }
                if session_like {
                    Finding::error(
                        rule::ASR_228,
                        pointer,
                        format!(
                            "derivedFrom entry {target:?} is a session reference without a # part naming a record"
                        ),
                    )
                } else {
                    unresolved()
                }
            }
            Wait::LocalThroughId => {
                if !found.is_empty() {
                    return None;
                }
                Finding::error(
                    rule::ASR_409,
                    pointer,
                    format!(
                        "inherits.localThroughId {target:?} is not the id of a record of this stream"
                    ),
                )
            }
        };
        Some(finding)
    }
}
