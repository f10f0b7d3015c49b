//! The command lines of adapters: one given on the command line, or the kit's own.

use anyhow::{Context, Result};

/// An adapter command line split into argv (`reference` is not special here).
pub fn adapter_command(line: &str) -> Result<Vec<String>> {
    super::split_command(line).map_err(|e| anyhow::anyhow!("--adapter {line}: {e}"))
}

/// The kit's own reference adapter, with the kit's limits.
pub fn reference_command(limits: crate::limits::Limits) -> Result<Vec<String>> {
    let exe = std::env::current_exe().context("failed to find the asr-ctk executable")?;
    let mut argv = vec![
        exe.to_string_lossy().into_owned(),
        "adapter".into(),
        "reference".into(),
    ];
    argv.extend(limits.as_args());
    Ok(argv)
}
