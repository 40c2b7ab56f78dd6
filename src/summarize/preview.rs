//! Previews with the outcome: the context size a compaction would leave, alone and after the
//! prune that automatic compaction runs first, decided from entry metadata without a model call.
//! The summary is budgeted at its requests' `maxTokens` (SPEC §9), composed as [`compose_parts`]
//! composes it, with the file-operation blocks rendered by the installed template. Figures in
//! [`crate::plan::preview`].

use crate::context::plan_prune_in_context;
use crate::entry::{EntryKind, EntryMeta, EntrySource};
use crate::error::Result;
use crate::js::utf16_len;
use crate::plan::file_ops::FileOps;
use crate::plan::overflow::estimate_built_context_tokens;
use crate::plan::prepare::{plan_compaction, reference_preparation_parts, CompactionSettings, PreparationPlan};
use crate::plan::preview::{CompactionPreview, CompactionPreviews, PruneCompactionPreview};
use crate::plan::prune::{PruneConfig, PrunePlan};
use crate::prompt::templates::{format_file_blocks, PromptTemplates};
use crate::summarize::{append_part, compose_parts, history_max_tokens, turn_prefix_max_tokens};
use serde_json::Value;
use std::borrow::Cow;

/// A path whose pruned tool outputs (by index) count as their notices: the branch as the
/// compaction after a prune would see it.
struct PrunedView<'a, S: EntrySource + ?Sized> {
    source: &'a S,
    /// Per index of `source`: where its pruned metadata is in `metas`, or `u32::MAX`.
    slots: Vec<u32>,
    metas: Vec<EntryMeta>,
}

impl<'a, S: EntrySource + ?Sized> PrunedView<'a, S> {
    fn new(source: &'a S, prune: &PrunePlan) -> Self {
        let mut slots = vec![u32::MAX; source.len()];
        let mut metas = Vec::with_capacity(prune.candidates.len());
        for c in &prune.candidates {
            let mut meta = source.meta(c.index).clone();
            if let Some(m) = meta.message.as_mut() {
                m.tokens = utf16_len(&c.notice).div_ceil(4);
                m.pruned = true;
            }
            if let Some(slot) = slots.get_mut(c.index) {
                *slot = metas.len() as u32;
                metas.push(meta);
            }
        }
        Self { source, slots, metas }
    }
}

impl<S: EntrySource + ?Sized> EntrySource for PrunedView<'_, S> {
    fn len(&self) -> usize {
        self.source.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        match self.slots.get(i).and_then(|&k| self.metas.get(k as usize)) {
            Some(meta) => meta,
            None => self.source.meta(i),
        }
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

/// The estimated tokens of the summary a compaction of `path` by `plan` would write (SPEC §9,
/// §12.10), `None` when it would summarize nothing (SPEC §12.2): composed from
/// `previous_summary` and the model's answers and followed by the file blocks of `file_ops`
/// (those of the plan's [`reference_preparation_parts`]) as `compact` does, each answer standing
/// in as `maxTokens · 4` characters (the estimate's `maxTokens` tokens). Counted without
/// building those characters: each answer is written as 4 characters (1 token) and the other
/// `maxTokens - 1` tokens are added, which is the same `ceil(chars / 4)`. Errors: the
/// file-operations template fails to render.
pub fn summary_tokens(
    path: &dyn EntrySource,
    plan: &PreparationPlan,
    previous_summary: Option<&str>,
    file_ops: &FileOps,
    settings: &CompactionSettings,
    templates: &PromptTemplates,
) -> Result<Option<u64>> {
    let cut = plan.cut_point;
    let any = |from: usize, to: usize| (from..to).any(|i| has_message(path.meta(i)));
    let (history, prefix) = if cut.is_split_turn {
        let turn = cut.turn_start_index as usize;
        (any(plan.boundary_start, turn), any(turn, cut.first_kept_entry_index))
    } else {
        (any(plan.boundary_start, cut.first_kept_entry_index), false)
    };
    if !history && !prefix {
        return Ok(None);
    }
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
    let history = history.then(|| answer(history_max_tokens(reserve)));
    let prefix = prefix.then(|| answer(turn_prefix_max_tokens(reserve)));
    let composed = compose_parts(previous_summary, history, prefix);
    let lists = file_ops.file_lists();
    let blocks = format_file_blocks(templates, &lists.read_files, &lists.modified_files)?;
    Ok(Some(utf16_len(&append_part(composed, &blocks)).div_ceil(4).saturating_add(more)))
}

/// The preview of a compaction of `path` (root→leaf) whose context is `before` tokens now;
/// `None` when there is nothing to compact (SPEC §5, §12.2). Errors: the file-operations
/// template fails to render.
pub fn compaction_preview(
    path: &dyn EntrySource,
    settings: &CompactionSettings,
    templates: &PromptTemplates,
    before: f64,
) -> Result<Option<CompactionPreview>> {
    match plan_compaction(path, settings) {
        Some(plan) => compaction_preview_of(path, settings, templates, before, &plan, None),
        None => Ok(None),
    }
}

/// [`compaction_preview`] of the plan [`plan_compaction`] made for `path` and `settings`.
/// `known`: the [`summary_tokens`] of that plan when the caller has them (the preview's
/// compaction is then not read again); `Some(None)`: nothing to summarize.
fn compaction_preview_of(
    path: &dyn EntrySource,
    settings: &CompactionSettings,
    templates: &PromptTemplates,
    before: f64,
    plan: &PreparationPlan,
    known: Option<Option<u64>>,
) -> Result<Option<CompactionPreview>> {
    let summary = match known {
        Some(summary) => summary,
        None => {
            // Only the file operations and the previous summary: the messages are not wanted.
            let Some(parts) = reference_preparation_parts(path, plan, |_| None::<()>) else { return Ok(None) };
            summary_tokens(path, plan, parts.previous_summary.as_deref(), &parts.file_ops, settings, templates)?
        }
    };
    let Some(summary_tokens) = summary else { return Ok(None) };
    let cut = plan.cut_point.first_kept_entry_index;
    let tokens = |from: usize, to: usize| (from..to).map(|i| path.message_of_tokens(i)).sum::<u64>();
    let previous_summary =
        if plan.prev_compaction_index >= 0 { path.summary_tokens(plan.prev_compaction_index as usize) } else { 0 };
    let summarized_tokens = tokens(plan.boundary_start, cut) + previous_summary;
    let kept_tokens = tokens(cut, plan.boundary_end);
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
/// estimates, all on one basis: the context size before is the estimate of the built context
/// ([`estimate_built_context_tokens`], no provider usage), the one `compact` reports as
/// `contextTokensBefore` and compares with `contextTokensAfter` (SPEC §13.5, §13.7). Errors:
/// the file-operations template fails to render.
///
/// `path` is read through `dyn`: the previews are compiled once for every entry source and for
/// the pruned view of it (a static source type would compile them four times over).
pub fn compaction_previews(
    path: &dyn EntrySource,
    settings: &CompactionSettings,
    prune: &PruneConfig,
    templates: &PromptTemplates,
) -> Result<CompactionPreviews> {
    compaction_previews_of(path, settings, prune, templates, plan_compaction(path, settings).as_ref(), Known::default())
}

/// What a caller of [`compaction_previews_of`] already has of the previews' parts; each `None`
/// is computed there.
#[derive(Debug, Default)]
pub struct Known {
    /// The [`summary_tokens`] of the compaction plan given (`Some(None)`: it writes no summary).
    pub summary_tokens: Option<Option<u64>>,
    /// The prune with the previews' `prune` config of the outputs the model still sees: what
    /// [`plan_prune_in_context`] of the whole path gives, indices into the path.
    pub prune_plan: Option<PrunePlan>,
    /// The estimate of the path's built context ([`estimate_built_context_tokens`]).
    pub context_tokens: Option<f64>,
}

/// [`compaction_previews`] with the [`plan_compaction`] of `path` and `settings` already made
/// (`None`: there is none), for a caller that made it for the preparation itself, and the
/// parts of the previews it already has (`known`).
pub fn compaction_previews_of(
    path: &dyn EntrySource,
    settings: &CompactionSettings,
    prune: &PruneConfig,
    templates: &PromptTemplates,
    compaction_plan: Option<&PreparationPlan>,
    known: Known,
) -> Result<CompactionPreviews> {
    let Known { summary_tokens: known, prune_plan, context_tokens } = known;
    // The basis of `compact`'s figures (SPEC §13.5): a provider's usage count is of the context
    // the provider saw, not of the one built here, and the summarized tokens are estimates.
    let before = context_tokens.unwrap_or_else(|| estimate_built_context_tokens(path));
    let compaction = match compaction_plan {
        Some(plan) => compaction_preview_of(path, settings, templates, before, plan, known)?,
        None => None,
    };
    let plan = prune_plan.unwrap_or_else(|| plan_prune_in_context(path, &(0..path.len()).collect::<Vec<_>>(), prune));
    let after_prune = before - plan.tokens_saved as f64;
    // Nothing pruned: the pruned branch is the branch, and its compaction the one above.
    let then = if plan.candidates.is_empty() {
        compaction.clone()
    } else {
        let pruned = PrunedView::new(path, &plan);
        match plan_compaction(&pruned as &dyn EntrySource, settings) {
            Some(pruned_plan) => {
                // Pruning changes token counts only: a compaction of the pruned branch that
                // summarizes the same entries writes the same summary.
                let same = compaction_plan.is_some_and(|p| {
                    (p.boundary_start, p.boundary_end, p.prev_compaction_index, p.cut_point)
                        == (
                            pruned_plan.boundary_start,
                            pruned_plan.boundary_end,
                            pruned_plan.prev_compaction_index,
                            pruned_plan.cut_point,
                        )
                });
                let known = same.then(|| compaction.as_ref().map(|c| c.summary_tokens));
                compaction_preview_of(&pruned, settings, templates, after_prune, &pruned_plan, known)?
            }
            None => None,
        }
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
