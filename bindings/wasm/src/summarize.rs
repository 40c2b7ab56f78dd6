//! Asynchronous exports: `compact`, `generateBranchSummary`, and the pipeline methods of
//! `SessionTree` (`compact`, `navigateTree`, `checkCompaction`, `abortCompaction`). Every model
//! call and hook is a JavaScript callback returning a Promise. Conversions only; the logic is
//! [`session_compaction::summarize`] and [`session_compaction::session::engine`].

use super::api::templates;
use super::convert::{from_serde, js_error, to_js, to_typed, to_value, to_values};
use super::host::{get, host_model, link_signal, HostModel, JsClock, JsComplete, JsEvents, JsHooks};
use super::session::SessionTree;
use js_sys::{Promise, Reflect};
use serde_json::{json, Value};
use session_compaction::entry::EntryList;
use session_compaction::error::Error;
use session_compaction::plan::prepare::{CompactionPreparation, CompactionSettings};
use session_compaction::plan::prune::PruneConfig;
use session_compaction::session::engine::{CheckOptions, CompactRun, NavigateRun, RetryPolicy};
use session_compaction::summarize::{BranchSummaryOptions, CompactOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

#[wasm_bindgen(typescript_custom_section)]
const TS_ASYNC: &'static str = r#"
/** What `complete` receives: one summary to write. */
export interface CompleteRequest extends SummaryRequest { signal?: AbortSignal }
/** The host's model: resolves to the summary text. Reject with an Error carrying `status` and `headers` (or `retryAfterMs`) to enable retries. */
export type CompleteFn = (request: CompleteRequest) => Promise<string>;
/** Options of `compact()`. */
export interface CompactCallOptions {
  complete?: CompleteFn; remoteEndpoint?: string; customInstructions?: string;
  promptOverride?: string; extraContext?: string[]; signal?: AbortSignal;
}
/** Options of `generateBranchSummary()`. */
export interface BranchSummaryCallOptions {
  complete: CompleteFn; contextWindow?: number; reserveTokens?: number; customInstructions?: string; signal?: AbortSignal;
}
/** Result of `generateBranchSummary()`. */
export type BranchSummaryOutcome = BranchSummary | { aborted: true } | { error: string };
/** Hooks keyed by event name; each may return a value or a Promise. */
export interface SessionHooks {
  session_before_compact?: (event: { type: "session_before_compact"; preparation: CompactionPreparation; branchEntries: SessionEntry[]; customInstructions?: string; signal?: AbortSignal }) => unknown;
  "session.compacting"?: (event: { type: "session.compacting"; sessionId: string | null; messages: AgentMessage[] }) => unknown;
  session_compact?: (event: { type: "session_compact"; compactionEntry: SessionEntry; fromExtension: boolean }) => unknown;
  session_before_tree?: (event: { type: "session_before_tree"; preparation: { targetId: string; oldLeafId: string | null; commonAncestorId: string | null; entriesToSummarize: SessionEntry[]; userWantsSummary: boolean }; signal?: AbortSignal }) => unknown;
  session_tree?: (event: { type: "session_tree"; newLeafId: string | null; oldLeafId: string | null; summaryEntry?: SessionEntry; fromExtension?: boolean }) => unknown;
}
/** Options of `SessionTree.compact()`. */
export interface SessionCompactOptions {
  complete?: CompleteFn; remoteEndpoint?: string; customInstructions?: string; hooks?: SessionHooks;
  signal?: AbortSignal; settings?: Partial<CompactionSettings>;
}
/** Result of `SessionTree.compact()`. */
export interface SessionCompactResult { compactionEntry: SessionEntry; result: CompactionResult; fromExtension: boolean; context: SessionContext }
/** Options of `SessionTree.navigateTree()`. */
export interface NavigateTreeOptions {
  summarize?: boolean; customInstructions?: string; complete?: CompleteFn; remoteEndpoint?: string; hooks?: SessionHooks;
  signal?: AbortSignal; contextWindow?: number; reserveTokens?: number;
}
/** Result of `SessionTree.navigateTree()`. */
export interface NavigateTreeResult { editorText?: string; cancelled: boolean; aborted?: boolean; summaryEntry?: SessionEntry; newLeafId: string | null }
/** A candidate model of automatic compaction. */
export interface CompactionCandidate { complete: CompleteFn; model?: string }
/** Options of `SessionTree.checkCompaction()`. */
export interface CheckCompactionOptions {
  contextWindow: number; model?: string; candidates?: CompactionCandidate[]; complete?: CompleteFn;
  retry?: { maxRetries?: number; baseDelayMs?: number; maxWaitMs?: number };
  hooks?: SessionHooks; onEvent?: (event: { type: "auto_compaction_start"; reason: "overflow" | "threshold" } | { type: "auto_compaction_end"; result?: CompactionResult; aborted: boolean; willRetry: boolean; errorMessage?: string }) => void;
  signal?: AbortSignal; settings?: Partial<CompactionSettings>; prune?: Partial<PruneConfig>;
}
/** Result of `SessionTree.checkCompaction()`. */
export interface CheckCompactionResult {
  prunedCount: number; tokensSaved: number; contextTokens: number; reason?: "overflow" | "threshold";
  compactionEntry?: SessionEntry; result?: CompactionResult; willRetry: boolean; context?: SessionContext;
  continuePrompt?: string; aborted: boolean; errorMessage?: string;
}
"#;

fn opt_string(obj: &JsValue, key: &str) -> Option<String> {
    get(obj, key).as_string()
}

fn opt_u64(obj: &JsValue, key: &str) -> Option<u64> {
    get(obj, key).as_f64().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64)
}

fn string_list(obj: &JsValue, key: &str) -> Result<Vec<String>, JsValue> {
    match to_value(&get(obj, key), key)? {
        Value::Array(a) => Ok(a.into_iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()),
        Value::Null => Ok(Vec::new()),
        _ => Err(js_error("E_INVALID_ARGUMENT", &format!("options.{key} must be an array of strings"))),
    }
}

/// A core error as a JS `Error` (see [`to_js`]); a failed model call or remote endpoint also
/// carries the HTTP `status` when one is known, so hosts can tell 429/5xx from other failures.
fn error_js(e: Error) -> JsValue {
    let status = match &e {
        Error::Remote { status, .. } if *status != 0 => Some(*status),
        Error::Model { status, .. } => *status,
        _ => None,
    };
    let js = to_js(e);
    if let Some(status) = status {
        let _ = Reflect::set(&js, &JsValue::from_str("status"), &JsValue::from(status));
    }
    js
}

fn need_model(model: Option<HostModel>) -> Result<HostModel, JsValue> {
    model.ok_or_else(|| {
        js_error("E_INVALID_ARGUMENT", "pass `complete` (a function returning Promise<string>) or `remoteEndpoint`")
    })
}

/// `compact(preparation, options)` → `Promise<CompactionResult>`: the model calls of a
/// compaction through `options.complete` or `options.remoteEndpoint`. SPEC §9.
#[wasm_bindgen(js_name = compact, unchecked_return_type = "Promise<CompactionResult>")]
pub fn compact_preparation(
    #[wasm_bindgen(unchecked_param_type = "CompactionPreparation")] preparation: JsValue,
    #[wasm_bindgen(unchecked_param_type = "CompactCallOptions")] options: JsValue,
) -> Promise {
    let prep: Result<CompactionPreparation, JsValue> = to_value(&preparation, "preparation").and_then(|v| {
        serde_json::from_value(v).map_err(|e| js_error("E_INVALID_ARGUMENT", &format!("invalid preparation: {e}")))
    });
    future_to_promise(async move {
        let prep = prep?;
        let (signal, js_signal) = link_signal(&get(&options, "signal"));
        let model = need_model(host_model(&options, &js_signal)?)?;
        let opts = CompactOptions {
            custom_instructions: opt_string(&options, "customInstructions"),
            prompt_override: opt_string(&options, "promptOverride"),
            extra_context: string_list(&options, "extraContext")?,
        };
        let templates = templates();
        let result = signal
            .race("Compaction", session_compaction::summarize::compact(&prep, &model, &opts, &templates))
            .await
            .map_err(error_js)?;
        from_serde(&result)
    })
}

/// `generateBranchSummary(entries, options)` → `{summary, readFiles, modifiedFiles}`,
/// `{aborted: true}` or `{error}` (never rejects for model failures). SPEC §10.
#[wasm_bindgen(js_name = generateBranchSummary, unchecked_return_type = "Promise<BranchSummaryOutcome>")]
pub fn generate_branch_summary(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(unchecked_param_type = "BranchSummaryCallOptions")] options: JsValue,
) -> Promise {
    let values = to_values(&entries, "entries");
    future_to_promise(async move {
        let values = values?;
        let (signal, js_signal) = link_signal(&get(&options, "signal"));
        let model = need_model(host_model(&options, &js_signal)?)?;
        let opts = BranchSummaryOptions {
            context_window: opt_u64(&options, "contextWindow"),
            reserve_tokens: opt_u64(&options, "reserveTokens"),
            custom_instructions: opt_string(&options, "customInstructions"),
        };
        let templates = templates();
        let list = EntryList::new(&values);
        let out = match signal
            .race(
                "Branch summary",
                session_compaction::summarize::generate_branch_summary(&list, &model, &opts, &templates),
            )
            .await
        {
            Ok(s) => serde_json::to_value(s).unwrap_or(Value::Null),
            Err(Error::Aborted { .. }) => json!({"aborted": true}),
            Err(Error::Summarization { message }) | Err(Error::Model { message, .. }) => json!({ "error": message }),
            Err(e) => json!({"error": e.to_string()}),
        };
        from_serde(&out)
    })
}

/// `extractiveSummary(request)`: the deterministic summary of the summarizer that needs no model
/// (the entry exports it as `extractiveSummarizer`, an async `complete`).
#[wasm_bindgen(js_name = extractiveSummary)]
pub fn extractive_summary(
    #[wasm_bindgen(unchecked_param_type = "SummaryRequest")] request: JsValue,
) -> Result<String, JsValue> {
    let req: session_compaction::summarize::SummaryRequest = serde_json::from_value(to_value(&request, "request")?)
        .map_err(|e| js_error("E_INVALID_ARGUMENT", &format!("invalid request: {e}")))?;
    Ok(session_compaction::summarize::extractive::extractive_summary(&req))
}

/// `extractiveSummarizer(request)` → `Promise<string>`: a deterministic `complete`
/// implementation that needs no model (sections quoted from the conversation, marked as
/// extractive in the first line). Pass it wherever a `complete` callback is expected.
// An `async fn` export is declared as `Promise<…>` of its return type: "string" gives `Promise<string>`.
#[wasm_bindgen(js_name = extractiveSummarizer, unchecked_return_type = "string")]
pub async fn extractive_summarizer(
    #[wasm_bindgen(unchecked_param_type = "CompleteRequest")] request: JsValue,
) -> Result<JsValue, JsValue> {
    extractive_summary(request).map(JsValue::from)
}

#[wasm_bindgen(js_class = SessionTree)]
impl SessionTree {
    /// Runs the whole compaction pipeline on the current branch (SPEC §9, §11) and resolves to
    /// `{compactionEntry, result, fromExtension, context}`. Rejects with `E_BUSY` (another
    /// compaction runs), `E_CANCELLED` ("Compaction cancelled"), `E_ABORTED`, `E_HOOK`,
    /// `E_ALREADY_COMPACTED`, `E_NOTHING_TO_COMPACT`, `E_MODEL`/`E_REMOTE`. Nothing is appended
    /// on failure.
    #[wasm_bindgen(js_name = compact, unchecked_return_type = "Promise<SessionCompactResult>")]
    pub fn compact_session(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SessionCompactOptions")] options: JsValue,
    ) -> Promise {
        let engine = self.engine.clone();
        future_to_promise(async move {
            let (signal, js_signal) = link_signal(&get(&options, "signal"));
            let model = need_model(host_model(&options, &js_signal)?)?;
            let hooks = JsHooks { obj: get(&options, "hooks"), signal: js_signal };
            let run = CompactRun {
                settings: to_typed::<CompactionSettings>(&get(&options, "settings"), "settings")?,
                custom_instructions: opt_string(&options, "customInstructions"),
            };
            *engine.templates.borrow_mut() = templates();
            let done =
                engine.compact(&model, &hooks, &run, Some(&signal), js_sys::Date::now()).await.map_err(error_js)?;
            let context = engine.session().borrow().build_session_context();
            from_serde(
                &json!({"compactionEntry": done.entry, "result": done.result, "fromExtension": done.from_extension, "context": context}),
            )
        })
    }

    /// Navigates to `targetId` (SPEC §10), optionally summarizing the branch being left; resolves
    /// to `{editorText?, cancelled, aborted?, summaryEntry?, newLeafId}`.
    #[wasm_bindgen(js_name = navigateTree, unchecked_return_type = "Promise<NavigateTreeResult>")]
    pub fn navigate_tree(
        &self,
        #[wasm_bindgen(js_name = targetId, unchecked_param_type = "string")] target_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "NavigateTreeOptions")] options: JsValue,
    ) -> Promise {
        let engine = self.engine.clone();
        future_to_promise(async move {
            let target_id = super::convert::arg_string(&target_id, "targetId")?;
            let (signal, js_signal) = link_signal(&get(&options, "signal"));
            let model = host_model(&options, &js_signal)?;
            let hooks = JsHooks { obj: get(&options, "hooks"), signal: js_signal };
            let run = NavigateRun {
                summarize: get(&options, "summarize").as_bool().unwrap_or(false),
                custom_instructions: opt_string(&options, "customInstructions"),
                branch: BranchSummaryOptions {
                    context_window: opt_u64(&options, "contextWindow"),
                    reserve_tokens: opt_u64(&options, "reserveTokens"),
                    custom_instructions: None,
                },
            };
            *engine.templates.borrow_mut() = templates();
            let out = engine
                .navigate_tree(&target_id, model.as_ref(), &hooks, &run, Some(&signal), js_sys::Date::now())
                .await
                .map_err(error_js)?;
            // A cancelled or aborted navigation leaves the leaf where it was: report that leaf.
            let new_leaf_id =
                if out.cancelled { engine.session().borrow().leaf_id().map(str::to_owned) } else { out.new_leaf_id };
            let mut v = json!({"cancelled": out.cancelled, "newLeafId": new_leaf_id});
            if out.aborted {
                v["aborted"] = Value::Bool(true);
            }
            if let Some(t) = out.editor_text {
                v["editorText"] = Value::from(t);
            }
            if let Some(e) = out.summary_entry {
                v["summaryEntry"] = e;
            }
            from_serde(&v)
        })
    }

    /// Automatic compaction after a model turn (SPEC §11): prune, then the overflow or the
    /// threshold path; see [`session_compaction::session::engine::SessionEngine::check_compaction`]. Never rejects
    /// for a failed compaction: `errorMessage` says "Context overflow recovery failed: …" or
    /// "Auto-compaction failed: …".
    #[wasm_bindgen(js_name = checkCompaction, unchecked_return_type = "Promise<CheckCompactionResult>")]
    pub fn check_compaction(
        &self,
        #[wasm_bindgen(js_name = assistantMessage, unchecked_param_type = "AgentMessage")] assistant_message: JsValue,
        #[wasm_bindgen(unchecked_param_type = "CheckCompactionOptions")] options: JsValue,
    ) -> Promise {
        let engine = self.engine.clone();
        future_to_promise(async move {
            let message = to_value(&assistant_message, "assistantMessage")?;
            let (signal, js_signal) = link_signal(&get(&options, "signal"));
            let context_window = get(&options, "contextWindow")
                .as_f64()
                .ok_or_else(|| js_error("E_INVALID_ARGUMENT", "options.contextWindow (tokens) is required"))?;
            let mut candidates = Vec::new();
            let list = get(&options, "candidates");
            if let Some(arr) = list.dyn_ref::<js_sys::Array>() {
                for c in arr.iter() {
                    let f = get(&c, "complete");
                    let f = if f.is_function() { f } else { c.clone() };
                    let func = f
                        .dyn_into::<js_sys::Function>()
                        .map_err(|_| js_error("E_INVALID_ARGUMENT", "each candidate needs `complete`"))?;
                    candidates.push(JsComplete { func, signal: js_signal.clone() });
                }
            }
            if candidates.is_empty() {
                let f = get(&options, "complete");
                let func = f
                    .dyn_into::<js_sys::Function>()
                    .map_err(|_| js_error("E_INVALID_ARGUMENT", "pass `candidates` or `complete`"))?;
                candidates.push(JsComplete { func, signal: js_signal.clone() });
            }
            let retry_js = get(&options, "retry");
            let mut retry = RetryPolicy::default();
            if let Some(n) = get(&retry_js, "maxRetries").as_f64() {
                retry.max_retries = n.max(0.0) as u32;
            }
            if let Some(n) = get(&retry_js, "baseDelayMs").as_f64() {
                retry.base_delay_ms = n.max(0.0);
            }
            if let Some(n) = get(&retry_js, "maxWaitMs").as_f64() {
                retry.max_wait_ms = n.max(0.0);
            }
            let check = CheckOptions {
                context_window,
                model: opt_string(&options, "model"),
                settings: to_typed::<CompactionSettings>(&get(&options, "settings"), "settings")?,
                prune: to_typed::<PruneConfig>(&get(&options, "prune"), "prune")?,
                retry,
            };
            let hooks = JsHooks { obj: get(&options, "hooks"), signal: js_signal };
            let events = JsEvents(get(&options, "onEvent"));
            *engine.templates.borrow_mut() = templates();
            let out = engine
                .check_compaction(&message, &check, &candidates, &hooks, &JsClock, &events, Some(&signal))
                .await
                .map_err(error_js)?;
            let mut v = json!({
                "prunedCount": out.pruned_count, "tokensSaved": out.tokens_saved, "contextTokens": out.context_tokens,
                "willRetry": out.will_retry, "aborted": out.aborted,
            });
            if let Some(r) = out.reason {
                v["reason"] = Value::from(r);
            }
            if let Some(c) = out.compaction {
                v["compactionEntry"] = c.entry;
                v["result"] = serde_json::to_value(c.result).unwrap_or(Value::Null);
            }
            if let Some(ctx) = out.context {
                v["context"] = serde_json::to_value(ctx).unwrap_or(Value::Null);
            }
            if let Some(p) = out.continue_prompt {
                v["continuePrompt"] = Value::from(p);
            }
            if let Some(m) = out.error_message {
                v["errorMessage"] = Value::from(m);
            }
            from_serde(&v)
        })
    }

    /// Aborts the running compaction or navigation, if any (it rejects with `E_ABORTED` /
    /// resolves cancelled; nothing is appended).
    #[wasm_bindgen(js_name = abortCompaction)]
    pub fn abort_compaction(&self) {
        self.engine.abort();
    }

    /// True while a compaction or navigation runs on this session.
    #[wasm_bindgen(getter, js_name = isCompacting)]
    pub fn is_compacting(&self) -> bool {
        self.engine.is_busy()
    }
}
