//! Writes a seeded, realistic pi session (v3 JSONL) for benchmarks.
//!
//! `cargo run --release --example generate_session -- <entries> <out.jsonl> [seed]`
//!
//! The generator itself is `benches/support/generate.rs` (shared with `cargo bench`): user
//! prompts, assistant turns with thinking and tool calls, tool results of very different sizes,
//! model and thinking-level changes, side branches, and compactions where an agent with a
//! 200,000-token window would make them (so the leaf's context stays under the window).
//! 50,000 entries come to roughly 130 MB.

#[path = "../benches/support/generate.rs"]
mod generate;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let out = args.get(2).cloned().unwrap_or_else(|| "generated-session.jsonl".into());
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(42);
    let mut w = std::io::BufWriter::new(std::fs::File::create(&out)?);
    let n = generate::generate(count, seed, &mut w)?;
    eprintln!("wrote {n} entries to {out}");
    Ok(())
}
