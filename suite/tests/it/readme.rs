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
