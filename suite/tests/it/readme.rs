//! The documented example of the library (docs/reference.md) is `examples/library.rs`, line
//! for line, so that what the page shows compiles and runs.

#[test]
fn the_reference_page_shows_the_library_example_as_it_is() {
    let root = crate::helpers::root();
    let readme = std::fs::read_to_string(root.join("docs/reference.md")).expect("the page");
    let section = readme
        .split("## The library, for Rust implementers")
        .nth(1)
        .expect("the section");
    let block = section
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a rust block");
    let example = std::fs::read_to_string(root.join("suite/examples/library.rs")).expect("example");
    let code: Vec<&str> = example.lines().map(str::trim).collect();
    let mut shown = 0;
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        assert!(code.contains(&line), "the example lacks: {line}");
        shown += 1;
    }
    assert!(shown > 10, "{shown} lines");
}

/// The library's public modules, each with the feature it needs (`""`: none), as `lib.rs`
/// declares them.
fn public_modules(lib: &str) -> std::collections::BTreeMap<String, String> {
    let mut modules = std::collections::BTreeMap::new();
    let mut feature = String::new();
    for line in lib.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[cfg(feature = \"") {
            rest.split('"')
                .next()
                .unwrap_or_default()
                .clone_into(&mut feature);
        } else if let Some(name) = line.strip_prefix("pub mod ") {
            modules.insert(name.trim_end_matches(';').to_owned(), feature.clone());
            feature.clear();
        } else if !line.starts_with("#[") {
            feature.clear();
        }
    }
    modules
}

/// The modules the page's two tables name, each with its feature: the front's table (no
/// feature), then the features' table (a module named in a feature's row needs it).
fn documented_modules(section: &str) -> std::collections::BTreeMap<String, String> {
    let mut modules = std::collections::BTreeMap::new();
    let tables: Vec<&str> = section.split("\n| --- | --- |\n").skip(1).collect();
    let rows = |table: &str| -> Vec<(String, String)> {
        table
            .lines()
            .take_while(|l| l.starts_with('|'))
            .filter_map(|l| {
                let mut cells = l.trim_matches('|').split(" | ");
                Some((cells.next()?.trim().to_owned(), cells.next()?.to_owned()))
            })
            .collect()
    };
    let names = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .map(str::to_owned)
            .collect()
    };
    for (first, _) in rows(tables.first().copied().unwrap_or_default()) {
        for name in names(&first) {
            modules.insert(name, String::new());
        }
    }
    for (feature, list) in rows(tables.get(1).copied().unwrap_or_default()) {
        let feature = feature.trim_matches('`').to_owned();
        for name in names(&list) {
            modules.entry(name).or_insert_with(|| feature.clone());
        }
    }
    modules
}

#[test]
fn the_reference_page_lists_the_public_modules_and_the_features_they_need() {
    let root = crate::helpers::root();
    let lib = std::fs::read_to_string(root.join("suite/src/lib.rs")).expect("lib.rs");
    let page = std::fs::read_to_string(root.join("docs/reference.md")).expect("the page");
    let section = page
        .split("## The library, for Rust implementers")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the section");
    let declared = public_modules(&lib);
    assert!(declared.len() > 25, "{declared:?}");
    assert_eq!(declared["check"], "");
    assert_eq!(declared["render"], "render");
    let documented = documented_modules(section);
    let mut wrong = Vec::new();
    for (module, feature) in &declared {
        match documented.get(module) {
            None => wrong.push(format!("{module} is public and not on the page")),
            Some(said) if said != feature => wrong.push(format!(
                "{module} needs feature {feature:?}; the page says {said:?}"
            )),
            Some(_) => {}
        }
    }
    for module in documented.keys().filter(|m| !declared.contains_key(*m)) {
        wrong.push(format!(
            "the page names {module}, which is no public module"
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
