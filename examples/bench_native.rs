//! Native timings of the session handle and the pure functions on one session file, printed as
//! one JSON object on stdout (used by `scripts/bench.mjs`; `cargo bench` has the criterion
//! version with statistics).
//!
//! `cargo run --release --example bench_native -- <session.jsonl> [repeats] [appends] [what]`
//!
//! `what`: `handle` (load, plan, prepare, context, the wasm handle's decisions), `pure` (the pure-function path), `append`
//! (append one entry + re-plan), `prune` (the handle's prune: decision, decision + rewrite), `scan` (only the line scan, for profiling) or `all` (default).
//! Every phase runs `repeats` times (default 5) and reports the fastest run in milliseconds;
//! `peakRssBytes` is the process's peak resident set (Linux `VmHWM`, 0 elsewhere), so run one
//! `what` per process to see the memory of each.

use serde_json::{json, Map, Value};
use session_compaction::context::{build_session_context, LeafSelector};
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::{parse_session, scan_session, ParseOptions};
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::plan::prune::PruneConfig;
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::session::SessionTree;
use session_compaction::tree::get_branch;
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Fastest of `n` runs of `f`, in ms (the result is dropped outside the timing).
fn best<T>(n: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..n.max(1) {
        let t = Instant::now();
        let r = std::hint::black_box(f());
        best = best.min(ms(t));
        drop(r);
    }
    best
}

/// The handle's prune, kept out of line so that a profiler can count it alone
/// (`valgrind --tool=callgrind --toggle-collect=*prune_handle*`).
#[inline(never)]
fn prune_handle(tree: &mut SessionTree, config: &PruneConfig) -> usize {
    tree.prune_tool_outputs(config, 1.7e12).1.len()
}

/// What the wasm handle's first `prepareCompaction()` + `buildSessionContext()` decide before
/// any message is made into an object (the preparation's references with its previews, the
/// context plan with its repairs), kept out of line for a profiler
/// (`--toggle-collect=*handle_decisions*`).
#[inline(never)]
fn handle_decisions(tree: &SessionTree, settings: &CompactionSettings, templates: &PromptTemplates) -> usize {
    let prep = tree.prepare_compaction_refs_with_previews(settings, &PruneConfig::default(), templates);
    let context = tree.context_plan();
    prep.ok().flatten().map_or(0, |(_, lists)| lists.iter().map(Vec::len).sum::<usize>()) + context.items.len()
}

fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<u64>().ok()))
        })
        .map_or(0, |kb| kb * 1024)
}

/// A new message entry (what a host appends after each model turn).
fn new_entry(k: usize) -> Value {
    json!({"type": "message", "id": format!("bench-append-{k}"), "timestamp": "2026-02-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "done, next step"}],
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
            "usage": {"input": 1000, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1020}}})
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: bench_native <session.jsonl> [repeats] [appends] [handle|pure|append|prune|scan|all]");
        std::process::exit(2);
    };
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let appends: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let what = args.get(4).map_or("all", String::as_str);
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let opts = ParseOptions::lenient();
    let settings = CompactionSettings::default();
    let mut out = Map::new();
    let mut put = |k: &str, v: f64| {
        out.insert(k.to_string(), json!(v));
    };

    if what == "scan" {
        put("scanSession", best(repeats, || scan_session(&bytes, &opts).map(|r| r.entries.len())));
    }
    let mut entries = 0;
    let mut branch_len = 0;
    if what == "handle" || what == "all" {
        put("scanSession", best(repeats, || scan_session(&bytes, &opts).map(|r| r.entries.len())));
        // Loading, without the copy of the input that each run needs (the handle owns its buffer).
        let (mut load_bytes, mut index, mut load_str) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for _ in 0..repeats.max(1) {
            let input = bytes.clone();
            let t = Instant::now();
            let raw = scan_session(&input, &opts).expect("lenient scan");
            let t1 = Instant::now();
            let tree = SessionTree::from_raw_session(raw, input);
            index = index.min(ms(t1));
            load_bytes = load_bytes.min(ms(t));
            drop(std::hint::black_box(tree));
            let text = String::from_utf8(bytes.clone()).unwrap_or_default();
            let t = Instant::now();
            let tree = SessionTree::from_jsonl(text, &opts).expect("lenient load");
            load_str = load_str.min(ms(t));
            drop(std::hint::black_box(tree));
        }
        put("loadBytes", load_bytes);
        put("index", index);
        put("loadString", load_str);
        let (tree, _) = SessionTree::from_bytes(bytes.clone(), &opts).expect("lenient load");
        entries = tree.entry_count();
        branch_len = tree.branch_indices().len();
        put("plan", best(repeats, || tree.plan_compaction(&settings)));
        put("prepare", best(repeats, || tree.prepare_compaction(&settings)));
        put("context", best(repeats, || tree.build_session_context()));
        let templates = PromptTemplates::default();
        put("decisions", best(repeats, || handle_decisions(&tree, &settings, &templates)));
        put("contextJson", best(repeats, || tree.build_session_context_json()));
        drop(tree);
        // (b) natively: load + prepare + context, end to end.
        let mut total = f64::INFINITY;
        for _ in 0..repeats.max(1) {
            let input = bytes.clone();
            let t = Instant::now();
            let (tree, _) = SessionTree::from_bytes(input, &opts).expect("lenient load");
            let r =
                std::hint::black_box((tree.prepare_compaction(&settings), tree.build_session_context().messages.len()));
            total = total.min(ms(t));
            drop((r, tree));
        }
        put("handleTotal", total);
    }
    if what == "append" || what == "all" {
        // (e) append one entry, then re-plan.
        let (mut tree, _) = SessionTree::from_bytes(bytes.clone(), &opts).expect("lenient load");
        put("plan", best(repeats, || tree.plan_compaction(&settings)));
        let start = Instant::now();
        for k in 0..appends {
            tree.append_entry(new_entry(k)).expect("append");
            std::hint::black_box(tree.plan_compaction(&settings));
        }
        put("appendReplan", ms(start) / appends.max(1) as f64);
    }
    if what == "prune" || what == "prune-plan" || what == "all" {
        // (f) the handle's prune: the decision alone, then the decision and the rewrite of the
        // pruned entries (each run on a fresh handle, its load not timed).
        let prune = PruneConfig::default();
        let (tree, _) = SessionTree::from_bytes(bytes.clone(), &opts).expect("lenient load");
        put("prunePlan", best(repeats, || tree.plan_prune(&prune).candidates.len()));
        drop(tree);
        let mut total = f64::INFINITY;
        for _ in 0..if what == "prune-plan" { 0 } else { repeats.max(1) } {
            let (mut tree, _) = SessionTree::from_bytes(bytes.clone(), &opts).expect("lenient load");
            let t = Instant::now();
            let r = std::hint::black_box(prune_handle(&mut tree, &prune));
            total = total.min(ms(t));
            drop((r, tree));
        }
        if total.is_finite() {
            put("pruneToolOutputs", total);
        }
    }
    if what == "pure" || what == "all" {
        // (c) natively: the pure functions over parsed values.
        let text = String::from_utf8(bytes.clone()).unwrap_or_default();
        let pure_parse = best(repeats, || parse_session(&text, &opts).map(|p| p.entries.len()));
        let parsed = parse_session(&text, &opts).expect("lenient parse");
        let pure_rest = best(repeats, || {
            let all = EntryList::new(&parsed.entries);
            let leaf = all.meta(all.len().saturating_sub(1)).id.clone().unwrap_or_default();
            let branch: Vec<Value> = get_branch(&all, &leaf).into_iter().map(|i| parsed.entries[i].clone()).collect();
            let prep = prepare_compaction(&EntryList::new(&branch), &settings);
            let ctx = build_session_context(&all, &LeafSelector::Last);
            (prep, ctx.messages.len())
        });
        put("pureParse", pure_parse);
        put("pureRest", pure_rest);
        put("pureTotal", pure_parse + pure_rest);
    }

    let result = json!({
        "file": path,
        "what": what,
        "bytes": bytes.len(),
        "entries": entries,
        "branchLength": branch_len,
        "repeats": repeats,
        "ms": out,
        "peakRssBytes": peak_rss(),
    });
    println!("{result}");
}
