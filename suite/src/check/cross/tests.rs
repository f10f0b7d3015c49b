//! Each concern's checks, on small streams: the finding it must make, and none on the
//! stream put right. Only the rules of cross-record checks are looked at.

use crate::check::{CheckOptions, check_bytes};

const H: &str = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1","conversations":["c1"]}"#;

/// The (rule, line) of every finding under `rules`.
fn found(lines: &[&str], rules: &[&str]) -> Vec<(String, usize)> {
    let stream = format!("{}\n", lines.join("\n"));
    check_bytes(stream.as_bytes(), &CheckOptions::default())
        .diagnostics
        .into_iter()
        .filter(|d| rules.contains(&d.rule.as_str()))
        .map(|d| (d.rule.to_string(), d.line))
        .collect()
}

fn at(rule: &str, line: usize) -> (String, usize) {
    (rule.to_owned(), line)
}

fn msg(seq: u64, id: &str, extra: &str) -> String {
    format!(
        r#"{{"type":"message","seq":{seq},"id":"{id}","messageId":"m{seq}","role":"user","content":[{{"type":"text","text":"x"}}]{extra}}}"#
    )
}

mod order {
    use super::*;

    #[test]
    fn the_header_comes_first_and_once() {
        let m1 = msg(1, "r1", "");
        assert_eq!(found(&[&m1, H], &["ASR-X-007"]), [at("ASR-X-007", 1)]);
        assert_eq!(found(&[H, &m1, H], &["ASR-X-007"]), [at("ASR-X-007", 3)]);
        assert_eq!(found(&[&m1], &["ASR-X-007"]), [at("ASR-X-007", 1)]);
        assert!(found(&[H, &m1], &["ASR-X-007"]).is_empty());
    }

    #[test]
    fn seq_rises_and_ids_are_unique() {
        let (m1, m2, again) = (msg(1, "r1", ""), msg(2, "r2", ""), msg(2, "r1", ""));
        assert_eq!(
            found(&[H, &m1, &again], &["ASR-X-008", "ASR-X-009"]),
            [at("ASR-X-009", 3)]
        );
        assert_eq!(
            found(&[H, &m2, &m1], &["ASR-X-008", "ASR-X-009"]),
            [at("ASR-X-008", 3)]
        );
        let same = msg(1, "r2", "");
        assert_eq!(
            found(&[H, &m1, &same], &["ASR-X-008"]),
            [at("ASR-X-008", 3)]
        );
        let big = r#"{"type":"message","seq":1e3,"id":"r1","messageId":"m","role":"user","content":[{"type":"text","text":"x"}]}"#;
        assert_eq!(found(&[H, big], &["ASR-X-008"]), [at("ASR-X-008", 2)]);
        assert!(found(&[H, &m1, &m2], &["ASR-X-008", "ASR-X-009"]).is_empty());
    }
}

mod revisions {
    use super::*;

    #[test]
    fn a_revision_supersedes_an_earlier_record_of_its_type_once() {
        let m1 = msg(1, "r1", "");
        let m2 = msg(2, "r2", r#","supersedes":"r1""#);
        let m3 = msg(3, "r3", r#","supersedes":"r1""#);
        assert_eq!(
            found(&[H, &m1, &m2, &m3], &["ASR-X-014"]),
            [at("ASR-X-014", 4)]
        );
        let later = msg(1, "r1", r#","supersedes":"r2""#);
        let m2 = msg(2, "r2", "");
        assert_eq!(
            found(&[H, &later, &m2], &["ASR-X-014"]),
            [at("ASR-X-014", 2)]
        );
        let header = msg(1, "r1", r#","supersedes":"h""#);
        assert_eq!(found(&[H, &header], &["ASR-X-014"]), [at("ASR-X-014", 2)]);
        let by_native = msg(2, "r2", r#","supersedes":"messageId=m1""#);
        assert!(
            found(
                &[H, &msg(1, "r1", ""), &by_native],
                &["ASR-X-014", "ASR-X-015"]
            )
            .is_empty()
        );
    }

    #[test]
    fn a_local_original_has_a_lower_seq() {
        let copy = |seq, record: &str| {
            msg(
                seq,
                &format!("c{seq}"),
                &format!(r#","copiedFrom":{{"record":"{record}","proof":"native_id"}}"#),
            )
        };
        let m5 = msg(5, "r5", "");
        assert_eq!(
            found(&[H, &copy(1, "r5"), &m5], &["ASR-413"]),
            [at("ASR-413", 2)]
        );
        assert!(found(&[H, &m5, &copy(6, "r5")], &["ASR-413"]).is_empty());
        let elsewhere = msg(
            1,
            "c1",
            r#","copiedFrom":{"session":"codex:other","record":"r5","proof":"native_id"}"#,
        );
        assert!(found(&[H, &elsewhere, &m5], &["ASR-413"]).is_empty());
    }
}

mod lineage {
    use super::*;

    fn header(lineage: &str) -> String {
        H.replacen(
            r#""conversations""#,
            &format!(r#""lineage":{lineage},"conversations""#),
            1,
        )
    }

    #[test]
    fn a_declaration_cannot_make_a_root_name_a_parent() {
        let root = header(r#"{"root":true}"#);
        let decl = r#"{"type":"declaration","seq":1,"id":"d1","lineage":{"forkedFrom":{"session":"codex:p","evidence":"native_field"}}}"#;
        assert_eq!(found(&[&root, decl], &["ASR-402"]), [at("ASR-402", 2)]);
        assert!(found(&[H, decl], &["ASR-402"]).is_empty());
    }

    #[test]
    fn local_through_id_names_a_record_of_the_stream_the_header_included() {
        let copied = |through: &str| {
            header(&format!(
                r#"{{"inherits":{{"mode":"copied","from":"codex:p","localThroughId":"{through}","evidence":"native_field"}}}}"#
            ))
        };
        let m1 = msg(1, "r1", "");
        assert_eq!(
            found(&[&copied("r9"), &m1], &["ASR-409"]),
            [at("ASR-409", 1)]
        );
        assert!(found(&[&copied("r1"), &m1], &["ASR-409"]).is_empty());
        assert!(found(&[&copied("h"), &m1], &["ASR-409"]).is_empty());
    }

    #[test]
    fn a_mirror_names_one_executing_session() {
        let mirror = |executed: &str| {
            header(&format!(r#"{{"executedBy":[{executed}]}}"#)).replacen(
                r#""sessionId""#,
                r#""authority":"mirror","sessionId""#,
                1,
            )
        };
        let one = r#"{"session":"codex:a","evidence":"native_field"}"#;
        let two = format!(r#"{one},{{"session":"codex:b","evidence":"native_field"}}"#);
        assert_eq!(found(&[&mirror(&two)], &["ASR-422"]), [at("ASR-422", 1)]);
        assert!(found(&[&mirror(one)], &["ASR-422"]).is_empty());
        let none = H.replacen(r#""sessionId""#, r#""authority":"mirror","sessionId""#, 1);
        assert_eq!(found(&[&none], &["ASR-422"]), [at("ASR-422", 1)]);
    }

    #[test]
    fn sessions_named_other_than_the_streams_own_are_noticed_once() {
        let copy = msg(
            1,
            "r1",
            r#","copiedFrom":{"session":"codex:p","record":"x","proof":"native_id"}"#,
        );
        let again = msg(
            2,
            "r2",
            r#","copiedFrom":{"session":"codex:p#x","record":"y","proof":"native_id"}"#,
        );
        let own = msg(
            3,
            "r3",
            r#","copiedFrom":{"session":"codex:s1","record":"r1","proof":"native_id"}"#,
        );
        assert_eq!(
            found(&[H, &copy, &again, &own], &["ASR-406"]),
            [at("ASR-406", 2)]
        );
    }
}

mod deliveries {
    use super::*;

    #[test]
    fn conversations_are_declared_before_use() {
        let undeclared = msg(1, "r1", r#","conversation":"c9""#);
        assert_eq!(found(&[H, &undeclared], &["ASR-227"]), [at("ASR-227", 2)]);
        let declared = msg(1, "r1", r#","conversation":"c1""#);
        assert!(found(&[H, &declared], &["ASR-227"]).is_empty());
        let delivery = r#"{"type":"delivery","seq":2,"id":"d1","message":"r1","status":"sent","conversation":"c9"}"#;
        assert_eq!(
            found(&[H, &declared, delivery], &["ASR-235"]),
            [at("ASR-235", 3)]
        );
    }

    #[test]
    fn a_delivery_names_a_message() {
        let call =
            r#"{"type":"tool_call","seq":1,"id":"r1","callId":"c","name":"Bash","input":{}}"#;
        let delivery = r#"{"type":"delivery","seq":2,"id":"d1","message":"r1","status":"sent"}"#;
        assert_eq!(
            found(&[H, call, delivery], &["ASR-235"]),
            [at("ASR-235", 3)]
        );
        assert!(found(&[H, &msg(1, "r1", ""), delivery], &["ASR-235"]).is_empty());
        let later =
            r#"{"type":"delivery","seq":1,"id":"d1","message":"messageId=m2","status":"sent"}"#;
        assert!(found(&[H, later, &msg(2, "r2", "")], &["ASR-235", "ASR-X-015"]).is_empty());
    }

    #[test]
    fn derived_from_names_records_or_session_records() {
        let bare_session = msg(1, "r1", r#","derivedFrom":["codex:other"]"#);
        assert_eq!(found(&[H, &bare_session], &["ASR-228"]), [at("ASR-228", 2)]);
        let bad = msg(1, "r1", r#","derivedFrom":["no agent#r1"]"#);
        assert_eq!(found(&[H, &bad], &["ASR-228"]), [at("ASR-228", 2)]);
        let good = msg(2, "r2", r#","derivedFrom":["r1","codex:other#r4"]"#);
        assert!(found(&[H, &msg(1, "r1", ""), &good], &["ASR-228", "ASR-X-015"]).is_empty());
        // A native id with colons or a # is still a ref: unresolved, a warning; resolved, fine.
        let native = msg(
            2,
            "r2",
            r#","derivedFrom":["messageId=message:handoff:7c2e"]"#,
        );
        assert_eq!(
            found(&[H, &native], &["ASR-228", "ASR-X-015"]),
            [at("ASR-X-015", 2)]
        );
        let hashed = msg(1, "r1", "").replace(r#""messageId":"m1""#, r#""messageId":"c:1#2""#);
        let named = msg(2, "r2", r#","derivedFrom":["messageId=c:1#2"]"#);
        assert!(found(&[H, &hashed, &named], &["ASR-228", "ASR-X-015", "ASR-406"]).is_empty());
    }
}

mod plans {
    use super::*;

    fn plan(seq: u64, plan: &str, extra: &str) -> String {
        format!(
            r#"{{"type":"plan","seq":{seq},"id":"p{seq}","planId":"{plan}","planType":"items","entries":[]{extra}}}"#
        )
    }

    #[test]
    fn a_later_state_of_a_plan_supersedes_its_latest_state() {
        let (a1, a2) = (plan(1, "a", ""), plan(2, "a", ""));
        assert_eq!(found(&[H, &a1, &a2], &["ASR-222"]), [at("ASR-222", 3)]);
        let b = plan(2, "b", "");
        let a3 = plan(3, "a", r#","supersedes":"p2""#);
        assert_eq!(found(&[H, &a1, &b, &a3], &["ASR-222"]), [at("ASR-222", 4)]);
        let right = plan(2, "a", r#","supersedes":"p1""#);
        assert!(found(&[H, &a1, &right], &["ASR-222"]).is_empty());
    }

    #[test]
    fn a_later_state_that_names_no_previous_state_is_reported_once_under_222() {
        let revisions = ["ASR-222", "ASR-X-014", "ASR-X-015"];
        let a1 = plan(1, "a", "");
        let nowhere = plan(2, "a", r#","supersedes":"p0""#);
        assert_eq!(found(&[H, &a1, &nowhere], &revisions), [at("ASR-222", 3)]);
        let ahead = plan(2, "a", r#","supersedes":"p3""#);
        let a3 = plan(3, "a", r#","supersedes":"p2""#);
        assert_eq!(
            found(&[H, &a1, &ahead, &a3], &revisions),
            [at("ASR-222", 3)]
        );
        let a2 = plan(2, "a", r#","supersedes":"p1""#);
        let older = plan(3, "a", r#","supersedes":"p1""#);
        assert_eq!(
            found(&[H, &a1, &a2, &older], &revisions),
            [at("ASR-222", 4)]
        );
        let message = plan(2, "a", r#","supersedes":"r1""#);
        assert_eq!(
            found(&[H, &msg(1, "r1", ""), &message], &revisions),
            [at("ASR-222", 3)]
        );
        // The first state of a plan names no previous state: what it names is a revision's
        // business in general.
        let first = plan(1, "a", r#","supersedes":"p0""#);
        assert_eq!(found(&[H, &first], &revisions), [at("ASR-X-015", 2)]);
        // A state wrongly superseded by another plan's record is still the latest state.
        let b = plan(2, "b", r#","supersedes":"p1""#);
        let a3 = plan(3, "a", r#","supersedes":"p1""#);
        assert_eq!(found(&[H, &a1, &b, &a3], &revisions), [at("ASR-222", 3)]);
    }

    #[test]
    fn a_change_of_a_childs_state_revises_its_subagent_record() {
        let sub = |seq: u64, extra: &str| {
            format!(
                r#"{{"type":"subagent","seq":{seq},"id":"s{seq}","callId":"c1","childSession":"codex:kid","status":"running"{extra}}}"#
            )
        };
        let (first, second) = (sub(1, ""), sub(2, ""));
        assert_eq!(
            found(&[H, &first, &second], &["ASR-424"]),
            [at("ASR-424", 3)]
        );
        let revision = sub(2, r#","supersedes":"s1""#);
        assert!(found(&[H, &first, &revision], &["ASR-424"]).is_empty());
        let revisions = ["ASR-424", "ASR-X-014", "ASR-X-015"];
        let nowhere = sub(2, r#","supersedes":"s0""#);
        assert_eq!(
            found(&[H, &first, &nowhere], &revisions),
            [at("ASR-424", 3)]
        );
        let older = sub(3, r#","supersedes":"s1""#);
        assert_eq!(
            found(&[H, &first, &revision, &older], &revisions),
            [at("ASR-424", 4)]
        );
        let announced = sub(2, r#","supersedes":"r1""#);
        assert_eq!(
            found(&[H, &msg(1, "r1", ""), &announced], &revisions),
            [at("ASR-424", 3)]
        );
        // A plan is grouped too; its group number is no delegation's.
        let plan =
            r#"{"type":"plan","seq":1,"id":"p1","planId":"a","planType":"items","entries":[]}"#;
        let after_plan = sub(3, r#","supersedes":"p1""#);
        assert_eq!(
            found(&[H, plan, &sub(2, ""), &after_plan], &revisions),
            [at("ASR-424", 4)]
        );
    }
}
