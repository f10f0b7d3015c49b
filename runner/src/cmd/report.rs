//! `asr-ctk report merge`: shards of one run, combined into one report.
//!
//! A merged report is a certification claim like a run's, so nothing in it is taken on trust:
//! every report must be of the corpus the merge loads (its digest and case count), every case
//! in it a case of that corpus, run as a role the case has, under the id and rules the corpus
//! gives it, and of a shard the report claims (the shard follows from the run's command line,
//! as `asr-ctk run --shard` selects), and no case of those shards left out. What is read is bounded ([`max_report_bytes`]), and every
//! text of a merged case is cut as a run cuts it.
//!
//! The reports of the parts of one fuzz campaign (`asr-ctk fuzz`, the same seed, role,
//! adapter and options, disjoint iterations: `--first` and `--iterations`, or `--jobs`) are
//! joined the same way: the counts of each rule add up, the cases found are listed together,
//! the verdicts are recomputed ([`asr_suite::fuzz::campaign::merge_reports`]). Reports of
//! other campaigns, or a campaign's and a run's, are refused.
//!
//! `asr-ctk report compare` puts reports side by side ([`asr_suite::compare`]), and
//! `asr-ctk report site` publishes many as a static site ([`asr_suite::render::site`]).

use crate::{corpus, exit};
use anyhow::{Context, Result, bail};
use asr_suite::case::Case;
use asr_suite::catalog::{Catalog, Role};
use asr_suite::conformance::{KEPT_BYTES, RunReport, case_set_digest};
use asr_suite::protocol::ProtocolRole;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub enum ReportCommand {
    /// Combine the report.json files of the shards of one run, or of the parts of one fuzz
    /// campaign, into one report.
    ///
    /// Each report of a run must be of the corpus given (or found) here: the same case set
    /// digest and case count, only cases of the corpus, each of the shard its report claims.
    /// A report that is not (or not a regular file, or larger than the corpus allows) is
    /// refused. The parts of a fuzz campaign must have the same seed, role, adapter and
    /// implementation, and disjoint iterations (--first, --iterations); the cases they found
    /// (read from the found/ beside each report) are joined in OUT/found/.
    Merge {
        /// The shards' report.json files.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// Where to write the merged reports.
        #[arg(long, value_name = "DIR", default_value = "asr-ctk-report")]
        out: PathBuf,
        /// The corpus the run used (default: ./cases when it holds a catalog, else the corpus the kit carries).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
    /// Compare the reports of several implementations, or of several runs of one.
    ///
    /// Each REPORT is a report.json (or a directory holding one); one that does not meet
    /// schemas/report.schema.json is refused (exit 2). Shown: each report's verdict on every
    /// rule and role, the rules no implementation meets and those they split on, and the cases
    /// they answer differently. Reports of other case sets are compared on the cases they
    /// share; the others are listed as left out.
    ///
    /// When every report is of one implementation (the same name, playing the same roles),
    /// its history too: the reports in the order given, the first the oldest (or by
    /// startedAt, with --order started-at), and between each two the regressions (a case
    /// that passed or was non-strict and now fails) and the fixes. The exit status is then 1 when there is a
    /// regression, for a release gate: `report compare BASELINE CANDIDATE`.
    Compare {
        /// The reports: report.json files, or directories holding one.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// What to write: text for a person, json (schemas/comparison.schema.json),
        /// markdown (for a pull request's comment), or html (one self-contained page: no
        /// request leaves it, it reads without JavaScript, and sorts and filters with it).
        #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
        format: CompareFormat,
        /// The order of the reports of one implementation: given (the first the oldest), or
        /// started-at (by startedAt, ties as given).
        #[arg(long, value_enum, default_value_t = HistoryOrder::Given)]
        order: HistoryOrder,
        /// Write to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Write a badge for each report in DIR too: an SVG image named after the
        /// implementation (and its version), conformant rules out of the applicable ones.
        #[arg(long, value_name = "DIR")]
        badges: Option<PathBuf>,
    },
    /// Publish many reports as one static site, for GitHub Pages or any static host.
    ///
    /// Each REPORT is a report.json, or a directory walked for every report.json below it
    /// (links leading back into it are walked once). Reports of one implementation (the same
    /// name, playing the same roles) are its history, ordered by startedAt; one that does not
    /// meet schemas/report.schema.json is refused (exit 2), and so is a directory without
    /// any. The site: index.html (every implementation and every rule), compare.html (the
    /// latest report of each compared), a page per implementation with its history, one per
    /// rule with every implementation's verdict, each report's page, and badges. Every link
    /// is relative. OUT must be new, empty, or a site written here before, whose pages that
    /// are gone from the new one are removed.
    Site {
        /// The reports: report.json files, or directories holding them at any depth.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// The site's folder.
        #[arg(long, value_name = "DIR", default_value = "asr-ctk-site")]
        out: PathBuf,
    },
}

/// What `report compare` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// For a person.
    Text,
    /// The comparison as one JSON document.
    Json,
    /// Markdown, for a pull request's comment.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

/// How `report compare` orders the reports of one implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryOrder {
    /// As given, the first the oldest.
    Given,
    /// By startedAt, ties as given.
    StartedAt,
}

/// Where each case a run's command line selects falls among the cases of its role, or `None`
/// when the line is not one of `asr-ctk run` (the `run` command reads its own lines).
pub type Positions =
    for<'a> fn(&'a [Case], &[String]) -> Option<BTreeMap<(ProtocolRole, &'a str), usize>>;

pub fn run(command: &ReportCommand, positions: Positions) -> Result<u8> {
    match command {
        ReportCommand::Merge {
            reports,
            out,
            cases,
        } => merge(reports, out, cases.as_deref(), positions),
        ReportCommand::Compare {
            reports,
            format,
            order,
            out,
            badges,
        } => compare(reports, *format, *order, out.as_deref(), badges.as_deref()),
        ReportCommand::Site { reports, out } => Ok(site(reports, out)),
    }
}

/// The most bytes of one report that `report compare` reads: without a corpus to size it
/// by, a report of the kit's whole corpus for every role, cut as a run cuts it, and room
/// to spare (see [`max_report_bytes`]).
const COMPARE_REPORT_BYTES: u64 = 512 << 20;

fn compare(
    reports: &[PathBuf],
    format: CompareFormat,
    order: HistoryOrder,
    out: Option<&Path>,
    badges: Option<&Path>,
) -> Result<u8> {
    use asr_suite::compare;
    let mut loaded = Vec::with_capacity(reports.len());
    for given in reports {
        let path = if given.is_dir() {
            given.join("report.json")
        } else {
            given.clone()
        };
        match load_for_comparison(&path) {
            Ok(report) => loaded.push(report),
            Err(why) => {
                eprintln!("asr-ctk: {why}");
                return Ok(exit::USAGE_OR_IO);
            }
        }
    }
    let order = match order {
        HistoryOrder::Given => compare::Order::Given,
        HistoryOrder::StartedAt => compare::Order::StartedAt,
    };
    let comparison = compare::compare(&loaded, order);
    let text = match format {
        CompareFormat::Text => comparison.to_text(),
        CompareFormat::Markdown => comparison.to_markdown(),
        CompareFormat::Html => asr_suite::render::comparison_html(&comparison),
        CompareFormat::Json => {
            let mut json = serde_json::to_string_pretty(&comparison)?;
            json.push('\n');
            json
        }
    };
    match out {
        Some(file) => asr_suite::files::replace(file, text.as_bytes())
            .with_context(|| format!("failed to write {}", file.display()))?,
        None => print!("{text}"),
    }
    if let Some(dir) = badges {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        for (name, (_, report)) in comparison.file_names().iter().zip(&loaded) {
            let file = dir.join(format!("{name}.svg"));
            let svg = asr_suite::render::badge_svg(&asr_suite::render::badge(report));
            asr_suite::files::replace(&file, svg.as_bytes())
                .with_context(|| format!("failed to write {}", file.display()))?;
        }
    }
    Ok(if comparison.regressions() > 0 {
        exit::INVALID
    } else {
        exit::OK
    })
}

/// Reads the report `path` and checks it against the report schema; the error says why it
/// cannot be compared.
fn load_for_comparison(path: &Path) -> Result<(String, RunReport), String> {
    let file = path.display().to_string();
    let bytes = read_bounded(
        path,
        COMPARE_REPORT_BYTES,
        "a report is read to here (a run's of the kit's whole corpus for every role is far less)",
    )
    .map_err(|e| format!("{e:#}"))?;
    asr_suite::compare::parse_report(&file, &bytes)
        .map(|report| (file, report))
        .map_err(|refusal| format!("report refused: {refusal}"))
}

/// The most reports one site is made of.
const SITE_REPORTS: usize = 10_000;

fn site(reports: &[PathBuf], out: &Path) -> u8 {
    use asr_suite::walk::{Wanted, walk_for};
    if reports.iter().any(|p| p.as_os_str() == "-") {
        eprintln!("asr-ctk: report site reads reports from files, not from standard input");
        return exit::USAGE_OR_IO;
    }
    let walk = walk_for(reports, Wanted::Name("report.json".to_owned()));
    let mut failed = false;
    for note in &walk.notes {
        eprintln!("asr-ctk: {note}");
        failed |= note.is_failure();
    }
    if failed {
        return exit::USAGE_OR_IO;
    }
    if walk.files.len() > SITE_REPORTS {
        eprintln!(
            "asr-ctk: {} reports found; a site is made of at most {SITE_REPORTS}",
            walk.files.len()
        );
        return exit::USAGE_OR_IO;
    }
    let mut loaded = Vec::with_capacity(walk.files.len());
    for path in &walk.files {
        match load_for_comparison(path) {
            Ok(report) => loaded.push(report),
            Err(why) => {
                eprintln!("asr-ctk: {why}");
                return exit::USAGE_OR_IO;
            }
        }
    }
    if loaded.is_empty() {
        eprintln!("asr-ctk: no report given: nothing to publish");
        return exit::USAGE_OR_IO;
    }
    let site = asr_suite::render::site(&loaded);
    if let Err(e) = write_site(out, &site) {
        eprintln!("asr-ctk: {e:#}");
        return exit::USAGE_OR_IO;
    }
    println!(
        "site: {} implementations, {} reports, {} files: {}",
        site.implementations.len(),
        loaded.len(),
        site.files.len(),
        out.join("index.html").display()
    );
    exit::OK
}

/// The most bytes of an earlier site's manifest read.
const MANIFEST_BYTES: u64 = 64 << 20;

/// Writes `site` into `out`: a folder that is new, empty, or holds a site written before
/// (its manifest says so), whose files the new site lacks are removed. Nothing is written or
/// removed through a link.
fn write_site(out: &Path, site: &asr_suite::render::site::Site) -> Result<()> {
    use asr_suite::render::site::{MANIFEST, manifest_files};
    use std::io::ErrorKind;
    let shown = out.display();
    match std::fs::symlink_metadata(out) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => bail!("{shown} is there and is no directory (a link is not followed)"),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            std::fs::create_dir_all(out).with_context(|| format!("failed to create {shown}"))?;
        }
        Err(e) => return Err(e).with_context(|| format!("failed to examine {shown}")),
    }
    let manifest = out.join(MANIFEST);
    let earlier = match std::fs::symlink_metadata(&manifest) {
        Ok(meta) if meta.is_file() => {
            let bytes = read_bounded(&manifest, MANIFEST_BYTES, "a site's manifest is read")?;
            manifest_files(&bytes)
        }
        _ => None,
    };
    let empty = std::fs::read_dir(out)
        .with_context(|| format!("failed to list {shown}"))?
        .next()
        .is_none();
    let Some(earlier) = earlier.or_else(|| empty.then(Vec::new)) else {
        bail!(
            "{shown} is not empty and holds no site written by asr-ctk (no {MANIFEST}): give a new or empty folder, so nothing of yours is overwritten"
        );
    };
    for stale in earlier.iter().filter(|p| !site.files.contains_key(*p)) {
        remove_within(out, Path::new(stale))
            .with_context(|| format!("failed to remove {stale} of the earlier site in {shown}"))?;
    }
    // The manifest last: a site cut short keeps the earlier one's, which still names what
    // it wrote.
    let ordered = site
        .files
        .iter()
        .filter(|(p, _)| *p != MANIFEST)
        .chain(site.files.get_key_value(MANIFEST));
    for (path, bytes) in ordered {
        let relative = Path::new(path);
        let dir = match relative.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                asr_suite::files::create_dirs_within(out, parent)
                    .with_context(|| format!("failed to make the folder of {path} in {shown}"))?
            }
            _ => out.to_path_buf(),
        };
        let file = dir.join(relative.file_name().unwrap_or_default());
        asr_suite::files::replace(&file, bytes)
            .with_context(|| format!("failed to write {}", file.display()))?;
    }
    Ok(())
}

/// Removes the regular file `relative` below `out`, when it is there, through no link, and
/// the folders it leaves empty.
fn remove_within(out: &Path, relative: &Path) -> std::io::Result<()> {
    let mut path = out.to_path_buf();
    let mut folders = Vec::new();
    let names: Vec<_> = relative.components().collect();
    for (k, component) in names.iter().enumerate() {
        let std::path::Component::Normal(name) = component else {
            return Ok(());
        };
        path.push(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(());
        };
        let last = k + 1 == names.len();
        if last && meta.is_file() {
            std::fs::remove_file(&path)?;
        } else if last || !meta.is_dir() {
            return Ok(());
        } else {
            folders.push(path.clone());
        }
    }
    for folder in folders.iter().rev() {
        if std::fs::remove_dir(folder).is_err() {
            break;
        }
    }
    Ok(())
}

fn merge(
    reports: &[PathBuf],
    out: &Path,
    cases: Option<&Path>,
    positions: Positions,
) -> Result<u8> {
    if let Some(first) = reports.first() {
        // A report too large for a campaign's is left to the run's checks, which say why.
        if read_report(first, CAMPAIGN_REPORT_BYTES).is_ok_and(|r| r.campaign.is_some()) {
            return merge_campaigns(reports, out);
        }
    }
    let corpus::Corpus {
        root,
        cases: corpus,
        info,
    } = corpus::load_with_sources(cases)?;
    let digest = case_set_digest(&corpus).context("failed to read the corpus for its digest")?;
    let limit = max_report_bytes(&corpus);
    let by_name: BTreeMap<&str, &Case> = corpus.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut merged: Option<RunReport> = None;
    let mut seen = BTreeSet::new();
    // Every shard merged, with the report it came from; and the reports of no shard.
    let mut shards: BTreeMap<usize, &Path> = BTreeMap::new();
    let mut of: Option<(usize, &Path)> = None;
    let mut whole: Option<&Path> = None;
    for path in reports {
        let shown = path.display();
        let report = read_report(path, limit)?;
        if report.campaign.is_some() {
            bail!(
                "report {shown} is a fuzz campaign's, the first report a run's: a run's shards join only with the same run's"
            );
        }
        if report.case_set != digest {
            bail!(
                "report {shown} is of case set {}, the corpus here is {digest}",
                report.case_set
            );
        }
        if report.corpus_cases != corpus.len() {
            bail!(
                "report {shown} is of a corpus of {} cases, the corpus here has {}",
                report.corpus_cases,
                corpus.len()
            );
        }
        let claimed = claimed_shards(path, &report.shards, corpus.len())?;
        if let Some(&(_, n)) = claimed.first() {
            if let Some(other) = whole {
                bail!(
                    "report {shown} is of shards of a run, report {} of a whole run: not shards of one run",
                    other.display()
                );
            }
            match of {
                Some((earlier, first)) if earlier != n => bail!(
                    "report {shown} is of a run in {n} shards, report {} of one in {earlier}: not shards of one run",
                    first.display()
                ),
                _ => of = Some((n, path)),
            }
            for &(i, _) in &claimed {
                if let Some(first) = shards.insert(i, path) {
                    bail!(
                        "shard {i}/{n} is in report {} and in report {shown}",
                        first.display()
                    );
                }
            }
        } else if let Some((_, first)) = of {
            bail!(
                "report {shown} is of a whole run, report {} of shards of a run: not shards of one run",
                first.display()
            );
        } else {
            whole = Some(path);
        }
        check_cases(path, &report, &by_name, &claimed, &corpus, positions)?;
        for case in &report.cases {
            if !seen.insert((case.name.clone(), case.role)) {
                bail!(
                    "{shown}: case {} is in two of the reports: they are not shards of one run",
                    case.name
                );
            }
        }
        match &mut merged {
            None => merged = Some(report),
            Some(all) => {
                let same = all.kit_version == report.kit_version
                    && all.adapter.implementation == report.adapter.implementation;
                if !same {
                    bail!(
                        "{shown}: another kit version or implementation than the first report: not shards of one run",
                    );
                }
                // The gate's outcome is only one outcome if every shard was held to one file.
                let held_to = |r: &RunReport| {
                    r.expectations
                        .as_ref()
                        .map(|e| (e.implementation.clone(), e.digest.clone()))
                };
                if held_to(all) != held_to(&report) {
                    bail!(
                        "{shown}: run against other expectations (--expect) than the first report, or only one of them was: not shards of one run",
                    );
                }
                // Verified only if every shard ran on the kit's own corpus, verified.
                all.corpus.verified &= report.corpus.verified;
                if report.corpus.origin != all.corpus.origin {
                    all.corpus.origin = asr_suite::conformance::CorpusOrigin::Directory;
                }
                all.cases.extend(report.cases);
                all.shards.extend(report.shards);
                all.interrupted |= report.interrupted;
                all.incomplete = match (all.incomplete.take(), report.incomplete) {
                    (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                    (a, b) => a.or(b),
                };
                if report.started_at < all.started_at {
                    all.started_at = report.started_at;
                }
            }
        }
    }
    let Some(mut merged) = merged else {
        bail!("no report given")
    };
    // The corpus here is the one every shard was checked against; it is verified only if
    // it is the kit's own and every shard said so of its own.
    merged.corpus.verified &= info.verified;
    merged.corpus.path = info.path;
    if let Some((n, _)) = of {
        if let Some(why) = missing_shards(shards.keys().copied(), n) {
            merged.incomplete = Some(match merged.incomplete.take() {
                Some(earlier) => format!("{earlier}; {why}"),
                None => why,
            });
        }
    }
    merged.shards.sort_by_key(|s| claimed_index(s));
    // A report is read as it was written: what the kit bounds in a run's report is bounded
    // in the merged one too, whatever the shards' files held.
    for case in &mut merged.cases {
        case.keep_within(KEPT_BYTES);
    }
    merged.summarize(Catalog::embedded());
    let streams = crate::write::stream_files(&root, &corpus);
    crate::write::reports_and_summary(&merged, &root, &streams, out)?;
    // Held to expectations, the gate is theirs, as in `run`: known failures pass it.
    let failed = match &merged.expectations {
        Some(expected) => expected.regressions > 0,
        None => merged.has_failures(),
    };
    Ok(if failed || merged.incomplete.is_some() {
        exit::INVALID
    } else {
        exit::OK
    })
}

/// The most bytes of a fuzz campaign's report that a merge reads: its cases are the cases
/// found, a few for each rule and kind of disagreement (`--keep`), each bounded as a run's.
const CAMPAIGN_REPORT_BYTES: u64 = 64 << 20;

/// Joins the reports of the parts of one fuzz campaign and writes the joined reports in
/// `out`; the exit status is a campaign's: 1 when a disagreement was found.
fn merge_campaigns(reports: &[PathBuf], out: &Path) -> Result<u8> {
    let mut parts = Vec::with_capacity(reports.len());
    for path in reports {
        let report = read_report(path, CAMPAIGN_REPORT_BYTES)?;
        parts.push((format!("report {}", path.display()), report));
    }
    // The cases each part found join in one directory, OUT/found/, which the joined report
    // names as its corpus: `asr-ctk run --cases OUT/found` re-runs them all. A part's cases
    // are read from the found/ beside its report (a part's OUT copied from another machine
    // whole), else from where its report says they were written.
    let found = out.join("found");
    for ((name, part), path) in parts.iter_mut().zip(reports) {
        if part.campaign.is_none() {
            continue;
        }
        let beside = path
            .parent()
            .map_or_else(|| PathBuf::from("found"), |dir| dir.join("found"));
        let from = if beside.is_dir() {
            beside
        } else {
            PathBuf::from(&part.corpus.path)
        };
        for case in &part.cases {
            copy_found(&from, &case.name, &found)
                .with_context(|| format!("{name}: failed to copy found case {}", case.name))?;
        }
        part.corpus.path = found.to_string_lossy().into_owned();
    }
    let mut merged =
        asr_suite::fuzz::campaign::merge_reports(&parts).map_err(|e| anyhow::anyhow!("{e}"))?;
    for (_, part) in &parts {
        merged.interrupted |= part.interrupted;
    }
    for case in &mut merged.cases {
        case.keep_within(KEPT_BYTES);
    }
    let root = PathBuf::from(&merged.corpus.path);
    let streams = asr_suite::fuzz::campaign::Campaign::from_report(&merged)
        .map(|c| c.stream_files())
        .unwrap_or_default();
    crate::write::reports(&merged, &root, &streams, out)?;
    let disagreed = merged.campaign.as_ref().map_or(0, |c| c.disagreed);
    if let Some(campaign) = &merged.campaign {
        println!(
            "merged {} reports of one campaign: seed {}, {} iterations, {} with a disagreement",
            parts.len(),
            campaign.seed,
            campaign.iterations,
            campaign.disagreed
        );
    }
    println!(
        "reports: {}",
        out.join("report.{json,md,html}, junit.xml, sarif.json, badge.json")
            .display()
    );
    Ok(if disagreed > 0 {
        exit::INVALID
    } else {
        exit::OK
    })
}

/// Copies the found case `name` (its sidecar `NAME.json` and its streams `NAME.jsonl`,
/// `NAME.PART.jsonl`) from the directory `from` into `to`. A name that would lead out of
/// the directories (absolute, `..`) is refused; a file already there is replaced.
fn copy_found(from: &Path, name: &str, to: &Path) -> Result<()> {
    let relative = Path::new(name);
    if !relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        bail!("{name:?} is no name of a found case below found/");
    }
    let sidecar = from.join(format!("{name}.json"));
    let target_dir = match relative.parent() {
        Some(parent) => to.join(parent),
        None => to.to_path_buf(),
    };
    std::fs::create_dir_all(&target_dir)
        .with_context(|| format!("failed to create {}", target_dir.display()))?;
    let mut copied = 0;
    let files =
        std::iter::once(sidecar.clone()).chain(asr_suite::fuzz::campaign::streams_beside(&sidecar));
    for file in files {
        // Only regular files: a link planted beside the case is not followed.
        if !std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let (Some(file_name), Ok(bytes)) = (file.file_name(), std::fs::read(&file)) else {
            bail!("failed to read {}", file.display());
        };
        let target = target_dir.join(file_name);
        if target != file {
            asr_suite::files::replace(&target, &bytes)
                .with_context(|| format!("failed to write {}", target.display()))?;
        }
        copied += 1;
    }
    if copied == 0 {
        bail!(
            "{} is not there: a part's cases found are read from the found/ directory beside its report.json",
            sidecar.display()
        );
    }
    Ok(())
}

/// The most bytes of one report that a merge reads: 16 MiB for what does not grow with the
/// cases (the kit, the adapter, the rule table), and 1 MiB for each case and role the corpus
/// has (no run has more case results). A case result's six texts (detail, issue, expected,
/// actual, diff, stderr) are each cut to [`KEPT_BYTES`], 384 KiB together; the rest of the
/// MiB is room for JSON's escapes of the control characters in them (six bytes for one) and
/// for the case's other members. A report of the whole corpus for every role is then at most
/// a few hundred MiB, and a file larger than that was not written by a run of this corpus.
pub fn max_report_bytes(corpus: &[Case]) -> u64 {
    let results: u64 = corpus.iter().map(|c| c.sidecar.roles.len() as u64).sum();
    (16 << 20) + results.max(1) * (1 << 20)
}

/// Reads and parses one report: a regular file, at most `limit` bytes.
fn read_report(path: &Path, limit: u64) -> Result<RunReport> {
    let text = read_bounded(
        path,
        limit,
        "a report of this corpus can hold (1 MiB for each case and role, and 16 MiB)",
    )?;
    serde_json::from_slice(&text).with_context(|| {
        format!(
            "failed to parse report {} as a report (schemas/report.schema.json)",
            path.display()
        )
    })
}

/// Reads one report's bytes: a regular file, at most `limit` bytes, the bound `why` says.
fn read_bounded(path: &Path, limit: u64, why: &str) -> Result<Vec<u8>> {
    let shown = path.display();
    let metadata =
        std::fs::metadata(path).with_context(|| format!("failed to read report {shown}"))?;
    if !metadata.is_file() {
        bail!("report {shown} is not a regular file: a report is the report.json a run wrote");
    }
    if metadata.len() > limit {
        bail!(
            "report {shown} is {} bytes, more than the {limit} bytes {why}",
            metadata.len()
        );
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("failed to read report {shown}"))?;
    // Bounded again as it is read: a file that grows after its size was looked at is cut.
    let mut text = Vec::new();
    std::io::BufReader::new(file)
        .take(limit + 1)
        .read_to_end(&mut text)
        .with_context(|| format!("failed to read report {shown}"))?;
    if text.len() as u64 > limit {
        bail!("report {shown} grew beyond {limit} bytes while it was read");
    }
    Ok(text)
}

/// The shards a report claims, each `(i, n)`: `i/n` with 1 <= i <= n, one n, none twice, and
/// n no more than the corpus's cases (a run of more shards than cases has shards without a
/// case, which select nothing and write no report).
fn claimed_shards(path: &Path, shards: &[String], cases: usize) -> Result<Vec<(usize, usize)>> {
    let shown = path.display();
    let mut claimed: Vec<(usize, usize)> = Vec::new();
    for shard in shards {
        let parsed = shard
            .split_once('/')
            .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
        let Some((i, n)) = parsed else {
            bail!("report {shown} claims shard {shard:?}, which is not i/n");
        };
        if i < 1 || i > n {
            bail!("report {shown} claims shard {shard}: i must be from 1 to n");
        }
        let n = match usize::try_from(n) {
            Ok(n) if n <= cases => n,
            _ => bail!(
                "report {shown} claims shard {shard}: the corpus has {cases} cases, so a run has at most {cases} shards"
            ),
        };
        let i = usize::try_from(i).unwrap_or(n);
        if let Some(&(_, earlier)) = claimed.first() {
            if earlier != n {
                bail!(
                    "report {shown} claims shards of {earlier} and of {n} parts: not shards of one run"
                );
            }
        }
        if claimed.contains(&(i, n)) {
            bail!("report {shown} claims shard {shard} twice");
        }
        claimed.push((i, n));
    }
    Ok(claimed)
}

/// Every case of a report is a case of the corpus, run as a role it has, with the corpus's id
/// and rules, and of a shard the report claims.
fn check_cases(
    path: &Path,
    report: &RunReport,
    by_name: &BTreeMap<&str, &Case>,
    claimed: &[(usize, usize)],
    corpus: &[Case],
    positions: Positions,
) -> Result<()> {
    let shown = path.display();
    let positions = positions(corpus, &report.command_line);
    if positions.is_none() && !claimed.is_empty() {
        bail!(
            "report {shown} claims shards {} but its command line is no `asr-ctk run`: which cases are of those shards cannot be told",
            report.shards.join(", ")
        );
    }
    // The shards a case of the run's selection falls in: all of them for a whole run.
    let n = claimed.first().map_or(1, |&(_, n)| n);
    let claims =
        |position: usize| claimed.is_empty() || claimed.iter().any(|&(i, _)| i == position % n + 1);
    for case in &report.cases {
        let name = &case.name;
        let Some(known) = by_name.get(name.as_str()) else {
            bail!("case {name:?} in report {shown} is no case of this corpus");
        };
        if !has_role(known, case.role) {
            bail!(
                "case {name} in report {shown} is run as a {}, a role the case does not have",
                case.role.as_str()
            );
        }
        if case.id != known.sidecar.id || case.rules != known.sidecar.rules {
            bail!(
                "case {name} in report {shown} has id {} and rules {}; the corpus gives it id {} and rules {}",
                case.id,
                case.rules.join(", "),
                known.sidecar.id,
                known.sidecar.rules.join(", ")
            );
        }
        if let Some(positions) = &positions {
            let Some(&position) = positions.get(&(case.role, name.as_str())) else {
                bail!(
                    "case {name} in report {shown} is not among the cases its command line selects"
                );
            };
            if !claims(position) {
                bail!(
                    "case {name} in report {shown} is of shard {}/{n}, not of the shards the report claims ({})",
                    position % n + 1,
                    report.shards.join(", ")
                );
            }
        }
    }
    // A run's report holds a result for every case it selects, run or not: a case left out
    // is a failure taken out.
    if let Some(positions) = &positions {
        let held: BTreeSet<(ProtocolRole, &str)> = report
            .cases
            .iter()
            .map(|c| (c.role, c.name.as_str()))
            .collect();
        if let Some(((role, name), position)) = positions
            .iter()
            .find(|(key, position)| claims(**position) && !held.contains(*key))
        {
            let of = if claimed.is_empty() {
                "the run".to_owned()
            } else {
                format!("shard {}/{n}", position % n + 1)
            };
            bail!(
                "report {shown} lacks case {name} ({}) of {of}: a run's report holds every case its command line selects",
                role.as_str()
            );
        }
    }
    Ok(())
}

/// Whether a run can hold a result of `case` for `role` (as `asr-ctk run` selects cases).
fn has_role(case: &Case, role: ProtocolRole) -> bool {
    match role {
        ProtocolRole::Validator => case.sidecar.roles.contains(&Role::Validator),
        ProtocolRole::Reader => {
            case.sidecar.roles.contains(&Role::Reader) && case.sidecar.expect.reads()
        }
        ProtocolRole::Producer => case.sidecar.roles.contains(&Role::Producer),
    }
}

/// The `i` of a shard `i/n` already checked, for ordering.
fn claimed_index(shard: &str) -> usize {
    shard
        .split_once('/')
        .and_then(|(i, _)| i.parse().ok())
        .unwrap_or(usize::MAX)
}

/// The most runs of missing shards named; the rest are counted.
const MISSING_NAMED: usize = 8;

/// What is missing of shards `1..=n` when `merged` (ascending) are there, as runs of shards
/// (`2/9`, `4/9 to 7/9`), at most [`MISSING_NAMED`] of them and a count of the rest: never a
/// list of every missing shard.
fn missing_shards(merged: impl Iterator<Item = usize>, n: usize) -> Option<String> {
    let mut runs = Vec::new();
    let mut next = 1;
    let mut there = 0;
    for i in merged {
        there += 1;
        if i > next {
            runs.push((next, i - 1));
        }
        next = i + 1;
    }
    if next <= n {
        runs.push((next, n));
    }
    if runs.is_empty() {
        return None;
    }
    let named: Vec<String> = runs
        .iter()
        .take(MISSING_NAMED)
        .map(|&(a, b)| {
            if a == b {
                format!("{a}/{n}")
            } else {
                format!("{a}/{n} to {b}/{n}")
            }
        })
        .collect();
    let mut text = format!(
        "shards not merged ({} of {n}): {}",
        n - there,
        named.join(", ")
    );
    if runs.len() > MISSING_NAMED {
        let rest: usize = runs[MISSING_NAMED..].iter().map(|(a, b)| b - a + 1).sum();
        let _ = write!(text, ", and {rest} more");
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_shards_are_runs_never_a_list_of_each() {
        assert_eq!(missing_shards([1, 2, 3].into_iter(), 3), None);
        assert_eq!(
            missing_shards([1, 3].into_iter(), 3).as_deref(),
            Some("shards not merged (1 of 3): 2/3")
        );
        assert_eq!(
            missing_shards([2].into_iter(), 9).as_deref(),
            Some("shards not merged (8 of 9): 1/9, 3/9 to 9/9")
        );
        let every_other = (1..=40).filter(|i| i % 2 == 0);
        let text = missing_shards(every_other, 40).expect("missing");
        assert!(text.ends_with("15/40, and 12 more"), "{text}");
        let huge = missing_shards([1].into_iter(), usize::MAX).expect("missing");
        assert!(huge.contains(&format!("2/{} to", usize::MAX)), "{huge}");
    }

    #[test]
    fn shards_are_i_of_n_one_n_none_twice_and_no_more_than_the_cases() {
        let path = Path::new("r.json");
        let claim = |shards: &[&str]| {
            let shards: Vec<String> = shards.iter().map(|s| (*s).to_owned()).collect();
            claimed_shards(path, &shards, 10).map_err(|e| e.to_string())
        };
        assert_eq!(claim(&["1/3", "3/3"]), Ok(vec![(1, 3), (3, 3)]));
        for (bad, says) in [
            (&["0/3"][..], "from 1 to n"),
            (&["4/3"], "from 1 to n"),
            (&["x/3"], "not i/n"),
            (&["1/3", "1/4"], "of 3 and of 4"),
            (&["2/3", "2/3"], "twice"),
            (&["1/1000000000000"], "at most 10 shards"),
            (&["1/99999999999999999999999"], "not i/n"),
        ] {
            let error = claim(bad).expect_err("refused");
            assert!(error.contains(says) && error.contains("r.json"), "{error}");
        }
    }
}
