//! A [`Comparison`] as one self-contained HTML page: no request leaves it (its style and
//! script are inline, every link is a fragment of the page), every table reads without
//! JavaScript, and with it the tables sort by a click on a heading and the matrix filters by
//! rule, role and verdict.
//!
//! The page's parts, each a section with an id the contents list links to:
//!
//! - `implementations`: one row per report (its label, roles, conformant rules, start, file);
//! - `matrix`: one row per rule and role (`tr[data-rule][data-role]`, its cells'
//!   verdicts in `data-verdicts`), one cell per report (`td[data-verdict]`), each linking to
//!   the rule's section;
//! - `interop`: the rules no implementation meets and the rules they split on;
//! - `disagreements`: the shared cases the outcomes differ on, each report's answer beside
//!   the expected one;
//! - `history`, for the reports of one implementation: its regressions and fixes;
//! - `rules`: a section per matrix row (`rule-…`) listing the cases behind it with each
//!   report's outcome;
//! - `cases`: a row per case and role (`case-<role>-…`) with each report's outcome.
//!
//! The filters are read from the address too (`?rule=ASR-221&role=reader&verdict=non-conformant`),
//! so a filtered view can be linked to. Every text taken from a report is escaped.

use super::html::{anchor, esc};
use crate::compare::{CaseRow, Cell, Comparison, MatrixRow, row_name};
use crate::conformance::RuleVerdict;
use crate::protocol::ProtocolRole;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The comparison as one HTML page.
pub fn comparison_html(comparison: &Comparison) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = format!(
        "ASR conformance: {} report{} compared",
        comparison.implementations.len(),
        if comparison.implementations.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>{title}</h1>\n<p class=\"summary\">{}</p>\n",
        esc(&comparison.summary())
    );
    out.push_str("<nav class=\"toc\"><a href=\"#implementations\">Implementations</a> <a href=\"#matrix-section\">Rules by implementation</a> <a href=\"#interop\">Interop</a> <a href=\"#disagreements\">Disagreements</a>");
    if comparison.history.is_some() {
        out.push_str(" <a href=\"#history\">History</a>");
    }
    out.push_str(" <a href=\"#rules\">Rules</a> <a href=\"#cases\">Cases</a></nav>\n");
    let page = Page::new(comparison);
    page.implementations(&mut out);
    page.matrix(&mut out);
    page.interop(&mut out);
    page.disagreements(&mut out);
    page.history(&mut out);
    page.rules(&mut out);
    page.cases(&mut out);
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// The id of the section of a matrix row.
pub fn rule_anchor(id: &str, played: Option<ProtocolRole>) -> String {
    match played {
        Some(played) => anchor("rule-", &format!("{id}-{}", played.as_str())),
        None => anchor("rule-", id),
    }
}

/// The id of the row of a case run as `role`.
pub fn case_anchor(case: &str, role: ProtocolRole) -> String {
    anchor(&format!("case-{}-", role.as_str()), case)
}

struct Page<'a> {
    comparison: &'a Comparison,
    cases: BTreeMap<(&'a str, ProtocolRole), &'a CaseRow>,
    /// The ids of the rules' sections.
    sections: std::collections::BTreeSet<String>,
}

impl<'a> Page<'a> {
    fn new(comparison: &'a Comparison) -> Self {
        Page {
            comparison,
            cases: comparison
                .cases
                .iter()
                .map(|c| ((c.case.as_str(), c.role), c))
                .collect(),
            sections: comparison
                .matrix
                .iter()
                .map(|row| rule_anchor(&row.rule, row.role))
                .collect(),
        }
    }

    /// Links to the sections of `rules` for `role`; a rule the matrix has no row of for the
    /// role (it binds no implementation of the role) is named without a link.
    fn rule_links(&self, rules: &[String], role: ProtocolRole) -> String {
        rules
            .iter()
            .map(|r| {
                let id = rule_anchor(r, Some(role));
                if self.sections.contains(&id) {
                    format!("<a href=\"#{id}\">{}</a>", esc(r))
                } else {
                    esc(r)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn label(&self, i: usize) -> String {
        esc(&self.comparison.label(i))
    }

    /// The headings of one column per report.
    fn report_headings(&self, out: &mut String) {
        for i in 0..self.comparison.implementations.len() {
            let _ = write!(out, "<th scope=\"col\">{}</th>", self.label(i));
        }
    }

    fn implementations(&self, out: &mut String) {
        out.push_str("<section id=\"implementations\">\n<h2>Implementations</h2>\n<table class=\"sortable\">\n<thead><tr><th scope=\"col\">#</th><th scope=\"col\">Implementation</th><th scope=\"col\">Roles</th><th scope=\"col\">Conformant rules</th><th scope=\"col\">Started</th><th scope=\"col\">Report</th><th scope=\"col\">Case set</th></tr></thead>\n<tbody>\n");
        for (i, entry) in self.comparison.implementations.iter().enumerate() {
            let roles: Vec<&str> = entry.roles.iter().map(|r| r.as_str()).collect();
            let conformant = self
                .comparison
                .interop
                .conformant_rules
                .get(i)
                .copied()
                .unwrap_or(0);
            let _ = writeln!(
                out,
                "<tr id=\"implementation-{n}\"><td data-value=\"{n}\">{n}</td><td>{}{}</td><td>{}</td><td data-value=\"{conformant}\">{conformant}</td><td><time>{}</time></td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                self.label(i),
                if entry.named {
                    ""
                } else {
                    " <em>(unnamed: its command)</em>"
                },
                esc(&roles.join(", ")),
                esc(&entry.started_at),
                esc(&entry.file),
                esc(entry.case_set.get(..19).unwrap_or(&entry.case_set)),
                n = i + 1,
            );
        }
        out.push_str("</tbody>\n</table>\n");
        for left in &self.comparison.left_out {
            let _ = writeln!(
                out,
                "<p class=\"left-out\">Left out: <a href=\"#{}\"><code>{}</code></a> ({}), not in {}.</p>",
                case_anchor(&left.case, left.role),
                esc(&left.case),
                left.role.as_str(),
                esc(&self.labels(&left.missing_from))
            );
        }
        out.push_str("</section>\n");
    }

    fn labels(&self, indices: &[usize]) -> String {
        indices
            .iter()
            .map(|&i| self.comparison.label(i))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn matrix(&self, out: &mut String) {
        let roles: std::collections::BTreeSet<ProtocolRole> = self
            .comparison
            .matrix
            .iter()
            .filter_map(|r| r.role)
            .collect();
        out.push_str("<section id=\"matrix-section\">\n<h2>Rules by implementation</h2>\n<p>Each cell is the report's verdict on the rule for the role, with the cases that passed (or were non-strict) out of the cases run; it links to the cases behind it.</p>\n<noscript><p>Sorting and the filters need JavaScript; the table reads without it.</p></noscript>\n<form id=\"filters\" hidden><label>Rule <input id=\"filter-rule\" type=\"search\" placeholder=\"a rule id\"></label> <label>Role <select id=\"filter-role\"><option value=\"\">any</option>");
        for role in roles {
            let _ = write!(out, "<option>{}</option>", role.as_str());
        }
        out.push_str("</select></label> <label>Verdict <select id=\"filter-verdict\"><option value=\"\">any</option>");
        for verdict in VERDICTS {
            let _ = write!(out, "<option>{}</option>", verdict.as_str());
        }
        out.push_str("<option>none</option></select></label> <output id=\"filter-count\"></output></form>\n<table id=\"matrix\" class=\"sortable\">\n<thead><tr><th scope=\"col\">Rule</th><th scope=\"col\">Role</th><th scope=\"col\">Conformant</th>");
        self.report_headings(out);
        out.push_str("</tr></thead>\n<tbody>\n");
        let interop: BTreeMap<(&str, Option<ProtocolRole>), usize> = self
            .comparison
            .interop
            .rules
            .iter()
            .map(|r| ((r.rule.as_str(), r.role), r.conformant))
            .collect();
        let reports = self.comparison.implementations.len();
        for row in &self.comparison.matrix {
            let verdicts: Vec<&str> = row.cells.iter().map(verdict_name).collect();
            let target = rule_anchor(&row.rule, row.role);
            let conformant = interop
                .get(&(row.rule.as_str(), row.role))
                .copied()
                .unwrap_or(0);
            let _ = write!(
                out,
                "<tr data-rule=\"{rule}\" data-role=\"{role}\" data-verdicts=\" {} \"><th scope=\"row\"><a href=\"#{target}\">{rule}</a></th><td>{role}</td><td data-value=\"{conformant}\">{conformant}/{reports}</td>",
                esc(&verdicts.join(" ")),
                rule = esc(&row.rule),
                role = row.role.map_or("", ProtocolRole::as_str),
            );
            for cell in &row.cells {
                matrix_cell(out, cell, &format!("#{target}"));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
    }

    fn interop(&self, out: &mut String) {
        out.push_str("<section id=\"interop\">\n<h2>Interop</h2>\n");
        let lists = [
            (
                "Rules no implementation meets",
                &self.comparison.interop.none_meet,
            ),
            (
                "Rules the implementations split on",
                &self.comparison.interop.splits,
            ),
        ];
        for (title, rules) in lists {
            let _ = write!(
                out,
                "<h3>{title} ({})</h3>\n<ul class=\"rules\">",
                rules.len()
            );
            for rule in rules {
                let _ = write!(
                    out,
                    "<li><a href=\"#{}\">{}</a></li>",
                    rule_anchor(&rule.rule, rule.role),
                    esc(&row_name(&rule.rule, rule.role))
                );
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n");
    }

    fn disagreements(&self, out: &mut String) {
        let _ = write!(
            out,
            "<section id=\"disagreements\">\n<h2>Cases they disagree on ({})</h2>\n",
            self.comparison.disagreements.len()
        );
        if self.comparison.disagreements.is_empty() {
            out.push_str(
                "<p>On every case they share, the reports give one outcome.</p>\n</section>\n",
            );
            return;
        }
        out.push_str("<table id=\"disagreement-table\" class=\"sortable\">\n<thead><tr><th scope=\"col\">Case</th><th scope=\"col\">Role</th><th scope=\"col\">Rules</th>");
        self.report_headings(out);
        out.push_str("</tr></thead>\n<tbody>\n");
        for d in &self.comparison.disagreements {
            let _ = write!(
                out,
                "<tr data-rules=\" {} \" data-role=\"{}\"><th scope=\"row\"><a href=\"#{}\"><code>{}</code></a></th><td>{}</td><td>{}</td>",
                esc(&d.rules.join(" ")),
                d.role.as_str(),
                case_anchor(&d.case, d.role),
                esc(&d.case),
                d.role.as_str(),
                self.rule_links(&d.rules, d.role),
            );
            for report in 0..self.comparison.implementations.len() {
                let Some(o) = d.outcomes.iter().find(|o| o.report == report) else {
                    out.push_str("<td class=\"o-absent\">absent</td>");
                    continue;
                };
                let _ = write!(out, "<td class=\"o-{0}\">{0}", o.outcome.as_str());
                if o.detail.is_some() || o.expected.is_some() || o.actual.is_some() {
                    out.push_str("<details><summary>answer</summary>");
                    for (term, text) in [
                        ("detail", &o.detail),
                        ("expected", &o.expected),
                        ("actual", &o.actual),
                    ] {
                        if let Some(text) = text {
                            let _ = write!(
                                out,
                                "<p class=\"term\">{term}</p><pre>{}</pre>",
                                esc(&shown(text))
                            );
                        }
                    }
                    out.push_str("</details>");
                }
                out.push_str("</td>");
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
    }

    fn history(&self, out: &mut String) {
        let Some(history) = &self.comparison.history else {
            return;
        };
        let order: Vec<String> = history.reports.iter().map(|&i| self.label(i)).collect();
        let _ = writeln!(
            out,
            "<section id=\"history\">\n<h2>History</h2>\n<p>In order ({}): {}.</p>",
            match history.order {
                crate::compare::Order::Given => "as given",
                crate::compare::Order::StartedAt => "by start",
            },
            order.join(", then ")
        );
        for step in &history.steps {
            let _ = writeln!(
                out,
                "<h3>{} to {}: {} regressions, {} fixes</h3>",
                self.label(step.from),
                self.label(step.to),
                step.regressions.len(),
                step.fixes.len()
            );
            for (class, changes) in [("regression", &step.regressions), ("fix", &step.fixes)] {
                if changes.is_empty() {
                    continue;
                }
                let _ = write!(out, "<ul class=\"{class}s\">");
                for change in changes {
                    change_item(out, class, change, "");
                }
                out.push_str("</ul>\n");
            }
        }
        out.push_str("</section>\n");
    }

    /// A section per matrix row with cases behind it: the cases, each report's outcome.
    fn rules(&self, out: &mut String) {
        out.push_str("<section id=\"rules\">\n<h2>Rules and their cases</h2>\n");
        for row in &self.comparison.matrix {
            let behind = behind(row);
            let _ = write!(
                out,
                "<section class=\"rule\" id=\"{}\">\n<h3>{}</h3>\n",
                rule_anchor(&row.rule, row.role),
                esc(&row_name(&row.rule, row.role))
            );
            if behind.is_empty() {
                out.push_str("<p>No report ran a case of it.</p>\n</section>\n");
                continue;
            }
            out.push_str("<table class=\"sortable\">\n<thead><tr><th scope=\"col\">Case</th>");
            self.report_headings(out);
            out.push_str("</tr></thead>\n<tbody>\n");
            for name in behind {
                // A row of no role (a rule no report has a role's row of) names the case's
                // first role among the reports' cases.
                let found = match row.role {
                    Some(role) => self.cases.get(&(name, role)).copied(),
                    None => [
                        ProtocolRole::Validator,
                        ProtocolRole::Reader,
                        ProtocolRole::Producer,
                    ]
                    .into_iter()
                    .find_map(|role| self.cases.get(&(name, role)).copied()),
                };
                let Some(case) = found else { continue };
                let _ = write!(
                    out,
                    "<tr><th scope=\"row\"><a href=\"#{}\"><code>{}</code></a></th>",
                    case_anchor(&case.case, case.role),
                    esc(&case.case)
                );
                outcome_cells(out, case);
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody>\n</table>\n</section>\n");
        }
        out.push_str("</section>\n");
    }

    fn cases(&self, out: &mut String) {
        let _ = write!(
            out,
            "<section id=\"cases\">\n<h2>Cases ({})</h2>\n<table id=\"case-table\" class=\"sortable\">\n<thead><tr><th scope=\"col\">Case</th><th scope=\"col\">Role</th><th scope=\"col\">Id</th><th scope=\"col\">Rules</th>",
            self.comparison.cases.len()
        );
        self.report_headings(out);
        out.push_str("</tr></thead>\n<tbody>\n");
        for case in &self.comparison.cases {
            let _ = write!(
                out,
                "<tr id=\"{}\"><th scope=\"row\"><code>{}</code></th><td>{}</td><td><code>{}</code></td><td>{}</td>",
                case_anchor(&case.case, case.role),
                esc(&case.case),
                case.role.as_str(),
                esc(&case.id),
                self.rule_links(&case.rules, case.role)
            );
            outcome_cells(out, case);
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
    }
}

/// The verdicts a cell can show, in the filter's order.
const VERDICTS: [RuleVerdict; 5] = [
    RuleVerdict::Conformant,
    RuleVerdict::NonConformant,
    RuleVerdict::NonStrict,
    RuleVerdict::Untested,
    RuleVerdict::NotApplicable,
];

/// The most bytes of a detail, expectation or answer shown in the disagreements.
const SHOWN_BYTES: usize = 2000;

fn shown(text: &str) -> String {
    let mut text = text.to_owned();
    crate::text::cut_text(&mut text, SHOWN_BYTES, "\n");
    text
}

/// A cell's verdict as the page names it: "none" where the report has no row of the rule.
fn verdict_name(cell: &Cell) -> &'static str {
    cell.verdict.map_or("none", RuleVerdict::as_str)
}

/// The sort key of a verdict: the conformant first.
fn verdict_rank(cell: &Cell) -> usize {
    cell.verdict
        .and_then(|v| VERDICTS.iter().position(|x| *x == v))
        .unwrap_or(VERDICTS.len())
}

/// A report's cell of a matrix row, linking to `href`.
pub(super) fn matrix_cell(out: &mut String, cell: &Cell, href: &str) {
    let verdict = verdict_name(cell);
    if cell.verdict.is_none() {
        let _ = write!(
            out,
            "<td class=\"v-none\" data-verdict=\"none\" data-value=\"{}\">-</td>",
            verdict_rank(cell)
        );
        return;
    }
    let mut extra = String::new();
    for (n, what) in [
        (cell.failed, "failed"),
        (cell.lenient, "lenient"),
        (cell.over_strict, "over-strict"),
        (cell.errored, "errored"),
        (cell.skipped, "skipped"),
    ] {
        if n > 0 {
            let _ = write!(extra, " <span class=\"count\">{n} {what}</span>");
        }
    }
    let _ = write!(
        out,
        "<td class=\"v-{verdict}\" data-verdict=\"{verdict}\" data-value=\"{}\" title=\"passed {}, non-strict {}, failed {}, lenient {}, over-strict {}, skipped {}, errored {}, of {} cases\"><a href=\"{}\">{verdict} {}/{}</a>{extra}</td>",
        verdict_rank(cell),
        cell.passed,
        cell.non_strict,
        cell.failed,
        cell.lenient,
        cell.over_strict,
        cell.skipped,
        cell.errored,
        cell.cases,
        esc(href),
        cell.passed + cell.non_strict,
        cell.cases,
    );
}

/// One regression or fix (`class`) as an item of a list, its case linking to the case's row
/// on the comparison page `page` (empty: this page).
pub(super) fn change_item(
    out: &mut String,
    class: &str,
    change: &crate::compare::Change,
    page: &str,
) {
    let _ = write!(
        out,
        "<li class=\"{class}\">{class}: <a href=\"{page}#{}\"><code>{}</code></a> ({}): <span class=\"o-{}\">{}</span> to <span class=\"o-{}\">{}</span></li>",
        case_anchor(&change.case, change.role),
        esc(&change.case),
        change.role.as_str(),
        change.before.as_str(),
        change.before.as_str(),
        change.after.as_str(),
        change.after.as_str()
    );
}

/// The cases behind a matrix row: every report's cases of it, each once, in name order.
fn behind(row: &MatrixRow) -> Vec<&str> {
    let mut names: Vec<&str> = row
        .cells
        .iter()
        .flat_map(|c| c.case_names.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

pub(super) fn outcome_cells(out: &mut String, case: &CaseRow) {
    for outcome in &case.outcomes {
        match outcome {
            Some(o) => {
                let _ = write!(out, "<td class=\"o-{0}\">{0}</td>", o.as_str());
            }
            None => out.push_str("<td class=\"o-absent\">absent</td>"),
        }
    }
}

pub(super) const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:1rem 2rem;color:#1f2328}\
h1{font-size:1.5rem}h2{margin-top:2rem;border-bottom:1px solid #d0d7de}\
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.2rem .45rem;text-align:left;vertical-align:top}\
thead th{background:#f6f8fa;position:sticky;top:0}table.sortable thead th{cursor:pointer}\
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\
.v-conformant{background:#dafbe1}.v-non-conformant{background:#ffebe9}.v-non-strict{background:#fff8c5}\
.v-untested,.v-not-applicable,.v-none{color:#57606a;background:#f6f8fa}\
.o-pass{color:#116329}.o-non-strict{color:#7d4e00}.o-skipped,.o-not-run,.o-absent{color:#57606a}\
.o-fail,.o-error,.o-timeout,.o-crash,.o-protocol-error{color:#a40e26;font-weight:600}\
.count{font-size:.85em;color:#57606a}.toc{display:flex;flex-wrap:wrap;gap:.3rem 1rem}\
#filters{margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}\
[hidden]{display:none!important}\
:target{outline:3px solid #0969da}pre{white-space:pre-wrap;max-width:60rem;margin:.2rem 0}\
.term{margin:.2rem 0;font-weight:600}.regression{color:#a40e26}.fix{color:#116329}";

/// The filters and the sorting: the page reads whole without them.
const SCRIPT: &str = r"(function(){
var form=document.getElementById('filters');
var rule=document.getElementById('filter-rule'),role=document.getElementById('filter-role'),verdict=document.getElementById('filter-verdict'),count=document.getElementById('filter-count');
var rows=Array.prototype.slice.call(document.querySelectorAll('#matrix tbody tr'));
var disagreements=Array.prototype.slice.call(document.querySelectorAll('#disagreement-table tbody tr'));
var query=new URLSearchParams(location.search);
if(query.get('rule'))rule.value=query.get('rule');
if(query.get('role'))role.value=query.get('role');
if(query.get('verdict'))verdict.value=query.get('verdict');
function apply(){
var r=rule.value.trim().toUpperCase(),ro=role.value,v=verdict.value,shown=0;
rows.forEach(function(tr){
var ok=(!r||tr.dataset.rule.toUpperCase().indexOf(r)>=0)&&(!ro||tr.dataset.role===ro)&&(!v||tr.dataset.verdicts.indexOf(' '+v+' ')>=0);
tr.hidden=!ok;if(ok)shown++;});
disagreements.forEach(function(tr){
tr.hidden=!((!r||tr.dataset.rules.toUpperCase().indexOf(r)>=0)&&(!ro||tr.dataset.role===ro));});
count.textContent=shown+' of '+rows.length+' rows';}
[rule,role,verdict].forEach(function(e){e.addEventListener('input',apply);e.addEventListener('change',apply);});
form.hidden=false;apply();
function key(td){var v=td.getAttribute('data-value');return v===null?td.textContent.trim():Number(v);}
function compare(a,b){return(typeof a==='number'&&typeof b==='number')?a-b:String(a).localeCompare(String(b),undefined,{numeric:true});}
Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(table){
Array.prototype.forEach.call(table.querySelectorAll('thead th'),function(th,column){
th.tabIndex=0;
function sort(){
var up=th.getAttribute('aria-sort')!=='ascending';
Array.prototype.forEach.call(table.querySelectorAll('thead th'),function(h){h.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',up?'ascending':'descending');
var body=table.tBodies[0];
var sorted=Array.prototype.slice.call(body.rows).sort(function(x,y){var d=compare(key(x.cells[column]),key(y.cells[column]));return up?d:-d;});
sorted.forEach(function(tr){body.appendChild(tr);});}
th.addEventListener('click',sort);
th.addEventListener('keydown',function(e){if(e.key==='Enter')sort();});});});
})();";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Order, compare};
    use crate::conformance::Outcome;
    use crate::render::fixture::{SCRIPT, attribute_values as values, report};
    use std::collections::BTreeSet;

    /// Two implementations of the fixture's run, the second failing the case the first
    /// passes, one of them named by hostile text.
    fn page() -> (Comparison, String) {
        let first = report();
        let mut second = report();
        if let Some(i) = second.adapter.implementation.as_mut() {
            i.name = format!("other {SCRIPT}");
        }
        second.cases[0].outcome = Outcome::Fail;
        second.cases[0].detail = Some(format!("it said {SCRIPT}"));
        second.summarize(crate::catalog::Catalog::embedded());
        let comparison = compare(
            &[("a.json".to_owned(), first), ("b.json".to_owned(), second)],
            Order::Given,
        );
        let html = comparison_html(&comparison);
        (comparison, html)
    }

    #[test]
    fn every_link_is_a_fragment_of_the_page_with_its_target() {
        let (_, html) = page();
        let ids: BTreeSet<&str> = values(&html, "id").into_iter().collect();
        let links = values(&html, "href");
        assert!(links.len() > 20, "{}", links.len());
        for link in links {
            let target = link.strip_prefix('#').unwrap_or_else(|| {
                panic!("a link that leaves the page: {link}");
            });
            assert!(ids.contains(target), "no element has the id {target}");
        }
        for tag in ["<link", "<img", "<iframe", " src=", "@import", "url("] {
            assert!(!html.contains(tag), "the page asks for something: {tag}");
        }
    }

    #[test]
    fn each_cell_shows_its_reports_verdict_and_links_to_its_cases() {
        let (comparison, html) = page();
        let ids: BTreeSet<&str> = values(&html, "id").into_iter().collect();
        for row in &comparison.matrix {
            let start = format!(
                "<tr data-rule=\"{}\" data-role=\"{}\"",
                row.rule,
                row.role.map_or("", ProtocolRole::as_str)
            );
            let at = html
                .find(&start)
                .unwrap_or_else(|| panic!("no row {start}"));
            let line = &html[at..at + html[at..].find("</tr>").expect("a row's end")];
            let shown = values(line, "data-verdict");
            let written: Vec<&str> = row.cells.iter().map(verdict_name).collect();
            assert_eq!(shown, written, "{line}");
            assert!(ids.contains(rule_anchor(&row.rule, row.role).as_str()));
        }
        // The case the two disagree on is in the disagreements, linked to its row.
        let case = &comparison.disagreements[0];
        let target = case_anchor(&case.case, case.role);
        let section = &html[html.find("id=\"disagreements\"").expect("the section")..];
        assert!(
            section.contains(&format!("href=\"#{target}\"")),
            "{section}"
        );
        let row_at = html
            .find(&format!("<tr id=\"{target}\">"))
            .expect("the case's row");
        let row = &html[row_at..row_at + html[row_at..].find("</tr>").expect("end")];
        assert!(
            row.contains("o-pass\">pass") && row.contains("o-fail\">fail"),
            "{row}"
        );
    }

    #[test]
    fn text_from_the_reports_is_escaped() {
        let (_, html) = page();
        let scripts = html.matches("<script").count();
        assert_eq!(scripts, 1, "only the page's own script");
        assert!(html.contains("other &lt;script&gt;"), "the name is escaped");
        assert!(
            html.contains("it said &lt;script&gt;"),
            "the detail is escaped"
        );
    }

    #[test]
    fn the_filters_are_hidden_until_the_script_shows_them() {
        let (_, html) = page();
        assert!(html.contains("<form id=\"filters\" hidden>"));
        assert!(html.contains("form.hidden=false"));
        assert!(html.contains("<noscript>"));
    }
}
