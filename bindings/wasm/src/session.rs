//! The `SessionTree` class: a session kept inside wasm memory. Conversions only; the logic is
//! [`session_compaction::session::SessionTree`].

use super::api::templates;
use super::convert::{
    arg_bytes, arg_opt_number, arg_opt_string, arg_string, bad_arg, error_js, from_option, from_serde, js_text,
    parse_js, to_typed, to_value, to_values,
};
use super::host::JsClock;
use super::messages::{MessageObjects, Want};
use super::options::to_options;
use super::tokens::{
    compaction_options, counter_of, counter_option, on_branch, prune_options, with_branch_counts, COUNT_TOKENS,
};
use session_compaction::context::ContextItem;
use session_compaction::entry::EntrySource;
use session_compaction::io::ParseOptions;
use session_compaction::plan::prepare::{CompactionSettings, MessageRef};
use session_compaction::session::engine::Clock;
use session_compaction::session::engine::SessionEngine;
use session_compaction::session::{PrunedLines, SessionTree as Core};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const NEW_SESSION_ENTRY: &str = r#"
/** An entry for `SessionTree.appendEntry`: any {@link SessionEntry}, its `parentId` optional (left out, it becomes the current leaf, SPEC §1). */
export type NewSessionEntry = SessionEntry extends infer E ? (E extends unknown ? { [K in keyof E as K extends "parentId" ? never : K]: E[K] } & { parentId?: string | null } : never) : never;
"#;

/// A session held inside wasm memory: load once, append entries as they arrive, and ask for
/// plans and contexts without sending the session again. Appending costs O(entry).
#[wasm_bindgen(js_name = SessionTree)]
pub struct SessionTree {
    pub(crate) engine: Rc<SessionEngine>,
    load_errors: Vec<session_compaction::io::LineError>,
    /// The message objects handed out by `prepareCompaction` and `buildSessionContext`, by entry.
    messages: std::cell::RefCell<MessageObjects>,
    /// The operations called and not started yet (see [`Pending`]).
    pub(crate) pending: Rc<Pending>,
}

/// The operations (`compact`, `navigateTree`, `checkCompaction`) called on a handle whose work
/// has not started: a Promise's work starts in a later microtask, so right after the call the
/// engine is not busy yet. `isCompacting` counts them, and an `abortCompaction()` meanwhile
/// reaches them: each starts aborted (SPEC §11: one abort cancels the operation).
#[derive(Default)]
pub struct Pending {
    calls: std::cell::Cell<u32>,
    abort: std::cell::Cell<bool>,
}

impl Pending {
    /// A call made now, pending until [`PendingCall::start`] (or its drop).
    pub fn enter(self: &Rc<Self>) -> PendingCall {
        self.calls.set(self.calls.get().saturating_add(1));
        PendingCall(Some(self.clone()))
    }

    /// Whether a call is pending.
    pub fn any(&self) -> bool {
        self.calls.get() > 0
    }

    /// `abortCompaction()`: the pending calls start aborted.
    pub fn abort(&self) {
        if self.any() {
            self.abort.set(true);
        }
    }

    /// One pending call starts: whether an abort came while it was pending.
    fn leave(&self) -> bool {
        let aborted = self.abort.get();
        let left = self.calls.get().saturating_sub(1);
        self.calls.set(left);
        if left == 0 {
            self.abort.set(false);
        }
        aborted
    }
}

/// One call of [`Pending`]; dropping it unstarted (its work failed before starting) ends it too.
pub struct PendingCall(Option<Rc<Pending>>);

impl PendingCall {
    /// The call's work starts now, with `signal`: aborted when `abortCompaction()` was called
    /// meanwhile, before the engine sees it.
    pub fn start(mut self, signal: &session_compaction::session::engine::AbortSignal) {
        if self.0.take().is_some_and(|p| p.leave()) {
            signal.abort();
        }
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            p.leave();
        }
    }
}

/// Grows the wasm memory once, by the input's length, before a load. The allocator (dlmalloc)
/// otherwise grows it 64 KiB at a time as the load's many small allocations exhaust it, one
/// `memory.grow` each, which made the first load of a process 3–4× slower than the later ones
/// (these reuse the grown memory). The block is freed at once and the load allocates from it;
/// pages the load does not touch cost no resident memory. When the memory cannot grow that far
/// (the 4 GiB limit), nothing is reserved and the load grows it as before.
fn reserve_for_load(input_len: usize) {
    let mut block = Vec::<u8>::new();
    if block.try_reserve_exact(input_len).is_ok() {
        // Keeps the optimizer from removing the allocation and its free.
        std::hint::black_box(&mut block);
    }
}

thread_local! {
    /// The buffer `SessionTree.fromFile` reads a file into, between [`SessionTree::file_buffer`]
    /// and [`SessionTree::from_file_buffer`] (empty otherwise).
    static FILE_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A byte count given by the package's own JS (`__fileBuffer`, `__fromFileBuffer`).
fn byte_count(n: f64, what: &str) -> Result<usize, JsValue> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 {
        Ok(n as usize)
    } else {
        Err(bad_arg(what, format!("expected a byte count, got {n}")))
    }
}

fn wrap((inner, load_errors): (Core, Vec<session_compaction::io::LineError>)) -> SessionTree {
    SessionTree {
        engine: Rc::new(SessionEngine::new(inner)),
        load_errors,
        messages: Default::default(),
        pending: Default::default(),
    }
}

impl SessionTree {
    /// Runs `f` with the session (the lock is held for this call only, never across an await).
    fn s<R>(&self, f: impl FnOnce(&Core) -> R) -> R {
        self.engine.session().read(f)
    }
    /// Runs `f` with the session, mutably (the lock is held for this call only).
    fn s_mut<R>(&self, f: impl FnOnce(&mut Core) -> R) -> R {
        self.engine.session().write(f)
    }
}

#[wasm_bindgen(js_class = SessionTree)]
impl SessionTree {
    /// Loads JSONL text (lenient unless `{strict: true}`; bad lines are in `loadErrors`). SPEC §1.
    #[wasm_bindgen(js_name = fromJsonl)]
    pub fn from_jsonl(
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ParseSessionOptions")] options: JsValue,
    ) -> Result<SessionTree, JsValue> {
        let text = arg_string(&text, "text")?;
        let opts: ParseOptions = to_typed(&options, "options")?;
        reserve_for_load(text.len());
        Core::from_jsonl(text, &opts).map(wrap).map_err(error_js)
    }

    /// Loads JSONL bytes (a file's contents): the fast path, no string conversion. SPEC §1.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ParseSessionOptions")] options: JsValue,
    ) -> Result<SessionTree, JsValue> {
        let bytes = arg_bytes(&bytes, "bytes")?;
        let opts: ParseOptions = to_typed(&options, "options")?;
        reserve_for_load(bytes.len());
        Core::from_bytes(bytes, &opts).map(wrap).map_err(error_js)
    }

    /// Step 1 of the package's `SessionTree.fromFile` (not public API): room for exactly `len`
    /// bytes inside wasm memory, returned as a `Uint8Array` view for the host to read the file
    /// into, so the file's bytes are copied once (file → wasm memory) and the host holds no copy.
    /// The view is valid until the next call into the engine (which may grow the memory): the
    /// host fills it, then calls [`SessionTree::from_file_buffer`]. `__fileBuffer(0)` releases an
    /// unused buffer. A `len` that does not fit in wasm memory (4 GiB in all) is
    /// `E_INVALID_ARGUMENT`.
    #[wasm_bindgen(js_name = __fileBuffer, skip_typescript)]
    pub fn file_buffer(len: f64) -> Result<js_sys::Uint8Array, JsValue> {
        let len = byte_count(len, "file size")?;
        FILE_BUFFER.with(|b| b.replace(Vec::new()));
        let mut bytes = Vec::<u8>::new();
        bytes
            .try_reserve_exact(len)
            .map_err(|_| bad_arg("file size", crate::convert::too_large("a file", len as f64)))?;
        // SAFETY: the view covers the vector's allocation (`len` bytes of capacity), which stays
        // where it is while the vector waits in FILE_BUFFER; the host only writes through it, and
        // `from_file_buffer` takes as the vector's length only the bytes the host wrote.
        let view = unsafe { js_sys::Uint8Array::view_mut_raw(bytes.as_mut_ptr(), len) };
        FILE_BUFFER.with(|b| b.replace(bytes));
        Ok(view)
    }

    /// Step 2 of `SessionTree.fromFile` (not public API): loads the `filled` bytes the host read
    /// into the view of [`SessionTree::file_buffer`], like `fromBytes` (SPEC §1), without
    /// copying them again.
    #[wasm_bindgen(js_name = __fromFileBuffer, skip_typescript)]
    pub fn from_file_buffer(filled: f64, options: JsValue) -> Result<SessionTree, JsValue> {
        let mut bytes = FILE_BUFFER.with(|b| b.take());
        let filled = byte_count(filled, "bytes read")?;
        if filled > bytes.capacity() {
            return Err(bad_arg("bytes read", format!("{filled} is more than the buffer's {}", bytes.capacity())));
        }
        // SAFETY: the host wrote the first `filled` bytes through the view of `file_buffer`.
        unsafe { bytes.set_len(filled) };
        let opts: ParseOptions = to_typed(&options, "options")?;
        reserve_for_load(bytes.len());
        Core::from_bytes(bytes, &opts).map(wrap).map_err(error_js)
    }

    /// Builds a session from entries and its header; without one, a new v3 header
    /// (`session_compaction::io::new_session_header`: random id, now, `cwd: ""`), so that
    /// `toJsonl()` is a file `fromJsonl` loads. SPEC §1.
    #[wasm_bindgen(js_name = fromEntries)]
    pub fn from_entries(
        #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SessionHeader | null")] header: JsValue,
    ) -> Result<SessionTree, JsValue> {
        let values = to_values(&entries, "entries")?;
        let header = to_value(&header, "header")?;
        let header =
            if header.is_null() { session_compaction::io::new_session_header(JsClock.now_ms()) } else { header };
        let tree = wrap((Core::from_values(Some(header), &values), Vec::new()));
        // Each message entry keeps the caller's own message object, as appendEntry does.
        tree.s(|s| {
            let mut objects = tree.messages.borrow_mut();
            let key = JsValue::from_str("message");
            for i in (0..s.entry_count()).filter(|&i| s.meta(i).kind == session_compaction::entry::EntryKind::Message) {
                let entry = js_sys::Reflect::get_u32(&entries, i as u32).unwrap_or(JsValue::UNDEFINED);
                objects.adopt(s, i, js_sys::Reflect::get(&entry, &key).unwrap_or(JsValue::UNDEFINED));
            }
        });
        Ok(tree)
    }

    /// The bad lines found while loading (empty for `fromEntries`), by line number: at most
    /// `MAX_LISTED_ERRORS` (10,000), then one `E_PARSE` error counting the others (SPEC §13.3).
    #[wasm_bindgen(getter, js_name = loadErrors, unchecked_return_type = "LineError[]")]
    pub fn load_errors(&self) -> Result<JsValue, JsValue> {
        from_serde(&self.load_errors)
    }

    /// The session header, or `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "SessionHeader | null")]
    pub fn header(&self) -> Result<JsValue, JsValue> {
        self.s(|s| from_serde(&s.header()))
    }

    /// The format version of the loaded file as its header gave it (`version ?? 1`), before
    /// any migration; `undefined` for `fromEntries`, a file without a valid header, or a
    /// `version` that is no number. SPEC §1, §13.11.
    #[wasm_bindgen(getter, js_name = sourceVersion)]
    pub fn source_version(&self) -> Option<f64> {
        self.s(|s| s.source_version())
    }

    /// Whether the file was migrated to the current format (v1/v2 → v3) on load: then its
    /// entries differ from the file's lines, and saving means rewriting it. SPEC §1.
    #[wasm_bindgen(getter)]
    pub fn migrated(&self) -> bool {
        self.s(|s| s.migrated())
    }

    /// The entry indices (file order: positions in `getTree()`) of the current branch, root
    /// first; `branchIndices()[p]` is the entry at branch position `p`. SPEC §6.
    #[wasm_bindgen(js_name = branchIndices)]
    pub fn branch_indices(&self) -> Vec<u32> {
        self.s(|s| s.branch_indices().iter().map(|&i| i as u32).collect())
    }

    /// Why the current branch has nothing to compact (`prepareCompaction` is `undefined`), or
    /// `undefined` when it can be compacted. SPEC §5, §12.2.
    /// With `settings.countTokens`, the plan is counted by the host's tokenizer (SPEC §3; a
    /// Promise when it returns one).
    #[wasm_bindgen(js_name = nothingToCompact, unchecked_return_type = "NothingToCompactResult | undefined")]
    pub fn nothing_to_compact(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompactionSettings> & SyncTokenCount")]
        settings: JsValue,
    ) -> Result<JsValue, JsValue> {
        let counter = counter_of(&settings, "settings")?;
        let settings: CompactionSettings = to_options(&settings, "settings", &[COUNT_TOKENS])?;
        with_branch_counts(counter, self.engine.session().clone(), move |s, tokens| {
            from_option(s.nothing_to_compact_counted(&settings, tokens).map(|r| r.result()))
        })
    }

    /// The latest compaction on the current branch and where its kept region starts (branch
    /// positions), or `undefined` without one. SPEC §5, §12.1.
    #[wasm_bindgen(js_name = previousCompaction, unchecked_return_type = "PreviousCompaction | undefined")]
    pub fn previous_compaction(&self) -> Result<JsValue, JsValue> {
        self.s(|s| from_option(s.previous_compaction()))
    }

    /// Number of entries (header excluded).
    #[wasm_bindgen(getter, js_name = entryCount)]
    pub fn entry_count(&self) -> u32 {
        self.s(|s| s.entry_count() as u32)
    }

    /// The current leaf id (`undefined` before the first entry and after `setLeaf(null)`).
    #[wasm_bindgen(getter, js_name = leafId)]
    pub fn leaf_id(&self) -> Option<String> {
        self.s(|s| s.leaf_id().map(str::to_owned))
    }

    /// Moves the leaf (`null`: before the first entry). Unknown id: `E_NOT_FOUND`. SPEC §10.
    #[wasm_bindgen(js_name = setLeaf)]
    pub fn set_leaf(&self, #[wasm_bindgen(unchecked_param_type = "string | null")] id: JsValue) -> Result<(), JsValue> {
        if id.is_undefined() {
            return Err(bad_arg("id", "expected an entry id, or null for \"before the first entry\""));
        }
        let id = arg_opt_string(&id, "id")?;
        self.s_mut(|s| s.set_leaf(id.as_deref())).map_err(error_js)
    }

    /// Appends an entry (needs `type` and a new string `id`; a missing `parentId` becomes the
    /// current leaf). The entry becomes the leaf. Returns its id. Errors: `E_MISSING_FIELD`,
    /// `E_DUPLICATE_ID`, `E_NOT_FOUND` (unknown parent, or a `label` on an unknown `targetId`),
    /// `E_INVALID_ARGUMENT` (an entry of type `session`, a header: SPEC §13.12),
    /// `E_KEPT_NOT_ON_PATH` (a `compaction` whose `firstKeptEntryId` is absent or not on its own
    /// branch: SPEC §13.2). O(entry); a compaction also O(its depth).
    #[wasm_bindgen(js_name = appendEntry)]
    pub fn append_entry(
        &self,
        #[wasm_bindgen(unchecked_param_type = "NewSessionEntry")] entry: JsValue,
    ) -> Result<String, JsValue> {
        let v = to_value(&entry, "entry")?;
        let message = js_sys::Reflect::get(&entry, &JsValue::from_str("message")).unwrap_or(JsValue::UNDEFINED);
        self.s_mut(|s| {
            let i = s.append_entry(v).map_err(error_js)?;
            if s.meta(i).kind == session_compaction::entry::EntryKind::Message {
                self.messages.borrow_mut().adopt(s, i, message);
            }
            Ok(s.meta(i).id.clone().unwrap_or_default())
        })
    }

    /// Appends an agent message as a new `message` entry under the current leaf and returns the
    /// entry: `{type: "message", id, parentId, timestamp, message}`, with a new id (8 hex
    /// characters, unique in the session), the current leaf as `parentId` (`null` when the
    /// session is empty) and now (`Date.now()`, the engine's clock) as an ISO 8601 `timestamp`.
    /// The entry becomes the leaf. Errors: `E_INVALID_ARGUMENT` (not an object),
    /// `E_MISSING_FIELD` (no string `role`). O(message).
    #[wasm_bindgen(js_name = appendMessage, unchecked_return_type = "MessageEntry")]
    pub fn append_message(
        &self,
        #[wasm_bindgen(unchecked_param_type = "AgentMessage")] message: JsValue,
    ) -> Result<JsValue, JsValue> {
        let v = to_value(&message, "message")?;
        let entry = self.s_mut(|s| {
            let entry = s.append_message(v, JsClock.now_ms())?;
            if let Some(i) = s.entry_count().checked_sub(1) {
                self.messages.borrow_mut().adopt(s, i, message.clone());
            }
            Ok(entry)
        });
        let out = from_serde(&entry.map_err(error_js)?)?;
        // The entry holds the caller's message object: the one prepareCompaction and
        // buildSessionContext hand back for it.
        if message.is_object() {
            js_sys::Reflect::set(&out, &JsValue::from_str("message"), &message)?;
        }
        Ok(out)
    }

    /// The entry with this id, or `undefined`.
    #[wasm_bindgen(js_name = getEntry, unchecked_return_type = "SessionEntry | undefined")]
    pub fn get_entry(&self, #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue) -> Result<JsValue, JsValue> {
        let id = arg_string(&id, "id")?;
        self.s(|s| match s.index_of(&id) {
            Some(i) => parse_js(s.raw(i)),
            None => Ok(JsValue::UNDEFINED),
        })
    }

    /// The branch root→leaf (of `leafId`, default the current leaf) as entries.
    #[wasm_bindgen(js_name = getBranch, unchecked_return_type = "SessionEntry[]")]
    pub fn get_branch(
        &self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string")] leaf_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let leaf_id = arg_opt_string(&leaf_id, "leafId")?;
        self.s(|s| {
            let idx = s.branch_indices_to(leaf_id.as_deref()).map_err(error_js)?;
            entries_json(s, &idx)
        })
    }

    /// Every entry as a `TreeNode` (file order): ids, links, type, role, label, tokens.
    #[wasm_bindgen(js_name = getTree, unchecked_return_type = "TreeNode[]")]
    pub fn get_tree(&self) -> Result<JsValue, JsValue> {
        self.s(|s| from_serde(&s.tree_nodes()))
    }

    /// Ids of the children of `id` (file order). Unknown id: `E_NOT_FOUND`.
    #[wasm_bindgen(js_name = getChildren)]
    pub fn get_children(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> Result<Vec<String>, JsValue> {
        let id = arg_string(&id, "id")?;
        self.s(|s| s.children_ids(&id).map_err(error_js))
    }

    /// The label of an entry (the last `label` entry for it wins), or `undefined`.
    #[wasm_bindgen(js_name = getLabel)]
    pub fn get_label(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> Result<Option<String>, JsValue> {
        let id = arg_string(&id, "id")?;
        self.s(|s| Ok(s.label(&id).map(str::to_owned)))
    }

    /// The compaction preparation of the current branch, or `undefined`, with its `preview`
    /// (the context size after the compaction, alone and after a prune with `pruneConfig`).
    /// SPEC §5, §12.
    #[wasm_bindgen(js_name = prepareCompaction, unchecked_return_type = "CompactionPreparation | undefined")]
    pub fn prepare_compaction(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompactionSettings> & SyncTokenCount")]
        settings: JsValue,
        #[wasm_bindgen(js_name = pruneConfig, unchecked_optional_param_type = "Partial<PruneConfig>")]
        prune_config: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (counter, settings, prune) = compaction_options(&settings, &prune_config)?;
        if let Some(counter) = counter {
            // Counted by the host's tokenizer: the preparation through the value path.
            let templates = templates();
            return on_branch(counter, self.engine.session().clone(), move |branch| {
                use session_compaction::plan::prepare::{plan_compaction, preparation_from_plan};
                let Some(plan) = plan_compaction(branch, &settings) else { return Ok(JsValue::UNDEFINED) };
                let Some(mut prep) = preparation_from_plan(branch, &settings, &plan) else {
                    return Ok(JsValue::UNDEFINED);
                };
                prep.preview = Some(
                    session_compaction::summarize::preview::compaction_previews(branch, &settings, &prune, &templates)
                        .map_err(error_js)?,
                );
                from_serde(&prep)
            });
        }
        self.s(|s| {
            let Some((shell, lists)) =
                s.prepare_compaction_refs_with_previews(&settings, &prune, &templates()).map_err(error_js)?
            else {
                return Ok(JsValue::UNDEFINED);
            };
            let out = from_serde(&shell)?;
            let mut objects = self.messages.borrow_mut();
            for (key, list) in ["messagesToSummarize", "turnPrefixMessages", "recentMessages"].iter().zip(&lists) {
                let wants: Vec<Want<'_>> = list
                    .iter()
                    .map(|r| match r {
                        MessageRef::Entry(i) => Want::Item(ContextItem::Message(*i)),
                        MessageRef::Derived(v) => Want::Value(v),
                    })
                    .collect();
                js_sys::Reflect::set(&out, &JsValue::from_str(key), &objects.array(s, &wants)?.into())?;
            }
            Ok(out)
        })
    }

    /// The compaction decision of the current branch without materializing messages: boundary,
    /// cut point (branch indices), usage, and the `preview` of the context size after the
    /// compaction, alone and after a prune with `pruneConfig`. `undefined` when the branch is
    /// empty or ends in a compaction. SPEC §5.
    #[wasm_bindgen(js_name = planCompaction, unchecked_return_type = "PreparationPlan | undefined")]
    pub fn plan_compaction(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompactionSettings> & SyncTokenCount")]
        settings: JsValue,
        #[wasm_bindgen(js_name = pruneConfig, unchecked_optional_param_type = "Partial<PruneConfig>")]
        prune_config: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (counter, settings, prune) = compaction_options(&settings, &prune_config)?;
        if let Some(counter) = counter {
            let templates = templates();
            return on_branch(counter, self.engine.session().clone(), move |branch| {
                let Some(mut plan) = session_compaction::plan::prepare::plan_compaction(branch, &settings) else {
                    return Ok(JsValue::UNDEFINED);
                };
                plan.preview = Some(
                    session_compaction::summarize::preview::compaction_previews(branch, &settings, &prune, &templates)
                        .map_err(error_js)?,
                );
                from_serde(&plan)
            });
        }
        self.s(|s| from_option(s.plan_compaction_with_preview(&settings, &prune, &templates()).map_err(error_js)?))
    }

    /// The context of the current branch (SPEC §6): messages as stored, `repairs` = what their
    /// provider-valid form changes (§13.1).
    #[wasm_bindgen(js_name = buildSessionContext, unchecked_return_type = "SessionContext")]
    pub fn build_session_context(&self) -> Result<JsValue, JsValue> {
        self.s(|s| {
            let plan = s.context_plan();
            let out = from_serde(&plan.settings)?;
            let wants: Vec<Want<'_>> = plan.items.iter().map(|&item| Want::Item(item)).collect();
            let messages = self.messages.borrow_mut().array(s, &wants)?;
            js_sys::Reflect::set(&out, &JsValue::from_str("messages"), &messages)?;
            Ok(out)
        })
    }

    /// The messages of the current branch's context in provider-valid form (SPEC §13.1; the
    /// repairs are `contextRepairs()`) as one JSON array text, spliced from the stored entries:
    /// ready to send to an HTTP API. SPEC §6.
    /// `E_INVALID_ARGUMENT` when the text is longer than a JavaScript string can be.
    #[wasm_bindgen(js_name = buildSessionContextJson)]
    pub fn build_session_context_json(&self) -> Result<String, JsValue> {
        js_text(
            self.s(|s| s.build_session_context_json()),
            "buildSessionContextJson()",
            "buildLlmMessages() returns the messages as objects",
        )
    }

    /// The context messages converted for the model (`convertToLlm`) in provider-valid form
    /// (SPEC §6, §13.1; the repairs are `contextRepairs()`), as new objects on every call (a
    /// host may change them, e.g. add `cache_control`, without changing later calls): one
    /// `JSON.parse` of the messages conversion leaves as they are, spliced from their stored
    /// text (what the session saves), and the converted ones.
    #[wasm_bindgen(js_name = buildLlmMessages, unchecked_return_type = "AgentMessage[]")]
    pub fn build_llm_messages(&self) -> Result<JsValue, JsValue> {
        use session_compaction::session::handle::LlmMessage;
        self.s(|s| {
            let (plan, _repairs) = s.llm_messages(&templates()).map_err(error_js)?;
            let mut text = String::from("[");
            for m in &plan {
                let len = text.len();
                if len > 1 {
                    text.push(',');
                }
                let written = match m {
                    LlmMessage::Stored(item) => s
                        .message_bytes(item.index())
                        .is_some_and(|b| session_compaction::js::push_json_ascii_bytes(&mut text, b)),
                    LlmMessage::Built(v) => {
                        text.push_str(&v.to_string());
                        true
                    }
                };
                if !written {
                    text.truncate(len);
                }
            }
            text.push(']');
            js_sys::JSON::parse(&text)
        })
    }

    /// What the provider-valid context of the current branch repairs (SPEC §13.1): synthetic
    /// results for unanswered tool calls, orphan results left out, messages moved after the
    /// results of the exchange they interrupted. Metadata only.
    #[wasm_bindgen(js_name = contextRepairs, unchecked_return_type = "ContextRepair[]")]
    pub fn context_repairs(&self) -> Result<JsValue, JsValue> {
        self.s(|s| from_serde(&s.context_repairs()))
    }

    /// Estimated context size of the current branch (SPEC §12.3), the estimates by the host's
    /// `countTokens` when given (a Promise when it returns one).
    #[wasm_bindgen(js_name = estimateContextTokens, unchecked_return_type = "number")]
    pub fn estimate_context_tokens(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SyncTokenCount")] options: JsValue,
    ) -> Result<JsValue, JsValue> {
        match counter_option(&options, "options")? {
            Some(counter) => on_branch(counter, self.engine.session().clone(), |branch| {
                Ok(JsValue::from_f64(session_compaction::plan::overflow::estimate_context_tokens(branch)))
            }),
            None => Ok(JsValue::from_f64(
                self.s(|s| session_compaction::plan::overflow::estimate_context_tokens(&s.branch_source())),
            )),
        }
    }

    /// The pruning decision for the current branch without changing anything (SPEC §7). Each
    /// candidate names its `entryIndex` (file order) and its `branchPosition`.
    /// With `config.countTokens` the tokens are the host's counts (SPEC §3; a Promise when it
    /// returns one).
    #[wasm_bindgen(js_name = planPrune, unchecked_return_type = "PrunePlan")]
    pub fn plan_prune(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Partial<PruneConfig> & SyncTokenCount")] config: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (counter, config) = prune_options(&config)?;
        with_branch_counts(counter, self.engine.session().clone(), move |s, tokens| {
            from_serde(&s.plan_prune_counted(&config, tokens))
        })
    }

    /// Prunes old tool outputs of the current branch inside the handle (SPEC §7) and returns a
    /// [`PruneOutcome`]: counts, ids, entry indices and the JSONL of the changed lines, with the
    /// changed entries as objects only when asked for (`prunedEntries`, `entry(k)`). `now`: the
    /// `prunedAt` time, ms since the epoch (default now). Errors: `E_INVALID_ARGUMENT` for a bad
    /// `config` or `now`, `E_BUSY` during a compaction.
    /// With `config.countTokens` the decision uses the host's counts (SPEC §3; a Promise of
    /// the outcome when it returns one).
    #[wasm_bindgen(js_name = pruneToolOutputs, unchecked_return_type = "PruneOutcome")]
    pub fn prune_tool_outputs(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Partial<PruneConfig> & SyncTokenCount")] config: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] now: JsValue,
    ) -> Result<JsValue, JsValue> {
        let now = arg_opt_number(&now, "now")?;
        let (counter, config) = prune_options(&config)?;
        with_branch_counts(counter, self.engine.session().clone(), move |s, tokens| {
            let (plan, lines) = s.prune_tool_outputs_counted(&config, now.unwrap_or_else(js_sys::Date::now), tokens);
            Ok(PruneOutcome {
                tokens_saved: plan.tokens_saved,
                indices: plan.candidates.iter().map(|c| u32::try_from(c.index).unwrap_or(u32::MAX)).collect(),
                ids: plan.candidates.into_iter().map(|c| c.id).collect(),
                lines,
            }
            .into())
        })
    }

    /// The validation report (duplicate ids, missing parents, cycles, tool calls and results
    /// per path with the current leaf's path included, labels on unknown targets, …) and the
    /// repairs the current branch's context needs; changes nothing. SPEC §1, §13.1.
    #[wasm_bindgen(unchecked_return_type = "ContextValidation")]
    pub fn validate(&self) -> Result<JsValue, JsValue> {
        self.s(|s| from_serde(&s.validate()))
    }

    /// The session as JSONL (header first; unchanged entries byte for byte as loaded; every line
    /// ended as the loaded file's first line is, CRLF or LF). A session
    /// longer than a JavaScript string can be (about 512 MiB of ASCII) is `E_INVALID_ARGUMENT`:
    /// [`SessionTree::to_bytes`] returns any session. SPEC §13.3.
    #[wasm_bindgen(js_name = toJsonl)]
    pub fn to_jsonl(&self) -> Result<String, JsValue> {
        js_text(self.s(|s| s.to_jsonl()), "toJsonl()", "toBytes() returns the session as UTF-8 bytes")
    }

    /// The session as the UTF-8 bytes of its JSONL (`toJsonl()` encoded: header first; unchanged
    /// entries byte for byte as loaded), for writing to a file without a JavaScript string in
    /// between (`fs.writeFileSync(path, tree.toBytes())`); any length the module's memory holds,
    /// also beyond the longest JavaScript string. SPEC §13.3.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.s(|s| s.to_jsonl()).into_bytes()
    }
}

/// The entries at `indices` as one JS array (spliced from their stored texts).
fn entries_json(s: &Core, indices: &[usize]) -> Result<JsValue, JsValue> {
    let mut text = String::from("[");
    for (k, &i) in indices.iter().enumerate() {
        if k > 0 {
            text.push(',');
        }
        text.push_str(s.raw(i));
    }
    text.push(']');
    parse_js(&text)
}

/// The plain object of `PruneOutcome.toJSON()`.
#[wasm_bindgen(typescript_custom_section)]
const TS_PRUNE_SUMMARY: &str = r#"
/** What `PruneOutcome.toJSON()` returns (and `JSON.stringify` writes): its counts, ids and entry indices (SPEC §7). */
export interface PruneSummary {
  prunedCount: number;
  tokensSaved: number;
  prunedIds: (string | null)[];
  entryIndices: number[];
}
"#;

/// What `SessionTree.pruneToolOutputs` changed (SPEC §7), reported without building an object
/// per changed entry: counts, the ids and entry indices of the pruned tool results, and the
/// changed entries' new JSON lines. Everything is in the plan's order (superseded outputs
/// first, then old ones, each newest first, as in `planPrune().candidates`). The handle holds
/// the changed entries already: a host that keeps the file writes `jsonl` (or `toJsonl()` of the
/// handle), a host that keeps objects replaces them through `entry(k)` or `prunedEntries`.
#[wasm_bindgen]
pub struct PruneOutcome {
    tokens_saved: u64,
    indices: Vec<u32>,
    ids: Vec<Option<String>>,
    lines: PrunedLines,
}

#[wasm_bindgen]
impl PruneOutcome {
    /// How many tool results were pruned.
    #[wasm_bindgen(getter, js_name = prunedCount)]
    pub fn pruned_count(&self) -> usize {
        self.lines.len()
    }

    /// Estimated tokens saved (SPEC §3 estimates).
    #[wasm_bindgen(getter, js_name = tokensSaved)]
    pub fn tokens_saved(&self) -> f64 {
        self.tokens_saved as f64
    }

    /// The ids of the pruned entries (`null` for an entry without a string id).
    #[wasm_bindgen(getter, js_name = prunedIds, unchecked_return_type = "(string | null)[]")]
    pub fn pruned_ids(&self) -> js_sys::Array {
        self.ids.iter().map(|id| id.as_deref().map_or(JsValue::NULL, JsValue::from_str)).collect()
    }

    /// The index of each pruned entry in the session, in file order (the position of its node
    /// in `SessionTree.getTree()`, like `planPrune().candidates[k].entryIndex`).
    #[wasm_bindgen(getter, js_name = entryIndices)]
    pub fn entry_indices(&self) -> Vec<u32> {
        self.indices.clone()
    }

    /// The changed entries as JSONL: one line per pruned entry (its new JSON text, as
    /// `SessionTree.toJsonl()` writes it), each ended by `\n`; `""` when nothing was pruned.
    /// `E_INVALID_ARGUMENT` when the text is longer than a JavaScript string can be.
    #[wasm_bindgen(getter)]
    pub fn jsonl(&self) -> Result<String, JsValue> {
        js_text(self.lines.jsonl().to_owned(), "jsonl", "entry(k) returns one changed entry at a time")
    }

    /// The `k`-th changed entry as a new object (`undefined` when `k` is out of range).
    #[wasm_bindgen(unchecked_return_type = "SessionEntry | undefined")]
    pub fn entry(&self, k: usize) -> Result<JsValue, JsValue> {
        self.lines.get(k).map_or(Ok(JsValue::UNDEFINED), parse_js)
    }

    /// Every changed entry as a new object (the result of earlier versions of this method): one
    /// `JSON.parse` of all the changed lines, each call new objects.
    #[wasm_bindgen(getter, js_name = prunedEntries, unchecked_return_type = "SessionEntry[]")]
    pub fn pruned_entries(&self) -> Result<JsValue, JsValue> {
        let mut text = String::with_capacity(self.lines.jsonl().len() + 2);
        text.push('[');
        for (k, l) in self.lines.iter().enumerate() {
            if k > 0 {
                text.push(',');
            }
            text.push_str(l);
        }
        text.push(']');
        parse_js(&text)
    }

    /// `{prunedCount, tokensSaved, prunedIds, entryIndices}` as a plain object (what
    /// `JSON.stringify` writes).
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "PruneSummary")]
    pub fn to_json(&self) -> Result<JsValue, JsValue> {
        from_serde(&serde_json::json!({
            "prunedCount": self.lines.len(),
            "tokensSaved": self.tokens_saved,
            "prunedIds": self.ids,
            "entryIndices": self.indices,
        }))
    }
}
