//! Many reports as one static site (`asr-ctk report site`), for GitHub Pages or any static
//! host: every link is relative, so the site reads from whatever folder it is served from,
//! and nothing on it makes a request off the site.
//!
//! The reports are grouped into implementations: reports of one name, given by the adapter,
//! playing the same roles are one implementation's history, ordered by `startedAt`, the
//! newest its latest ([`Entry::same_implementation`]); a report of an adapter that gave no
//! name stands alone. The files ([`Site::files`]):
//!
//! - `index.html`: every implementation with its latest verdicts counted and its last
//!   change, every rule with how many implementations meet it, the rules no one meets and
//!   the rules they split on;
//! - `compare.html` and `compare.json`: the latest report of each implementation compared
//!   (the page of `report compare --format html`, `schemas/comparison.schema.json`);
//! - `implementations/NAME.html`: one implementation, its latest verdict on every rule and
//!   its history, each report with its regressions and fixes since the one before;
//! - `history/NAME.html`: the comparison of an implementation's reports, when it has two or
//!   more;
//! - `reports/NAME-K.html` and `reports/NAME-K.json`: each report (K counts from 1, the
//!   oldest), as a run's own page shows it and as it was read;
//! - `rules/RULE.html`: one rule, every implementation's verdict on it by role and every case
//!   of it with each one's outcome;
//! - `badges/NAME.svg`: each implementation's latest badge;
//! - [`MANIFEST`]: the files written and the reports behind each implementation, which lets
//!   a later site in the same folder remove what it no longer has.
//!
//! Every text taken from a report is escaped, and every file name is made from the names in
//! the reports by [`compare::file_names`]: plain, distinct, never hidden, never empty.

use super::comparison::{STYLE, case_anchor, change_item, matrix_cell, outcome_cells, rule_anchor};
use super::html::esc;
use super::{badge, badge_svg, comparison_html, html, is_web_link};
use crate::catalog::Catalog;
use crate::compare::{self, Comparison, Entry, Order};
use crate::conformance::RunReport;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The name of the site's manifest: the files written, and each implementation's reports.
pub const MANIFEST: &str = "site.json";

/// The most regressions or fixes of one step listed on an implementation's page; the rest
/// are on its history page.
pub const CHANGES_LISTED: usize = 100;

/// A static site of reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Every file, by its path below the site's folder (`/` between names).
    pub files: BTreeMap<String, Vec<u8>>,
    /// The implementations, in the index's order.
    pub implementations: Vec<Implementation>,
}

/// One implementation of a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implementation {
    /// Its name as the reports give it.
    pub name: String,
    /// The name of its files (`implementations/NAME.html`, `badges/NAME.svg`, ...).
    pub file_name: String,
    /// Its reports (indices of the reports given), the oldest first.
    pub reports: Vec<usize>,
}

/// The site of `reports`, each with its file as given.
pub fn site(reports: &[(String, RunReport)]) -> Site {
    let implementations = group(reports);
    let latest: Vec<(String, RunReport)> = implementations
        .iter()
        .filter_map(|i| i.reports.last().map(|&r| reports[r].clone()))
        .collect();
    let comparison = compare::compare(&latest, Order::Given);
    let rules = rule_files(&comparison);
    let mut files = BTreeMap::new();
    let mut add = |path: String, text: String| {
        files.insert(path, text.into_bytes());
    };
    // Each implementation's reports compared, the oldest first (already in order, so the
    // order by start keeps them as they are and says how they were ordered).
    let histories: Vec<Comparison> = implementations
        .iter()
        .map(|i| {
            let own: Vec<(String, RunReport)> =
                i.reports.iter().map(|&r| reports[r].clone()).collect();
            compare::compare(&own, Order::StartedAt)
        })
        .collect();
    let site = Pages {
        reports,
        implementations: &implementations,
        comparison: &comparison,
        histories: &histories,
        rules: &rules,
    };
    add("index.html".into(), site.index());
    add(
        "compare.html".into(),
        with_site_nav(comparison_html(&comparison), 0),
    );
    let mut json = serde_json::to_string_pretty(&comparison).unwrap_or_default();
    json.push('\n');
    add("compare.json".into(), json);
    for (column, implementation) in implementations.iter().enumerate() {
        let name = &implementation.file_name;
        add(
            format!("implementations/{name}.html"),
            site.implementation(column),
        );
        if let Some(&newest) = implementation.reports.last() {
            add(
                format!("badges/{name}.svg"),
                badge_svg(&badge(&reports[newest].1)),
            );
        }
        for (k, &r) in implementation.reports.iter().enumerate() {
            let report = &reports[r].1;
            add(
                format!("reports/{name}-{}.html", k + 1),
                with_site_nav(html(report), 1),
            );
            let mut json = serde_json::to_string_pretty(report).unwrap_or_default();
            json.push('\n');
            add(format!("reports/{name}-{}.json", k + 1), json);
        }
        if histories[column].history.is_some() {
            add(
                format!("history/{name}.html"),
                with_site_nav(comparison_html(&histories[column]), 1),
            );
        }
    }
    for (rule, file) in &rules {
        add(format!("rules/{file}.html"), site.rule(rule));
    }
    let manifest = serde_json::json!({
        "kit": "asr-ctk",
        "files": files.keys().chain(std::iter::once(&MANIFEST.to_owned())).collect::<BTreeSet<_>>(),
        "implementations": implementations.iter().map(|i| serde_json::json!({
            "name": i.name,
            "fileName": i.file_name,
            "reports": i.reports.iter().map(|&r| &reports[r].0).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    files.insert(MANIFEST.to_owned(), text.into_bytes());
    Site {
        files,
        implementations,
    }
}

/// The files a site's manifest lists, when `bytes` is a manifest: each a path of plain names
/// below the site's folder (anything else it lists is left out).
pub fn manifest_files(bytes: &[u8]) -> Option<Vec<String>> {
    let manifest: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if manifest.get("kit").and_then(serde_json::Value::as_str) != Some("asr-ctk") {
        return None;
    }
    let files = manifest.get("files")?.as_array()?;
    Some(
        files
            .iter()
            .filter_map(serde_json::Value::as_str)
            .filter(|path| is_plain(path))
            .map(str::to_owned)
            .collect(),
    )
}

/// Whether `path` is names joined by `/`, none empty, `.` or `..`, none hidden.
fn is_plain(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|name| !name.is_empty() && !name.starts_with('.') && !name.contains('\\'))
}

/// The reports grouped into implementations, each's reports the oldest first, the
/// implementations by name and then by the reports' order.
fn group(reports: &[(String, RunReport)]) -> Vec<Implementation> {
    let entries: Vec<Entry> = reports.iter().map(|(f, r)| Entry::of(f, r)).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| entries[g[0]].same_implementation(entry))
        {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    for group in &mut groups {
        let order = compare::by_start(group.iter().map(|&i| reports[i].1.started_at.as_str()));
        *group = order.iter().map(|&k| group[k]).collect();
    }
    groups.sort_by_key(|g| entries[g[0]].name.to_lowercase());
    // A name two implementations share (one in two roles) is told apart by the roles.
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for group in &groups {
        *names.entry(entries[group[0]].name.as_str()).or_default() += 1;
    }
    let shown: Vec<String> = groups
        .iter()
        .map(|g| {
            let entry = &entries[g[0]];
            if names[entry.name.as_str()] > 1 {
                let roles: Vec<&str> = entry.roles.iter().map(|r| r.as_str()).collect();
                format!("{} {}", entry.name, roles.join(" "))
            } else {
                entry.name.clone()
            }
        })
        .collect();
    let file_names = compare::file_names(shown);
    groups
        .into_iter()
        .zip(file_names)
        .map(|(reports, file_name)| Implementation {
            name: entries[reports[0]].name.clone(),
            file_name,
            reports,
        })
        .collect()
}

/// Each rule of the comparison's matrix, in its order, with the name of its page.
fn rule_files(comparison: &Comparison) -> Vec<(String, String)> {
    let mut rules: Vec<String> = Vec::new();
    for row in &comparison.matrix {
        if !rules.contains(&row.rule) {
            rules.push(row.rule.clone());
        }
    }
    let files = compare::file_names(rules.iter().cloned());
    rules.into_iter().zip(files).collect()
}

/// Inserts the site's links at the top of a page written for itself (a comparison's, a
/// report's), `depth` folders below the site's root.
fn with_site_nav(page: String, depth: usize) -> String {
    let nav = nav(depth);
    match page.find("<body>\n") {
        Some(at) => {
            let at = at + "<body>\n".len();
            format!("{}{nav}{}", &page[..at], &page[at..])
        }
        None => page,
    }
}

fn nav(depth: usize) -> String {
    let up = "../".repeat(depth);
    format!(
        "<nav class=\"site\"><a href=\"{up}index.html\">All implementations</a> <a href=\"{up}compare.html\">The latest compared</a> <a href=\"{up}index.html#rules\">Rules</a></nav>\n"
    )
}

/// The pages that are the site's own.
struct Pages<'a> {
    reports: &'a [(String, RunReport)],
    implementations: &'a [Implementation],
    /// The latest report of each implementation, compared: column `i` is implementation `i`.
    comparison: &'a Comparison,
    /// Each implementation's reports compared, the oldest first.
    histories: &'a [Comparison],
    /// Each rule, with the name of its page.
    rules: &'a [(String, String)],
}

impl Pages<'_> {
    fn rule_file(&self, rule: &str) -> Option<&str> {
        self.rules
            .iter()
            .find(|(r, _)| r == rule)
            .map(|(_, f)| f.as_str())
    }

    /// A link to the page of `rule`, from `up` (the way back to the root).
    fn rule_link(&self, rule: &str, up: &str) -> String {
        match self.rule_file(rule) {
            Some(file) => format!("<a href=\"{up}rules/{file}.html\">{}</a>", esc(rule)),
            None => esc(rule),
        }
    }

    /// A link to implementation `i`'s page, from `up`.
    fn implementation_link(&self, i: usize, up: &str) -> String {
        let implementation = &self.implementations[i];
        let newest = &self.comparison.implementations[i];
        let roles: Vec<&str> = newest.roles.iter().map(|r| r.as_str()).collect();
        format!(
            "<a href=\"{up}implementations/{}.html\">{}</a> <span class=\"count\">({})</span>",
            implementation.file_name,
            esc(&implementation.name),
            esc(&roles.join(", "))
        )
    }

    fn index(&self) -> String {
        let mut out = String::with_capacity(64 * 1024);
        let reports = self.reports.len();
        let title = format!(
            "ASR conformance: {} implementation{}, {reports} report{}",
            self.implementations.len(),
            plural(self.implementations.len()),
            plural(reports)
        );
        start(&mut out, &title, 0);
        let _ = writeln!(
            out,
            "<p class=\"summary\">The latest report of each implementation, <a href=\"compare.html\">compared</a> (<a href=\"compare.json\">as JSON</a>): {}.</p>",
            esc(&self.comparison.summary())
        );
        out.push_str("<section id=\"implementations\">\n<h2>Implementations</h2>\n<table>\n<thead><tr><th scope=\"col\">Implementation</th><th scope=\"col\">Latest</th><th scope=\"col\">Started</th><th scope=\"col\">Conformant rules</th><th scope=\"col\">Badge</th><th scope=\"col\">Reports</th><th scope=\"col\">Last change</th></tr></thead>\n<tbody>\n");
        for (i, implementation) in self.implementations.iter().enumerate() {
            let newest = &self.comparison.implementations[i];
            let conformant = self.comparison.interop.conformant_rules[i];
            let Some(&last) = implementation.reports.last() else {
                continue;
            };
            let message = badge(&self.reports[last].1)["message"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            let last = self.histories[i]
                .history
                .as_ref()
                .and_then(|h| h.steps.last());
            let change = match last {
                Some(step) => format!(
                    "{} regression{}, {} fix{}",
                    step.regressions.len(),
                    plural(step.regressions.len()),
                    step.fixes.len(),
                    if step.fixes.len() == 1 { "" } else { "es" }
                ),
                None => "-".to_owned(),
            };
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\">{}</th><td><a href=\"reports/{}-{}.html\">{}</a></td><td><time>{}</time></td><td>{conformant}</td><td><a href=\"badges/{}.svg\">{}</a></td><td>{}</td><td>{change}</td></tr>",
                self.implementation_link(i, ""),
                implementation.file_name,
                implementation.reports.len(),
                esc(newest.version.as_deref().unwrap_or("(no version)")),
                esc(&newest.started_at),
                implementation.file_name,
                esc(&message),
                implementation.reports.len(),
            );
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
        out.push_str("<section id=\"rules\">\n<h2>Rules</h2>\n<p>How many implementations' latest reports are conformant, and how many not, on each rule and role.</p>\n<table>\n<thead><tr><th scope=\"col\">Rule</th><th scope=\"col\">Role</th><th scope=\"col\">Conformant</th><th scope=\"col\">Non-conformant</th></tr></thead>\n<tbody>\n");
        for rule in &self.comparison.interop.rules {
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
                self.rule_link(&rule.rule, ""),
                rule.role.map_or("", |r| r.as_str()),
                rule.conformant,
                rule.non_conformant
            );
        }
        out.push_str("</tbody>\n</table>\n");
        for (title, rules) in [
            (
                "Rules no implementation meets",
                &self.comparison.interop.none_meet,
            ),
            (
                "Rules the implementations split on",
                &self.comparison.interop.splits,
            ),
        ] {
            let _ = write!(out, "<h3>{title} ({})</h3>\n<ul>", rules.len());
            for rule in rules {
                let _ = write!(
                    out,
                    "<li>{} {}</li>",
                    self.rule_link(&rule.rule, ""),
                    rule.role.map_or("", |r| r.as_str())
                );
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n</body>\n</html>\n");
        out
    }

    fn implementation(&self, i: usize) -> String {
        let implementation = &self.implementations[i];
        let name = &implementation.file_name;
        let newest_report = implementation.reports.last().map(|&r| &self.reports[r].1);
        let mut out = String::with_capacity(32 * 1024);
        start(&mut out, &esc(&implementation.name), 1);
        let entry = &self.comparison.implementations[i];
        let roles: Vec<&str> = entry.roles.iter().map(|r| r.as_str()).collect();
        out.push_str("<dl class=\"meta\">\n");
        let mut row = |term: &str, value: String| {
            let _ = writeln!(out, "<dt>{term}</dt><dd>{value}</dd>");
        };
        row("Roles", esc(&roles.join(", ")));
        if !entry.named {
            row(
                "Named",
                "no: the adapter gave no name, so this is its command, and its reports stand alone"
                    .into(),
            );
        }
        if let Some(info) = newest_report.and_then(|r| r.adapter.implementation.as_ref()) {
            row("Language", esc(&info.language));
            for (term, link) in [("Homepage", &info.homepage), ("Issues", &info.issues)] {
                if let Some(link) = link {
                    row(
                        term,
                        if is_web_link(link) {
                            format!("<a href=\"{0}\">{0}</a>", esc(link))
                        } else {
                            esc(link)
                        },
                    );
                }
            }
        }
        row(
            "Latest",
            format!(
                "{} (<a href=\"../reports/{name}-{}.html\">report</a>), <img src=\"../badges/{name}.svg\" alt=\"badge\">",
                esc(entry.version.as_deref().unwrap_or("(no version)")),
                implementation.reports.len()
            ),
        );
        out.push_str("</dl>\n");
        // The latest verdicts: this implementation's column of the comparison's matrix.
        out.push_str("<section id=\"verdicts\">\n<h2>Latest verdicts</h2>\n<table>\n<thead><tr><th scope=\"col\">Rule</th><th scope=\"col\">Role</th><th scope=\"col\">Verdict</th></tr></thead>\n<tbody>\n");
        for matrix_row in &self.comparison.matrix {
            let Some(cell) = matrix_row.cells.get(i) else {
                continue;
            };
            if cell.verdict.is_none() {
                continue;
            }
            let _ = write!(
                out,
                "<tr data-rule=\"{}\" data-role=\"{}\"><th scope=\"row\">{}</th><td>{}</td>",
                esc(&matrix_row.rule),
                matrix_row.role.map_or("", |r| r.as_str()),
                self.rule_link(&matrix_row.rule, "../"),
                matrix_row.role.map_or("", |r| r.as_str())
            );
            let target = format!(
                "../compare.html#{}",
                rule_anchor(&matrix_row.rule, matrix_row.role)
            );
            matrix_cell(&mut out, cell, &target);
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
        self.history(&mut out, i);
        out.push_str("</body>\n</html>\n");
        out
    }

    fn history(&self, out: &mut String, i: usize) {
        let implementation = &self.implementations[i];
        let name = &implementation.file_name;
        let _ = writeln!(
            out,
            "<section id=\"history\">\n<h2>History ({} report{})</h2>",
            implementation.reports.len(),
            plural(implementation.reports.len())
        );
        let comparison = &self.histories[i];
        let own: Vec<&RunReport> = implementation
            .reports
            .iter()
            .map(|&r| &self.reports[r].1)
            .collect();
        if comparison.history.is_some() {
            let _ = writeln!(
                out,
                "<p>The oldest first, by the time each run started. <a href=\"../history/{name}.html\">Its reports compared</a>, case by case.</p>"
            );
        }
        let steps: BTreeMap<usize, &compare::Step> = comparison
            .history
            .iter()
            .flat_map(|h| &h.steps)
            .map(|s| (s.to, s))
            .collect();
        out.push_str("<table>\n<thead><tr><th scope=\"col\">#</th><th scope=\"col\">Version</th><th scope=\"col\">Started</th><th scope=\"col\">Conformant rules</th><th scope=\"col\">Failing cases</th><th scope=\"col\">Regressions</th><th scope=\"col\">Fixes</th><th scope=\"col\">Report</th></tr></thead>\n<tbody>\n");
        for (k, report) in own.iter().enumerate() {
            let entry = &comparison.implementations[k];
            let failing = report
                .cases
                .iter()
                .filter(|c| c.outcome.is_failure())
                .count();
            let (regressions, fixes) = steps.get(&k).map_or_else(
                || ("-".to_owned(), "-".to_owned()),
                |s| {
                    (
                        format!("<a href=\"#step-{}\">{}</a>", k + 1, s.regressions.len()),
                        format!("<a href=\"#step-{}\">{}</a>", k + 1, s.fixes.len()),
                    )
                },
            );
            let _ = writeln!(
                out,
                "<tr><td>{n}</td><td>{}</td><td><time>{}</time></td><td>{}</td><td>{failing}</td><td>{regressions}</td><td>{fixes}</td><td><a href=\"../reports/{name}-{n}.html\">page</a> <a href=\"../reports/{name}-{n}.json\">JSON</a></td></tr>",
                esc(entry.version.as_deref().unwrap_or("(no version)")),
                esc(&entry.started_at),
                comparison.interop.conformant_rules[k],
                n = k + 1,
            );
        }
        out.push_str("</tbody>\n</table>\n");
        for (to, step) in &steps {
            let _ = writeln!(
                out,
                "<section class=\"step\" id=\"step-{}\">\n<h3>{} to {}: {} regression{}, {} fix{}</h3>",
                to + 1,
                esc(&comparison.label(step.from)),
                esc(&comparison.label(step.to)),
                step.regressions.len(),
                plural(step.regressions.len()),
                step.fixes.len(),
                if step.fixes.len() == 1 { "" } else { "es" }
            );
            for (class, changes) in [("regression", &step.regressions), ("fix", &step.fixes)] {
                if changes.is_empty() {
                    continue;
                }
                let _ = write!(out, "<ul class=\"{class}s\">");
                let page = format!("../history/{name}.html");
                for change in changes.iter().take(CHANGES_LISTED) {
                    change_item(out, class, change, &page);
                }
                if changes.len() > CHANGES_LISTED {
                    let _ = write!(
                        out,
                        "<li>and {} more, on <a href=\"../history/{name}.html#history\">the history page</a></li>",
                        changes.len() - CHANGES_LISTED
                    );
                }
                out.push_str("</ul>\n");
            }
            out.push_str("</section>\n");
        }
        out.push_str("</section>\n");
    }

    fn rule(&self, rule: &str) -> String {
        let mut out = String::with_capacity(16 * 1024);
        start(&mut out, &esc(rule), 1);
        if let Some(known) = Catalog::embedded().rules.iter().find(|r| r.id == rule) {
            let _ = writeln!(
                out,
                "<p class=\"summary\">{} <span class=\"count\">({}, {})</span></p>",
                esc(&known.summary),
                esc(&known.file),
                esc(&known.section)
            );
        }
        let implementations = self.comparison.implementations.len();
        out.push_str("<section id=\"verdicts\">\n<h2>Verdicts</h2>\n<p>Each implementation's latest report; a cell links to the rule in the comparison of them all.</p>\n<table>\n<thead><tr><th scope=\"col\">Implementation</th><th scope=\"col\">Version</th><th scope=\"col\">Role</th><th scope=\"col\">Verdict</th></tr></thead>\n<tbody>\n");
        for row in self.comparison.matrix.iter().filter(|r| r.rule == rule) {
            let target = format!("../compare.html#{}", rule_anchor(&row.rule, row.role));
            for (i, cell) in row.cells.iter().enumerate().take(implementations) {
                let _ = write!(
                    out,
                    "<tr data-implementation=\"{}\" data-role=\"{}\"><th scope=\"row\">{}</th><td>{}</td><td>{}</td>",
                    self.implementations[i].file_name,
                    row.role.map_or("", |r| r.as_str()),
                    self.implementation_link(i, "../"),
                    esc(self.comparison.implementations[i]
                        .version
                        .as_deref()
                        .unwrap_or("")),
                    row.role.map_or("", |r| r.as_str())
                );
                matrix_cell(&mut out, cell, &target);
                out.push_str("</tr>\n");
            }
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
        let cases: Vec<&compare::CaseRow> = self
            .comparison
            .cases
            .iter()
            .filter(|c| c.rules.iter().any(|r| r == rule))
            .collect();
        let _ = write!(
            out,
            "<section id=\"cases\">\n<h2>Cases ({})</h2>\n<table>\n<thead><tr><th scope=\"col\">Case</th><th scope=\"col\">Role</th>",
            cases.len()
        );
        for i in 0..implementations {
            let _ = write!(
                out,
                "<th scope=\"col\">{}</th>",
                esc(&self.comparison.label(i))
            );
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for case in cases {
            let _ = write!(
                out,
                "<tr><th scope=\"row\"><a href=\"../compare.html#{}\"><code>{}</code></a></th><td>{}</td>",
                case_anchor(&case.case, case.role),
                esc(&case.case),
                case.role.as_str()
            );
            outcome_cells(&mut out, case);
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n</section>\n</body>\n</html>\n");
        out
    }
}

/// The start of one of the site's own pages, `depth` folders below its root.
fn start(out: &mut String, title: &str, depth: usize) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src 'self'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}.site{{margin-bottom:1rem}}</style>\n</head>\n<body>\n{}<h1>{title}</h1>\n",
        nav(depth)
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::conformance::Outcome;
    use crate::protocol::ProtocolRole;
    use crate::render::fixture::{SCRIPT, attribute_values as values, report};

    /// The case that passed in the fixture's older report and fails in the newer.
    const REGRESSED: &str = "messages/ASR-212/y_image_blob_only";
    /// The case that failed and now passes.
    const FIXED: &str = "messages/ASR-231/n_bad_role";

    /// The fixture's implementation twice (the newer given first, with a regression and a
    /// fix), in the reader's role once, under a hostile name, and an adapter of no name.
    fn reports() -> Vec<(String, RunReport)> {
        let old = report();
        let mut new = report();
        new.started_at = "2026-12-01T00:00:00+01:00".into();
        if let Some(i) = new.adapter.implementation.as_mut() {
            i.version = "1.3.0".into();
        }
        for case in &mut new.cases {
            if case.name == REGRESSED {
                case.outcome = Outcome::Fail;
            } else if case.name == FIXED {
                case.outcome = Outcome::Pass;
            }
        }
        let mut reader = report();
        reader.adapter.roles = vec![ProtocolRole::Reader];
        for case in &mut reader.cases {
            case.role = ProtocolRole::Reader;
        }
        let mut hostile = report();
        if let Some(i) = hostile.adapter.implementation.as_mut() {
            i.name = format!("../{SCRIPT}");
        }
        let mut unnamed = report();
        unnamed.adapter.implementation = None;
        let mut all = vec![
            ("new/report.json".to_owned(), new),
            ("old/report.json".to_owned(), old),
            ("reader/report.json".to_owned(), reader),
            ("hostile/report.json".to_owned(), hostile),
            ("unnamed/report.json".to_owned(), unnamed),
        ];
        for (_, report) in &mut all {
            report.summarize(Catalog::embedded());
        }
        all
    }

    fn is_page(path: &str) -> bool {
        std::path::Path::new(path)
            .extension()
            .is_some_and(|e| e == "html")
    }

    fn text(site: &Site, path: &str) -> String {
        String::from_utf8(site.files[path].clone()).expect("UTF-8")
    }

    /// `link` from the page `from`, as a path below the site's root and a fragment.
    fn resolve(from: &str, link: &str) -> (String, String) {
        let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
        let mut parts: Vec<&str> = from.split('/').collect();
        parts.pop();
        if path.is_empty() {
            return (from.to_owned(), fragment.to_owned());
        }
        for name in path.split('/') {
            match name {
                ".." => {
                    assert!(parts.pop().is_some(), "{link} from {from} leaves the site");
                }
                "." => {}
                name => parts.push(name),
            }
        }
        (parts.join("/"), fragment.to_owned())
    }

    #[test]
    fn every_link_of_every_page_lands_on_a_file_of_the_site_and_an_element_of_it() {
        let given = reports();
        let site = site(&given);
        // The only links off the site are the web links the reports give.
        let mut web: BTreeSet<&str> = BTreeSet::new();
        for (_, report) in &given {
            let info = report.adapter.implementation.as_ref();
            web.extend(info.and_then(|i| i.homepage.as_deref()));
            web.extend(info.and_then(|i| i.issues.as_deref()));
            web.extend(report.cases.iter().filter_map(|c| c.issue.as_deref()));
        }
        let mut links = 0;
        for (path, bytes) in &site.files {
            if !is_page(path) {
                continue;
            }
            let html = std::str::from_utf8(bytes).expect("UTF-8");
            for link in values(html, "href").into_iter().chain(values(html, "src")) {
                if link.starts_with("https://") {
                    assert!(web.contains(link), "{path}: {link}");
                    continue;
                }
                assert!(
                    !link.contains(':') && !link.starts_with('/'),
                    "{path}: {link}"
                );
                let (target, fragment) = resolve(path, link);
                let Some(file) = site.files.get(&target) else {
                    panic!("{path}: {link} is no file of the site");
                };
                if !fragment.is_empty() {
                    let file = std::str::from_utf8(file).expect("UTF-8");
                    assert!(
                        values(file, "id").contains(&fragment.as_str()),
                        "{path}: {link}: no element of {target} has the id"
                    );
                }
                links += 1;
            }
        }
        assert!(links > 200, "{links} links");
        for name in site.files.keys() {
            assert!(is_plain(name), "{name}");
        }
        let listed = manifest_files(&site.files[MANIFEST]).expect("a manifest");
        let written: Vec<&String> = site.files.keys().collect();
        assert_eq!(listed.iter().collect::<Vec<_>>(), written);
    }

    #[test]
    fn one_implementation_is_one_name_in_the_same_roles_its_reports_by_start() {
        let given = reports();
        let site = site(&given);
        let shown: Vec<(&str, &str, &[usize])> = site
            .implementations
            .iter()
            .map(|i| (i.name.as_str(), i.file_name.as_str(), i.reports.as_slice()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "../<script>alert(1)</script>",
                    "script-alert-1-script",
                    &[3][..]
                ),
                ("./adapter --flag two words", "adapter-flag-two-words", &[4]),
                ("asr-go", "asr-go-validator", &[1, 0]),
                ("asr-go", "asr-go-reader", &[2]),
            ]
        );
        // The newer given first is the latest all the same: the index and the comparison
        // show its version.
        let index = text(&site, "index.html");
        assert!(
            index.contains("reports/asr-go-validator-2.html\">1.3.0"),
            "{index}"
        );
        let compared: serde_json::Value =
            serde_json::from_str(&text(&site, "compare.json")).expect("JSON");
        assert_eq!(compared["implementations"][2]["file"], "new/report.json");
        assert_eq!(compared["implementations"][2]["version"], "1.3.0");
        assert!(site.files.contains_key("history/asr-go-validator.html"));
        assert!(!site.files.contains_key("history/asr-go-reader.html"));
        assert!(site.files.contains_key("reports/asr-go-validator-1.json"));
    }

    #[test]
    fn an_implementations_page_gives_its_latest_verdicts_and_each_change() {
        let given = reports();
        let site = site(&given);
        let page = text(&site, "implementations/asr-go-validator.html");
        let newest = &given[0].1;
        for rule in &newest.rules {
            for (role, result) in &rule.by_role {
                let start = format!(
                    "<tr data-rule=\"{}\" data-role=\"{}\">",
                    rule.rule,
                    role.as_str()
                );
                let at = page
                    .find(&start)
                    .unwrap_or_else(|| panic!("no row {start}"));
                let row = &page[at..at + page[at..].find("</tr>").expect("end")];
                assert_eq!(
                    values(row, "data-verdict"),
                    [result.verdict.as_str()],
                    "{row}"
                );
            }
        }
        let step = &page[page.find("id=\"step-2\"").expect("the step")..];
        let regression = format!(
            "regression: <a href=\"../history/asr-go-validator.html#{}\"><code>{}</code></a> (validator): <span class=\"o-pass\">pass</span> to <span class=\"o-fail\">fail</span>",
            case_anchor(REGRESSED, ProtocolRole::Validator),
            REGRESSED
        );
        assert!(step.contains(&regression), "{step}\n{regression}");
        let fix = format!(
            "fix: <a href=\"../history/asr-go-validator.html#{}\"><code>{}</code></a> (validator): <span class=\"o-fail\">fail</span> to <span class=\"o-pass\">pass</span>",
            case_anchor(FIXED, ProtocolRole::Validator),
            FIXED
        );
        assert!(step.contains(&fix), "{step}");
        assert_eq!(step.matches("<li class=\"regression\">").count(), 1);
        assert_eq!(step.matches("<li class=\"fix\">").count(), 1);
        let index = text(&site, "index.html");
        assert!(index.contains("1 regression, 1 fix"), "{index}");
    }

    #[test]
    fn a_rule_page_gives_every_implementations_verdict_and_text_is_escaped() {
        let given = reports();
        let site = site(&given);
        let page = text(&site, "rules/asr-231.html");
        assert!(
            page.contains(&esc(&Catalog::embedded()
                .rules
                .iter()
                .find(|r| r.id == "ASR-231")
                .expect("a rule")
                .summary))
        );
        for implementation in &site.implementations {
            let newest = &given[*implementation.reports.last().expect("a report")].1;
            let row = newest
                .rules
                .iter()
                .find(|r| r.rule == "ASR-231")
                .expect("row");
            for (role, result) in &row.by_role {
                let start = format!(
                    "<tr data-implementation=\"{}\" data-role=\"{}\">",
                    implementation.file_name,
                    role.as_str()
                );
                let at = page
                    .find(&start)
                    .unwrap_or_else(|| panic!("no row {start}"));
                let line = &page[at..at + page[at..].find("</tr>").expect("end")];
                assert_eq!(values(line, "data-verdict"), [result.verdict.as_str()]);
            }
        }
        for (path, bytes) in site.files.iter().filter(|(p, _)| is_page(p)) {
            let text = String::from_utf8_lossy(bytes);
            let own = path == "compare.html" || path.starts_with("history/");
            assert_eq!(text.matches("<script").count(), usize::from(own), "{path}");
        }
    }

    #[test]
    fn only_plain_paths_of_a_manifest_are_taken() {
        let manifest = br#"{"kit":"asr-ctk","files":["index.html","rules/a.html","../x","/etc/passwd","a//b",".hidden","rules/../../x",7]}"#;
        assert_eq!(
            manifest_files(manifest),
            Some(vec!["index.html".to_owned(), "rules/a.html".to_owned()])
        );
        assert_eq!(manifest_files(br#"{"files":["index.html"]}"#), None);
        assert_eq!(manifest_files(b"not json"), None);
    }
}
