//! The seeded session generator shared by the `generate_session` example and the `engine`
//! benchmark (included by both with `#[path]`): a realistic pi session (v3 JSONL) with user
//! prompts, assistant turns with thinking and tool calls (read / edit / write / bash), tool
//! results with outputs from a few bytes to ~60 KB, model and thinking-level changes, occasional
//! side branches, and compactions where an agent with a 200,000-token window would make them:
//! when the estimated context of the current branch (the last compaction's summary and its kept
//! entries, then everything after it) reaches the threshold `CONTEXT_WINDOW - RESERVE_TOKENS`,
//! a compaction entry follows with that estimate as its `tokensBefore` and, as its
//! `firstKeptEntryId`, the user or assistant message where the last ~`KEEP_RECENT_TOKENS`
//! begin. So the leaf's context stays below the window whatever the session's length (about 300
//! entries, well under 1 MB), as a provider requires. Assistant `usage` follows the context size.
//! 50,000 entries come to roughly 130 MB. The same `(count, seed)` always gives the same bytes.

#![allow(dead_code)]

use serde_json::{json, Value};
use session_compaction::entry::estimate_tokens;
use std::io::Write;

/// xorshift64*: deterministic, dependency-free randomness for reproducible sessions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "session",
    "compaction",
    "tree",
    "entry",
    "branch",
    "token",
    "budget",
    "model",
    "context",
    "window",
    "summary",
    "tool",
    "result",
    "cut",
    "point",
    "leaf",
    "parent",
    "fn",
    "let",
    "mut",
    "impl",
    "struct",
    "return",
    "error",
    "ok",
    "file",
    "path",
    "read",
    "write",
    "edit",
    "test",
    "build",
    "cargo",
    "npm",
    "wasm",
    "value",
    "json",
];
const FILES: &[&str] = &[
    "src/lib.rs",
    "src/session.rs",
    "src/prepare.rs",
    "README.md",
    "package.json",
    "src/wasm/mod.rs",
    "tests/conformance.rs",
    "docs/設計.md",
];

fn text(rng: &mut Rng, words: usize) -> String {
    let mut s = String::with_capacity(words * 7);
    for i in 0..words {
        if i > 0 {
            s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
        }
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    s
}

/// The context window of the simulated agent's model, in estimated tokens.
pub const CONTEXT_WINDOW: u64 = 200_000;
/// Tokens the simulated agent keeps free for the answer: it compacts once the context reaches
/// `CONTEXT_WINDOW - RESERVE_TOKENS` (the engine's default `reserveTokens`).
pub const RESERVE_TOKENS: u64 = 16_384;
/// Recent tokens a compaction keeps (the engine's default `keepRecentTokens`).
pub const KEEP_RECENT_TOKENS: u64 = 20_000;

/// One entry of the current branch, root first, with what the context estimate needs.
struct Node {
    id: String,
    /// Estimated tokens of this entry in the context (0 for entries outside it).
    tokens: u64,
    /// Sum of `tokens` over the branch before this entry.
    before: u64,
    /// A user or assistant message: where a compaction may keep from.
    cut: bool,
    /// Index in the branch of the first entry of the context after this entry (the governing
    /// compaction's first kept entry; 0 without a compaction).
    start: usize,
    /// Estimated tokens of the governing compaction's summary (0 without one).
    summary: u64,
}

/// The session being written: the current branch and the clock.
struct Writer<'w, W: Write> {
    w: &'w mut W,
    branch: Vec<Node>,
    written: usize,
    t: i64,
}

impl<W: Write> Writer<'_, W> {
    /// Estimated tokens of the current branch's context (what the next request would send).
    fn context_tokens(&self) -> u64 {
        match self.branch.last() {
            None => 0,
            Some(last) => {
                let from = &self.branch[last.start];
                last.before + last.tokens - from.before + last.summary
            }
        }
    }

    /// Writes `e` as a child of the branch's last entry (id, parentId and timestamps filled in)
    /// and returns its id.
    fn emit(&mut self, mut e: Value) -> std::io::Result<String> {
        self.t += 1500;
        let id = format!("{:08x}", self.written as u64 * 2_654_435_761 % 0xFFFF_FFFF);
        self.written += 1;
        let ts = session_compaction::js::format_iso_timestamp(self.t as f64);
        let parent = self.branch.last().map(|n| n.id.clone());
        e["id"] = json!(id);
        e["parentId"] = json!(parent);
        e["timestamp"] = json!(ts);
        if let Some(m) = e.get_mut("message") {
            m["timestamp"] = json!(self.t);
        }
        writeln!(self.w, "{e}")?;
        let (tokens, cut) = match e.get("message") {
            Some(m) => (estimate_tokens(m), matches!(m["role"].as_str(), Some("user" | "assistant"))),
            None => (0, false),
        };
        let (before, start, summary) = match self.branch.last() {
            Some(n) => (n.before + n.tokens, n.start, n.summary),
            None => (0, 0, 0),
        };
        self.branch.push(Node { id: id.clone(), tokens, before, cut, start, summary });
        Ok(id)
    }

    /// A compaction as the simulated agent makes it once the context reaches the threshold: it
    /// keeps the entries from the user or assistant message where the last `KEEP_RECENT_TOKENS`
    /// begin (or the nearest such message before it).
    fn compact_if_full(&mut self, rng: &mut Rng) -> std::io::Result<bool> {
        let tokens_before = self.context_tokens();
        if tokens_before < CONTEXT_WINDOW - RESERVE_TOKENS {
            return Ok(false);
        }
        let last = self.branch.len() - 1;
        let end = self.branch[last].before + self.branch[last].tokens;
        let start = self.branch[last].start;
        let mut kept = last;
        while kept > start && end - self.branch[kept].before < KEEP_RECENT_TOKENS {
            kept -= 1;
        }
        while kept > start && !self.branch[kept].cut {
            kept -= 1;
        }
        if kept <= start {
            return Ok(false);
        }
        let summary = format!("## Goal\n{}\n## Done\n{}", text(rng, 40), text(rng, 200));
        let summary_tokens = (summary.len() as u64).div_ceil(4);
        let first_kept = self.branch[kept].id.clone();
        self.emit(json!({"type": "compaction", "summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": tokens_before,
            "details": {"readFiles": ["src/lib.rs"], "modifiedFiles": ["src/session.rs"]}}))?;
        let node = self.branch.last_mut().expect("the compaction just written");
        node.start = kept;
        node.summary = summary_tokens;
        Ok(true)
    }
}

/// Writes a session of `count` entries (after the header) drawn from `seed` to `w`; returns the
/// number of entries written.
pub fn generate<W: Write>(count: usize, seed: u64, w: &mut W) -> std::io::Result<usize> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    writeln!(
        w,
        "{}",
        json!({"type": "session", "version": 3, "id": format!("bench-{seed}"), "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/user/project"})
    )?;
    let mut s = Writer { w, branch: Vec::new(), written: 0, t: 1_767_225_600_000 };
    let mut call = 0u64;
    while s.written < count {
        if s.compact_if_full(&mut rng)? {
            continue;
        }
        let mut roll = rng.below(100);
        // Exactly `count` entries: a tool turn needs room for its results, else a text answer.
        let room = count - s.written;
        if (12..70).contains(&roll) && room < 2 {
            roll = 80;
        }
        if roll < 12 {
            let words = 5 + rng.below(80) as usize;
            s.emit(
                json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text(&mut rng, words)}]}}),
            )?;
        } else if roll < 70 {
            let calls = (1 + rng.below(3) as usize).min(room - 1);
            let words = 20 + rng.below(120) as usize;
            let mut content = vec![json!({"type": "thinking", "thinking": text(&mut rng, words)})];
            let mut pending = Vec::new();
            for _ in 0..calls {
                call += 1;
                let tool = ["read", "bash", "edit", "write", "read"][rng.below(5) as usize];
                let path = FILES[rng.below(FILES.len() as u64) as usize];
                let args = match tool {
                    "bash" => json!({"command": format!("cargo test -p {}", WORDS[rng.below(10) as usize])}),
                    "edit" => json!({"path": path, "oldText": text(&mut rng, 10), "newText": text(&mut rng, 12)}),
                    "write" => json!({"path": path, "content": text(&mut rng, 200)}),
                    _ => json!({"path": path}),
                };
                content.push(
                    json!({"type": "toolCall", "id": format!("toolu_{call:010}"), "name": tool, "arguments": args}),
                );
                pending.push((format!("toolu_{call:010}"), tool));
            }
            // The provider's usage of this request: the context sent (mostly read from the cache).
            let context = s.context_tokens();
            let (input, cache_read) = (context / 10 + 50, context - context / 10);
            s.emit(
                json!({"type": "message", "message": {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": input, "output": 300, "cacheRead": cache_read, "cacheWrite": 100, "totalTokens": input + cache_read + 400, "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.012}}, "stopReason": "toolUse"}}),
            )?;
            for (id, tool) in pending {
                let size = match rng.below(10) {
                    0 => 1500 + rng.below(4000) as usize,
                    1..=3 => 300 + rng.below(700) as usize,
                    _ => 10 + rng.below(120) as usize,
                };
                s.emit(
                    json!({"type": "message", "message": {"role": "toolResult", "toolCallId": id, "toolName": tool, "content": [{"type": "text", "text": text(&mut rng, size)}], "isError": rng.below(20) == 0}}),
                )?;
            }
        } else if roll < 90 {
            let words = 30 + rng.below(300) as usize;
            let context = s.context_tokens();
            let (input, cache_read) = (context / 10 + 50, context - context / 10);
            s.emit(
                json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": text(&mut rng, words)}], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": input, "output": 800, "cacheRead": cache_read, "cacheWrite": 0, "totalTokens": input + cache_read + 800}, "stopReason": "stop"}}),
            )?;
        } else if roll < 93 {
            let level = ["low", "medium", "high"][rng.below(3) as usize];
            s.emit(json!({"type": "thinking_level_change", "thinkingLevel": level}))?;
        } else if roll < 95 {
            s.emit(json!({"type": "model_change", "model": "anthropic/claude-opus-4-5"}))?;
        } else if roll < 97 && s.branch.len() > 10 {
            // a side branch: continue from an earlier entry of the current branch
            let back = 2 + rng.below(8) as usize;
            s.branch.truncate(s.branch.len() + 1 - back);
        } else {
            s.emit(json!({"type": "custom", "customType": "ui-state", "data": {"scroll": rng.below(1000)}}))?;
        }
    }
    s.w.flush()?;
    Ok(s.written)
}
