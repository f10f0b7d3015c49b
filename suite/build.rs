//! Embeds the corpus (`cases/`) and the schemas (`schemas/`) into the library, so that an
//! installed `asr-ctk` carries them. Both live at the top of the repository; the crate reaches
//! them through the `cases` and `schemas` links beside this file, which `cargo package`
//! follows. Every file is embedded with `include_bytes!`, so a changed file rebuilds the
//! crate; a file added or removed reruns this script.

use std::fmt::Write as _;
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let mut code = String::new();
    // A digest of every name and byte, to name the directory the corpus is unpacked to.
    let mut digest = std::hash::DefaultHasher::new();
    for (name, tree) in [("CORPUS", "cases"), ("SCHEMAS", "schemas")] {
        let root = manifest.join(tree);
        println!("cargo::rerun-if-changed={}", root.display());
        let mut files = Vec::new();
        walk(&root, &mut files);
        files.sort();
        let _ = writeln!(
            code,
            "/// Every file of `{tree}/`: its path below it and its bytes."
        );
        let _ = writeln!(code, "pub static {name}: &[(&str, &[u8])] = &[");
        for file in files {
            let relative = file
                .strip_prefix(&root)
                .expect("below the root")
                .to_string_lossy()
                .replace('\\', "/");
            let bytes = std::fs::read(&file).expect("an embedded file is readable");
            digest.write(relative.as_bytes());
            digest.write(&bytes);
            let _ = writeln!(
                code,
                "    ({relative:?}, include_bytes!({:?})),",
                file.display().to_string()
            );
        }
        code.push_str("];\n");
    }
    let _ = writeln!(
        code,
        "/// A digest of the embedded files (names and bytes), in hex.\npub const DIGEST: &str = \"{:016x}\";",
        digest.finish()
    );
    std::fs::write(out.join("embedded.rs"), code).expect("OUT_DIR is writable");
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.is_file() {
            files.push(path);
        }
    }
}
