//! Streams of any size for measuring the kit: a coding session's mix (prompts, reasoning,
//! answers, tool traffic, plans and their revisions, subagents and their state changes, chat
//! deliveries; now and then, if asked, a tool output of megabytes), written deterministically
//! from a seed up to a byte count, valid throughout. The benchmarks and the tests of size,
//! memory and threading read them. `crate::fuzz::generator` has the other job: small
//! streams from arbitrary bytes that reach every record shape the spec allows, for the fuzz
//! targets and mutators.

use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Seed of the deterministic generator.
    pub seed: u64,
    /// Stop after the first record that reaches this many bytes in all.
    pub target_bytes: u64,
    /// Stop after this many turns, when reached before `target_bytes`.
    pub max_turns: u64,
    /// Multiplies the length of every text (1 = the usual mix).
    pub text_scale: usize,
    /// Every this many turns (0: never), one more tool call whose output is a large text.
    pub large_every: u64,
    /// The size of such a large text, in bytes (before escaping).
    pub large_bytes: usize,
    /// The longest ordinary text, in bytes before scaling (0: no bound): short messages and
    /// tool outputs make a stream of many small records.
    pub text_cap: usize,
}

impl Shape {
    /// About `bytes` bytes of the usual mix.
    pub fn bytes(seed: u64, bytes: u64) -> Shape {
        Shape {
            seed,
            target_bytes: bytes,
            max_turns: u64::MAX,
            text_scale: 1,
            large_every: 0,
            large_bytes: 0,
            text_cap: 0,
        }
    }

    /// About `bytes` bytes of many small records (about 800 bytes a line on average): short
    /// messages, tool calls and outputs, plans, subagents and deliveries.
    pub fn small_records(seed: u64, bytes: u64) -> Shape {
        Shape {
            text_cap: 1_500,
            ..Shape::bytes(seed, bytes)
        }
    }

    /// Exactly `turns` turns, texts `text_scale` times their usual length.
    pub fn turns(seed: u64, turns: u64, text_scale: usize) -> Shape {
        Shape {
            seed,
            target_bytes: u64::MAX,
            max_turns: turns,
            text_scale,
            large_every: 0,
            large_bytes: 0,
            text_cap: 0,
        }
    }

    /// The same, with a tool output of about `bytes` bytes every `every` turns.
    #[must_use]
    pub fn with_large_texts(self, every: u64, bytes: usize) -> Shape {
        Shape {
            large_every: every,
            large_bytes: bytes,
            ..self
        }
    }
}

/// What was generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generated {
    /// Lines written, the header included.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes a valid stream of about `shape.target_bytes` bytes.
pub fn realistic_stream(out: &mut impl Write, shape: Shape) -> io::Result<Generated> {
    let mut g = Generator {
        rng: SplitMix(shape.seed),
        scale: shape.text_scale.max(1),
        cap: shape.text_cap,
        seq: 0,
        last_plan: None,
        large_every: shape.large_every,
        large_bytes: shape.large_bytes,
    };
    let mut written = Generated {
        records: 0,
        bytes: 0,
    };
    let header = format!(
        concat!(
            r#"{{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{{"name":"claude-code","version":"2.1.305"}},"#,
            r#""sessionId":"bench-{:016x}","producer":{{"name":"asr-ctk-generator","version":"0.1.0","method":"converter","lossy":[]}},"#,
            r#""startedAt":"2026-10-26T14:00:00.000Z","conversations":[{{"id":"c1"}}],"#,
            r#""lineage":{{"root":true,"inherits":{{"mode":"none","evidence":"native_structure"}}}},"scope":"primary","contentLevel":"full"}}"#
        ),
        shape.seed
    );
    emit(out, &header, &mut written)?;
    let mut turn = 0u64;
    while written.bytes < shape.target_bytes && turn < shape.max_turns {
        g.turn(out, turn, &mut written)?;
        turn += 1;
    }
    Ok(written)
}

struct Generator {
    rng: SplitMix,
    scale: usize,
    cap: usize,
    seq: u64,
    last_plan: Option<u64>,
    large_every: u64,
    large_bytes: usize,
}

impl Generator {
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// One turn: a prompt, reasoning and an answer, tool calls with results, and now and
    /// then a plan revision, a subagent and its completion, or a chat delivery.
    fn turn(&mut self, out: &mut impl Write, turn: u64, written: &mut Generated) -> io::Result<()> {
        let seq = self.next_seq();
        let prompt = self.text(40, 400);
        let line = format!(
            r#"{{"type":"message","seq":{seq},"id":"r{seq}","ts":"2026-10-26T14:02:12.031Z","messageId":"msg_u{turn}","role":"user","author":"human","origin":"prompt","audience":"both","conversation":"c1","content":[{{"type":"text","text":{prompt}}}]}}"#
        );
        emit(out, &line, written)?;
        let calls = self.rng.below(4);
        for call in 0..calls {
            let seq = self.next_seq();
            let input = self.text(20, 200);
            let line = format!(
                r#"{{"type":"tool_call","seq":{seq},"id":"r{seq}","callId":"toolu_{turn}_{call}","name":"Bash","input":{{"command":{input}}}}}"#
            );
            emit(out, &line, written)?;
            let seq = self.next_seq();
            let output = self.text(200, 12_000);
            let line = format!(
                r#"{{"type":"tool_result","seq":{seq},"id":"r{seq}","callId":"toolu_{turn}_{call}","content":[{{"type":"text","text":{output}}}]}}"#
            );
            emit(out, &line, written)?;
        }
        if self.large_every > 0 && turn % self.large_every == self.large_every - 1 {
            self.large_output(out, turn, written)?;
        }
        let seq = self.next_seq();
        let reasoning = self.text(100, 2_000);
        let answer = self.text(100, 3_000);
        let line = format!(
            r#"{{"type":"message","seq":{seq},"id":"r{seq}","ts":"2026-10-26T14:02:29.118Z","inferenceId":"inf_{turn}","messageId":"msg_a{turn}","role":"assistant","author":"model","audience":"both","status":"complete","phase":"final","content":[{{"type":"reasoning","visibility":"full","text":{reasoning},"signature":"EqQBCkgIBRABGAIiQHkx"}},{{"type":"text","text":{answer}}}]}}"#
        );
        emit(out, &line, written)?;
        match turn % 8 {
            0 => self.plan(out, written),
            3 => self.subagent(out, turn, written),
            5 => self.delivery(out, turn, seq, written),
            _ => Ok(()),
        }
    }

    /// A tool call whose output is a large text: a build log, a file read whole.
    fn large_output(
        &mut self,
        out: &mut impl Write,
        turn: u64,
        written: &mut Generated,
    ) -> io::Result<()> {
        let seq = self.next_seq();
        let line = format!(
            r#"{{"type":"tool_call","seq":{seq},"id":"r{seq}","callId":"toolu_{turn}_large","name":"Read","input":{{"file_path":"/repo/target/build.log"}}}}"#
        );
        emit(out, &line, written)?;
        let seq = self.next_seq();
        // A generator of its own, so that the rest of the stream is the same with or without.
        let mut rng = SplitMix(turn ^ 0x5EED_1A26_E000_0000);
        let output = text(&mut rng, self.large_bytes / 2, self.large_bytes.max(2), 1);
        let line = format!(
            r#"{{"type":"tool_result","seq":{seq},"id":"r{seq}","callId":"toolu_{turn}_large","content":[{{"type":"text","text":{output}}}]}}"#
        );
        emit(out, &line, written)
    }

    fn plan(&mut self, out: &mut impl Write, written: &mut Generated) -> io::Result<()> {
        let seq = self.next_seq();
        let supersedes = match self.last_plan.replace(seq) {
            Some(previous) => format!(r#""supersedes":"r{previous}","#),
            None => String::new(),
        };
        let first = self.text(10, 80);
        let second = self.text(10, 80);
        let line = format!(
            r#"{{"type":"plan","seq":{seq},"id":"r{seq}",{supersedes}"planId":"plan_main","idSource":"derived","planType":"items","entries":[{{"entryId":"1","content":{first},"status":"completed"}},{{"entryId":"2","content":{second},"status":"in_progress","blockedBy":["1"]}}]}}"#
        );
        emit(out, &line, written)
    }

    fn subagent(
        &mut self,
        out: &mut impl Write,
        turn: u64,
        written: &mut Generated,
    ) -> io::Result<()> {
        let seq = self.next_seq();
        let description = self.text(10, 120);
        let announce = format!(
            r#"{{"type":"subagent","seq":{seq},"id":"r{seq}","childSession":"claude-code:child-{turn:08x}","callId":"toolu_sub{turn}","async":true,"role":"Explore","status":"running","description":{description}}}"#
        );
        emit(out, &announce, written)?;
        let done = self.next_seq();
        let line = format!(
            r#"{{"type":"subagent","seq":{done},"id":"r{done}","supersedes":"r{seq}","childSession":"claude-code:child-{turn:08x}","callId":"toolu_sub{turn}","async":true,"role":"Explore","status":"completed","description":{description}}}"#
        );
        emit(out, &line, written)
    }

    fn delivery(
        &mut self,
        out: &mut impl Write,
        turn: u64,
        message_seq: u64,
        written: &mut Generated,
    ) -> io::Result<()> {
        let queued = self.next_seq();
        let line = format!(
            r#"{{"type":"delivery","seq":{queued},"id":"r{queued}","message":"r{message_seq}","conversation":"c1","status":"queued"}}"#
        );
        emit(out, &line, written)?;
        let sent = self.next_seq();
        let line = format!(
            r#"{{"type":"delivery","seq":{sent},"id":"r{sent}","supersedes":"r{queued}","message":"messageId=msg_a{turn}","conversation":"c1","status":"sent","platformMessageIds":["3EB0D7F21A9C4E6B{turn:04X}"]}}"#
        );
        emit(out, &line, written)
    }

    /// A JSON string literal of plausible text, with escapes, non-ASCII and code.
    fn text(&mut self, min: usize, max: usize) -> String {
        let (min, max) = if self.cap == 0 {
            (min, max)
        } else {
            (min.min(self.cap / 4), max.min(self.cap))
        };
        text(&mut self.rng, min, max, self.scale)
    }
}

/// A JSON string literal of plausible text, with escapes, non-ASCII and code, of `min` to
/// `max` bytes times `scale`.
fn text(rng: &mut SplitMix, min: usize, max: usize, scale: usize) -> String {
    const WORDS: &[&str] = &[
        "parser",
        "returns",
        "empty",
        "input",
        "the",
        "test",
        "fails",
        "because",
        "Ok(vec![])",
        "cargo",
        "fn parse(input: &str) -> Result<Vec<Token>, Error>",
        "let",
        "match",
        "error:",
        "expected",
        "found",
        "crates/parser/src/lib.rs:38:5",
        "naïve",
        "résumé",
        "→",
        "日本語",
        "\"quoted\"",
        "C:\\\\path\\\\file",
        "\ttab",
        "line\nbreak",
        "ok",
        "warning",
        "assert_eq!(parse(\"\"), Ok(vec![]));",
        "{",
        "}",
        "self",
    ];
    let spread = rng.below(u64::try_from(max - min).unwrap_or(0));
    let len = (min + usize::try_from(spread).unwrap_or(0)) * scale;
    // Words come from their own generator, so that the text's length never changes the
    // structure of the rest of the stream.
    let mut words = SplitMix(rng.next());
    let mut text = String::with_capacity(len + 16);
    while text.len() < len {
        let pick = words.below(u64::try_from(WORDS.len()).unwrap_or(1));
        text.push_str(WORDS[usize::try_from(pick).unwrap_or(0)]);
        text.push(' ');
    }
    serde_json::to_string(&text).unwrap_or_default()
}

fn emit(out: &mut impl Write, line: &str, written: &mut Generated) -> io::Result<()> {
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    written.records += 1;
    written.bytes += line.len() as u64 + 1;
    Ok(())
}

/// SplitMix64: small, fast, and the same on every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};

    #[test]
    fn generated_streams_are_valid_with_no_finding_at_all() {
        for seed in 0..4 {
            let mut out = Vec::new();
            let shape = Shape::bytes(seed, 300_000);
            let generated = realistic_stream(&mut out, shape).expect("in-memory write");
            assert_eq!(generated.bytes, out.len() as u64);
            let report = check_bytes(&out, &CheckOptions::default());
            assert_eq!(report.records as u64, generated.records);
            let unexpected: Vec<_> = report
                .diagnostics
                .iter()
                .filter(|d| d.rule != "ASR-406")
                .collect();
            assert!(
                unexpected.is_empty(),
                "seed {seed}: {:?}",
                &unexpected[..unexpected.len().min(3)]
            );
            assert!(
                report
                    .diagnostics
                    .iter()
                    .all(|d| d.severity == crate::diagnostic::Severity::Notice)
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_stream_and_scale_lengthens_text_only() {
        let make = |seed, text_scale| {
            let mut out = Vec::new();
            let generated =
                realistic_stream(&mut out, Shape::turns(seed, 20, text_scale)).expect("write");
            (out, generated)
        };
        assert_eq!(make(7, 1).0, make(7, 1).0);
        assert_ne!(make(7, 1).0, make(8, 1).0);
        let (small, small_count) = make(7, 1);
        let (large, large_count) = make(7, 4);
        assert!(large.len() > small.len() * 2);
        assert_eq!(small_count.records, large_count.records);
    }

    #[test]
    fn large_texts_come_now_and_then_and_the_stream_stays_valid() {
        let mut out = Vec::new();
        let shape = Shape::turns(3, 12, 1).with_large_texts(4, 200_000);
        let generated = realistic_stream(&mut out, shape).expect("in memory");
        let plain = realistic_stream(&mut Vec::new(), Shape::turns(3, 12, 1)).expect("in memory");
        assert_eq!(generated.records, plain.records + 6);
        let long = crate::lines::split(&out)
            .bytes()
            .filter(|l| l.len() > 100_000)
            .count();
        assert_eq!(long, 3);
        let report = check_bytes(&out, &CheckOptions::default());
        assert!(
            report.diagnostics.iter().all(|d| d.rule == "ASR-406"),
            "{:?}",
            &report.diagnostics[..report.diagnostics.len().min(3)]
        );
    }
}
