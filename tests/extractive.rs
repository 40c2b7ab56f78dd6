//! The extractive summarizer through the real pipeline on the real sessions of
//! `examples/sessions`: load, prepare a compaction of the last branch with the default settings,
//! and compact with [`ExtractiveSummarizer`] (issue 4, "A summarizer that needs no model").
//! `cargo test --test extractive -- --nocapture` prints the summaries.

use serde_json::Value;
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::{parse_session, ParseOptions};
use session_compaction::plan::prepare::{prepare_compaction, CompactionPreparation, CompactionSettings};
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::summarize::extractive::{extractive_summary, ExtractiveSummarizer, EXTRACTIVE_MARKER};
use session_compaction::summarize::{
    branch_summary_request, compact, compaction_requests, generate_branch_summary, BranchSummaryOptions,
    CompactionResult, Purpose,
};
use session_compaction::tree::get_branch;
use std::path::PathBuf;

const SESSIONS: [&str; 3] =
    ["pi-session-with-compactions.jsonl", "pi-session-large.jsonl", "pi-session-v1-format.jsonl"];

fn session_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/sessions").join(name)
}

/// The entries of the branch that ends at the last entry of the file, root first.
fn last_branch(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(session_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let parsed = parse_session(&text, &ParseOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let all = EntryList::new(&parsed.entries);
    let leaf = all.meta(all.len() - 1).id.clone().expect("the last entry has an id");
    get_branch(&all, &leaf).into_iter().map(|i| parsed.entries[i].clone()).collect()
}

fn prepare(name: &str) -> CompactionPreparation {
    let branch = last_branch(name);
    prepare_compaction(&EntryList::new(&branch), &CompactionSettings::default())
        .unwrap_or_else(|| panic!("{name}: nothing to compact"))
}

fn run(prep: &CompactionPreparation) -> CompactionResult {
    futures_executor::block_on(compact(
        prep,
        &ExtractiveSummarizer::default(),
        &Default::default(),
        &PromptTemplates::default(),
    ))
    .expect("the extractive summarizer never fails")
}

/// The model-written part of a summary: without the appended file blocks.
fn text_part(summary: &str) -> &str {
    let cut = [summary.find("<read-files>\n"), summary.find("<modified-files>\n")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(summary.len());
    &summary[..cut]
}

#[test]
fn compacts_every_real_session() {
    for name in SESSIONS {
        let prep = prepare(name);
        let result = run(&prep);
        let summary = &result.summary;
        let text = text_part(summary);
        assert!(!text.trim().is_empty(), "{name}: empty summary");
        assert!(summary.starts_with(EXTRACTIVE_MARKER), "{name}: {}", &summary[..summary.len().min(300)]);
        let paths: Vec<&String> =
            prep.file_ops.read.iter().chain(&prep.file_ops.written).chain(&prep.file_ops.edited).collect();
        assert!(!paths.is_empty(), "{name}: the preparation has file operations");
        assert!(
            paths.iter().any(|p| text.contains(p.as_str())),
            "{name}: no real file path in the summary text:\n{text}"
        );
        // Sane size: within the history budget (80% of reserveTokens, 4 chars a token), plus the
        // turn-prefix budget for a split turn, and not a copy of the transcript.
        let reserve = prep.settings.reserve_tokens as usize;
        let max_chars = reserve * 8 / 10 * 4 + if prep.is_split_turn { reserve / 2 * 4 } else { 0 } + 200;
        let chars = text.chars().count();
        assert!((300..=max_chars).contains(&chars), "{name}: {chars} chars (max {max_chars})");
        for heading in [
            "## Objective",
            "## Requirements and preferences",
            "### Completed",
            "### Blocked",
            "## Next actions",
            "## Reference details",
            "## Pending question",
        ] {
            assert!(text.contains(heading), "{name}: missing {heading}");
        }
        if prep.is_split_turn {
            assert!(text.contains("**Turn Context (split turn):**\n\n_Extractive summary"), "{name}");
            assert!(text.contains("## Steps so far"), "{name}");
        }
        // The short summary: one or two sentences in the first person.
        let short = &result.short_summary;
        assert!(short.starts_with("I "), "{name}: {short}");
        assert!(!short.contains('\n') && short.chars().count() <= 512 * 4, "{name}: {short}");
        assert!(short.matches(". ").count() <= 1, "{name}: {short}");
        // Deterministic.
        assert_eq!(run(&prep), result, "{name}");
    }
}

#[test]
fn update_of_a_real_session_keeps_the_previous_summary() {
    let prep = prepare("pi-session-with-compactions.jsonl");
    let previous = prep.previous_summary.clone().expect("this session was compacted before");
    let (history, _) = compaction_requests(&prep, &Default::default(), &PromptTemplates::default()).unwrap();
    let history = history.expect("there is history to summarize");
    assert_eq!(history.purpose, Purpose::Update);
    let text = extractive_summary(&history);
    assert!(text.starts_with(EXTRACTIVE_MARKER));
    // pi's own summary is in another format: it is kept verbatim, its goal is quoted.
    assert!(text.contains("## Earlier summary (kept verbatim)"), "{text}");
    assert!(text.contains("Earlier objective: Refactor `coding-agent` to eliminate code duplication"), "{text}");
    let first_heading = previous.lines().find(|l| l.starts_with("## ")).expect("heading");
    assert!(text.contains(&format!("###{first_heading}")), "{first_heading} kept (demoted):\n{text}");
    // A second update keeps the same block without nesting it deeper.
    let prompt2 = session_compaction::summarize::assemble_prompt(
        "[User]: go on",
        Some(&text),
        &[],
        "## Objective\n\n## Pending question\n",
    );
    let again =
        extractive_summary(&session_compaction::summarize::SummaryRequest { prompt: prompt2, ..history.clone() });
    assert_eq!(again.matches("## Earlier summary (kept verbatim)").count(), 1, "{again}");
    assert!(again.contains(&format!("###{first_heading}")), "{again}");
}

#[test]
fn branch_summary_of_a_real_session() {
    let branch = last_branch("pi-session-large.jsonl");
    // Leave the last 120 entries of the branch, as navigating to an earlier point would.
    let left = &branch[branch.len() - 120..];
    let list = EntryList::new(left);
    let options = BranchSummaryOptions::default();
    let templates = PromptTemplates::default();
    let (request, ops) = branch_summary_request(&list, &options, &templates).unwrap();
    let request = request.expect("messages selected");
    let text = extractive_summary(&request);
    assert!(text.starts_with(EXTRACTIVE_MARKER), "{text}");
    for heading in ["## Aim of the branch", "## What was tried", "## Outcome", "## Worth remembering"] {
        assert!(text.contains(heading), "missing {heading}:\n{text}");
    }
    assert!(text.chars().count() <= 2048 * 4, "{} chars", text.chars().count());
    let lists = ops.file_lists();
    assert!(lists.modified_files.iter().chain(&lists.read_files).any(|p| text.contains(p.as_str())), "{text}");
    let summary = futures_executor::block_on(generate_branch_summary(
        &list,
        &ExtractiveSummarizer::default(),
        &options,
        &templates,
    ))
    .unwrap();
    assert!(summary.summary.contains(EXTRACTIVE_MARKER));
}

#[test]
fn print_a_real_summary() {
    let prep = prepare("pi-session-large.jsonl");
    let result = run(&prep);
    println!(
        "===== pi-session-large.jsonl: summary ({} chars) =====\n{}",
        result.summary.chars().count(),
        result.summary
    );
    println!("===== short summary =====\n{}", result.short_summary);
}
