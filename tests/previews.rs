//! Previews with the outcome: the context size a compaction would leave, alone and after a prune,
//! checked against what the engine really does (a model that answers exactly `maxTokens`) and
//! pinned on a real session.

use futures_executor::block_on;
use serde_json::{json, Value};
use session_compaction::entry::{estimate_tokens, EntryList};
use session_compaction::plan::overflow::{estimate_built_context_tokens, estimate_context_tokens};
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::plan::prune::PruneConfig;
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::session::engine::{CompactRun, NoHooks, SessionEngine};
use session_compaction::session::SessionTree;
use session_compaction::summarize::preview::compaction_previews;
use session_compaction::summarize::{Complete, SummaryRequest};
use session_compaction::Result;

/// Answers every request with exactly `maxTokens` estimated tokens (`maxTokens · 4` chars).
struct Full;

impl Complete for Full {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        Ok("s".repeat(request.max_tokens as usize * 4))
    }
}

fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": message})
}

fn header() -> Value {
    json!({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"})
}

/// `turns` turns of: user, assistant calling `bash` (the same command each turn) and `read`
/// (another file each turn), two results of 2 000 tokens, assistant text. No usage: every
/// context size is an estimate, so the preview can be checked exactly.
fn session(turns: usize) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut parent: Option<String> = None;
    let mut push = |out: &mut Vec<Value>, id: String, m: Value| {
        out.push(msg(&id, parent.as_deref(), m));
        parent = Some(id);
    };
    for t in 0..turns {
        push(
            &mut out,
            format!("u{t}"),
            json!({"role": "user", "content": format!("turn {t} {}", "q".repeat(800)), "timestamp": 1}),
        );
        push(
            &mut out,
            format!("a{t}"),
            json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": format!("b{t}"), "name": "bash", "arguments": {"command": "cargo test"}},
                {"type": "toolCall", "id": format!("r{t}"), "name": "read", "arguments": {"path": format!("src/f{t}.rs")}}],
                "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 2}),
        );
        for (call, tool) in [(format!("b{t}"), "bash"), (format!("r{t}"), "read")] {
            push(
                &mut out,
                format!("t{call}"),
                json!({"role": "toolResult", "toolCallId": call, "toolName": tool,
                       "content": [{"type": "text", "text": "o".repeat(8000)}], "isError": false, "timestamp": 3}),
            );
        }
        push(
            &mut out,
            format!("d{t}"),
            json!({"role": "assistant", "content": [{"type": "text", "text": "done ".repeat(100)}], "provider": "p",
                   "model": "m", "stopReason": "stop", "timestamp": 4}),
        );
    }
    out
}

fn settings() -> CompactionSettings {
    CompactionSettings { reserve_tokens: 4000, keep_recent_tokens: 5000, ..Default::default() }
}

fn context_tokens(engine: &SessionEngine) -> f64 {
    engine.session().read(|s| estimate_context_tokens(&s.branch_source()))
}

#[test]
fn the_compaction_preview_is_what_the_compaction_leaves() {
    let entries = session(6);
    let list = EntryList::new(&entries);
    let p = compaction_previews(&list, &settings(), &PruneConfig::default(), &PromptTemplates::default()).unwrap();
    let c = p.compaction.clone().expect("something to compact");
    let before = estimate_context_tokens(&list);
    assert_eq!(c.context_tokens_before, before);
    // The figures against the materialized preparation.
    let prep = prepare_compaction(&list, &settings()).unwrap();
    let sum = |ms: &[Value]| ms.iter().map(estimate_tokens).sum::<u64>();
    assert_eq!(c.kept_tokens, sum(&prep.recent_messages));
    assert_eq!(c.summarized_tokens, sum(&prep.messages_to_summarize) + sum(&prep.turn_prefix_messages));
    assert_eq!(c.context_tokens_after, before - c.summarized_tokens as f64 + c.summary_tokens as f64);
    // History 3 200 + turn prefix 2 000 (a split turn), plus the separator and the file blocks.
    assert!(prep.is_split_turn);
    assert!(c.summary_tokens > 5200 && c.summary_tokens < 5300, "{}", c.summary_tokens);
    // The engine, with answers of exactly maxTokens, leaves exactly that.
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &entries));
    block_on(engine.compact(&Full, &NoHooks, &CompactRun { settings: settings(), ..Default::default() }, None, 1e12))
        .unwrap();
    assert_eq!(context_tokens(&engine), c.context_tokens_after);
    assert!(c.context_tokens_after < before);
}

#[test]
fn the_preview_has_the_basis_of_what_compact_reports_also_with_provider_usage() {
    // A provider's count of the last turn (far above the estimates): the threshold check uses
    // it (SPEC §12.3), but the preview's before/after are the estimates of the built context,
    // as compact's contextTokensBefore/After (SPEC §13.5, §13.7), never a usage count minus
    // estimated tokens.
    let mut entries = session(6);
    let last = entries.len() - 1;
    entries[last]["message"]["usage"] =
        json!({"input": 90_000, "output": 500, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 90_500});
    let list = EntryList::new(&entries);
    assert_eq!(estimate_context_tokens(&list), 90_500.0, "the threshold's figure is the usage");
    let p = compaction_previews(&list, &settings(), &PruneConfig::default(), &PromptTemplates::default()).unwrap();
    let c = p.compaction.clone().expect("something to compact");
    let built = estimate_built_context_tokens(&list);
    assert_eq!(c.context_tokens_before, built);
    assert!(built < 60_000.0, "{built}");
    assert_eq!(c.context_tokens_after, built - c.summarized_tokens as f64 + c.summary_tokens as f64);
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &entries));
    let done = block_on(engine.compact(
        &Full,
        &NoHooks,
        &CompactRun { settings: settings(), ..Default::default() },
        None,
        1e12,
    ))
    .unwrap();
    assert_eq!(done.result.context_tokens_before, Some(c.context_tokens_before));
    assert_eq!(done.result.context_tokens_after, Some(c.context_tokens_after));
}

#[test]
fn the_prune_and_compaction_preview_is_what_both_leave() {
    let entries = session(6);
    let list = EntryList::new(&entries);
    // Superseded `cargo test` outputs go first (staleness); read is protected by default.
    let prune = PruneConfig { minimum_savings: 0, ..PruneConfig::default() };
    let p = compaction_previews(&list, &settings(), &prune, &PromptTemplates::default()).unwrap();
    let w = &p.with_prune;
    assert_eq!(w.pruned_count, 5, "five of the six bash outputs are superseded");
    let before = estimate_context_tokens(&list);
    assert_eq!(w.context_tokens_after_prune, before - w.prune_tokens_saved as f64);
    let after_both = w.compaction.as_ref().expect("still something to compact");
    assert_eq!(after_both.context_tokens_before, w.context_tokens_after_prune);
    assert_eq!(w.context_tokens_after, after_both.context_tokens_after);
    // The pruned outputs all lie in the summarized part here, and the kept part is sized by
    // keepRecentTokens either way: the prune alone frees 9 890 tokens, the compaction the same
    // after both.
    assert_eq!(w.prune_tokens_saved, 9890);
    assert_eq!(w.context_tokens_after, p.compaction.as_ref().unwrap().context_tokens_after);
    // The engine: prune in the handle, then compact.
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &entries));
    let (plan, _) = engine.session().write(|s| s.prune_tool_outputs(&prune, 1e12));
    assert_eq!((plan.candidates.len(), plan.tokens_saved), (w.pruned_count, w.prune_tokens_saved));
    assert_eq!(context_tokens(&engine), w.context_tokens_after_prune);
    block_on(engine.compact(&Full, &NoHooks, &CompactRun { settings: settings(), ..Default::default() }, None, 1e12))
        .unwrap();
    assert_eq!(context_tokens(&engine), w.context_tokens_after);
}

#[test]
fn nothing_to_compact_has_no_compaction_preview() {
    let entries = session(1);
    let big = CompactionSettings { keep_recent_tokens: 100_000, ..settings() };
    let p = compaction_previews(&EntryList::new(&entries), &big, &PruneConfig::default(), &PromptTemplates::default())
        .unwrap();
    assert!(p.compaction.is_none());
    assert!(p.with_prune.compaction.is_none());
    assert_eq!(p.with_prune.pruned_count, 0);
    assert_eq!(p.with_prune.context_tokens_after, estimate_context_tokens(&EntryList::new(&entries)));
}

#[test]
fn previews_of_a_real_session() {
    let path = format!("{}/examples/sessions/pi-session-with-compactions.jsonl", env!("CARGO_MANIFEST_DIR"));
    let (tree, errors) = SessionTree::from_jsonl(std::fs::read_to_string(path).unwrap(), &Default::default()).unwrap();
    assert!(errors.is_empty());
    let p = tree
        .compaction_previews(&CompactionSettings::default(), &PruneConfig::default(), &PromptTemplates::default())
        .unwrap();
    let c = p.compaction.as_ref().expect("the real session has something to compact");
    // The figures: estimates of the built context, as compact reports them (SPEC §13.5), not the
    // provider's count of the last turn (180 820, what the threshold check compares).
    assert_eq!(estimate_context_tokens(&tree.branch_source()), 180_820.0);
    assert_eq!(c.context_tokens_before, 139_022.0);
    assert_eq!((c.summarized_tokens, c.summary_tokens, c.kept_tokens), (122_498, 21_573, 16_524));
    assert_eq!(c.context_tokens_after, 38_097.0);
    // History 13 107 + turn prefix 8 192 tokens at their maxTokens, plus text and file blocks.
    assert!(c.summary_tokens > 13_107 + 8_192);
    // The default prune protects `read` and wants 20 000 tokens: nothing to prune here.
    assert_eq!((p.with_prune.pruned_count, p.with_prune.context_tokens_after), (0, c.context_tokens_after));
    assert_eq!(c.context_tokens_before, estimate_built_context_tokens(&tree.branch_source()));
    assert!(c.context_tokens_after < c.context_tokens_before);
    let prep = tree.prepare_compaction(&CompactionSettings::default()).unwrap();
    assert_eq!(c.kept_tokens, prep.recent_messages.iter().map(estimate_tokens).sum::<u64>());
    // The handle's plan and preparation carry the same previews.
    let plan = tree
        .plan_compaction_with_preview(
            &CompactionSettings::default(),
            &PruneConfig::default(),
            &PromptTemplates::default(),
        )
        .unwrap()
        .unwrap();
    assert_eq!(plan.preview.as_ref(), Some(&p));
    let text = tree
        .prepare_compaction_json_with_preview(
            &CompactionSettings::default(),
            &PruneConfig::default(),
            &PromptTemplates::default(),
        )
        .unwrap()
        .unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["preview"], serde_json::to_value(&p).unwrap());
}
