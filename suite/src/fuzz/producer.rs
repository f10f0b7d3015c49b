//! The fuzz target of producer outputs: whatever a producer answers, judging it against a
//! source fixture ends with failures under rules of the catalog, the same ones each time,
//! and never a panic. The outputs are the fixtures' goldens broken by the fuzzer's bytes
//! (spliced in, cut out, lines swapped) and the bytes themselves.

use crate::catalog::Catalog;
use crate::source::{FixtureSidecar, SourceFixture};
use std::path::PathBuf;
use std::sync::OnceLock;

/// One fixture the kit carries: its sidecar as a fixture, its source and its golden: its
/// first stream, which the fuzzer breaks, and the others (name and bytes).
struct Carried {
    fixture: SourceFixture,
    source: crate::fidelity::Source,
    golden: Vec<u8>,
    others: Vec<(String, Vec<u8>)>,
}

impl Carried {
    /// The golden's streams with `first` for its first one.
    fn output<'a>(&'a self, first: &'a [u8]) -> Vec<(&'a str, &'a [u8])> {
        let mut streams = vec![("", first)];
        streams.extend(self.others.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
        streams
    }
}

fn carried() -> &'static [Carried] {
    static CARRIED: OnceLock<Vec<Carried>> = OnceLock::new();
    CARRIED.get_or_init(|| {
        crate::embedded::fixture_dirs()
            .into_iter()
            .filter_map(|dir| {
                let sidecar = crate::embedded::corpus_files(dir)
                    .into_iter()
                    .find(|(name, _)| *name == "fixture.json")?;
                let sidecar: FixtureSidecar = serde_json::from_slice(sidecar.1).ok()?;
                let files = crate::embedded::corpus_files(&format!("{dir}/source"))
                    .into_iter()
                    .map(|(name, bytes)| (name.to_owned(), bytes.to_vec()))
                    .collect();
                let mut streams = crate::embedded::corpus_files(&format!("{dir}/expected"))
                    .into_iter()
                    .map(|(name, bytes)| {
                        (name.trim_end_matches(".jsonl").to_owned(), bytes.to_vec())
                    });
                let golden = streams.next()?.1;
                let others = streams.collect();
                Some(Carried {
                    fixture: SourceFixture {
                        name: dir.trim_start_matches("sources/").to_owned(),
                        dir: PathBuf::from(dir),
                        sidecar,
                    },
                    source: crate::fidelity::Source::from_files(files),
                    golden,
                    others,
                })
            })
            .collect()
    })
}

/// Judges the output the bytes make of a fixture's golden; panics when a property breaks.
pub fn producer_output(data: &[u8]) {
    if let Err(broken) = check_producer_output(data) {
        panic!("{broken}");
    }
}

fn check_producer_output(data: &[u8]) -> Result<(), String> {
    let fixtures = carried();
    let (Some(&pick), Some(&how)) = (data.first(), data.get(1)) else {
        return Ok(());
    };
    let Some(carried) = fixtures.get(usize::from(pick) % fixtures.len().max(1)) else {
        return Err("the kit carries no source fixture".into());
    };
    let output = broken(&carried.golden, how, &data[2..]);
    judged_soundly(carried, &output)
}

/// The golden broken as `how` says, with `bytes`.
fn broken(golden: &[u8], how: u8, bytes: &[u8]) -> Vec<u8> {
    let at = |n: Option<&u8>| usize::from(n.copied().unwrap_or(0)) * golden.len().max(1) / 256;
    match how % 4 {
        0 => bytes.to_vec(),
        1 => {
            let at = at(bytes.first()).min(golden.len());
            [
                &golden[..at],
                bytes.get(1..).unwrap_or_default(),
                &golden[at..],
            ]
            .concat()
        }
        2 => {
            let from = at(bytes.first()).min(golden.len());
            let to = (from + usize::from(bytes.get(1).copied().unwrap_or(0))).min(golden.len());
            [&golden[..from], &golden[to..]].concat()
        }
        _ => {
            let mut lines: Vec<&[u8]> = crate::lines::split(golden)
                .with_final_empty()
                .bytes()
                .collect();
            let n = lines.len();
            for pair in bytes.chunks(2) {
                if let [a, b] = pair {
                    lines.swap(usize::from(*a) % n, usize::from(*b) % n);
                }
            }
            lines.join(&b'\n')
        }
    }
}

/// Judging `output` gives failures under catalog rules only, and the same twice.
fn judged_soundly(carried: &Carried, output: &[u8]) -> Result<(), String> {
    let catalog = Catalog::embedded();
    let first =
        crate::judge::judge_output(&carried.fixture, &carried.source, &carried.output(output));
    if let Some(odd) = first.iter().find(|f| !catalog.knows(&f.rule)) {
        return Err(format!(
            "{}: a failure under {:?}, no rule of the catalog: {}",
            carried.fixture.name, odd.rule, odd.message
        ));
    }
    let again =
        crate::judge::judge_output(&carried.fixture, &carried.source, &carried.output(output));
    if again != first {
        return Err(format!(
            "{}: judged twice, {} then {} failures",
            carried.fixture.name,
            first.len(),
            again.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::seeded_bytes;

    #[test]
    fn producer_output_holds_on_seeded_bytes() {
        assert!(carried().len() >= 30, "{} fixtures", carried().len());
        for seed in 0..300u64 {
            let len = usize::try_from(seed).unwrap_or(0) * 13 % 400;
            let mut data = seeded_bytes(seed, len.max(2));
            data[1] = u8::try_from(seed % 4).unwrap_or(0);
            producer_output(&data);
        }
    }

    #[test]
    fn every_golden_the_kit_carries_meets_its_fixture_and_a_broken_one_does_not() {
        for carried in carried() {
            let golden = crate::judge::judge_output(
                &carried.fixture,
                &carried.source,
                &carried.output(&carried.golden),
            );
            assert!(golden.is_empty(), "{}: {golden:?}", carried.fixture.name);
        }
        let first = &carried()[0];
        let cut = broken(&first.golden, 2, &[0, 255]);
        assert!(
            !crate::judge::judge_output(&first.fixture, &first.source, &first.output(&cut))
                .is_empty()
        );
    }

    #[test]
    fn a_failure_under_no_rule_of_the_catalog_breaks_the_property() {
        let mut carried = carried()[0].clone_for_test();
        carried.fixture.sidecar.expect.producer.assertions[0].rule = "ASR-999".into();
        let nothing = judged_soundly(&carried, b"");
        assert!(nothing.is_err_and(|e| e.contains("ASR-999")));
    }

    impl Carried {
        fn clone_for_test(&self) -> Carried {
            Carried {
                fixture: self.fixture.clone(),
                source: self.source.clone(),
                golden: self.golden.clone(),
                others: self.others.clone(),
            }
        }
    }
}
