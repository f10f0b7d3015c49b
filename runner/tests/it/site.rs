//! `asr-ctk report site`: the reports below a directory as a static site whose every link
//! lands on a file of the site, each implementation's page its latest report's verdicts and
//! its history's regressions and fixes; and the refusals: no report, a report that is none,
//! a folder of someone else's files, a link planted in the site.

use crate::compare::{attribute_values, broken, fixed_and_regressed, run, verdict_in};
use crate::helpers::{asr_ctk, scratch};
use asr_suite::conformance::RunReport;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Output;

fn site(inputs: &[&Path], out: &Path) -> Output {
    let mut args: Vec<String> = vec!["report".into(), "site".into()];
    args.extend(inputs.iter().map(|p| p.to_string_lossy().into_owned()));
    args.extend(["--out".into(), out.to_string_lossy().into_owned()]);
    asr_ctk(&args)
}

/// Every file below `dir`, as paths relative to it with `/` between names.
fn files_below(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("a folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).expect("below");
                found.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found
}

/// `link`, found in the page `from` (below `root`), as the file it lands on and its fragment.
fn resolve(root: &Path, from: &Path, link: &str) -> (PathBuf, String) {
    let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
    if path.is_empty() {
        return (from.to_path_buf(), fragment.to_owned());
    }
    let mut target = from.parent().expect("a folder").to_path_buf();
    for component in Path::new(path).components() {
        match component {
            Component::ParentDir => {
                assert!(target.pop(), "{link} leaves the file system");
            }
            Component::Normal(name) => target.push(name),
            Component::CurDir => {}
            _ => panic!("{link} in {} is not relative", from.display()),
        }
    }
    assert!(
        target.starts_with(root),
        "{link} in {} leads out of the site",
        from.display()
    );
    (target, fragment.to_owned())
}

/// The reference and the broken Python example on a few cases, and the broken one once
/// more, later, with one case fixed and one regressed; below `dir/reports`. Gives the
/// second broken report, the case fixed and the case regressed.
fn example_reports(dir: &Path) -> (RunReport, &'static str, &'static str) {
    let reports = dir.join("reports");
    run(&reports.join("reference"), None);
    let broken_dir = run(&reports.join("broken/1"), Some(&broken()));
    let old: RunReport = serde_json::from_str(
        &std::fs::read_to_string(broken_dir.join("report.json")).expect("a report"),
    )
    .expect("a report");
    let (new, fixed, regressed) = fixed_and_regressed(&old);
    // Walked before the older one (`0` sorts before `1`): the site orders by start.
    let new_dir = reports.join("broken/0");
    std::fs::create_dir_all(&new_dir).expect("a folder");
    std::fs::write(
        new_dir.join("report.json"),
        serde_json::to_vec(&new).expect("JSON"),
    )
    .expect("written");
    (new, fixed, regressed)
}

#[test]
fn the_site_of_a_folder_of_reports_links_every_page_and_shows_each_verdict_and_change() {
    let dir = scratch("site");
    let (newest, fixed, regressed) = example_reports(&dir);
    let out = dir.join("site");
    let output = site(&[&dir.join("reports")], &out);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("2 implementations, 3 reports"), "{said}");
    // Every link of every page lands on a file of the site, and on an element of it; the
    // only links off it are the web links the reports give (a homepage, an issue).
    let mut web = BTreeSet::new();
    for input in files_below(&dir.join("reports")) {
        if !input.ends_with("report.json") {
            continue;
        }
        let report: RunReport = serde_json::from_str(
            &std::fs::read_to_string(dir.join("reports").join(&input)).expect("read"),
        )
        .expect("a report");
        let info = report.adapter.implementation;
        web.extend(
            info.iter()
                .flat_map(|i| [i.homepage.clone(), i.issues.clone()])
                .flatten(),
        );
        web.extend(report.cases.into_iter().filter_map(|c| c.issue));
    }
    let written = files_below(&out);
    let mut links = 0;
    let pages = written
        .iter()
        .filter(|p| Path::new(p).extension().is_some_and(|e| e == "html"));
    for page in pages {
        let from = out.join(page);
        let html = std::fs::read_to_string(&from).expect("a page");
        let all = attribute_values(&html, "href")
            .into_iter()
            .chain(attribute_values(&html, "src"));
        for link in all {
            if web.contains(link) {
                continue;
            }
            assert!(
                !link.contains("://") && !link.starts_with('/'),
                "{page}: {link} is not relative"
            );
            let (target, fragment) = resolve(&out, &from, link);
            assert!(target.is_file(), "{page}: {link} lands on no file");
            if !fragment.is_empty() {
                let text = std::fs::read_to_string(&target).expect("a page");
                assert!(
                    attribute_values(&text, "id").contains(&fragment.as_str()),
                    "{page}: {link}: nothing has the id"
                );
            }
            links += 1;
        }
    }
    assert!(links > 500, "{links} links");
    // The manifest names exactly the files written.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("site.json")).expect("read"))
            .expect("JSON");
    let listed: BTreeSet<String> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f.as_str().expect("a path").to_owned())
        .collect();
    assert_eq!(listed, written);
    // The broken example's page: the latest report's verdict in every row, and the one
    // regression and the one fix of its last step.
    let name = "asr-ctk-python-example-broken";
    let page = std::fs::read_to_string(out.join(format!("implementations/{name}.html")))
        .expect("the implementation's page");
    let mut rows = 0;
    for (at, _) in page.match_indices("<tr data-rule=\"") {
        let row = &page[at..at + page[at..].find("</tr>").expect("a row's end")];
        let id = attribute_values(row, "data-rule")[0];
        let played = attribute_values(row, "data-role")[0];
        assert_eq!(
            attribute_values(row, "data-verdict"),
            [verdict_in(&newest, id, played)],
            "{row}"
        );
        rows += 1;
    }
    assert!(rows >= 4, "{rows} rows");
    let step = &page[page.find("id=\"step-2\"").expect("the step")..];
    assert_eq!(
        step.matches("<li class=\"regression\">").count(),
        1,
        "{step}"
    );
    assert_eq!(step.matches("<li class=\"fix\">").count(), 1, "{step}");
    assert!(step.contains(&format!("regression: <a href=\"../history/{name}.html#")));
    assert!(step.contains(&format!("<code>{regressed}</code></a> (validator): <span class=\"o-pass\">pass</span> to <span class=\"o-fail\">fail</span>")), "{step}");
    assert!(step.contains(&format!("<code>{fixed}</code></a> (validator): <span class=\"o-fail\">fail</span> to <span class=\"o-pass\">pass</span>")), "{step}");
    // A rule's page has every implementation's verdict on it.
    let rule = std::fs::read_to_string(out.join("rules/asr-212.html")).expect("a rule page");
    let verdicts = attribute_values(&rule, "data-verdict");
    assert_eq!(verdicts.len(), 2, "{rule}");
    assert!(verdicts.contains(&verdict_in(&newest, "ASR-212", "validator").as_str()));
}

#[test]
fn a_site_refuses_no_report_a_report_that_is_none_and_a_folder_it_would_harm() {
    let dir = scratch("site-refusals");
    // No report below the folder: nothing to publish is a failure.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    std::fs::write(empty.join("notes.txt"), "x").expect("write");
    let output = site(&[&empty], &dir.join("out-empty"));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("no file named report.json under"), "{said}");
    assert!(!dir.join("out-empty").exists());
    // A report.json that is no report.
    let bogus = dir.join("bogus");
    std::fs::create_dir_all(&bogus).expect("mkdir");
    std::fs::write(bogus.join("report.json"), "{\"kit\": 1}").expect("write");
    let output = site(&[&bogus], &dir.join("out-bogus"));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("report refused"));
    // A folder of someone else's files is not written into.
    let reports = dir.join("reports");
    run(&reports.join("reference"), None);
    run(&reports.join("broken"), Some(&broken()));
    let theirs = dir.join("theirs");
    std::fs::create_dir_all(&theirs).expect("mkdir");
    std::fs::write(theirs.join("index.html"), "mine").expect("write");
    let output = site(&[&reports], &theirs);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("holds no site"));
    assert_eq!(
        std::fs::read_to_string(theirs.join("index.html")).expect("read"),
        "mine"
    );
    // A site written here before is rewritten: what the new one lacks is removed, a file
    // the site did not write stays.
    let out = dir.join("site");
    assert_eq!(site(&[&reports], &out).status.code(), Some(0));
    let before = files_below(&out);
    assert!(before.contains("implementations/asr-ctk-python-example-broken.html"));
    std::fs::write(out.join("CNAME"), "conformance.example").expect("write");
    let output = site(&[&reports.join("reference")], &out);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let after = files_below(&out);
    assert!(
        after.iter().all(|f| !f.contains("python-example-broken")),
        "{after:?}"
    );
    assert!(after.contains("CNAME"));
    assert!(after.len() < before.len());
    // A link planted where the site writes a folder is not written through.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::remove_dir_all(out.join("rules")).expect("rm");
    std::os::unix::fs::symlink(&elsewhere, out.join("rules")).expect("link");
    let output = site(&[&reports], &out);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("a link is not followed"));
    assert_eq!(std::fs::read_dir(&elsewhere).expect("list").count(), 0);
    // Nor is a site's folder that is a link.
    let linked = dir.join("linked");
    std::os::unix::fs::symlink(&elsewhere, &linked).expect("link");
    let output = site(&[&reports], &linked);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(std::fs::read_dir(&elsewhere).expect("list").count(), 0);
}
