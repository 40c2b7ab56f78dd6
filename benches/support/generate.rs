//! The seeded session generator shared by the `generate_session` example and the `engine`
//! benchmark (included by both with `#[path]`): a realistic pi session (v3 JSONL) with user
//! prompts, assistant turns with thinking and tool calls (read / edit / write / bash), tool
//! results with outputs from a few bytes to ~60 KB, model and thinking-level changes, a
//! compaction every few thousand entries, and occasional side branches. 50,000 entries come to
//! roughly 130 MB. The same `(count, seed)` always gives the same bytes.

#![allow(dead_code)]

use serde_json::json;
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

/// Writes a session of `count` entries (after the header) drawn from `seed` to `w`; returns the
/// number of entries written.
pub fn generate<W: Write>(count: usize, seed: u64, w: &mut W) -> std::io::Result<usize> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    writeln!(
        w,
        "{}",
        json!({"type": "session", "version": 3, "id": format!("bench-{seed}"), "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/user/project"})
    )?;
    let mut t: i64 = 1_767_225_600_000;
    let mut n = 0usize;
    let mut parent: Option<String> = None;
    let mut ids: Vec<String> = Vec::new();
    let mut call = 0u64;
    let mut last_user_id: Option<String> = None;
    let emit = |w: &mut W,
                mut e: serde_json::Value,
                parent: &mut Option<String>,
                ids: &mut Vec<String>,
                t: &mut i64|
     -> std::io::Result<String> {
        *t += 1500;
        let id = format!("{:08x}", ids.len() as u64 * 2_654_435_761 % 0xFFFF_FFFF);
        let ts = session_compaction::js::format_iso_timestamp(*t as f64);
        e["id"] = json!(id);
        e["parentId"] = json!(parent.clone());
        e["timestamp"] = json!(ts);
        if let Some(m) = e.get_mut("message") {
            m["timestamp"] = json!(*t);
        }
        writeln!(w, "{e}")?;
        *parent = Some(id.clone());
        ids.push(id.clone());
        Ok(id)
    };
    while n < count {
        let roll = rng.below(100);
        if roll < 12 {
            let words = 5 + rng.below(80) as usize;
            let id = emit(
                w,
                json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text(&mut rng, words)}]}}),
                &mut parent,
                &mut ids,
                &mut t,
            )?;
            last_user_id = Some(id);
            n += 1;
        } else if roll < 70 {
            let calls = 1 + rng.below(3) as usize;
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
            let input = 2000 + (n as u64 * 40) % 180_000;
            emit(
                w,
                json!({"type": "message", "message": {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": input, "output": 300, "cacheRead": input / 2, "cacheWrite": 100, "totalTokens": input + input / 2 + 400, "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.012}}, "stopReason": "toolUse"}}),
                &mut parent,
                &mut ids,
                &mut t,
            )?;
            n += 1;
            for (id, tool) in pending {
                let size = match rng.below(10) {
                    0 => 1500 + rng.below(4000) as usize,
                    1..=3 => 300 + rng.below(700) as usize,
                    _ => 10 + rng.below(120) as usize,
                };
                emit(
                    w,
                    json!({"type": "message", "message": {"role": "toolResult", "toolCallId": id, "toolName": tool, "content": [{"type": "text", "text": text(&mut rng, size)}], "isError": rng.below(20) == 0}}),
                    &mut parent,
                    &mut ids,
                    &mut t,
                )?;
                n += 1;
            }
        } else if roll < 90 {
            let words = 30 + rng.below(300) as usize;
            emit(
                w,
                json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": text(&mut rng, words)}], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": 5000, "output": 800, "cacheRead": 1000, "cacheWrite": 0, "totalTokens": 6800}, "stopReason": "stop"}}),
                &mut parent,
                &mut ids,
                &mut t,
            )?;
            n += 1;
        } else if roll < 93 {
            let level = ["low", "medium", "high"][rng.below(3) as usize];
            emit(w, json!({"type": "thinking_level_change", "thinkingLevel": level}), &mut parent, &mut ids, &mut t)?;
            n += 1;
        } else if roll < 95 {
            emit(
                w,
                json!({"type": "model_change", "model": "anthropic/claude-opus-4-5"}),
                &mut parent,
                &mut ids,
                &mut t,
            )?;
            n += 1;
        } else if roll < 96 && n > 4000 && n % 5000 < 300 {
            if let Some(kept) = last_user_id.clone() {
                emit(
                    w,
                    json!({"type": "compaction", "summary": format!("## Goal\n{}\n## Done\n{}", text(&mut rng, 40), text(&mut rng, 200)), "firstKeptEntryId": kept, "tokensBefore": 150_000, "details": {"readFiles": ["src/lib.rs"], "modifiedFiles": ["src/session.rs"]}}),
                    &mut parent,
                    &mut ids,
                    &mut t,
                )?;
                n += 1;
            }
        } else if roll < 97 && ids.len() > 10 {
            // a side branch: continue from an earlier entry
            let back = 2 + rng.below(8) as usize;
            parent = Some(ids[ids.len() - back].clone());
        } else {
            emit(
                w,
                json!({"type": "custom", "customType": "ui-state", "data": {"scroll": rng.below(1000)}}),
                &mut parent,
                &mut ids,
                &mut t,
            )?;
            n += 1;
        }
    }
    w.flush()?;
    Ok(n)
}
