//! `--expect`: reading an implementation's known results (the comparison is
//! `asr_suite::expectations`).

use anyhow::{Context, Result};
pub use asr_suite::expectations::Expectations;
use std::path::Path;

/// Reads and checks an expectations file.
pub fn load(path: &Path) -> Result<Expectations> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("failed to parse {}", path.display()))?;
    let schema: serde_json::Value =
        serde_json::from_str(crate::corpus::embedded_schema("expectations.schema.json")?)?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| anyhow::anyhow!("failed to compile the expectations schema: {e}"))?;
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    anyhow::ensure!(
        problems.is_empty(),
        "{} does not match schemas/expectations.schema.json: {}",
        path.display(),
        problems.join("; ")
    );
    let mut expectations: Expectations = serde_json::from_value(value)
        .with_context(|| format!("failed to read {}", path.display()))?;
    expectations.digest = asr_suite::expectations::digest(text.as_bytes());
    for known in &expectations.known {
        if let Some(case) = &known.case {
            glob::Pattern::new(case)
                .with_context(|| format!("{}: `{case}` is not a valid glob", path.display()))?;
        }
    }
    Ok(expectations)
}
