//! Previews with the outcome: the context size a compaction would leave, alone and after the
//! prune that automatic compaction runs first, decided from entry metadata without a model call.
//! The summary is budgeted at its requests' `maxTokens` (SPEC §9), composed as [`compose_parts`]
//! composes it, with the file-operation blocks rendered by the installed template. Figures in
//! [`crate::plan::preview`].

use crate::context::plan_prune_in_context;
use crate::entry::{EntryKind, EntryMeta, EntrySource};
use crate::error::Result;
use crate::js::utf16_len;
use crate::plan::overflow::estimate_context_tokens;
use crate::plan::prepare::{
    plan_compaction, reference_preparation_parts, CompactionSettings, PreparationParts, PreparationPlan,
};
use crate::plan::preview::{CompactionPreview, CompactionPreviews, PruneCompactionPreview};
use crate::plan::prune::{PruneConfig, PrunePlan};
use crate::prompt::templates::{format_file_operations, PromptTemplates};
use crate::summarize::{append_part, compose_parts, history_max_tokens, turn_prefix_max_tokens};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;

/// A path whose pruned tool outputs (by index) count as their notices: the branch as the
/// compaction after a prune would see it.
struct PrunedView<'a, S: EntrySource + ?Sized> {
    source: &'a S,
    metas: HashMap<usize, EntryMeta, foldhash::fast::RandomState>,
}

impl<'a, S: EntrySource + ?Sized> PrunedView<'a, S> {
    fn new(source: &'a S, prune: &PrunePlan) -> Self {
        let mut metas = HashMap::default();
        for c in &prune.candidates {
            let mut meta = source.meta(c.index).clone();
            if let Some(m) = meta.message.as_mut() {
                m.tokens = utf16_len(&c.notice).div_ceil(4);
                m.pruned = true;
            }
            metas.insert(c.index, meta);
        }
        Self { source, metas }
    }
}

impl<S: EntrySource + ?Sized> EntrySource for PrunedView<'_, S> {
    fn len(&self) -> usize {
        self.source.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        self.metas.get(&i).unwrap_or_else(|| self.source.meta(i))
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        self.source.entry(i)
    }
    fn summary_tokens(&self, i: usize) -> u64 {
        self.source.summary_tokens(i)
    }
}

/// True when `messageOf` gives the entry a message (SPEC §2).
fn has_message(meta: &EntryMeta) -> bool {
    match meta.kind {
        EntryKind::Message => meta.message.is_some(),
        EntryKind::CustomMessage | EntryKind::BranchSummary => true,
        _ => false,
    }
}

/// The estimated tokens of the summary a compaction of `parts` would write (SPEC §9, §12.10):
/// composed and followed by its file blocks as `compact` does, each model answer standing in
/// as `maxTokens · 4` characters (the estimate's `maxTokens` tokens). Counted without building
/// those characters: each answer is written as 4 characters (1 token) and the other
/// `maxTokens - 1` tokens are added, which is the same `ceil(chars / 4)`.
fn summary_budget(
    parts: &PreparationParts<usize>,
    settings: &CompactionSettings,
    templates: &PromptTemplates,
) -> Result<u64> {
    let reserve = settings.reserve_tokens;
    let mut more = 0u64;
    let mut answer = |max_tokens: u64| {
        more += max_tokens.saturating_sub(1);
        if max_tokens == 0 {
            String::new()
        } else {
            "xxxx".to_string()
        }
    };
    let history = (!parts.messages_to_summarize.is_empty()).then(|| answer(history_max_tokens(reserve)));
    let prefix = (parts.is_split_turn && !parts.turn_prefix_messages.is_empty())
        .then(|| answer(turn_prefix_max_tokens(reserve)));
    let composed = compose_parts(parts.previous_summary.as_deref(), history, prefix);
    let lists = parts.file_ops.file_lists();
    let blocks = format_file_operations(templates, &lists.read_files, &lists.modified_files)?;
    Ok(utf16_len(&append_part(composed, &blocks)).div_ceil(4).saturating_add(more))
}

/// The preview of a compaction of `path` (root→leaf) whose context is `before` tokens now;
/// `None` when there is nothing to compact (SPEC §5, §12.2). Errors: the file-operations
/// template fails to render.
pub fn compaction_preview<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
    templates: &PromptTemplates,
    before: f64,
) -> Result<Option<CompactionPreview>> {
    match plan_compaction(path, settings) {
        Some(plan) => compaction_preview_of(path, settings, templates, before, &plan),
        None => Ok(None),
    }
}

/// [`compaction_preview`] of the plan [`plan_compaction`] made for `path` and `settings`.
fn compaction_preview_of<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
    templates: &PromptTemplates,
    before: f64,
    plan: &PreparationPlan,
) -> Result<Option<CompactionPreview>> {
    let Some(parts) = reference_preparation_parts(path, plan, |i| has_message(path.meta(i)).then_some(i)) else {
        return Ok(None);
    };
    if parts.messages_to_summarize.is_empty() && parts.turn_prefix_messages.is_empty() {
        return Ok(None);
    }
    let cut = plan.cut_point.first_kept_entry_index;
    let tokens = |from: usize, to: usize| (from..to).map(|i| path.message_of_tokens(i)).sum::<u64>();
    let previous_summary =
        if plan.prev_compaction_index >= 0 { path.summary_tokens(plan.prev_compaction_index as usize) } else { 0 };
    let summarized_tokens = tokens(plan.boundary_start, cut) + previous_summary;
    let kept_tokens = tokens(cut, plan.boundary_end);
    let summary_tokens = summary_budget(&parts, settings, templates)?;
    let context_tokens_after = (before - summarized_tokens as f64).max(kept_tokens as f64) + summary_tokens as f64;
    Ok(Some(CompactionPreview {
        context_tokens_before: before,
        summarized_tokens,
        summary_tokens,
        kept_tokens,
        context_tokens_after,
    }))
}

/// The previews of `path` (root→leaf): the compaction alone, and a prune with `prune` (of the
/// outputs the model still sees) followed by the compaction of the pruned branch. Tokens are
/// estimates; the context size before is `estimateContextTokens` (SPEC §12.3). Errors: the
/// file-operations template fails to render.
///
/// `path` is read through `dyn`: the previews are compiled once for every entry source and for
/// the pruned view of it (a static source type would compile them four times over).
pub fn compaction_previews(
    path: &dyn EntrySource,
    settings: &CompactionSettings,
    prune: &PruneConfig,
    templates: &PromptTemplates,
) -> Result<CompactionPreviews> {
    compaction_previews_of(path, settings, prune, templates, plan_compaction(path, settings).as_ref())
}

/// [`compaction_previews`] with the [`plan_compaction`] of `path` and `settings` already made
/// (`None`: there is none), for a caller that made it for the preparation itself.
pub fn compaction_previews_of(
    path: &dyn EntrySource,
    settings: &CompactionSettings,
    prune: &PruneConfig,
    templates: &PromptTemplates,
    compaction_plan: Option<&PreparationPlan>,
) -> Result<CompactionPreviews> {
    let before = estimate_context_tokens(path);
    let compaction = match compaction_plan {
        Some(plan) => compaction_preview_of(path, settings, templates, before, plan)?,
        None => None,
    };
    let all: Vec<usize> = (0..path.len()).collect();
    let plan = plan_prune_in_context(path, &all, prune);
    let after_prune = before - plan.tokens_saved as f64;
    // Nothing pruned: the pruned branch is the branch, and its compaction the one above.
    let then = if plan.candidates.is_empty() {
        compaction.clone()
    } else {
        let pruned = PrunedView::new(path, &plan);
        compaction_preview(&pruned as &dyn EntrySource, settings, templates, after_prune)?
    };
    let with_prune = PruneCompactionPreview {
        pruned_count: plan.candidates.len(),
        prune_tokens_saved: plan.tokens_saved,
        context_tokens_after_prune: after_prune,
        context_tokens_after: then.as_ref().map_or(after_prune, |c| c.context_tokens_after),
        compaction: then,
    };
    Ok(CompactionPreviews { compaction, with_prune })
}
