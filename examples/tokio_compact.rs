//! A tokio host: load a real pi session, run a compaction on a worker thread with
//! `tokio::spawn` while the host reads the session (the lock is free meanwhile; the README's
//! version also appends a turn), and print the appended compaction entry and the start of its
//! summary. The compaction stays in memory: the file is not written.
//!
//! `cargo run --example tokio_compact [SESSION.jsonl]` (default: the bundled real session).
//! The model here is the extractive summarizer (no network); a host passes its own `Complete`.

use session_compaction::io::ParseOptions;
use session_compaction::session::engine::{CompactOutcome, SessionEngine};
use session_compaction::session::SessionTree;
use session_compaction::summarize::extractive::ExtractiveSummarizer;
use std::sync::Arc;

const DEFAULT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions/pi-session-with-compactions.jsonl");

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let path = std::env::args().nth(1).unwrap_or_else(|| DEFAULT.to_string());
    run(&path).await?;
    Ok(())
}

/// Loads `path`, compacts it on a spawned task and prints the outcome (also run by
/// `tests/rustapi.rs`).
pub async fn run(path: &str) -> Result<CompactOutcome, BoxError> {
    let (tree, bad_lines) = SessionTree::from_bytes(std::fs::read(path)?, &ParseOptions::lenient())?;
    println!("{path}: {} entries, {} bad lines", tree.entry_count(), bad_lines.len());
    let engine = Arc::new(SessionEngine::new(tree));

    let worker = engine.clone();
    let compaction = tokio::spawn(async move {
        let model = ExtractiveSummarizer::default();
        worker.compaction(&model).custom_instructions("open tasks first").run().await
    });

    // The host is not locked out meanwhile: it can read (and append) as turns arrive.
    let leaf = engine.session().read(|s| s.leaf_id().map(str::to_owned));
    println!("compacting on a worker thread; the leaf is {leaf:?}");

    let done = compaction.await??;
    let entries = engine.session().read(|s| s.entry_count());
    println!(
        "appended compaction {} (first kept entry {}, {} tokens before); the session has {entries} entries",
        done.entry["id"], done.result.first_kept_entry_id, done.result.tokens_before
    );
    println!("{}", done.result.summary.lines().take(6).collect::<Vec<_>>().join("\n"));
    Ok(done)
}
