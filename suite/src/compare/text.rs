//! The comparison in words: for a person at a terminal and for a pull request's comment.

use super::{Cell, Comparison, MatrixRow};
use crate::conformance::RuleVerdict;
use crate::protocol::ProtocolRole;
use std::fmt::Write as _;

/// The cases left out that the text names one by one; the others are counted.
const LEFT_OUT_SHOWN: usize = 20;

impl Comparison {
    /// The regressions over the whole history (none without one).
    pub fn regressions(&self) -> usize {
        self.history
            .as_ref()
            .map_or(0, |h| h.steps.iter().map(|s| s.regressions.len()).sum())
    }

    /// The comparison for a person at a terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.summary());
        for (i, implementation) in self.implementations.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {} ({}, started {})",
                self.label(i),
                implementation.file,
                implementation.started_at
            );
        }
        for left in self.left_out.iter().take(LEFT_OUT_SHOWN) {
            let _ = writeln!(
                out,
                "left out: {} ({}): not in {}",
                left.case,
                left.role.as_str(),
                self.labels(&left.missing_from)
            );
        }
        if self.left_out.len() > LEFT_OUT_SHOWN {
            let _ = writeln!(
                out,
                "left out: {} more (--format json lists every one)",
                self.left_out.len() - LEFT_OUT_SHOWN
            );
        }
        let _ = writeln!(out, "rules:");
        for row in self.tested_rows() {
            let cells: Vec<String> = row.cells.iter().map(cell_text).collect();
            let _ = writeln!(
                out,
                "  {}: {}",
                row_name(&row.rule, row.role),
                cells.join(" | ")
            );
        }
        for rule in &self.interop.none_meet {
            let _ = writeln!(out, "no one meets {}", row_name(&rule.rule, rule.role));
        }
        for rule in &self.interop.splits {
            let _ = writeln!(out, "split on {}", row_name(&rule.rule, rule.role));
        }
        for disagreement in &self.disagreements {
            let outcomes: Vec<String> = disagreement
                .outcomes
                .iter()
                .map(|o| format!("[{}] {}", o.report + 1, o.outcome.as_str()))
                .collect();
            let _ = writeln!(
                out,
                "disagree on {} ({}): {}",
                disagreement.case,
                disagreement.role.as_str(),
                outcomes.join(", ")
            );
            for o in &disagreement.outcomes {
                if let Some(detail) = &o.detail {
                    let _ = writeln!(out, "    [{}] {}", o.report + 1, first_line(detail));
                }
            }
        }
        for step in self.history.iter().flat_map(|h| &h.steps) {
            let _ = writeln!(
                out,
                "from {} to {}: {} regressions, {} fixes",
                self.label(step.from),
                self.label(step.to),
                step.regressions.len(),
                step.fixes.len()
            );
            for (what, changes) in [("regression", &step.regressions), ("fix", &step.fixes)] {
                for change in changes {
                    let _ = writeln!(
                        out,
                        "  {what}: {} ({}): {} -> {}",
                        change.case,
                        change.role.as_str(),
                        change.before.as_str(),
                        change.after.as_str()
                    );
                }
            }
        }
        out
    }

    /// The comparison as Markdown, for a pull request's comment.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "**{}**\n", cell_escape(&self.summary()));
        let _ = write!(out, "| Rule | Role |");
        for i in 0..self.implementations.len() {
            let _ = write!(out, " {} |", cell_escape(&self.label(i)));
        }
        let _ = write!(out, "\n|---|---|");
        for _ in &self.implementations {
            out.push_str("---|");
        }
        out.push('\n');
        for row in self.tested_rows() {
            let role = row.role.map_or("", ProtocolRole::as_str);
            let _ = write!(out, "| {} | {role} |", cell_escape(&row.rule));
            for cell in &row.cells {
                let _ = write!(out, " {} |", cell_escape(&cell_text(cell)));
            }
            out.push('\n');
        }
        let lists = [
            ("Rules no implementation meets", &self.interop.none_meet),
            ("Rules the implementations split on", &self.interop.splits),
        ];
        for (title, rules) in lists {
            if rules.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n### {title}\n");
            for rule in rules {
                let _ = writeln!(out, "- `{}`", row_name(&rule.rule, rule.role));
            }
        }
        if !self.disagreements.is_empty() {
            let _ = writeln!(out, "\n### Cases they disagree on\n");
            for disagreement in &self.disagreements {
                let _ = writeln!(
                    out,
                    "- `{}` ({}, {}):",
                    disagreement.case,
                    disagreement.role.as_str(),
                    disagreement.rules.join(", ")
                );
                for o in &disagreement.outcomes {
                    let detail = o
                        .detail
                        .as_deref()
                        .map(|d| format!(": {}", cell_escape(first_line(d))))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "  - {}: {}{detail}",
                        cell_escape(&self.label(o.report)),
                        o.outcome.as_str()
                    );
                }
            }
        }
        if !self.left_out.is_empty() {
            let _ = writeln!(out, "\n### Cases not in every report (left out)\n");
            for left in &self.left_out {
                let _ = writeln!(
                    out,
                    "- `{}` ({}): not in {}",
                    left.case,
                    left.role.as_str(),
                    cell_escape(&self.labels(&left.missing_from))
                );
            }
        }
        if let Some(history) = &self.history {
            let _ = writeln!(out, "\n### History\n");
            for step in &history.steps {
                let _ = writeln!(
                    out,
                    "- {} to {}: {} regressions, {} fixes",
                    cell_escape(&self.label(step.from)),
                    cell_escape(&self.label(step.to)),
                    step.regressions.len(),
                    step.fixes.len()
                );
                for (what, changes) in [("regression", &step.regressions), ("fix", &step.fixes)] {
                    for change in changes {
                        let _ = writeln!(
                            out,
                            "  - {what}: `{}` ({}): {} to {}",
                            change.case,
                            change.role.as_str(),
                            change.before.as_str(),
                            change.after.as_str()
                        );
                    }
                }
            }
        }
        out
    }

    /// The rows of the matrix some report tested: a row every report leaves untested (or
    /// holds not applicable) says nothing to compare, and is left to the JSON.
    pub fn tested_rows(&self) -> impl Iterator<Item = &MatrixRow> {
        self.matrix.iter().filter(|row| {
            row.cells.iter().any(|c| {
                c.verdict.is_some_and(|v| {
                    !matches!(v, RuleVerdict::Untested | RuleVerdict::NotApplicable)
                })
            })
        })
    }

    /// One line: how many reports, rules, disagreements and regressions.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{} reports, {} rule rows tested ({} untested by all): {} no one meets, {} split, {} cases disagreed on",
            self.implementations.len(),
            self.tested_rows().count(),
            self.matrix.len() - self.tested_rows().count(),
            self.interop.none_meet.len(),
            self.interop.splits.len(),
            self.disagreements.len()
        );
        if !self.same_case_set {
            let _ = write!(
                line,
                "; case sets differ, {} cases left out",
                self.left_out.len()
            );
        }
        if self.history.is_some() {
            let _ = write!(line, "; {} regressions", self.regressions());
        }
        line
    }

    /// The implementation `i` as a person reads it: name, version, and its position.
    pub fn label(&self, i: usize) -> String {
        self.implementations
            .get(i)
            .map_or_else(String::new, |c| match &c.version {
                Some(version) => format!("{} {version} [{}]", c.name, i + 1),
                None => format!("{} [{}]", c.name, i + 1),
            })
    }

    fn labels(&self, indices: &[usize]) -> String {
        indices
            .iter()
            .map(|&i| self.label(i))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A rule and its role, as a person reads it: `ASR-221 (reader)`.
pub fn row_name(id: &str, role: Option<ProtocolRole>) -> String {
    match role {
        Some(role) => format!("{id} ({})", role.as_str()),
        None => id.to_owned(),
    }
}

fn cell_text(cell: &Cell) -> String {
    match cell.verdict {
        Some(verdict) => format!(
            "{} {}/{}",
            verdict.as_str(),
            cell.passed + cell.non_strict,
            cell.cases
        ),
        None => "-".to_owned(),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Text made safe in a Markdown table cell: no pipe or line break ends it.
fn cell_escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cells_cannot_break_the_table() {
        assert_eq!(cell_escape("a|b\nc"), "a\\|b c");
    }
}
