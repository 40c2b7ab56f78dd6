//! Criterion benchmarks of the engine (`cargo bench`; `cargo bench -- <filter>` for a subset).
//!
//! For each file in `examples/sessions/` and for a generated, seeded session of 50,000 entries
//! (`target/bench/session-50000-seed42.jsonl`, written by the shared generator when missing):
//!
//! - `load`: `SessionTree::from_bytes` (the scan of every line + the id index);
//! - `plan`: `plan_compaction` of the current branch (metadata only);
//! - `prepare`: `prepare_compaction` (the preparation with its messages);
//! - `context`: `build_session_context` (messages as values);
//! - `context_json`: `build_session_context_json` (messages spliced from the stored text);
//! - `append_replan`: `append_entry` of one new entry, then `plan_compaction`;
//! - `pure`: the pure-function path: `parse_session` + `prepare_compaction` of the branch +
//!   `build_session_context` over all entries.
//!
//! `scripts/bench.mjs` (`npm run bench`) compares these with the same steps in JavaScript.

#[path = "support/generate.rs"]
mod generate;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::{json, Value};
use session_compaction::context::{build_session_context, LeafSelector};
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::{parse_session, ParseOptions};
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::session::SessionTree;
use session_compaction::tree::get_branch;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const GENERATED_ENTRIES: usize = 50_000;
const SEED: u64 = 42;

/// The generated session, written once into `target/bench/` (the file `npm run bench` uses too).
fn generated_session(root: &Path) -> PathBuf {
    let path = root.join("target").join("bench").join(format!("session-{GENERATED_ENTRIES}-seed{SEED}.jsonl"));
    if !path.exists() {
        let mut bytes = Vec::new();
        generate::generate(GENERATED_ENTRIES, SEED, &mut bytes).expect("generate the session");
        std::fs::create_dir_all(path.parent().expect("a parent folder")).expect("create target/bench");
        // Write to a temporary name first, so that an interrupted run leaves no partial file.
        let tmp = path.with_extension("jsonl.tmp");
        std::fs::write(&tmp, &bytes).expect("write the generated session");
        std::fs::rename(&tmp, &path).expect("rename the generated session");
    }
    path
}

fn sessions() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("examples").join("sessions"))
        .expect("examples/sessions")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jsonl"))
        .collect();
    files.sort();
    files.push(generated_session(root));
    files.into_iter().map(|p| (p.file_stem().and_then(|s| s.to_str()).unwrap_or("session").to_string(), p)).collect()
}

/// A new message entry, as a host appends one per turn (alternating user / assistant).
fn new_entry(k: u64) -> Value {
    if k % 2 == 0 {
        json!({"type": "message", "id": format!("bench-{k}"), "timestamp": "2026-02-01T00:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": format!("next step {k}")}], "timestamp": k}})
    } else {
        json!({"type": "message", "id": format!("bench-{k}"), "timestamp": "2026-02-01T00:00:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}], "provider": "anthropic",
                "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": k,
                "usage": {"input": 1000 + k, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1020 + k}}})
    }
}

fn engine(c: &mut Criterion) {
    let settings = CompactionSettings::default();
    let opts = ParseOptions::lenient();
    for (name, path) in sessions() {
        let bytes = std::fs::read(&path).expect("read the session");
        let text = String::from_utf8(bytes.clone()).expect("UTF-8 session");
        let big = bytes.len() > 20 * 1024 * 1024;
        let mut group = c.benchmark_group(name.as_str());
        if big {
            group.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(2));
        }
        let (tree, _) = SessionTree::from_bytes(bytes.clone(), &opts).expect("load the session");

        group.bench_function("plan", |b| b.iter(|| black_box(&tree).plan_compaction(&settings)));
        group.bench_function("prepare", |b| b.iter(|| black_box(&tree).prepare_compaction(&settings)));
        group.bench_function("context", |b| b.iter(|| black_box(&tree).build_session_context()));
        group.bench_function("context_json", |b| b.iter(|| black_box(&tree).build_session_context_json()));
        group.bench_function("append_replan", |b| {
            // One fresh copy of the session per sample (not timed); each iteration appends one
            // entry to it and plans again.
            b.iter_custom(|iters| {
                let mut t = tree.clone();
                let start = Instant::now();
                for k in 0..iters {
                    t.append_entry(new_entry(k)).expect("append");
                    black_box(t.plan_compaction(&settings));
                }
                let elapsed = start.elapsed();
                drop(t);
                elapsed
            })
        });
        // Last: the throughput applies to the benchmarks defined after it.
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("load", |b| {
            b.iter_batched(
                || bytes.clone(),
                |input| SessionTree::from_bytes(input, &opts).expect("load"),
                if big { BatchSize::PerIteration } else { BatchSize::SmallInput },
            )
        });
        group.bench_function("pure", |b| {
            b.iter(|| {
                let parsed = parse_session(black_box(&text), &opts).expect("parse");
                let all = EntryList::new(&parsed.entries);
                let leaf = all.meta(all.len().saturating_sub(1)).id.clone().unwrap_or_default();
                let branch: Vec<Value> =
                    get_branch(&all, &leaf).into_iter().map(|i| parsed.entries[i].clone()).collect();
                let prep = prepare_compaction(&EntryList::new(&branch), &settings);
                let ctx = build_session_context(&all, &LeafSelector::Last);
                (prep.is_some(), ctx.messages.len())
            })
        });
        group.finish();
    }
}

criterion_group!(benches, engine);
criterion_main!(benches);
