//! The session handle: a whole session kept as raw JSON lines plus per-entry metadata, so that
//! loading costs one scan, appending an entry costs O(that entry), and planning reads only
//! metadata. Entries are parsed into JSON values only when they are returned.
//! SPEC §1 (model), §5 (plan), §6 (context), §7 (prune), §10 (tree).

use crate::context::repair::{ContextRepair, RepairPlan, RepairStep};
use crate::context::{ContextFold, ContextItem, ContextPlan, ContextValidation, SessionContext};
use crate::entry::{EntryKind, EntryMeta};
use crate::entry::{EntrySource, Selection};
use crate::error::{Error, Result};
use crate::io::RandomIds;
use crate::js::{format_iso_timestamp, utf16_len};
use crate::plan::prepare::{
    plan_compaction, preparation_from_plan, CompactionPreparation, CompactionSettings, MessageRef, NothingToCompact,
    PreparationPlan, PreviousCompaction,
};
use crate::plan::prune::{
    pruned_entry, pruned_entry_json, push_pruned_entry, CallArguments, PruneConfig, PrunePlan, SplicedSpans,
};
use crate::tree::TreeIndex;
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The source of [`Revision`] numbers (one counter for every session of the process).
static NEXT_REVISION: AtomicU64 = AtomicU64::new(1);

/// What the handle read once from its entries' texts and keeps, by entry index: the tool-call
/// arguments of [`EntrySource::call_arguments`], and where [`SessionTree::message_text`] lies
/// (byte range in the entry's text). Dropped whenever an entry changes; a clone starts empty.
#[derive(Default)]
struct TextCache {
    call_arguments: std::sync::Mutex<std::collections::HashMap<usize, std::sync::Arc<[CallArguments]>>>,
    message_spans: std::sync::Mutex<std::collections::HashMap<usize, Option<(usize, usize)>>>,
}

impl Clone for TextCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for TextCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextCache")
    }
}

/// A number naming one state of a session's entry indices ([`SessionTree::revision`]): a new
/// one is taken whenever entries are removed, and for every new session and every clone (so two
/// sessions never share one).
#[derive(Debug)]
struct Revision(u64);

impl Revision {
    fn fresh() -> Self {
        Self(NEXT_REVISION.fetch_add(1, Ordering::Relaxed))
    }
}

impl Clone for Revision {
    /// A clone is another session: it gets its own number.
    fn clone(&self) -> Self {
        Self::fresh()
    }
}

/// A generous estimate of what the handle builds per entry beyond the scan's metadata (text
/// reference, line, id index node and key, branch and fold), in machine words.
const HANDLE_WORDS_PER_ENTRY: usize = 24;

/// Checks that the handle's structures for `entries` entries fit in the memory left, so that a
/// load too large for it (a WebAssembly memory is 4 GiB in all) is an error, not an allocation
/// failure that would abort (a panic in wasm kills the module for the whole page). The block
/// is freed at once; the handle's allocations then reuse the memory it made room for.
fn room_for_entries(entries: usize) -> Result<()> {
    let bytes = entries.saturating_mul(HANDLE_WORDS_PER_ENTRY * std::mem::size_of::<usize>());
    let mut block = Vec::<u8>::new();
    block.try_reserve_exact(bytes).map_err(|_| crate::io::too_large(entries))?;
    std::hint::black_box(&mut block);
    Ok(())
}

/// Where an entry's JSON text lives.
#[derive(Debug, Clone)]
enum Raw {
    /// A range of the loaded buffer.
    Span(Range<usize>),
    /// Text owned by the entry (appended or rewritten entries).
    Owned(Box<str>),
    /// A range of a text shared by the entries one prune rewrote ([`PrunedLines`] shares it).
    Batch(Arc<String>, Range<usize>),
}

/// The new JSON texts of the entries a prune of the handle changed
/// ([`SessionTree::prune_tool_outputs`]), in the plan's order, as one JSONL text: each line the
/// entry's text as the handle now stores it (what [`SessionTree::to_jsonl`] writes for it),
/// ended by `\n`. SPEC §7.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrunedLines {
    /// Every line, each ended by `\n` (shared with the handle's entries when it holds the
    /// lines of one prune as they were written).
    jsonl: Arc<String>,
    /// Where each line's text ends in `jsonl` (its `\n` there).
    ends: Vec<usize>,
}

impl PrunedLines {
    /// How many entries changed.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `k`-th changed entry's text (without its line end), `None` past the end.
    pub fn get(&self, k: usize) -> Option<&str> {
        let end = *self.ends.get(k)?;
        let start = if k == 0 { 0 } else { self.ends[k - 1] + 1 };
        self.jsonl.get(start..end)
    }

    /// The changed entries' texts in order (without line ends).
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|k| self.get(k))
    }

    /// Every line, each ended by `\n` (`""` when nothing changed).
    pub fn jsonl(&self) -> &str {
        &self.jsonl
    }
}

/// A session: header, entries (raw JSON + metadata), id index, and the current leaf.
#[derive(Debug, Clone)]
pub struct SessionTree {
    header: Option<Value>,
    /// The header's text as loaded (`None`: written from `header`).
    header_raw: Option<Range<usize>>,
    /// The lines kept as written (SPEC §13.3), as runs of consecutive lines in `base`
    /// ([`crate::io::OpaqueSpan`]: one per run, however many lines it has), by position, where
    /// position counts the records (header included) written before the run.
    opaque: Vec<crate::io::OpaqueSpan>,
    base: Vec<u8>,
    raws: Vec<Raw>,
    metas: Vec<EntryMeta>,
    /// 1-based source line of each entry (0 for appended entries).
    lines: Vec<usize>,
    /// Id index, children and labels, updated on append.
    index: TreeIndex,
    /// Current leaf (`None`: before the first entry).
    leaf: Option<usize>,
    /// Root-first path to the leaf, kept up to date on append.
    branch: Vec<usize>,
    /// Format version of the loaded input (`None`: built from values, no valid header, or a
    /// `version` that is no number).
    source_version: Option<f64>,
    /// 1-based source line of the header (`None`: built from values, or no header).
    header_line: Option<usize>,
    /// The input was migrated to the current format on load.
    migrated: bool,
    /// The line end the session is saved with: the one of the loaded file's first line
    /// (SPEC §13.3).
    line_end: crate::io::LineEnd,
    /// The context decision of `branch` (SPEC §6), kept up to date with it: extended on
    /// append, folded again when the branch or an entry on it changes.
    fold: ContextFold,
    /// See [`SessionTree::revision`].
    revision: Revision,
    /// What was read once from the entries' texts (tool-call arguments, message spans).
    texts: TextCache,
    /// Entries replaced in place since the revision was taken: how many times each was (see
    /// [`SessionTree::entry_version`]), by entry index (empty until one is; entries past its
    /// end were not).
    replaced: Vec<u32>,
}

impl EntrySource for SessionTree {
    fn len(&self) -> usize {
        self.metas.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        &self.metas[i]
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        Cow::Owned(crate::io::parse_line_value(self.raw(i).as_bytes()).unwrap_or(Value::Null))
    }
    fn entry_text(&self, i: usize) -> Option<&str> {
        Some(self.raw(i))
    }
    /// From the stored text ([`SessionTree::message_text`]): a `null` message is none either.
    fn has_message(&self, i: usize) -> bool {
        self.metas[i].message_span.is_some() || self.message_text(i).is_some()
    }
    fn entry_bytes(&self, i: usize) -> Option<&[u8]> {
        Some(self.raw_bytes(i))
    }
    /// Read once per entry and kept until the entry changes.
    fn call_arguments(&self, i: usize) -> Option<std::sync::Arc<[CallArguments]>> {
        let kept = self.texts.call_arguments.lock().unwrap_or_else(|e| e.into_inner()).get(&i).cloned();
        if kept.is_some() {
            return kept;
        }
        let read = crate::plan::prune::call_arguments(self, i);
        self.texts.call_arguments.lock().unwrap_or_else(|e| e.into_inner()).insert(i, read.clone());
        Some(read)
    }
}

impl SessionTree {
    /// An empty session with an optional header.
    pub fn new(header: Option<Value>) -> Self {
        Self {
            header,
            header_raw: None,
            opaque: Vec::new(),
            base: Vec::new(),
            raws: Vec::new(),
            metas: Vec::new(),
            lines: Vec::new(),
            index: TreeIndex::default(),
            leaf: None,
            branch: Vec::new(),
            source_version: None,
            header_line: None,
            migrated: false,
            line_end: crate::io::LineEnd::Lf,
            fold: ContextFold::default(),
            revision: Revision::fresh(),
            texts: TextCache::default(),
            replaced: Vec::new(),
        }
    }

    /// Builds a session over `base`, whose entry lines are the given byte ranges (each a complete
    /// JSON object, already validated by the loader), with their 1-based line numbers. The leaf
    /// is the last entry.
    pub fn from_spans(header: Option<Value>, base: Vec<u8>, spans: Vec<(usize, Range<usize>)>) -> Result<Self> {
        let mut tree = Self::new(header);
        tree.metas.reserve(spans.len());
        for (line, range) in &spans {
            let text = base
                .get(range.clone())
                .ok_or_else(|| Error::Parse { line: *line, reason: "line outside the buffer".into() })?;
            let meta = EntryMeta::from_json(text).map_err(|e| Error::Parse { line: *line, reason: e.to_string() })?;
            tree.metas.push(meta);
        }
        tree.raws = spans.iter().map(|(_, r)| Raw::Span(r.clone())).collect();
        tree.lines = spans.iter().map(|(l, _)| *l).collect();
        tree.line_end = crate::io::LineEnd::of(&base);
        tree.base = base;
        tree.reindex();
        Ok(tree)
    }

    /// Loads a session from JSONL text (SPEC §1): one scan that keeps each line's text and
    /// metadata; v1/v2 files are migrated. Returns the handle and the bad lines (lenient mode;
    /// with `options.strict` the first bad line is an error instead).
    ///
    /// # Errors
    /// In strict mode, the first bad line's error; [`Error::Argument`] (`E_INVALID_ARGUMENT`)
    /// when the records do not fit in the memory left ([`crate::io::too_large`]).
    pub fn from_jsonl(text: String, options: &crate::io::ParseOptions) -> Result<(Self, Vec<crate::io::LineError>)> {
        let raw = crate::io::scan_session_str(&text, options)?;
        room_for_entries(raw.entries.len())?;
        Ok(Self::from_raw_session(raw, text.into_bytes()))
    }

    /// Loads a session from JSONL bytes (see [`SessionTree::from_jsonl`]). Invalid UTF-8 is
    /// reported per line like any other bad line.
    ///
    /// # Errors
    /// As [`SessionTree::from_jsonl`].
    pub fn from_bytes(bytes: Vec<u8>, options: &crate::io::ParseOptions) -> Result<(Self, Vec<crate::io::LineError>)> {
        let raw = crate::io::scan_session(&bytes, options)?;
        room_for_entries(raw.entries.len())?;
        Ok(Self::from_raw_session(raw, bytes))
    }

    /// Builds the handle from a scan of `input` (see [`crate::io::scan_session`]).
    pub fn from_raw_session(raw: crate::io::RawSession, input: Vec<u8>) -> (Self, Vec<crate::io::LineError>) {
        let line_end = crate::io::LineEnd::of(&input);
        let base = match raw.text {
            Some(t) => t.into_bytes(),
            None => input,
        };
        let mut tree = Self::new(raw.header);
        tree.source_version = raw.source_version;
        tree.migrated = raw.migrated;
        tree.line_end = line_end;
        tree.header_line = raw.header_line.as_ref().filter(|_| tree.header.is_some()).map(|h| h.line);
        tree.header_raw = raw.header_line.filter(|_| tree.header.is_some()).map(|h| h.range);
        tree.opaque = raw.opaque;
        tree.lines = raw.entries.iter().map(|e| e.raw.line).collect();
        tree.raws = raw.entries.iter().map(|e| Raw::Span(e.raw.range.clone())).collect();
        // Collected in place: the metadata stays in the scan's allocation (no second copy of
        // every entry's metadata, and no fresh memory touched for it on a first load).
        tree.metas = raw.entries.into_iter().map(|e| e.meta).collect();
        tree.base = base;
        tree.reindex();
        (tree, raw.errors)
    }

    /// Builds a session from parsed entries (each serialized once to keep its raw text).
    pub fn from_values(header: Option<Value>, entries: &[Value]) -> Self {
        let mut tree = Self::new(header);
        for e in entries {
            tree.metas.push(EntryMeta::from_value(e));
            tree.raws.push(Raw::Owned(e.to_string().into_boxed_str()));
            tree.lines.push(0);
        }
        tree.reindex();
        tree
    }

    fn reindex(&mut self) {
        self.index = TreeIndex::new(&*self);
        self.leaf = self.last_node();
        self.rebuild_branch();
    }

    /// The leaf of a loaded session (SPEC §13.12): the last entry that is a node of the tree —
    /// one with a string `id` that names it, and not a `session` record (a header within the
    /// file). A record after it that is none (a JSON value that is not an object, an entry
    /// without an id, a second header) is kept and saved but cannot be the leaf: the context
    /// would be empty or the next append would start a new root (no id to be its parent) or
    /// fail (`E_NOT_FOUND`: a header is no node). `None` when no entry is a node.
    fn last_node(&self) -> Option<usize> {
        (0..self.metas.len()).rev().find(|&i| {
            let meta = &self.metas[i];
            meta.kind != EntryKind::SessionHeader && meta.id.as_deref().is_some_and(|id| self.index.get(id) == Some(i))
        })
    }

    fn rebuild_branch(&mut self) {
        self.branch = match self.leaf {
            None => Vec::new(),
            Some(l) => self.index.branch_to(&*self, l),
        };
        self.fold = ContextFold::default();
        self.extend_fold();
    }

    /// Folds the branch entries after those folded into [`SessionTree::fold`].
    fn extend_fold(&mut self) {
        let mut fold = std::mem::take(&mut self.fold);
        fold.extend(&*self, &self.branch);
        self.fold = fold;
    }

    /// Entries were removed (later indices moved): a new revision, and what was kept per entry
    /// is dropped.
    fn entries_changed(&mut self) {
        self.revision = Revision::fresh();
        self.texts.call_arguments.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
        self.texts.message_spans.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
        self.replaced.clear();
    }

    /// Entry `i` was replaced in place (same index): its version goes up and what was kept of
    /// its text is dropped.
    fn entry_replaced(&mut self, i: usize) {
        if self.replaced.len() <= i {
            self.replaced.resize(self.metas.len().max(i + 1), 0);
        }
        self.replaced[i] = self.replaced[i].wrapping_add(1);
        // (Most handles keep nothing: no hashing then.)
        let calls = self.texts.call_arguments.get_mut().unwrap_or_else(|e| e.into_inner());
        if !calls.is_empty() {
            calls.remove(&i);
        }
        let spans = self.texts.message_spans.get_mut().unwrap_or_else(|e| e.into_inner());
        if !spans.is_empty() {
            spans.remove(&i);
        }
    }

    /// How many times entry `i` was replaced in place (pruning rewrites entries this way) since
    /// the [`SessionTree::revision`] was taken: a host that keeps something per entry keeps it
    /// while both are unchanged.
    pub fn entry_version(&self, i: usize) -> u32 {
        self.replaced.get(i).copied().unwrap_or(0)
    }

    /// A number that names the current state of the session's entry indices: it changes
    /// whenever entries are removed (a rollback: later indices move), it stays when entries are
    /// appended, replaced in place ([`SessionTree::entry_version`] tells those) or the leaf
    /// moves, and no two sessions (clones included) share one. A host that keeps something per
    /// entry index (the wasm binding keeps the message objects it returned) keeps it while the
    /// revision and the entry's version are unchanged.
    pub fn revision(&self) -> u64 {
        self.revision.0
    }

    /// The raw JSON text of entry `i`.
    pub fn raw(&self, i: usize) -> &str {
        // Spans are records of a UTF-8 buffer (the loader replaces invalid UTF-8).
        self.text_of(&self.raws[i])
    }

    /// The bytes of entry `i`'s raw JSON text, not checked to be UTF-8 (for reading parts of it
    /// whose places are known, [`crate::entry::TextSpan`]).
    fn raw_bytes(&self, i: usize) -> &[u8] {
        match &self.raws[i] {
            Raw::Span(r) => self.base.get(r.clone()).unwrap_or_default(),
            Raw::Owned(s) => s.as_bytes(),
            Raw::Batch(b, r) => b.as_bytes().get(r.clone()).unwrap_or_default(),
        }
    }

    /// The session header, if the session has one.
    pub fn header(&self) -> Option<&Value> {
        self.header.as_ref()
    }

    /// The format version of the loaded input as its header gave it (`version ?? 1`), before
    /// any migration ([`crate::io::HeaderVersion::number`]); `None` for a session built from
    /// values, a file without a valid header, or a `version` that is no JSON number. SPEC §1,
    /// §13.11.
    pub fn source_version(&self) -> Option<f64> {
        self.source_version
    }

    /// Whether the input was migrated to the current format (v1/v2 → v3) on load: its entries
    /// then differ from the file's lines, so the file must be rewritten (not appended to) to
    /// take new entries. SPEC §1.
    pub fn migrated(&self) -> bool {
        self.migrated
    }

    /// Number of entries.
    pub fn entry_count(&self) -> usize {
        self.metas.len()
    }

    /// Index of the entry with this id (the last one for duplicate ids).
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id)
    }

    /// The label of the entry with this id (the last `label` entry for it wins). SPEC §1.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.index.label(id)
    }

    /// The tree index (ids, children, labels).
    pub fn tree_index(&self) -> &TreeIndex {
        &self.index
    }

    /// The entry with this id, parsed.
    pub fn get_entry(&self, id: &str) -> Option<Value> {
        self.index_of(id).map(|i| self.entry(i).into_owned())
    }

    /// 1-based source line of entry `i` (0 when it was appended or built from values).
    pub fn line_of(&self, i: usize) -> usize {
        self.lines.get(i).copied().unwrap_or(0)
    }

    /// The current leaf id (`None` before the first entry or for an entry without id).
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.and_then(|l| self.metas[l].id.as_deref())
    }

    /// Index of the current leaf.
    pub fn leaf_index(&self) -> Option<usize> {
        self.leaf
    }

    /// Moves the leaf to `id` (`None`: before the first entry). Errors with `E_NOT_FOUND` for an
    /// unknown id. SPEC §10.
    pub fn set_leaf(&mut self, id: Option<&str>) -> Result<()> {
        self.leaf = match id {
            None => None,
            Some(id) => Some(self.index_of(id).ok_or_else(|| Error::NotFound { id: id.to_string() })?),
        };
        self.rebuild_branch();
        Ok(())
    }

    /// Root-first indices of the current branch.
    pub fn branch_indices(&self) -> &[usize] {
        &self.branch
    }

    /// Root-first indices of the branch ending at `id` (`None`: the current branch). Unknown
    /// id: `E_NOT_FOUND`.
    pub fn branch_indices_to(&self, id: Option<&str>) -> Result<Cow<'_, [usize]>> {
        match id {
            None => Ok(Cow::Borrowed(&self.branch)),
            Some(id) => {
                let leaf = self.index_of(id).ok_or_else(|| Error::NotFound { id: id.to_string() })?;
                Ok(Cow::Owned(self.index.branch_to(self, leaf)))
            }
        }
    }

    /// Children of entry `i`, in file order.
    pub fn children_of(&self, i: usize) -> &[usize] {
        self.index.children(self, i)
    }

    /// Appends an entry (a JSON object with at least `type` and a string `id` not yet in the
    /// session). A missing `parentId` is set to the current leaf; a `timestamp` is required
    /// only by the format, not checked here. The new entry becomes the leaf. Costs O(entry).
    /// Errors: `E_MISSING_FIELD` (no `type`/`id`, a `label` without `targetId`), `E_DUPLICATE_ID`,
    /// `E_NOT_FOUND` (unknown parent, or a `label` whose `targetId` names no entry),
    /// `E_INVALID_ARGUMENT` (an entry of type `session`: a header, SPEC §13.12),
    /// `E_KEPT_NOT_ON_PATH` (a `compaction` whose `firstKeptEntryId` is absent or names no entry
    /// on its own branch, its parent included: SPEC §13.2; a loaded file may hold one, and
    /// `validate` reports it there).
    pub fn append_entry(&mut self, mut entry: Value) -> Result<usize> {
        let obj =
            entry.as_object_mut().ok_or_else(|| Error::InvalidArgument("an entry must be a JSON object".into()))?;
        let id = obj
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| Error::MissingField { location: "appended entry".into(), field: "id".into() })?;
        if !obj.get("type").is_some_and(Value::is_string) {
            return Err(Error::MissingField { location: format!("entry {id}"), field: "type".into() });
        }
        if obj.get("type").and_then(Value::as_str) == Some("session") {
            // A header is no node of the tree: as the leaf it made every later append fail.
            return Err(Error::InvalidArgument(format!(
                "entry {id}: an entry of type \"session\" is a session header, not an entry (SPEC §13.12)"
            )));
        }
        if self.index.get(&id).is_some() {
            return Err(Error::DuplicateId { id });
        }
        if obj.get("type").and_then(Value::as_str) == Some("label") {
            // A label names an existing entry (SPEC §1); one on an unknown target would label
            // nothing and could never be removed by the host's UI.
            match obj.get("targetId").and_then(Value::as_str) {
                None => return Err(Error::MissingField { location: format!("label {id}"), field: "targetId".into() }),
                Some(t) if self.index.get(t).is_none() => return Err(Error::NotFound { id: t.to_string() }),
                Some(_) => {}
            }
        }
        if !obj.contains_key("parentId") {
            let parent = self.leaf_id().map_or(Value::Null, |p| Value::from(p.to_string()));
            obj.insert("parentId".into(), parent);
        }
        let parent = obj.get("parentId").and_then(Value::as_str).map(str::to_owned);
        let parent_index = match parent.as_deref() {
            Some(p) => Some(self.index_of(p).ok_or_else(|| Error::NotFound { id: p.to_string() })?),
            None => None,
        };
        let meta = EntryMeta::from_value(&entry);
        if meta.kind == EntryKind::Compaction {
            // The kept region starts at an entry on the compaction's own branch (SPEC §5, §13.2):
            // one elsewhere would leave the next context without any kept message, silently.
            let kept = meta.first_kept_entry_id.as_deref();
            if !self.index.on_path(&*self, parent_index, kept) {
                return Err(Error::KeptEntryNotOnPath {
                    id,
                    first_kept_entry_id: kept.unwrap_or("(none)").to_string(),
                });
            }
        }
        let i = self.metas.len();
        self.metas.push(meta);
        self.raws.push(Raw::Owned(entry.to_string().into_boxed_str()));
        self.lines.push(0);
        self.index.push(&self.metas[i]);
        if parent_index.is_some() && parent_index == self.leaf {
            self.branch.push(i);
            self.leaf = Some(i);
            self.extend_fold();
        } else {
            self.leaf = Some(i);
            self.rebuild_branch();
        }
        Ok(i)
    }

    /// A new entry id for this session: 8 random lowercase hex digits (the shape pi gives its
    /// ids), never one an entry of the session already has. The engine names the entries it
    /// appends (compaction, branch summary) with it, and so does [`append_message`](Self::append_message).
    pub fn new_entry_id(&self) -> String {
        let mut ids = RandomIds::new();
        loop {
            let id = ids.next_id();
            if self.index_of(&id).is_none() {
                return id;
            }
        }
    }

    /// Appends an agent message (`user`, `assistant`, `toolResult`, … : any object with a string
    /// `role`) as a `message` entry (SPEC §1) and returns that entry:
    /// `{type: "message", id, parentId, timestamp, message}`, with a new id
    /// ([`new_entry_id`](Self::new_entry_id)), the current leaf as parent (`null` in an empty
    /// session) and `now_ms` (ms since the epoch, the host's clock) as an ISO 8601 UTC timestamp.
    /// The entry becomes the leaf. Costs O(message).
    /// Errors: `E_INVALID_ARGUMENT` (the message is not a JSON object), `E_MISSING_FIELD` (it has
    /// no string `role`).
    pub fn append_message(&mut self, message: Value, now_ms: f64) -> Result<Value> {
        if !message.is_object() {
            return Err(Error::InvalidArgument(
                "appendMessage: the message must be an object (an AgentMessage)".into(),
            ));
        }
        if !message.get("role").is_some_and(Value::is_string) {
            return Err(Error::MissingField { location: "appended message".into(), field: "role".into() });
        }
        let entry = serde_json::json!({
            "type": "message",
            "id": self.new_entry_id(),
            "parentId": self.leaf_id(),
            "timestamp": format_iso_timestamp(now_ms),
            "message": message,
        });
        self.append_entry(entry.clone())?;
        Ok(entry)
    }

    /// Removes the entries appended after the session had `len` entries and moves the leaf back
    /// to `leaf` (rollback of an operation whose after-hook failed). O(session).
    pub fn truncate(&mut self, len: usize, leaf: Option<&str>) -> Result<()> {
        if len >= self.metas.len() {
            return self.set_leaf(leaf);
        }
        self.metas.truncate(len);
        self.raws.truncate(len);
        self.lines.truncate(len);
        self.entries_changed();
        self.reindex();
        self.set_leaf(leaf)
    }

    /// Removes entry `i` — the rollback of an entry the engine appended whose after-hook failed
    /// (SPEC §11, §13.2) — and keeps everything else: entries appended after it stay (their
    /// order and lines unchanged), children of the removed entry get its `parentId` (they were
    /// appended under it as the leaf), and the leaf stays where it is unless it was the removed
    /// entry; then it moves to `leaf_if_removed`. O(session). Errors with `E_NOT_FOUND` for an
    /// index out of range or an unknown `leaf_if_removed`.
    pub fn remove_entry(&mut self, i: usize, leaf_if_removed: Option<&str>) -> Result<()> {
        if i >= self.metas.len() {
            return Err(Error::NotFound { id: format!("#{i}") });
        }
        let parent = self.metas[i].parent_id.clone().map_or(Value::Null, Value::from);
        for c in self.index.children(&*self, i).to_vec() {
            let mut child = self.entry(c).into_owned();
            if let Some(o) = child.as_object_mut() {
                o.insert("parentId".into(), parent.clone());
            }
            self.put_entry(c, child);
        }
        let leaf_id = match self.leaf {
            Some(l) if l == i => leaf_if_removed.map(str::to_owned),
            Some(l) => self.metas[l].id.clone(),
            None => None,
        };
        let keep_leaf = self.leaf.filter(|&l| l != i).map(|l| if l > i { l - 1 } else { l });
        self.metas.remove(i);
        self.raws.remove(i);
        self.lines.remove(i);
        self.entries_changed();
        self.index = TreeIndex::new(&*self);
        if self.leaf == Some(i) {
            self.set_leaf(leaf_id.as_deref())
        } else {
            self.leaf = keep_leaf;
            self.rebuild_branch();
            Ok(())
        }
    }

    /// Replaces entry `i` (same id, same parent). The metadata is recomputed, the context
    /// decision folded again (O(branch)) and the entry's [`SessionTree::entry_version`] raised.
    pub fn replace_entry(&mut self, i: usize, entry: Value) {
        self.put_entry(i, entry);
        self.fold = ContextFold::default();
        self.extend_fold();
    }

    /// [`SessionTree::replace_entry`] without folding the context again (the caller does,
    /// once, after the last entry it replaces).
    fn put_entry(&mut self, i: usize, entry: Value) {
        self.metas[i] = EntryMeta::from_value(&entry);
        self.raws[i] = Raw::Owned(entry.to_string().into_boxed_str());
        self.entry_replaced(i);
    }

    /// Entry `i` rewritten by pruning: its new text is `range` of the prune's `batch`. When it
    /// was spliced ([`push_pruned_entry`]: where its message and content now lie, and the
    /// notice's UTF-16 length), the metadata is changed where the splice changed it
    /// ([`crate::entry::MessageMeta::prune_content`]: the estimate, `pruned`, those places)
    /// without reading the text again, and `true` is returned; otherwise (or for a message whose
    /// estimate reads more than its content) it is read from the new text, and `false` is.
    fn put_pruned_entry(
        &mut self,
        i: usize,
        batch: &Arc<String>,
        range: Range<usize>,
        spliced: Option<(SplicedSpans, u64)>,
    ) -> bool {
        let meta = &mut self.metas[i];
        let in_place = spliced.is_some_and(|(spans, notice_units)| {
            let done = meta.message.as_mut().is_some_and(|m| m.prune_content(notice_units, spans.content_span));
            if done {
                meta.message_span = Some(spans.message_span);
            }
            done
        });
        if !in_place {
            *meta = EntryMeta::from_json(batch.as_bytes().get(range.clone()).unwrap_or_default()).unwrap_or_default();
        }
        self.raws[i] = Raw::Batch(Arc::clone(batch), range);
        self.entry_replaced(i);
        in_place
    }

    /// The current branch as an [`EntrySource`].
    pub fn branch_source(&self) -> Selection<'_, Self> {
        Selection::new(self, &self.branch)
    }

    /// The branch position from which a compaction decision of the current branch reads
    /// anything (SPEC §5, §12.1, §12.7): the latest compaction's kept region, or the compaction
    /// itself when that starts later (its first kept entry is not on the branch before it), or
    /// the last assistant message before that (a tool exchange it opened may reach into the
    /// kept region, and cut points never fall inside one); 0 without a compaction. Before it lie
    /// only entries already summarized: the boundary, the usage, the estimates, the cut point,
    /// the previous summary and the built context are the same for the branch and for the part
    /// of it from here on (tested by `tests/handle_window.rs`).
    pub fn compaction_window_start(&self) -> usize {
        let Some((c, kept)) = self.fold.latest_compaction() else { return 0 };
        let start = c.min(kept);
        let assistant = |&p: &usize| crate::plan::cut_point::is_assistant(&self.metas[self.branch[p]]);
        (0..start).rev().find(assistant).unwrap_or(start)
    }

    /// The current branch from [`SessionTree::compaction_window_start`] on, as an
    /// [`EntrySource`]: what the per-turn compaction decisions read, so that they cost
    /// O(entries since the latest compaction's kept region) however long the session is.
    pub fn compaction_window(&self) -> Selection<'_, Self> {
        self.window().1
    }

    /// [`SessionTree::compaction_window_start`] and [`SessionTree::compaction_window`].
    fn window(&self) -> (usize, Selection<'_, Self>) {
        let start = self.compaction_window_start();
        (start, Selection::new(self, &self.branch[start..]))
    }

    /// The context decision of the current branch (SPEC §6): which entry gives each message,
    /// and the settings, with `settings.repairs` filled in (§13.1). Kept up to date on every
    /// change, so this costs O(context messages).
    pub fn context_plan(&self) -> ContextPlan {
        let mut plan = self.fold.plan();
        plan.settings.repairs = plan.repair_plan(self).repairs;
        plan
    }

    /// The compaction plan of the current branch (SPEC §5): boundary, cut point and usage,
    /// computed from metadata only. Indices are positions in the branch.
    pub fn plan_compaction(&self, settings: &CompactionSettings) -> Option<PreparationPlan> {
        plan_compaction(&self.branch_source(), settings)
    }

    /// The full preparation of the current branch (messages materialized). SPEC §5.
    pub fn prepare_compaction(&self, settings: &CompactionSettings) -> Option<CompactionPreparation> {
        let branch = self.compaction_window();
        let plan = plan_compaction(&branch, settings)?;
        preparation_from_plan(&branch, settings, &plan)
    }

    /// [`SessionTree::prepare_compaction`] with its three message lists as
    /// [`MessageRef`]s (`messagesToSummarize`, `turnPrefixMessages`, `recentMessages`): the
    /// preparation with those lists left empty, and the lists, whose
    /// [`MessageRef::Entry`] indices are **entry indices** of the session (the `message` of that
    /// entry; [`SessionTree::message_text`] gives its stored text). For a host that keeps its
    /// own objects per entry (the wasm binding). O(entries since the latest compaction's kept
    /// region). SPEC §5, §12.
    pub fn prepare_compaction_refs(
        &self,
        settings: &CompactionSettings,
    ) -> Option<(CompactionPreparation, [Vec<MessageRef>; 3])> {
        let (start, window) = self.window();
        let plan = plan_compaction(&window, settings)?;
        let (shell, lists) = crate::plan::prepare::preparation_refs_of(&window, settings, plan)?;
        Some((shell, self.refs_on_branch(start, lists)))
    }

    /// `lists` of message references into the compaction window starting at branch position
    /// `start`, as references to entry indices.
    fn refs_on_branch(&self, start: usize, mut lists: [Vec<MessageRef>; 3]) -> [Vec<MessageRef>; 3] {
        for r in lists.iter_mut().flatten() {
            if let MessageRef::Entry(pos) = r {
                *pos = self.branch[start + *pos];
            }
        }
        lists
    }

    /// [`SessionTree::prepare_compaction_refs`] with the preparation's `preview` filled in
    /// ([`SessionTree::compaction_previews`]), the compaction plan and its parts made once for
    /// both. Errors:
    /// the file-operations template fails to render.
    pub fn prepare_compaction_refs_with_previews(
        &self,
        settings: &CompactionSettings,
        prune: &PruneConfig,
        templates: &crate::prompt::templates::PromptTemplates,
    ) -> Result<Option<(CompactionPreparation, [Vec<MessageRef>; 3])>> {
        use crate::plan::prepare::{message_ref, preparation_parts, preparation_refs_of_parts};
        use crate::summarize::preview::{compaction_previews_of, summary_tokens, Known};
        let (start, window) = self.window();
        let Some(plan) = plan_compaction(&window, settings) else { return Ok(None) };
        let Some(parts) = preparation_parts(&window, &plan, |i| message_ref(&window, i)) else { return Ok(None) };
        // The preview's compaction is this one: its file operations and previous summary are
        // those of these parts.
        let summary =
            summary_tokens(&window, &plan, parts.previous_summary.as_deref(), &parts.file_ops, settings, templates)?;
        let (mut shell, lists) = preparation_refs_of_parts(parts, settings, &plan);
        // The prune of the context's outputs is the handle's own (the fold keeps the context),
        // its candidates in window positions (every message of the context lies in the
        // window); the previews read nothing else of it.
        let mut pruned = self.plan_prune(prune);
        for c in &mut pruned.candidates {
            c.index = c.branch_position.map_or(usize::MAX, |p| p.wrapping_sub(start));
        }
        // The context the window builds is the one the fold keeps (the same items, as entry
        // indices).
        let known = Known {
            summary_tokens: Some(summary),
            prune_plan: Some(pruned),
            context_tokens: Some(crate::plan::overflow::context_items_tokens(self, self.fold.items())),
        };
        let previews = compaction_previews_of(&window, settings, prune, templates, Some(&plan), known)?;
        shell.preview = Some(previews);
        Ok(Some((shell, self.refs_on_branch(start, lists))))
    }

    /// The preparation `session_before_compact` sees on the current branch: the full
    /// preparation, or the reference rules' one marked `nothingToCompact` when there is nothing
    /// to compact (SPEC §11, §12.2). See [`crate::plan::prepare::prepare_compaction_for_hooks`].
    pub fn prepare_compaction_for_hooks(&self, settings: &CompactionSettings) -> Option<CompactionPreparation> {
        crate::plan::prepare::prepare_compaction_for_hooks(&self.branch_source(), settings)
    }

    /// The preparation of the current branch as JSON text (the shape of
    /// [`CompactionPreparation`]), its messages spliced from the stored entry texts without
    /// parsing them: the fast path of the JS `SessionTree.prepareCompaction`. SPEC §5.
    pub fn prepare_compaction_json(&self, settings: &CompactionSettings) -> Option<String> {
        self.prepare_compaction_json_with(settings, None)
    }

    /// The previews of a compaction of the current branch: alone, and after a prune with
    /// `prune` (see [`crate::summarize::preview::compaction_previews`]). Errors: the
    /// file-operations template fails to render.
    pub fn compaction_previews(
        &self,
        settings: &CompactionSettings,
        prune: &PruneConfig,
        templates: &crate::prompt::templates::PromptTemplates,
    ) -> Result<crate::plan::preview::CompactionPreviews> {
        crate::summarize::preview::compaction_previews(&self.compaction_window(), settings, prune, templates)
    }

    /// [`SessionTree::plan_compaction`] with its `preview` filled in
    /// ([`SessionTree::compaction_previews`]).
    pub fn plan_compaction_with_preview(
        &self,
        settings: &CompactionSettings,
        prune: &PruneConfig,
        templates: &crate::prompt::templates::PromptTemplates,
    ) -> Result<Option<PreparationPlan>> {
        let Some(mut plan) = self.plan_compaction(settings) else { return Ok(None) };
        plan.preview = Some(self.compaction_previews(settings, prune, templates)?);
        Ok(Some(plan))
    }

    /// [`SessionTree::prepare_compaction_json`] with a `preview` field
    /// ([`SessionTree::compaction_previews`]).
    pub fn prepare_compaction_json_with_preview(
        &self,
        settings: &CompactionSettings,
        prune: &PruneConfig,
        templates: &crate::prompt::templates::PromptTemplates,
    ) -> Result<Option<String>> {
        let previews = self.compaction_previews(settings, prune, templates)?;
        Ok(self.prepare_compaction_json_with(settings, Some(&previews)))
    }

    fn prepare_compaction_json_with(
        &self,
        settings: &CompactionSettings,
        preview: Option<&crate::plan::preview::CompactionPreviews>,
    ) -> Option<String> {
        let (start, window) = self.window();
        let plan = plan_compaction(&window, settings)?;
        let parts =
            crate::plan::prepare::preparation_parts(&window, &plan, |pos| self.branch_message_text(start + pos))?;
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Rest<'a> {
            is_split_turn: bool,
            tokens_before: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            previous_summary: Option<&'a str>,
            file_ops: crate::plan::prepare::FileOpsLists,
            settings: &'a CompactionSettings,
            #[serde(skip_serializing_if = "Option::is_none")]
            preview: Option<&'a crate::plan::preview::CompactionPreviews>,
            #[serde(skip_serializing_if = "Option::is_none")]
            token_calibration_factor: Option<f64>,
        }
        let rest = serde_json::to_string(&Rest {
            is_split_turn: parts.is_split_turn,
            tokens_before: parts.tokens_before,
            previous_summary: parts.previous_summary.as_deref(),
            file_ops: crate::plan::prepare::FileOpsLists::from(&parts.file_ops),
            settings,
            preview,
            token_calibration_factor: plan.token_calibration_factor,
        })
        .ok()?;
        let arrays = [&parts.messages_to_summarize, &parts.turn_prefix_messages, &parts.recent_messages];
        let mut out = String::with_capacity(
            arrays.iter().flat_map(|a| a.iter()).map(|m| m.len() + 1).sum::<usize>() + rest.len() + 128,
        );
        out.push_str("{\"firstKeptEntryId\":");
        out.push_str(&serde_json::to_string(&parts.first_kept_entry_id).ok()?);
        for (name, list) in ["messagesToSummarize", "turnPrefixMessages", "recentMessages"].iter().zip(arrays) {
            out.push_str(",\"");
            out.push_str(name);
            out.push_str("\":[");
            for (k, m) in list.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(m);
            }
            out.push(']');
        }
        out.push(',');
        out.push_str(rest.strip_prefix('{').unwrap_or(&rest));
        Some(out)
    }

    /// The message (JSON text) that the entry at branch position `pos` contributes to a
    /// preparation: spliced from the stored text for `message` entries, built for custom
    /// messages and branch summaries; `None` for other entries. SPEC §2.
    fn branch_message_text(&self, pos: usize) -> Option<Cow<'_, str>> {
        let i = self.branch[pos];
        match self.metas[i].kind {
            EntryKind::Message => self.message_text(i).map(Cow::Borrowed),
            EntryKind::CustomMessage | EntryKind::BranchSummary => {
                crate::entry::message_of::message_of(&self.entry(i)).map(|m| Cow::Owned(m.to_string()))
            }
            _ => None,
        }
    }

    /// Why the current branch has nothing to compact ([`SessionTree::prepare_compaction`] is
    /// `None`), or `None` when a compaction is possible. SPEC §5, §12.2.
    pub fn nothing_to_compact(&self, settings: &CompactionSettings) -> Option<NothingToCompact> {
        self.nothing_to_compact_counted(settings, None)
    }

    /// [`nothing_to_compact`](Self::nothing_to_compact) with the branch's token numbers counted
    /// by the host's tokenizer (`tokens[p]` for branch position `p`; `None` or another length:
    /// the default estimates). SPEC §3, §5.
    pub fn nothing_to_compact_counted(
        &self,
        settings: &CompactionSettings,
        tokens: Option<&[u64]>,
    ) -> Option<NothingToCompact> {
        let branch = self.branch_source();
        let text = |pos| self.branch_message_text(pos);
        match tokens.filter(|t| t.len() == self.branch.len()) {
            None => {
                crate::plan::prepare::nothing_to_compact(&branch, plan_compaction(&branch, settings).as_ref(), text)
            }
            Some(tokens) => {
                let counted = crate::plan::tokens::Recounted::new(&branch, tokens);
                let plan = plan_compaction(&counted, settings);
                crate::plan::prepare::nothing_to_compact(&counted, plan.as_ref(), text)
            }
        }
    }

    /// The latest compaction on the current branch and where its kept region starts (branch
    /// positions), or `None` without one. SPEC §5, §12.1.
    pub fn previous_compaction(&self) -> Option<PreviousCompaction> {
        let (start, window) = self.window();
        let mut prev = crate::plan::prepare::previous_compaction(&window)?;
        prev.branch_position += start;
        prev.kept_start += start;
        Some(prev)
    }

    /// The context of the current branch (SPEC §6): messages as stored, with the repairs their
    /// provider-valid form needs (§13.1).
    pub fn build_session_context(&self) -> SessionContext {
        self.context_plan().materialize(self)
    }

    /// The context of the current branch with its messages in provider-valid form (SPEC
    /// §13.1): what a model may be sent; `repairs` lists what was changed.
    pub fn build_provider_context(&self) -> SessionContext {
        crate::context::build_provider_context_for_path(self, &self.branch)
    }

    /// The whole context of the current branch (SPEC §6) as JSON text: the object of
    /// [`SessionTree::build_session_context`] (messages as stored, with the repairs their
    /// provider-valid form needs) with the messages spliced from the stored entry texts
    /// ([`SessionTree::stored_context_json`]) instead of re-serialized.
    pub fn build_session_context_text(&self) -> String {
        let mut out = String::from(r#"{"messages":"#);
        out.push_str(&self.stored_context_json());
        if let Ok(Value::Object(fields)) = serde_json::to_value(self.build_session_context_settings()) {
            for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "messages") {
                out.push(',');
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                out.push_str(&value.to_string());
            }
        }
        out.push('}');
        out
    }

    /// The settings part of the current branch's context (`messages` left empty) and the
    /// repairs of its provider-valid form; pair it with [`SessionTree::build_session_context_json`]
    /// or [`SessionTree::stored_context_json`]. Metadata only.
    pub fn build_session_context_settings(&self) -> SessionContext {
        self.context_plan().settings
    }

    /// The repairs the provider-valid context of the current branch needs (SPEC §13.1), from
    /// metadata only: what [`SessionTree::build_session_context_json`] and
    /// [`SessionTree::build_llm_messages`] change.
    pub fn context_repairs(&self) -> Vec<ContextRepair> {
        self.fold.plan().repair_plan(self).repairs
    }

    /// The messages of the current branch's context as one JSON array text in provider-valid
    /// form (SPEC §6, §13.1; the repairs are [`SessionTree::context_repairs`]), spliced from the
    /// stored entry texts without re-serializing them (for hosts that send it to an HTTP API).
    pub fn build_session_context_json(&self) -> String {
        self.context_json(true)
    }

    /// The messages of the current branch's context as stored (SPEC §6, not repaired), as one
    /// JSON array text: the `messages` of [`SessionTree::build_session_context`].
    pub fn stored_context_json(&self) -> String {
        self.context_json(false)
    }

    fn context_json(&self, repair: bool) -> String {
        let plan = self.fold.plan();
        let repairs = if repair {
            plan.repair_plan(self)
        } else {
            RepairPlan { steps: (0..plan.items.len()).map(RepairStep::Message).collect(), ..RepairPlan::default() }
        };
        let mut out = String::with_capacity(repairs.steps.len() * 64 + 2);
        out.push('[');
        let mut first = true;
        for &step in &repairs.steps {
            let text: Option<Cow<'_, str>> = match step {
                RepairStep::Message(k) if repairs.renames(k) => {
                    plan.items[k].materialize(self).map(|v| Cow::Owned(repairs.with_ids(k, v).to_string()))
                }
                RepairStep::Message(k) => match plan.items[k] {
                    ContextItem::Message(i) => message_span(self.raw(i)).map(Cow::Borrowed),
                    other => other.materialize(self).map(|v| Cow::Owned(v.to_string())),
                },
                RepairStep::MissingResult { message, call } => {
                    let item = plan.items[message];
                    let meta = self.metas[item.index()].message.as_ref();
                    item.materialize(self).map(|a| Cow::Owned(repairs.synthetic(&a, meta, message, call).to_string()))
                }
            };
            if let Some(t) = text {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&t);
            }
        }
        out.push(']');
        out
    }

    /// The current branch's context converted for the model (`convertToLlm`, SPEC §6) in
    /// provider-valid form (§13.1), with the repairs made. Errors only when a summary template
    /// fails to render ([`Error::Template`]).
    pub fn build_llm_messages(
        &self,
        templates: &crate::prompt::templates::PromptTemplates,
    ) -> Result<(Vec<Value>, Vec<ContextRepair>)> {
        let (plan, repairs) = self.llm_messages(templates)?;
        let messages = plan
            .into_iter()
            .filter_map(|m| match m {
                LlmMessage::Stored(item) => item.materialize(self),
                LlmMessage::Built(v) => Some(v),
            })
            .collect();
        Ok((messages, repairs))
    }

    /// [`SessionTree::build_llm_messages`] without converting what conversion leaves as it is:
    /// the message of a `user` or `assistant` entry, and of a `toolResult` entry that was not
    /// pruned, is its stored message ([`LlmMessage::Stored`]: a binding splices its stored text
    /// instead of parsing and writing it again); the others (summaries, custom and execution messages,
    /// pruned results, the synthetic results of the provider-valid form) are converted here
    /// ([`LlmMessage::Built`]). Dropped messages (excluded executions, unknown roles) are left
    /// out. The same messages, in the same order, as `convertToLlm` of the provider-valid
    /// context (SPEC §6, §13.1). Errors as [`SessionTree::build_llm_messages`].
    pub fn llm_messages(
        &self,
        templates: &crate::prompt::templates::PromptTemplates,
    ) -> Result<(Vec<LlmMessage>, Vec<ContextRepair>)> {
        use crate::context::convert::unchanged_by_conversion;
        let plan = self.fold.plan();
        let repair = plan.repair_plan(self);
        let mut out = Vec::with_capacity(repair.steps.len());
        let convert = |out: &mut Vec<LlmMessage>, v: Option<Value>| -> Result<()> {
            if let Some(c) = v.map(|v| crate::context::convert::convert_message(&v, templates)).transpose()?.flatten() {
                out.push(LlmMessage::Built(c));
            }
            Ok(())
        };
        for &step in &repair.steps {
            match step {
                RepairStep::Message(k) if repair.renames(k) => {
                    convert(&mut out, plan.items[k].materialize(self).map(|v| repair.with_ids(k, v)))?;
                }
                RepairStep::Message(k) => {
                    let item = plan.items[k];
                    let unchanged = match item {
                        ContextItem::Message(i) => self.metas[i]
                            .message
                            .as_ref()
                            .is_some_and(|m| m.role.name().is_some_and(|role| unchanged_by_conversion(role, m.pruned))),
                        _ => false,
                    };
                    if unchanged {
                        out.push(LlmMessage::Stored(item));
                    } else {
                        convert(&mut out, item.materialize(self))?;
                    }
                }
                RepairStep::MissingResult { message, call } => {
                    let item = plan.items[message];
                    let meta = self.metas[item.index()].message.as_ref();
                    convert(&mut out, item.materialize(self).map(|a| repair.synthetic(&a, meta, message, call)))?;
                }
            }
        }
        Ok((out, repair.repairs))
    }

    /// The validation report of the session (SPEC §1, §13.1): the header's version as the
    /// loaders read it ([`crate::tree::header_issue`], first, without an index: the header is
    /// no entry; SPEC §13.11), the structural issues, with the current leaf's path checked like
    /// a root-to-leaf path, and the repairs the current branch's context needs. Line numbers
    /// are those of the loaded file.
    pub fn validate(&self) -> ContextValidation {
        let lines: Vec<usize> = (0..self.entry_count()).map(|i| self.line_of(i)).collect();
        let mut report = crate::context::validate_context(self, Some(&lines), self.leaf);
        if let Some(issue) = self.header.as_ref().and_then(|h| crate::tree::header_issue(h, None, self.header_line)) {
            report.issues.insert(0, issue);
        }
        report
    }

    /// The pruning decision for the current branch (SPEC §7). Each candidate's `index` and
    /// `entry_index` are its entry index (file order), `branch_position` its position on the
    /// branch. Only the `message` entries the model still sees are considered (the kept region of the
    /// latest compaction and everything after it): outputs already summarized away are not
    /// sent to the model, so pruning them would lose history and save nothing.
    pub fn plan_prune(&self, config: &PruneConfig) -> PrunePlan {
        self.plan_prune_counted(config, None)
    }

    /// [`plan_prune`](Self::plan_prune) with the branch's token numbers counted by the host's
    /// tokenizer (`tokens[p]` for branch position `p`, see [`crate::plan::tokens::Recounted`];
    /// `None` or a length other than the branch's: the default estimates). SPEC §3, §7.
    pub fn plan_prune_counted(&self, config: &PruneConfig, tokens: Option<&[u64]>) -> PrunePlan {
        let mut plan = match tokens.filter(|t| t.len() == self.branch.len()) {
            None => crate::context::plan_prune_of_items(self, self.fold.items(), config),
            Some(tokens) => {
                let branch = self.branch_source();
                let counted = crate::plan::tokens::Recounted::new(&branch, tokens);
                let positions: Vec<usize> = (0..self.branch.len()).collect();
                let mut plan = crate::context::plan_prune_in_context(&counted, &positions, config);
                for c in &mut plan.candidates {
                    c.index = self.branch[c.index];
                    if let Some(by) = c.superseded_by.as_mut() {
                        by.index = self.branch[by.index];
                    }
                }
                plan
            }
        };
        if !plan.candidates.is_empty() {
            let mut position = vec![usize::MAX; self.metas.len()];
            for (p, &i) in self.branch.iter().enumerate() {
                position[i] = p;
            }
            for c in &mut plan.candidates {
                c.entry_index = Some(c.index);
                c.branch_position = position.get(c.index).copied().filter(|&p| p != usize::MAX);
            }
        }
        plan
    }

    /// Prunes old tool outputs of the current branch in place (SPEC §7) and returns the
    /// decision plus the new JSON text of each changed entry ([`PrunedLines`], in the plan's
    /// order: superseded outputs first, then old ones, each newest first; line `k` is the entry
    /// of `plan.candidates[k]`, whose `index` is its entry index; the handle's entries share its
    /// text). Each entry is rewritten from its stored text at the places the loader found
    /// ([`push_pruned_entry`]: the output that is replaced is not read again), else through
    /// [`pruned_entry_json`]. `now_ms`: ms since the epoch.
    pub fn prune_tool_outputs(&mut self, config: &PruneConfig, now_ms: f64) -> (PrunePlan, PrunedLines) {
        self.prune_tool_outputs_counted(config, now_ms, None)
    }

    /// [`prune_tool_outputs`](Self::prune_tool_outputs) deciding with the host's token counts of
    /// the branch ([`plan_prune_counted`](Self::plan_prune_counted)). SPEC §3, §7.
    pub fn prune_tool_outputs_counted(
        &mut self,
        config: &PruneConfig,
        now_ms: f64,
        tokens: Option<&[u64]>,
    ) -> (PrunePlan, PrunedLines) {
        // The changed entries' texts are written one after the other, each ended by `\n`, into
        // one text that the entries then share with the lines returned.
        let mut plan = self.plan_prune_counted(config, tokens);
        if plan.candidates.is_empty() {
            return (plan, PrunedLines::default());
        }
        let pruned_at = crate::js::js_number(now_ms).to_string();
        let plain_time = pruned_at.bytes().all(|b| b.is_ascii_digit() || b == b'-');
        // Room for a pruned entry of a few hundred bytes each (the text grows if need be).
        let mut batch = String::with_capacity(plan.candidates.len() * 512);
        let mut ends = Vec::with_capacity(plan.candidates.len());
        let mut written = Vec::with_capacity(plan.candidates.len());
        // Each candidate is written, or (when it cannot be) dropped from what this prune did.
        let count = plan.candidates.len();
        plan.candidates.retain(|c| {
            let start = batch.len();
            let raw = self.raw_bytes(c.index);
            let spliced = push_pruned_entry(&mut batch, raw, &self.metas[c.index], &c.notice, &pruned_at)
                .map(|spans| (spans, utf16_len(&c.notice)));
            // The metadata is changed in place only when `prunedAt` is written as plain digits
            // (a time in ms, the usual case): a number such as `1e+300` makes the byte scanner
            // read the line another way, without the places it records, so it is read again.
            if spliced.is_none() {
                match pruned_entry_json(self.raw(c.index), &c.notice, now_ms) {
                    Some(t) => batch.push_str(&t),
                    None => match self.entry(c.index) {
                        // No value can be built for the line (nested deeper than
                        // `VALUE_MAX_DEPTH`) and it cannot be spliced: it stays as it is.
                        v if v.is_null() => return false,
                        v => batch.push_str(&pruned_entry(&v, &c.notice, now_ms).to_string()),
                    },
                }
            }
            ends.push(batch.len());
            written.push((c.index, start..batch.len(), spliced.filter(|_| plain_time)));
            batch.push('\n');
            true
        });
        if plan.candidates.len() < count {
            plan.tokens_saved = plan.candidates.iter().map(|c| c.savings).sum();
        }
        let batch = Arc::new(batch);
        // The context decision reads no part of a message that pruning changes (its content,
        // `prunedAt`, the estimate): it stands when every entry was spliced; an entry read again
        // from its new text is folded afresh.
        let mut fold_again = false;
        for (i, range, spliced) in written {
            fold_again |= !self.put_pruned_entry(i, &batch, range, spliced);
        }
        if fold_again {
            self.fold = ContextFold::default();
            self.extend_fold();
        }
        (plan, PrunedLines { jsonl: batch, ends })
    }

    /// The session as JSONL text: the header line (if any) then every entry's stored text,
    /// one per line, and the opaque lines of the loaded file (malformed or blank lines, kept as
    /// written) in their places. Each line ends with the line end of the loaded file's first
    /// line (`\r\n` or `\n`; `\n` for a session not loaded from text). Unchanged entries and
    /// the header are written byte for byte as loaded. SPEC §13.3.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::with_capacity(self.base.len() + 1024);
        let header: Option<Cow<'_, str>> = self.header.as_ref().map(|h| match &self.header_raw {
            Some(r) => Cow::Borrowed(self.span_text(r)),
            None => Cow::Owned(h.to_string()),
        });
        let records = header.as_deref().into_iter().chain((0..self.metas.len()).map(|i| self.raw(i)));
        let opaque = self.opaque.iter().flat_map(|o| o.pieces(&self.base, self.line_end).map(move |t| (o.position, t)));
        crate::io::write_lines(&mut out, records, opaque, self.line_end);
        out
    }

    /// Every entry as a [`TreeNode`](crate::api::TreeNode), in file order: ids, links, type,
    /// role, label, estimated tokens, children and source line (`SessionTree.getTree()`).
    pub fn tree_nodes(&self) -> Vec<crate::api::TreeNode<'_>> {
        (0..self.entry_count())
            .map(|i| {
                let m = self.meta(i);
                crate::api::TreeNode {
                    id: m.id.as_deref(),
                    parent_id: m.parent_id.as_deref(),
                    entry_type: self.entry_type(i),
                    role: self.role(i),
                    label: m.id.as_deref().and_then(|id| self.label(id)),
                    tokens: m.message_of_tokens(),
                    children: self.children_of(i).iter().filter_map(|&c| self.meta(c).id.as_deref()).collect(),
                    line: self.line_of(i),
                }
            })
            .collect()
    }

    /// Ids of the children of the entry `id`, in file order.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    pub fn children_ids(&self, id: &str) -> Result<Vec<String>> {
        let i = self.index_of(id).ok_or_else(|| Error::NotFound { id: id.to_owned() })?;
        Ok(self.children_of(i).iter().filter_map(|&c| self.meta(c).id.clone()).collect())
    }

    /// The lines of the loaded file kept as written (malformed or blank), one by one, as
    /// `(position, line, text)`: position counts the records (header included) before it; the
    /// text is without its line end.
    pub fn opaque_lines(&self) -> impl Iterator<Item = (usize, usize, &str)> + '_ {
        self.opaque.iter().flat_map(|o| o.lines(&self.base).map(move |(l, t)| (o.position, l, t)))
    }

    fn text_of<'a>(&'a self, raw: &'a Raw) -> &'a str {
        match raw {
            Raw::Span(r) => self.span_text(r),
            Raw::Owned(s) => s,
            Raw::Batch(b, r) => b.get(r.clone()).unwrap_or_default(),
        }
    }

    fn span_text(&self, r: &Range<usize>) -> &str {
        self.base.get(r.clone()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("")
    }

    /// Number of entries of each kind on the current branch whose kind is `kind`.
    pub fn count_kind(&self, kind: EntryKind) -> usize {
        self.branch.iter().filter(|&&i| self.metas[i].kind == kind).count()
    }
}

impl SessionTree {
    /// The `type` of entry `i` (known kinds from the metadata; others read from the stored text).
    pub fn entry_type(&self, i: usize) -> Cow<'_, str> {
        if let Some(name) = self.metas[i].kind.name() {
            return Cow::Borrowed(name);
        }
        #[derive(serde::Deserialize)]
        struct T {
            #[serde(rename = "type")]
            ty: Option<Value>,
        }
        let ty = serde_json::from_slice::<T>(self.raw(i).as_bytes()).ok().and_then(|t| t.ty);
        Cow::Owned(ty.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default())
    }

    /// `message.role` of entry `i` (`None` for entries without a message or a string role).
    pub fn role(&self, i: usize) -> Option<Cow<'_, str>> {
        let msg = self.metas[i].message.as_ref()?;
        if let Some(name) = msg.role.name() {
            return Some(Cow::Borrowed(name));
        }
        #[derive(serde::Deserialize)]
        struct R {
            role: Option<Value>,
        }
        #[derive(serde::Deserialize)]
        struct E {
            message: Option<R>,
        }
        let role = serde_json::from_slice::<E>(self.raw(i).as_bytes()).ok()?.message?.role?;
        role.as_str().map(|r| Cow::Owned(r.to_owned()))
    }
}

/// The raw text of the `message` value inside an entry's JSON text.
impl SessionTree {
    /// The bytes of [`SessionTree::message_text`], not checked to be UTF-8 where the scanner
    /// recorded where they lie (a reader checks what it reads, as
    /// [`crate::js::push_json_ascii_bytes`] does: `message_text` is `None` when they are not).
    pub fn message_bytes(&self, i: usize) -> Option<&[u8]> {
        match self.metas.get(i)?.message_span {
            Some(span) => span.bytes_of(self.raw_bytes(i)),
            None => self.message_text(i).map(str::as_bytes),
        }
    }

    /// The stored JSON text of entry `i`'s `message` (`None`: no such entry, or it has no
    /// `message`, or it is `null`), without parsing the rest of the entry.
    /// Where it lies in the entry's text is read once and kept until the entry changes.
    pub fn message_text(&self, i: usize) -> Option<&str> {
        if let Some(span) = self.metas.get(i)?.message_span {
            // Recorded by the scanner: only the message's own bytes are read.
            return span.of(self.raw_bytes(i));
        }
        let raw = self.raws.get(i).map(|r| self.text_of(r))?;
        let kept = self.texts.message_spans.lock().unwrap_or_else(|e| e.into_inner()).get(&i).copied();
        let range = match kept {
            Some(range) => range,
            None => {
                // The span is a slice of `raw`: its offset is the distance between the two.
                let range = message_span(raw).map(|m| {
                    let from = m.as_ptr() as usize - raw.as_ptr() as usize;
                    (from, from + m.len())
                });
                self.texts.message_spans.lock().unwrap_or_else(|e| e.into_inner()).insert(i, range);
                range
            }
        };
        range.and_then(|(a, b)| raw.get(a..b))
    }
}

/// The text of the `message` value of the entry line `raw`, as `JSON.parse` reads the line: of
/// duplicate `message` keys the last one (escaped key spellings included); `None` when the
/// line is not a JSON object or has no message (absent or `null`, SPEC §2).
/// One message of [`SessionTree::llm_messages`].
#[derive(Debug, Clone, PartialEq)]
pub enum LlmMessage {
    /// The stored message of this context item, which conversion leaves unchanged.
    Stored(ContextItem),
    /// A message converted (or made, for a synthetic tool result) for this result.
    Built(Value),
}

fn message_span(raw: &str) -> Option<&str> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde_json::value::RawValue;
    struct Last;
    impl<'de> Visitor<'de> for Last {
        type Value = Option<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an entry object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut last = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "message" {
                    last = Some(map.next_value::<&'de RawValue>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(last)
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    let message = de.deserialize_map(Last).ok()?;
    de.end().ok()?;
    message.map(RawValue::get).filter(|m| *m != "null")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00Z", "message": message})
    }

    fn tool_pair(n: usize, parent: &str, size: usize) -> [Value; 2] {
        let call = format!("c{n}");
        [
            msg(
                &format!("a{n}"),
                Some(parent),
                json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "bash", "arguments": {}}], "stopReason": "toolUse"}),
            ),
            msg(
                &format!("t{n}"),
                Some(&format!("a{n}")),
                json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": [{"type": "text", "text": "x".repeat(size)}]}),
            ),
        ]
    }

    #[test]
    fn append_message_fills_id_parent_and_timestamp() {
        let mut tree = SessionTree::from_values(None, &[msg("u0", None, json!({"role": "user", "content": "go"}))]);
        let reply = json!({"role": "assistant", "content": [{"type": "text", "text": "done"}], "stopReason": "stop"});
        let entry = tree.append_message(reply.clone(), 1_765_233_665_123.0).unwrap();
        let id = entry["id"].as_str().unwrap().to_string();
        assert!(id.len() == 8 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
        assert_eq!(
            entry,
            json!({"type": "message", "id": id, "parentId": "u0", "timestamp": "2025-12-08T22:41:05.123Z", "message": reply})
        );
        assert_eq!(tree.leaf_id(), Some(id.as_str()));
        assert_eq!(tree.get_entry(&id), Some(entry.clone()));
        // The next one hangs under it; ids stay unique.
        let next = tree.append_message(json!({"role": "user", "content": "more"}), 0.0).unwrap();
        assert_eq!(next["parentId"], json!(id));
        assert_eq!(next["timestamp"], json!("1970-01-01T00:00:00.000Z"));
        let mut ids: Vec<String> = (0..300)
            .map(|k| {
                tree.append_message(json!({"role": "user", "content": k.to_string()}), 0.0).unwrap()["id"].to_string()
            })
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 300);
        assert_eq!(tree.entry_count(), 303);
    }

    #[test]
    fn append_message_in_an_empty_session_is_a_root_and_bad_messages_are_refused() {
        let mut tree = SessionTree::from_values(None, &[]);
        let entry = tree.append_message(json!({"role": "user", "content": "hi"}), 0.0).unwrap();
        assert_eq!(entry["parentId"], Value::Null);
        assert_eq!(tree.branch_indices().len(), 1);
        let not_object = tree.append_message(json!("hi"), 0.0).unwrap_err();
        assert_eq!(not_object.code(), "E_INVALID_ARGUMENT");
        let no_role = tree.append_message(json!({"content": "hi"}), 0.0).unwrap_err();
        assert_eq!((no_role.code(), no_role.to_string().contains("role")), ("E_MISSING_FIELD", true));
        assert_eq!(tree.entry_count(), 1, "a refused message appends nothing");
    }

    #[test]
    fn prune_candidates_name_entry_index_and_branch_position() {
        // A side branch first, so that entry indices and branch positions differ.
        let mut entries = vec![msg("u0", None, json!({"role": "user", "content": "go"}))];
        entries.push(msg("s1", Some("u0"), json!({"role": "user", "content": "side"})));
        entries.push(msg("s2", Some("s1"), json!({"role": "user", "content": "side"})));
        entries.extend(tool_pair(1, "u0", 40_000));
        entries.extend(tool_pair(2, "t1", 40_000));
        let tree = SessionTree::from_values(None, &entries);
        let config =
            PruneConfig { protect_tokens: 10_000, minimum_savings: 0, protected_tools: vec![], staleness: true };
        let plan = tree.plan_prune(&config);
        let c = &plan.candidates[..];
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].id.as_deref(), Some("t1"));
        assert_eq!((c[0].index, c[0].entry_index, c[0].branch_position), (4, Some(4), Some(2)));
    }

    #[test]
    fn nothing_to_compact_names_the_reason() {
        let settings = CompactionSettings { keep_recent_tokens: 5_000, ..CompactionSettings::default() };
        let empty = SessionTree::from_values(None, &[]);
        assert_eq!(empty.nothing_to_compact(&settings), Some(NothingToCompact::EmptyBranch));
        let one = SessionTree::from_values(None, &[msg("u0", None, json!({"role": "user", "content": "go"}))]);
        assert_eq!(one.nothing_to_compact(&settings), Some(NothingToCompact::NothingToSummarize));
        assert!(one.prepare_compaction(&settings).is_none());
        let mut entries = vec![msg("u0", None, json!({"role": "user", "content": "go"}))];
        entries.extend(tool_pair(1, "u0", 40_000));
        entries.push(msg("u2", Some("t1"), json!({"role": "user", "content": "more"})));
        entries.extend(tool_pair(3, "u2", 40_000));
        entries.push(msg("u4", Some("t3"), json!({"role": "user", "content": "end"})));
        let mut tree = SessionTree::from_values(None, &entries);
        assert_eq!(tree.nothing_to_compact(&settings), None);
        assert!(tree.prepare_compaction(&settings).is_some());
        tree.append_entry(
            json!({"type": "compaction", "id": "k", "summary": "s", "firstKeptEntryId": "u2", "tokensBefore": 1}),
        )
        .unwrap();
        assert_eq!(tree.nothing_to_compact(&settings), Some(NothingToCompact::AlreadyCompacted));
        assert_eq!(
            NothingToCompact::AlreadyCompacted.message(),
            "the branch ends in a compaction: it is already compacted"
        );
    }

    #[test]
    fn previous_compaction_and_its_kept_region() {
        let mut entries = vec![msg("u0", None, json!({"role": "user", "content": "go"}))];
        entries.extend(tool_pair(1, "u0", 400));
        entries.push(msg("u2", Some("t1"), json!({"role": "user", "content": "more"})));
        let mut tree = SessionTree::from_values(None, &entries);
        assert_eq!(tree.previous_compaction(), None);
        tree.append_entry(
            json!({"type": "compaction", "id": "k", "summary": "s", "firstKeptEntryId": "a1", "tokensBefore": 1}),
        )
        .unwrap();
        let prev = tree.previous_compaction().unwrap();
        assert_eq!(prev.branch_position, 4);
        assert_eq!(prev.entry_id.as_deref(), Some("k"));
        assert_eq!(prev.first_kept_entry_id.as_deref(), Some("a1"));
        assert_eq!(prev.kept_start, 1);
        // The plan after it starts its boundary at the same place.
        tree.append_entry(msg("u5", Some("k"), json!({"role": "user", "content": "next"}))).unwrap();
        let plan = tree.plan_compaction(&CompactionSettings::default()).unwrap();
        assert_eq!((plan.boundary_start, plan.prev_compaction_index), (1, 4));
        // A first kept entry that is not on the branch is refused by appendEntry (SPEC §13.2):
        // an unknown id, an entry of another branch, none at all, or the compaction itself.
        let off_path = [
            json!({"type": "compaction", "id": "k2", "summary": "s", "firstKeptEntryId": "gone", "tokensBefore": 1}),
            json!({"type": "compaction", "id": "k2", "summary": "s", "firstKeptEntryId": "x1", "tokensBefore": 1}),
            json!({"type": "compaction", "id": "k2", "summary": "s", "tokensBefore": 1}),
            json!({"type": "compaction", "id": "k2", "summary": "s", "firstKeptEntryId": "k2", "tokensBefore": 1}),
        ];
        tree.append_entry(msg("x1", Some("u2"), json!({"role": "user", "content": "aside"}))).unwrap();
        tree.set_leaf(Some("u5")).unwrap();
        for entry in off_path {
            let err = tree.append_entry(entry).unwrap_err();
            assert_eq!(err.code(), "E_KEPT_NOT_ON_PATH", "{err}");
        }
        assert_eq!((tree.len(), tree.leaf_id()), (7, Some("u5")), "nothing appended");
        // A loaded file may hold one: the region then starts after the compaction.
        let mut lines: Vec<Value> = (0..tree.len()).map(|i| serde_json::from_str(tree.raw(i)).unwrap()).collect();
        lines.push(json!({"type": "compaction", "id": "k2", "parentId": "u5", "summary": "s", "firstKeptEntryId": "gone", "tokensBefore": 1}));
        let loaded = SessionTree::from_values(None, &lines);
        assert_eq!(loaded.previous_compaction().unwrap().kept_start, 7);
    }

    #[test]
    fn source_version_and_migration_of_loaded_files() {
        let v3 =
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n";
        let (tree, _) = SessionTree::from_jsonl(v3.to_string(), &Default::default()).unwrap();
        assert_eq!((tree.source_version(), tree.migrated()), (Some(3.0), false));
        let v1 = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n\
                  {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
        let (tree, errors) = SessionTree::from_bytes(v1.as_bytes().to_vec(), &Default::default()).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!((tree.source_version(), tree.migrated()), (Some(1.0), true));
        assert_eq!(tree.header().and_then(|h| h.get("version")).and_then(Value::as_f64), Some(3.0));
        assert_eq!(SessionTree::from_values(None, &[]).source_version(), None);
    }

    #[test]
    fn entry_type_and_role_of_known_and_unknown_entries() {
        let entries = vec![
            msg("u0", None, json!({"role": "user", "content": "go"})),
            msg("x1", Some("u0"), json!({"role": "futureRole"})),
            json!({"type": "future_thing", "id": "f2", "parentId": "x1"}),
        ];
        let tree = SessionTree::from_values(None, &entries);
        assert_eq!(tree.entry_type(0), "message");
        assert_eq!(tree.role(0).as_deref(), Some("user"));
        assert_eq!(tree.role(1).as_deref(), Some("futureRole"));
        assert_eq!(tree.entry_type(2), "future_thing");
        assert_eq!(tree.role(2), None);
    }

    /// A loaded handle reads messages and tool-call arguments through the spans its scanner
    /// recorded; one built from values has none and reads the texts: both decide alike.
    #[test]
    fn recorded_spans_read_what_the_texts_say() {
        let args = [
            r#"{"path":"a.rs"}"#,
            r#"{ "path": "a.rs" }"#,
            r#"{"path":"a.rs","offset":1}"#,
            r#"{"path":"a.rs","limit":null}"#,
            r#"{"path":"\/a.rs"}"#,
            r#"{"1":2,"path":"b.rs"}"#,
            r#"{"path":"é\n.rs","n":[1,true,null,{"x":"y"}]}"#,
            r#"{"path":"c.rs","n":[-2]}"#,
            r#"{"path":"c.rs","x":"\u00e9"}"#,
            "absent",
            r#"{"path":"a.rs"}"#,
        ];
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":""}"#;
        let mut lines = vec![
            r#"{"type":"message","id":"u0","parentId":null,"message":{"role":"user","content":"go"}}"#.to_string(),
        ];
        let mut parent = "u0".to_string();
        for (n, a) in args.iter().enumerate() {
            let arguments = if *a == "absent" { String::new() } else { format!(r#","arguments":{a}"#) };
            lines.push(format!(
                r#"  {{"type":"message","id":"a{n}","parentId":"{parent}","message":{{"role":"assistant","content":[{{"type":"text","text":"t"}},{{"type":"toolCall","id":"c{n}","name":"read"{arguments}}}],"stopReason":"toolUse"}}}}"#
            ));
            lines.push(format!(
                r#"{{"type":"message","id":"t{n}","parentId":"a{n}","message":{{"role":"toolResult","toolCallId":"c{n}","toolName":"read","content":[{{"type":"text","text":"{}"}}]}}}}"#,
                "x".repeat(400)
            ));
            parent = format!("t{n}");
        }
        let text = format!("{header}\n{}", lines.join("\n"));
        let (loaded, errors) = SessionTree::from_jsonl(text.clone(), &crate::io::ParseOptions::default()).unwrap();
        assert!(errors.is_empty());
        let values: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        let built = SessionTree::from_values(None, &values);
        // The scanner recorded the arguments written as JSON.stringify writes them (and an absent
        // one), and every message.
        let recorded: Vec<bool> = (0..args.len())
            .map(|n| loaded.meta(1 + 2 * n).message.as_ref().unwrap().tool_calls[0].args_text.is_some())
            .collect();
        assert_eq!(recorded, [true, false, true, true, false, false, true, false, false, true, true]);
        assert!((0..loaded.entry_count()).all(|i| loaded.meta(i).message_span.is_some()));
        assert!((0..built.entry_count()).all(|i| built.meta(i).message_span.is_none()));
        for i in 0..loaded.entry_count() {
            let (a, b) = (loaded.message_text(i).unwrap(), built.message_text(i).unwrap());
            assert_eq!(serde_json::from_str::<Value>(a).unwrap(), serde_json::from_str::<Value>(b).unwrap());
            assert_eq!(Some(a), text.lines().nth(i + 1).and_then(|l| message_span(l)));
        }
        let config = PruneConfig { protect_tokens: 0, minimum_savings: 0, protected_tools: vec![], staleness: true };
        let (a, b) = (loaded.plan_prune(&config), built.plan_prune(&config));
        assert_eq!(a, b);
        // The later whole reads of a.rs supersede the earlier reads of it, whatever their writing.
        let by: Vec<(&str, Option<&str>)> = a
            .candidates
            .iter()
            .map(|c| (c.id.as_deref().unwrap(), c.superseded_by.as_ref().and_then(|s| s.id.as_deref())))
            .collect();
        assert!(by.contains(&("t0", Some("t10"))) && by.contains(&("t1", Some("t10"))), "{by:?}");
    }

    #[test]
    fn pruning_skips_outputs_already_summarized() {
        let mut entries = vec![msg("u0", None, json!({"role": "user", "content": "go"}))];
        entries.extend(tool_pair(1, "u0", 40_000)); // before the compaction's kept region
        entries.push(msg("u2", Some("t1"), json!({"role": "user", "content": "more"})));
        entries.extend(tool_pair(3, "u2", 40_000));
        entries.push(json!({"type": "compaction", "id": "k", "parentId": "t3", "timestamp": "2025-01-01T00:00:00Z", "summary": "s", "firstKeptEntryId": "u2", "tokensBefore": 1}));
        entries.extend(tool_pair(4, "k", 40_000));
        entries.extend(tool_pair(5, "t4", 40_000));
        let tree = SessionTree::from_values(None, &entries);
        let config =
            PruneConfig { protect_tokens: 10_000, minimum_savings: 0, protected_tools: vec![], staleness: true };
        let plan = tree.plan_prune(&config);
        let ids: Vec<&str> = plan.candidates.iter().filter_map(|c| c.id.as_deref()).collect();
        // t5 is inside the protect window; t1 was summarized away; t4 and t3 are visible.
        assert_eq!(ids, vec!["t4", "t3"]);
        // Named indices: entry index (file order) and branch position agree with the branch.
        for c in &plan.candidates {
            let i = c.entry_index.expect("set by the handle");
            assert_eq!(c.index, i);
            assert_eq!(tree.meta(i).id, c.id);
            assert_eq!(tree.branch_indices()[c.branch_position.expect("on the branch")], i);
        }
        // The pure function over the whole branch would also pick t1.
        let pure = crate::plan::prune::plan_prune(&tree.branch_source(), &config);
        assert_eq!(pure.candidates.len(), 3);
    }
}
