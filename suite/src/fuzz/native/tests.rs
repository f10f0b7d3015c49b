use super::*;

/// Whether `bytes` parse in the shape a file of `name` has: every line a JSON value for
/// `.jsonl`, one JSON document for `.json`.
fn parses_in_shape(name: &str, bytes: &[u8]) -> bool {
    if has_extension(name, "jsonl") {
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        body.is_empty()
            || crate::lines::split(body)
                .with_final_empty()
                .bytes()
                .all(|line| serde_json::from_slice::<Value>(line).is_ok())
    } else if has_extension(name, "json") {
        serde_json::from_slice::<Value>(bytes).is_ok()
    } else {
        true
    }
}

#[test]
fn every_format_is_generated_in_its_shape_and_differs_from_its_seed() {
    const N: u64 = 40;
    let formats = formats();
    for format in crate::facts::FORMATS {
        assert!(formats.contains(&format), "no seed of {format}");
    }
    for format in formats {
        let seeds = seeds(format);
        let mut differ = 0;
        for iteration in 0..N {
            let generated = generate(format, 11, iteration).expect("seeds");
            let seed = seeds
                .iter()
                .find(|s| s.origin == generated.seed)
                .expect("the seed it names");
            let files = generated.native.files();
            let names: Vec<&String> = files.iter().map(|(n, _)| n).collect();
            let seed_files = seed.native.files();
            let seed_names: Vec<&String> = seed_files.iter().map(|(n, _)| n).collect();
            assert_eq!(
                names, seed_names,
                "{format} {iteration}: the seed's file names"
            );
            for (name, bytes) in &files {
                assert!(
                    parses_in_shape(name, bytes),
                    "{format} {iteration}: {name} is not in its shape after {:?}",
                    generated.mutations
                );
            }
            differ += usize::from(files != seed_files);
        }
        assert!(
            differ * 10 >= usize::try_from(N).unwrap_or(0) * 9,
            "{format}: only {differ} of {N} differ from their seed"
        );
    }
}

#[test]
fn the_same_seed_and_iteration_give_the_same_session_and_others_do_not() {
    let a = generate("claude-code-jsonl", 5, 17).expect("seeds");
    let b = generate("claude-code-jsonl", 5, 17).expect("seeds");
    assert_eq!(a.native, b.native);
    assert_eq!(a.mutations, b.mutations);
    let others = (18..28)
        .filter_map(|i| generate("claude-code-jsonl", 5, i))
        .filter(|g| g.native != a.native)
        .count();
    assert_eq!(others, 10);
    assert!(generate("no-such-format", 1, 1).is_none());
}

#[test]
fn the_mutations_reach_turns_tools_thinking_sidechains_and_texts() {
    let mut said = String::new();
    for format in formats() {
        for iteration in 0..60 {
            if let Some(g) = generate(format, 3, iteration) {
                said.push_str(&g.mutations.join("\n"));
                said.push('\n');
            }
        }
    }
    for what in [
        "dropped",
        "duplicated",
        "split after",
        "swapped",
        "spliced in",
        "tool call or result",
        "thinking block",
        "sidechain line",
        "meta turn",
        "Crlf",
        "Bidi",
        "ZeroWidth",
        "Empty",
    ] {
        assert!(said.contains(what), "no mutation said {what:?}");
    }
}

#[test]
fn shrinking_keeps_the_property_and_leaves_few_turns_and_short_texts() {
    let seed = seeds("claude-code-jsonl")
        .into_iter()
        .find(|s| s.origin.starts_with("fuzz/seeds/"))
        .expect("a real seed");
    let mut native = seed.native.clone();
    let Body::Lines(lines) = &mut native.files[0].body else {
        panic!("JSON lines");
    };
    let needle = "NEEDLE-in-a-long-text-that-halving-must-not-lose";
    lines.insert(
        3,
        Line::Json(serde_json::json!({"type": "user", "message": {"content": format!("{needle} {}", "x".repeat(500))}})),
    );
    let holds = |n: &Native| {
        n.files()
            .iter()
            .any(|(_, b)| String::from_utf8_lossy(b).contains(needle))
    };
    let small = shrink(&native, holds, 2000);
    assert!(holds(&small));
    let Body::Lines(lines) = &small.files[0].body else {
        panic!("JSON lines");
    };
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(small.size().1 < 250, "{:?}", small.files());
}

#[test]
fn the_long_rewrite_and_the_others_keep_or_change_the_text_as_they_say() {
    use text::{REWRITES, Rewrite, rewrite};
    for how in REWRITES {
        let out = rewrite(how, "Résumé of a line\nand another");
        match how {
            Rewrite::Empty => assert!(out.is_empty()),
            Rewrite::Long => assert!(out.len() >= text::LONG),
            _ => assert_ne!(out, "Résumé of a line\nand another", "{how:?}"),
        }
    }
    assert!(rewrite(Rewrite::Nfd, "é").starts_with("e\u{301}"));
}
