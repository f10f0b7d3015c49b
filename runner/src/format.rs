//! How commands print what they list and find.

use clap::ValueEnum;

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: plain text, one line per item listed.
    Human,
    /// One JSON object per line.
    Json,
}

/// How the findings of `validate` are printed: the formats of [`Format`], and SARIF, which
/// only findings have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FindingsFormat {
    /// For people: one line per finding, like a compiler.
    Human,
    /// One JSON object per file, one per line.
    Json,
    /// One SARIF 2.1.0 log for all the files, for code-scanning tools.
    Sarif,
}
