//! The comparison page in a real browser: headless Chromium, driven by Playwright
//! (`runner/tests/browser/check-comparison.mjs`), opens the page of the example
//! implementations' reports and reports what it shows: the matrix (with and without
//! JavaScript), the filter by rule (typed and from the address), sorting, every link
//! followed to the element it names, and no request leaving the page. Screenshots are kept
//! in `target/tmp/browser/`.
//!
//! The setup installs what is absent: Chromium from the system's packages (as root, with
//! apt-get) and playwright-core from the npm registry. Where that cannot be done the test
//! says why and passes without looking, unless `ASR_CTK_BROWSER=required` (as `.ci/run`
//! sets), when it fails instead.

use crate::compare::{attribute_values, write_example_page};
use crate::helpers::{node_major, root, run, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The playwright-core release driven: pinned, so a run is the same run next year.
const PLAYWRIGHT: &str = "playwright-core@1.65.1";

/// Where the setup keeps what it installed, and the screenshots.
fn work_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser")
}

/// Chromium's path: `CHROMIUM` when set, else the first of the usual names on the `PATH`,
/// else the one apt-get installs (as root).
fn chromium() -> Result<PathBuf, String> {
    if let Some(given) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(given));
    }
    let found = || {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .find_map(|name| {
                std::env::var_os("PATH").and_then(|paths| {
                    std::env::split_paths(&paths)
                        .map(|dir| dir.join(name))
                        .find(|path| path.is_file())
                })
            })
    };
    if let Some(path) = found() {
        return Ok(path);
    }
    if !nix::unistd::Uid::effective().is_root() {
        return Err("Chromium is not installed, and installing it takes root".into());
    }
    if Command::new("apt-get").arg("--version").output().is_err() {
        return Err("Chromium is not installed, and there is no apt-get to install it".into());
    }
    for args in [
        &["update", "-qq"][..],
        &[
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
        ][..],
    ] {
        let output = run(
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive"),
            None,
            Duration::from_secs(900),
        );
        if !output.status.success() {
            return Err(format!(
                "`apt-get {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    found().ok_or_else(|| "apt-get installed chromium, yet it is not on the PATH".into())
}

/// The directory of the playwright-core package, installed under [`work_dir`] when absent.
fn playwright(dir: &Path) -> Result<PathBuf, String> {
    let package = dir.join("node_modules/playwright-core");
    if package.join("package.json").is_file() {
        return Ok(package);
    }
    if node_major() < 18 {
        return Err("Playwright needs Node.js 18 or later".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let output = run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(dir)
            .arg(PLAYWRIGHT),
        None,
        Duration::from_secs(600),
    );
    if !output.status.success() || !package.join("package.json").is_file() {
        return Err(format!(
            "`npm install {PLAYWRIGHT}` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(package)
}

/// What the test looks with, or why it cannot: skipped with the reason, or failed when a
/// browser is required.
fn setup() -> Option<(PathBuf, PathBuf)> {
    let dir = work_dir();
    match chromium().and_then(|browser| Ok((browser, playwright(&dir)?))) {
        Ok(tools) => Some(tools),
        Err(why) => {
            assert!(
                std::env::var("ASR_CTK_BROWSER").as_deref() != Ok("required"),
                "a browser is required (ASR_CTK_BROWSER=required) and cannot be had: {why}"
            );
            eprintln!("skipped: the comparison page in a browser: {why}");
            None
        }
    }
}

#[test]
fn the_comparison_page_in_chromium_shows_the_matrix_filters_by_rule_and_every_link_lands() {
    let Some((browser, package)) = setup() else {
        return;
    };
    let dir = scratch("browser");
    let (page, reports) = write_example_page(&dir, false);
    let html = std::fs::read_to_string(&page).expect("the page");
    let rows: Vec<&str> = html
        .match_indices("<tr data-rule=\"")
        .map(|(at, _)| attribute_values(&html[at..at + 200.min(html.len() - at)], "data-rule")[0])
        .collect();
    // The rule filtered by: the first the broken example fails, so that the filtered view
    // holds a failing cell.
    let at = html
        .find("data-verdict=\"non-conformant\"")
        .expect("a failing cell");
    let row = html[..at].rfind("<tr data-rule=\"").expect("its row");
    let rule = attribute_values(&html[row..at], "data-rule")[0].to_owned();
    let shots = work_dir();
    std::fs::create_dir_all(&shots).expect("the screenshots' directory");
    let output = run(
        Command::new("node")
            .arg(root().join("runner/tests/browser/check-comparison.mjs"))
            .arg(&page)
            .arg(&shots)
            .arg(&rule)
            .env("CHROMIUM", &browser)
            .env("PLAYWRIGHT_CORE", &package),
        None,
        Duration::from_secs(300),
    );
    assert!(output.status.success(), "{output:?}");
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|s| s.as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let numbers = |v: &Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };

    // Without JavaScript the matrix reads whole, and the filters, which need it, are hidden.
    let bare = &seen["noScript"];
    assert_eq!(bare["matrixVisible"], true, "{bare}");
    assert_eq!(bare["rows"], rows.len(), "{bare}");
    assert_eq!(bare["visibleRows"], rows.len(), "{bare}");
    assert_eq!(bare["filtersVisible"], false, "{bare}");

    // With it: every row and every report's cell, and the filters shown.
    let matrix = &seen["matrix"];
    assert!(rows.len() > 60, "{} rows", rows.len());
    assert_eq!(matrix["visible"], true, "{matrix}");
    assert_eq!(matrix["rows"], rows.len(), "{matrix}");
    assert_eq!(matrix["cells"], rows.len() * reports.len(), "{matrix}");
    assert_eq!(matrix["filtersVisible"], true, "{matrix}");
    let all = format!("{0} of {0} rows", rows.len());
    assert_eq!(matrix["count"], all.as_str(), "{matrix}");

    // The filter by rule shows the rows of that rule and hides the others.
    let wanted: Vec<String> = rows
        .iter()
        .filter(|r| r.to_uppercase().contains(&rule.to_uppercase()))
        .map(|r| (*r).to_owned())
        .collect();
    assert!(!wanted.is_empty() && wanted.len() < rows.len(), "{rule}");
    let filter = &seen["filter"];
    assert_eq!(strings(&filter["shownRules"]), wanted, "{filter}");
    let count = format!("{} of {} rows", wanted.len(), rows.len());
    assert_eq!(filter["count"], count.as_str(), "{filter}");
    for rules in strings(&filter["disagreementsShown"]) {
        assert!(
            rules.contains(&rule),
            "{rules} shown under the filter {rule}"
        );
    }
    assert_eq!(strings(&seen["filterFromAddress"]), wanted, "?rule={rule}");

    // A click on a heading sorts, a second click the other way; no row is lost.
    let sort = &seen["sort"];
    let (before, once, twice) = (
        numbers(&sort["before"]),
        numbers(&sort["once"]),
        numbers(&sort["twice"]),
    );
    let mut ordered = before.clone();
    ordered.sort_by(f64::total_cmp);
    assert_eq!(once, ordered, "ascending after one click");
    ordered.reverse();
    assert_eq!(twice, ordered, "descending after two");
    assert_ne!(
        before, once,
        "the figures were in order already: nothing shows the sort"
    );

    // Every link is on the page and lands on the element it names, on screen.
    let links = &seen["links"];
    let hrefs = attribute_values(&html, "href").len();
    assert!(hrefs > 1000, "{hrefs} links");
    assert_eq!(links["followed"], hrefs, "{links}");
    for list in ["offPage", "missing", "notShown"] {
        assert_eq!(links[list], Value::Array(Vec::new()), "{list}: {links}");
    }
    assert_eq!(seen["errors"], Value::Array(Vec::new()), "script errors");
    assert_eq!(
        seen["requests"],
        Value::Array(Vec::new()),
        "requests off the page"
    );
    assert_eq!(
        bare["requests"],
        Value::Array(Vec::new()),
        "requests off the page"
    );
    for shot in [
        "comparison-matrix.png",
        "comparison-filtered.png",
        "comparison-case.png",
    ] {
        let png = std::fs::read(shots.join(shot)).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "{shot} is no PNG");
    }
    eprintln!("screenshots: {}", shots.display());
}
