//! What the kit's code may hold, read from its files. The library's modules depend on one
//! another one way: no module reaches, through the paths its code names (`crate::a::b`,
//! `super::c`), back to itself, and none imports what `lib.rs` declares after its part. A
//! module and the modules inside it are one: a parent naming its child, or a child its
//! parent, is no cycle. And the code names a rule only through `asr_suite::rule`'s
//! constants, never as a string literal. Comments, `mod tests` blocks and modules compiled
//! only for tests are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[test]
fn the_suites_modules_import_one_another_without_a_cycle() {
    let graph = module_graph(&crate::helpers::root().join("suite/src"));
    assert!(graph.len() > 40, "modules found: {}", graph.len());
    assert!(
        graph["judge"].contains("case") && graph["check"].contains("model"),
        "the scan sees imports"
    );
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "modules that import one another in a cycle: {cycles:?}"
    );
}

#[test]
fn each_module_imports_only_those_lib_rs_declares_before_its_part() {
    let root = crate::helpers::root();
    let graph = module_graph(&root.join("suite/src"));
    let lib = std::fs::read_to_string(root.join("suite/src/lib.rs")).expect("lib.rs");
    let parts = parts_of_lib(&lib);
    assert!(parts.len() >= 5, "{parts:?}");
    let part_of = |module: &str| {
        let top = module.split("::").next().unwrap_or(module);
        parts.iter().position(|p| p.iter().any(|m| m == top))
    };
    let mut wrong = Vec::new();
    for (module, deps) in graph.iter().filter(|(m, _)| !m.is_empty()) {
        let Some(at) = part_of(module) else {
            wrong.push(format!("{module} is in no part of lib.rs"));
            continue;
        };
        for dep in deps {
            if part_of(dep).is_none_or(|their| their > at) {
                wrong.push(format!(
                    "{module} (part {at}) imports {dep}, declared after it"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The parts of `lib.rs`: the modules of each block of declarations that a comment opens, in
/// order.
fn parts_of_lib(lib: &str) -> Vec<Vec<String>> {
    let mut parts: Vec<Vec<String>> = Vec::new();
    for line in lib.lines().map(str::trim) {
        if line.starts_with("// ") {
            parts.push(Vec::new());
        } else if let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            && let Some(part) = parts.last_mut()
        {
            part.push(name.trim_end_matches(';').to_owned());
        }
    }
    parts
}

#[test]
fn code_names_rules_only_through_the_constants() {
    let root = crate::helpers::root();
    let mut found = Vec::new();
    for dir in ["suite/src", "runner/src"] {
        let src = root.join(dir);
        let files = rust_files(&src);
        let test_only = test_only_modules(&src, &files);
        for file in files
            .iter()
            .filter(|f| !test_only.iter().any(|t| within(&module_of(&src, f), t)))
        {
            for (n, line) in code_of(&read(file)).lines().enumerate() {
                if spells_a_rule_id(line) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "rule ids spelt as literals in code (name them as rule::ASR_...):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_rule_id_in_a_string_literal_is_found_and_a_prefix_is_not() {
    assert!(spells_a_rule_id(r#"x("ASR-212")"#) && spells_a_rule_id(r#""ASR-X-003""#));
    assert!(!spells_a_rule_id(r#"id.starts_with("ASR-")"#) && !spells_a_rule_id(r#""ASR-X-""#));
}

/// Whether a line has a string literal that starts with a rule id (`"ASR-2`, `"ASR-X-0`).
fn spells_a_rule_id(line: &str) -> bool {
    line.match_indices("\"ASR-").any(|(at, m)| {
        let rest = line[at + m.len()..].trim_start_matches("X-");
        rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[test]
fn a_cycle_of_three_modules_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"]),
        ("c", &["a"]),
        ("d", &["a"]),
    ]
    .into_iter()
    .map(|(m, deps)| (m.into(), deps.iter().map(|d| (*d).to_owned()).collect()))
    .collect();
    assert_eq!(cycles(&graph), [vec!["a", "b", "c"]]);
}

/// Each module of the crate rooted at `src` (by path: `check::cross`), with the modules
/// its code names, other than itself, those inside it and those it is inside.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = rust_files(src);
    let modules: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let test_only = test_only_modules(src, &files);
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        if test_only.iter().any(|t| within(module, t)) {
            continue;
        }
        let code = code_of(&read(file));
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
        let mut deps = BTreeSet::new();
        for (prefix, base) in [("crate::", ""), ("super::", parent)] {
            for path in paths_after(&code, prefix) {
                // The longest module the path names (the rest is an item in it).
                let mut parts: Vec<&str> = path.split("::").collect();
                while !parts.is_empty() && !modules.contains_key(&join(base, &parts.join("::"))) {
                    parts.pop();
                }
                if parts.is_empty() {
                    continue;
                }
                let target = join(base, &parts.join("::"));
                if !within(module, &target) && !within(&target, module) {
                    deps.insert(target);
                }
            }
        }
        graph.insert(module.clone(), deps);
    }
    graph
}

/// The modules of `graph` that reach themselves, as sets, each sorted (Tarjan's strongly
/// connected components of more than one module).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<&str>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<&'g str>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap_or(0);
                let mut component: Vec<&str> = self.stack.split_off(at);
                if component.len() > 1 {
                    component.sort_unstable();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in graph.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.found
}

/// The modules of the crate rooted at `src` that are compiled only for tests (declared
/// `#[cfg(test)] mod name;`), with the modules inside them.
fn test_only_modules(src: &Path, files: &[PathBuf]) -> BTreeSet<String> {
    files
        .iter()
        .flat_map(|file| {
            let module = module_of(src, file);
            test_only_children(&read(file))
                .into_iter()
                .map(move |child| join(&module, &child))
        })
        .collect()
}

/// The `.rs` files below `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    walk(dir, &mut files);
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).expect("a readable source file")
}

/// `check/cross/mod.rs` is `check::cross`; `lib.rs` (or `main.rs`) is the crate itself (`""`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file
        .strip_prefix(src)
        .expect("below src")
        .with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

fn join(base: &str, path: &str) -> String {
    match (base.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (_, true) => base.to_owned(),
        _ => format!("{base}::{path}"),
    }
}

/// Whether `inner` is `outer` or a module inside it.
fn within(inner: &str, outer: &str) -> bool {
    outer.is_empty() || inner == outer || inner.starts_with(&format!("{outer}::"))
}

/// The modules a file declares `#[cfg(test)] mod name;` (with a visibility or not).
fn test_only_children(text: &str) -> Vec<String> {
    text.split("#[cfg(test)]")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.trim_start();
            let rest = match rest.strip_prefix("pub") {
                Some(visible) => visible.split_once(' ')?.1,
                None => rest,
            };
            let item = rest.strip_prefix("mod ")?;
            let name = item.split(';').next()?;
            name.chars()
                .all(|c| c.is_alphanumeric() || c == '_')
                .then(|| name.to_owned())
        })
        .collect()
}

/// The file's code: without its `mod tests` block (the last item, by the house's layout)
/// and with its comment lines empty.
fn code_of(text: &str) -> String {
    let code = text
        .split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or_default();
    // A comment line is left empty, so that a line keeps its number.
    code.lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path named after `prefix` (`crate::`): `a::b::c`, and for a group
/// (`crate::a::{b, c::d}`) each of its members.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let path = path.trim_end_matches(':');
        let after = &rest[path.len()..];
        match after.strip_prefix("::{") {
            Some(group) => {
                let inner = group.split('}').next().unwrap_or_default();
                for member in inner.split(',') {
                    let member = member.trim().trim_start_matches('{');
                    paths.push(join(path, member.split(" as ").next().unwrap_or(member)));
                }
            }
            None => paths.push(path.to_owned()),
        }
    }
    paths
}
