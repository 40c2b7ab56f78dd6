//! Session context: what the model sees next, rebuilt from the branch ending at the leaf.
//! SPEC §6; the provider-valid form of it ([`repair`]) SPEC §13.1.

mod cache;
pub mod convert;
pub mod repair;

pub use cache::ContextCache;

use crate::entry::message_of::{branch_summary_message_of, compaction_summary_message_of, custom_message_of};
use crate::entry::EntryKind;
use crate::entry::EntrySource;
use crate::entry::MessageMeta;
use crate::tree::{TreeIndex, ValidationIssue};
use repair::{plan_repair, ContextRepair, RepairPlan, RepairStep};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Which leaf to build the context for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LeafSelector {
    /// No leaf given (`undefined`): the last entry in array order.
    #[default]
    Last,
    /// `null`: navigated before the first entry; the context is empty.
    BeforeFirst,
    /// This id; an unknown id or `""` falls back to the last entry.
    Id(String),
}

/// The context of a branch (SPEC §6): the agent messages in order plus the settings in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// Agent messages (before `convertToLlm`).
    #[cfg_attr(feature = "tsify", tsify(type = "AgentMessage[]"))]
    pub messages: Vec<Value>,
    /// The last `thinking_level_change` on the path (default `"off"`).
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub thinking_level: Value,
    /// Model per role (`"default"`, `"smol"`, …) as `provider/id`.
    #[cfg_attr(feature = "tsify", tsify(type = "Record<string, string>"))]
    pub models: Map<String, Value>,
    /// Distinct rule names from `ttsr_injection` entries, first-seen order.
    pub injected_ttsr_rules: Vec<String>,
    /// The last `mode_change` on the path (default `"none"`).
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub mode: Value,
    /// `data` of the last `mode_change`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub mode_data: Option<Value>,
    /// What the provider-valid form of these messages repairs (SPEC §13.1): `messages` here are
    /// as stored (the reference's context); the outputs meant for a model (the handle's
    /// `buildSessionContextJson` and `buildLlmMessages`, the overflow-retry context) apply these
    /// repairs. Empty for a session without interrupted turns or misplaced results.
    pub repairs: Vec<ContextRepair>,
}

impl SessionContext {
    /// The context of an empty branch.
    pub fn empty() -> Self {
        Self {
            messages: Vec::new(),
            thinking_level: Value::from("off"),
            models: Map::new(),
            injected_ttsr_rules: Vec::new(),
            mode: Value::from("none"),
            mode_data: None,
            repairs: Vec::new(),
        }
    }
}

/// Resolves a [`LeafSelector`] to an index (`None`: empty context).
pub fn resolve_leaf<S: EntrySource + ?Sized>(entries: &S, index: &TreeIndex, leaf: &LeafSelector) -> Option<usize> {
    let last = entries.len().checked_sub(1);
    match leaf {
        LeafSelector::BeforeFirst => None,
        LeafSelector::Last => last,
        LeafSelector::Id(id) => index.get(id).or(last),
    }
}

/// Builds the context of the branch ending at `leaf` (SPEC §6): settings along the whole
/// path, then the messages (with a compaction on the path: its summary, the kept entries from
/// `firstKeptEntryId` up to it, then everything after it).
pub fn build_session_context<S: EntrySource + ?Sized>(entries: &S, leaf: &LeafSelector) -> SessionContext {
    session_context_plan(entries, leaf).materialize(entries)
}

/// The decision of [`build_session_context`] without materializing any message: which entry
/// gives each message ([`ContextItem`]) and the settings, with `settings.repairs` filled in
/// (SPEC §6, §13.1). A host that holds the entries itself (the wasm binding, over the caller's
/// JavaScript objects) hands back its own message objects for the [`ContextItem::Message`]
/// items and builds only the derived ones ([`ContextItem::materialize`]).
pub fn session_context_plan<S: EntrySource + ?Sized>(entries: &S, leaf: &LeafSelector) -> ContextPlan {
    let index = TreeIndex::new(entries);
    let Some(leaf_index) = resolve_leaf(entries, &index, leaf) else {
        return ContextPlan { items: Vec::new(), settings: SessionContext::empty() };
    };
    let path = index.branch_to(entries, leaf_index);
    let mut plan = plan_context(entries, &path);
    plan.settings.repairs = plan.repair_plan(entries).repairs;
    plan
}

/// One message of a built context, by the entry that produces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextItem {
    /// The `message` of a `message` entry, unchanged.
    Message(usize),
    /// The `custom` message of a `custom_message` entry.
    Custom(usize),
    /// The `branchSummary` message of a `branch_summary` entry.
    BranchSummary(usize),
    /// The `compactionSummary` message of a `compaction` entry.
    CompactionSummary(usize),
}

impl ContextItem {
    /// True for the `message` of a `message` entry (the entry's own message object), false
    /// for the messages derived from an entry (summaries, custom messages).
    pub fn is_entry_message(self) -> bool {
        matches!(self, Self::Message(_))
    }

    /// The entry index behind this message.
    pub fn index(self) -> usize {
        match self {
            Self::Message(i) | Self::Custom(i) | Self::BranchSummary(i) | Self::CompactionSummary(i) => i,
        }
    }

    /// The message as JSON.
    pub fn materialize<S: EntrySource + ?Sized>(self, entries: &S) -> Option<Value> {
        let entry = entries.entry(self.index());
        match self {
            Self::Message(_) => crate::entry::message_of::entry_message(&entry).cloned(),
            Self::Custom(_) => Some(custom_message_of(&entry)),
            Self::BranchSummary(_) => Some(branch_summary_message_of(&entry)),
            Self::CompactionSummary(_) => Some(compaction_summary_message_of(&entry)),
        }
    }
}

/// The messages of a context as entry references, plus its settings: the decision of
/// [`build_context_for_path`] without materializing any message.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextPlan {
    /// The messages, in order.
    pub items: Vec<ContextItem>,
    /// The context with its settings filled in and `messages` left empty.
    pub settings: SessionContext,
}

impl ContextPlan {
    /// The provider-valid order of these messages (SPEC §13.1), decided from metadata.
    pub fn repair_plan<S: EntrySource + ?Sized>(&self, entries: &S) -> RepairPlan {
        repair_items(entries, &self.items)
    }

    /// The context: [`ContextPlan::settings`] with every item's message materialized, in order
    /// (items without a message, a `message` entry without `message`, are left out).
    pub fn materialize<S: EntrySource + ?Sized>(self, entries: &S) -> SessionContext {
        let mut ctx = self.settings;
        ctx.messages = self.items.iter().filter_map(|it| it.materialize(entries)).collect();
        ctx
    }
}

/// The message metadata of a context item (`None` for derived messages: summaries, custom).
fn item_meta<S: EntrySource + ?Sized>(entries: &S, item: ContextItem) -> Option<&MessageMeta> {
    match item {
        ContextItem::Message(i) => entries.meta(i).message.as_ref(),
        _ => None,
    }
}

/// [`plan_repair`] over context items; the report names each item's entry.
pub fn repair_items<S: EntrySource + ?Sized>(entries: &S, items: &[ContextItem]) -> RepairPlan {
    let metas: Vec<Option<&MessageMeta>> = items.iter().map(|&it| item_meta(entries, it)).collect();
    plan_repair(&metas, &|k| entries.meta(items[k].index()).id.clone())
}

/// Builds the context of an already resolved root-first `path` of indices into `entries`
/// (SPEC §6): messages as stored, plus the repairs their provider-valid form needs (§13.1).
pub fn build_context_for_path<S: EntrySource + ?Sized>(entries: &S, path: &[usize]) -> SessionContext {
    let plan = plan_context(entries, path);
    let repairs = plan.repair_plan(entries).repairs;
    let mut ctx = plan.settings;
    ctx.messages = plan.items.iter().filter_map(|it| it.materialize(entries)).collect();
    ctx.repairs = repairs;
    ctx
}

/// The pruning decision (SPEC §7, §13.6) for the context of a root-first `path`: only the
/// `message` entries the model still sees (the kept region of the latest compaction and
/// everything after it) are considered; outputs already summarized away are not sent, so
/// pruning them would lose history and save nothing. Indices are indices into `entries`.
pub fn plan_prune_in_context<S: EntrySource + ?Sized>(
    entries: &S,
    path: &[usize],
    config: &crate::plan::prune::PruneConfig,
) -> crate::plan::prune::PrunePlan {
    plan_prune_of_items(entries, &plan_context(entries, path).items, config)
}

/// [`plan_prune_in_context`] of a context already decided: `items` are its messages
/// ([`ContextPlan::items`]); only the `message` entries among them are considered. Indices are
/// indices into `entries`. SPEC §7, §13.6.
pub fn plan_prune_of_items<S: EntrySource + ?Sized>(
    entries: &S,
    items: &[ContextItem],
    config: &crate::plan::prune::PruneConfig,
) -> crate::plan::prune::PrunePlan {
    let visible: Vec<usize> = items
        .iter()
        .filter_map(|item| match item {
            ContextItem::Message(i) => Some(*i),
            _ => None,
        })
        .collect();
    let mut plan = crate::plan::prune::plan_prune(&crate::entry::Selection::new(entries, &visible), config);
    for c in &mut plan.candidates {
        c.index = visible[c.index];
        if let Some(by) = c.superseded_by.as_mut() {
            by.index = visible[by.index];
        }
    }
    plan
}

/// The messages of `items` in their provider-valid form (SPEC §13.1) and the repairs made:
/// results right after their calls, messages stored inside an exchange after its results,
/// synthetic error results for calls without one, orphan and repeated results left out.
pub fn provider_messages<S: EntrySource + ?Sized>(
    entries: &S,
    items: &[ContextItem],
) -> (Vec<Value>, Vec<ContextRepair>) {
    let plan = repair_items(entries, items);
    let messages = plan
        .steps
        .iter()
        .filter_map(|step| match *step {
            RepairStep::Message(k) => items[k].materialize(entries).map(|v| plan.with_ids(k, v)),
            RepairStep::MissingResult { message, call } => items[message]
                .materialize(entries)
                .map(|a| plan.synthetic(&a, item_meta(entries, items[message]), message, call)),
        })
        .collect();
    (messages, plan.repairs)
}

/// The context of a root-first `path` with its messages in provider-valid form (SPEC §6,
/// §13.1): what a model may be sent. `repairs` lists what was changed.
pub fn build_provider_context_for_path<S: EntrySource + ?Sized>(entries: &S, path: &[usize]) -> SessionContext {
    let plan = plan_context(entries, path);
    let (messages, repairs) = provider_messages(entries, &plan.items);
    let mut ctx = plan.settings;
    ctx.messages = messages;
    ctx.repairs = repairs;
    ctx
}

/// A validation report with the repairs the context of one branch needs: what `validate()`
/// and `validateSession()` return (`{issues, repairs}`). SPEC §1, §13.1.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ContextValidation {
    /// The structural issues ([`crate::tree::validate_at`]), by entry index.
    pub issues: Vec<ValidationIssue>,
    /// What the provider-valid context of the branch ending at the leaf repairs.
    pub repairs: Vec<ContextRepair>,
}

/// Validates `entries` ([`crate::tree::validate_at`], with `leaf` checked like a tree leaf) and
/// adds the repairs the context of the branch ending at `leaf` needs (none for `None`, before
/// the first entry). `lines`: 1-based source lines for the report. SPEC §1, §13.1.
pub fn validate_context<S: EntrySource + ?Sized>(
    entries: &S,
    lines: Option<&[usize]>,
    leaf: Option<usize>,
) -> ContextValidation {
    let report = crate::tree::validate_at(entries, lines, leaf);
    let repairs = match leaf {
        Some(l) => {
            let path = TreeIndex::new(entries).branch_to(entries, l);
            plan_context(entries, &path).repair_plan(entries).repairs
        }
        None => Vec::new(),
    };
    ContextValidation { issues: report.issues, repairs }
}

/// Decides the context of a root-first `path` (SPEC §6) without materializing messages.
pub fn plan_context<S: EntrySource + ?Sized>(entries: &S, path: &[usize]) -> ContextPlan {
    let mut fold = ContextFold::default();
    fold.extend(entries, path);
    fold.into_plan()
}

/// The decision of [`plan_context`] made one path entry at a time, so that a host whose branch
/// only grows at its end (an entry appended after each turn) extends it in O(new entries) plus
/// the work of a new compaction ([`ContextFold::extend`]); [`plan_context`] is one fold over the
/// whole path. SPEC §6.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextFold {
    /// The settings in force after the entries folded (`messages` and `repairs` left empty).
    settings: Option<SessionContext>,
    /// Rule names of `ttsr_injection` entries seen so far.
    seen_rules: HashSet<String>,
    /// Path position of the latest compaction folded.
    compaction_pos: Option<usize>,
    /// Path position where the kept region of that compaction starts: its first kept entry, or
    /// one past the compaction when that entry is not on the path before it (the position
    /// [`crate::plan::prepare::kept_start`] gives).
    kept_from: usize,
    /// The messages of the context so far: valid for `compaction_pos` and the first `folded`
    /// path entries.
    items: Vec<ContextItem>,
    /// Path entries folded.
    folded: usize,
}

impl ContextFold {
    /// Path entries folded so far (the prefix of the path this fold decided).
    pub fn len(&self) -> usize {
        self.folded
    }

    /// True before the first entry is folded.
    pub fn is_empty(&self) -> bool {
        self.folded == 0
    }

    /// The latest compaction folded: its path position and where its kept region starts (the
    /// position [`crate::plan::prepare::kept_start`] gives for it), or `None` without one.
    /// Everything a compaction decision reads lies from the smaller of the two on (SPEC §5,
    /// §12.1).
    pub fn latest_compaction(&self) -> Option<(usize, usize)> {
        self.compaction_pos.map(|c| (c, self.kept_from))
    }

    /// Folds `path[self.len()..]` in (`path` must start with the path folded before): the
    /// settings of each entry, its message after the latest compaction; a compaction among them
    /// starts the messages again (its summary, the entries it kept, SPEC §6), which costs one
    /// search for its `firstKeptEntryId` over the path before it.
    pub fn extend<S: EntrySource + ?Sized>(&mut self, entries: &S, path: &[usize]) {
        let from = self.folded.min(path.len());
        let ctx = self.settings.get_or_insert_with(SessionContext::empty);
        let mut new_compaction = None;
        for (pos, &i) in path.iter().enumerate().skip(from) {
            let meta = entries.meta(i);
            match meta.kind {
                EntryKind::Compaction => new_compaction = Some(pos),
                EntryKind::Message => {
                    if let Some(pm) = meta.message.as_ref().and_then(|m| m.provider_model.as_ref()) {
                        // Most assistant messages repeat the model in force: no new value then.
                        if ctx.models.get("default").and_then(Value::as_str) != Some(pm.as_str()) {
                            ctx.models.insert("default".into(), Value::from(pm.clone()));
                        }
                    }
                }
                _ => {}
            }
            let Some(e) = meta.settings.as_deref() else { continue };
            match meta.kind {
                EntryKind::ThinkingLevelChange => {
                    ctx.thinking_level = e.get("thinkingLevel").cloned().unwrap_or(Value::Null)
                }
                EntryKind::ModelChange if crate::js::truthy(e.get("model")) => {
                    let role = e.get("role").and_then(Value::as_str).filter(|r| !r.is_empty()).unwrap_or("default");
                    ctx.models.insert(role.to_string(), e["model"].clone());
                }
                EntryKind::ModeChange => {
                    ctx.mode = e.get("mode").cloned().unwrap_or(Value::Null);
                    ctx.mode_data = e.get("data").cloned();
                }
                EntryKind::TtsrInjection => {
                    if let Some(rules) = e.get("injectedRules").and_then(Value::as_array) {
                        for r in rules.iter().filter_map(Value::as_str) {
                            if self.seen_rules.insert(r.to_string()) {
                                ctx.injected_ttsr_rules.push(r.to_string());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let push = |items: &mut Vec<ContextItem>, i: usize| {
            let meta = entries.meta(i);
            match meta.kind {
                EntryKind::Message => items.push(ContextItem::Message(i)),
                EntryKind::CustomMessage => items.push(ContextItem::Custom(i)),
                EntryKind::BranchSummary if meta.summary_len > 0 => items.push(ContextItem::BranchSummary(i)),
                _ => {}
            }
        };
        let tail_from = match new_compaction {
            Some(cpos) => {
                self.compaction_pos = Some(cpos);
                self.items.clear();
                self.items.push(ContextItem::CompactionSummary(path[cpos]));
                let first_kept = entries.meta(path[cpos]).first_kept_entry_id.as_deref();
                let start = first_kept
                    .and_then(|id| path[..cpos].iter().position(|&i| entries.meta(i).id.as_deref() == Some(id)));
                self.kept_from = start.unwrap_or(cpos + 1);
                if let Some(start) = start {
                    for &i in &path[start..cpos] {
                        push(&mut self.items, i);
                    }
                }
                cpos + 1
            }
            None => from,
        };
        for &i in &path[tail_from..] {
            push(&mut self.items, i);
        }
        self.folded = path.len();
    }

    /// [`ContextFold::plan`], consuming the fold.
    pub fn into_plan(self) -> ContextPlan {
        ContextPlan { items: self.items, settings: self.settings.unwrap_or_else(SessionContext::empty) }
    }

    /// The messages of the context decided so far (what [`ContextFold::plan`] copies).
    pub fn items(&self) -> &[ContextItem] {
        &self.items
    }

    /// The plan of the path folded so far.
    pub fn plan(&self) -> ContextPlan {
        // The settings field by field: `messages` and `repairs` are always empty here.
        let settings = match &self.settings {
            Some(c) => SessionContext {
                messages: Vec::new(),
                thinking_level: c.thinking_level.clone(),
                models: c.models.clone(),
                injected_ttsr_rules: c.injected_ttsr_rules.clone(),
                mode: c.mode.clone(),
                mode_data: c.mode_data.clone(),
                repairs: Vec::new(),
            },
            None => SessionContext::empty(),
        };
        ContextPlan { items: self.items.clone(), settings }
    }
}
