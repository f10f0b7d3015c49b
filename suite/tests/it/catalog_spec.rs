//! The catalog and the spec text in hand agree: the same 66 rule ids, the same statement
//! fingerprints, the same requirement keywords, the same cited-but-absent rules.

use asr_suite::catalog::{Catalog, CheckKind};
use asr_suite::spec::{self, SpecText};
use std::collections::BTreeSet;

const MESSAGES: &str = include_str!("../../../cases/spec/asr-messages.txt");
const LINEAGE: &str = include_str!("../../../cases/spec/asr-lineage.txt");

fn spec_in_hand() -> SpecText {
    spec::parse([MESSAGES, LINEAGE])
}

#[test]
fn the_catalog_and_the_spec_in_hand_agree() {
    let comparison = Catalog::embedded().compare(&spec_in_hand());
    assert!(comparison.agrees(), "{comparison:#?}");
}

#[test]
fn the_catalog_has_exactly_the_rules_the_spec_in_hand_states() {
    // Derived from the text, so that a rule added to the spec needs no edit here.
    let stated: BTreeSet<String> = spec_in_hand()
        .statements
        .iter()
        .map(|s| s.id.clone())
        .collect();
    assert!(stated.len() > 50, "{} rules stated", stated.len());
    assert!(
        stated.iter().all(|id| id.len() == 7
            && id.starts_with("ASR-")
            && id[4..].bytes().all(|b| b.is_ascii_digit())),
        "{stated:?}"
    );
    let catalog: BTreeSet<String> = Catalog::embedded()
        .rules
        .iter()
        .map(|r| r.id.clone())
        .collect();
    assert_eq!(catalog, stated);
}

#[test]
fn cited_rules_not_in_hand_are_listed_as_such() {
    let cited: Vec<_> = Catalog::embedded()
        .cited
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        cited,
        [
            "ASR-056", "ASR-062", "ASR-067", "ASR-076", "ASR-321", "ASR-322", "ASR-506", "ASR-562"
        ]
    );
    assert!(
        Catalog::embedded()
            .cited
            .iter()
            .all(|c| c.status == "cited, text not in hand")
    );
}

#[test]
fn catalog_sections_and_files_match_the_spec() {
    let spec = spec_in_hand();
    for rule in &Catalog::embedded().rules {
        let statement = spec
            .statements
            .iter()
            .find(|s| s.id == rule.id)
            .expect("stated");
        assert_eq!(rule.section, statement.section, "{}", rule.id);
        let file_text = if rule.file == "asr-messages.txt" {
            MESSAGES
        } else {
            LINEAGE
        };
        assert!(
            file_text.contains(&statement.text),
            "{} is not in {}",
            rule.id,
            rule.file
        );
    }
}

#[test]
fn a_reworded_rule_an_added_rule_and_a_removed_rule_are_each_found() {
    let reworded = MESSAGES.replace(
        "ASR-212 image and audio parts MUST have mimeType",
        "ASR-212 image and audio parts SHOULD have mimeType",
    );
    assert_ne!(reworded, MESSAGES);
    let comparison = Catalog::embedded().compare(&spec::parse([reworded.as_str(), LINEAGE]));
    assert_eq!(
        comparison
            .changed
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>(),
        ["ASR-212"]
    );
    assert_eq!(comparison.levels, ["ASR-212"]);
    assert!(comparison.new.is_empty() && comparison.gone.is_empty());

    let added = format!("{LINEAGE}\nMore\n\nASR-428 A stream MUST end.\n");
    let comparison = Catalog::embedded().compare(&spec::parse([MESSAGES, added.as_str()]));
    assert_eq!(comparison.new, ["ASR-428"]);
    assert!(!comparison.agrees());

    let removed = LINEAGE.replace("ASR-427 A copied run", "A copied run");
    let comparison = Catalog::embedded().compare(&spec::parse([MESSAGES, removed.as_str()]));
    assert_eq!(comparison.gone, ["ASR-427"]);
}

#[test]
fn every_rule_states_how_it_is_checked_and_reader_or_source_rules_say_how_they_are_tested() {
    for rule in &Catalog::embedded().rules {
        assert!(!rule.checks.is_empty(), "{}", rule.id);
        if !rule.checks.contains(&CheckKind::Stream) {
            assert!(
                rule.notes.as_deref().is_some_and(|n| !n.trim().is_empty()),
                "{} has no notes",
                rule.id
            );
        }
    }
}
