//! `countTokens`, the host's tokenizer (text → tokens, a number or a Promise of one): the core
//! says which text of each entry is counted ([`session_compaction::plan::tokens`]), this module
//! calls `countTokens` on each text not counted before (one cache per counter function: an
//! entry's count is never recomputed), awaits only when a result is a Promise, and hands the
//! counts back to the core. Conversions only.

use super::convert::{bad_arg, error_js, to_typed};
use super::host::{get, js_message};
use super::options::to_options;
use js_sys::Function;
use serde_json::Value;
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::error::Error;
use session_compaction::plan::prepare::CompactionSettings;
use session_compaction::plan::prune::PruneConfig;
use session_compaction::plan::tokens::{entry_texts, CountFuture, CountTokens, CountedText, HostCounter, Recounted};
use session_compaction::session::engine::SharedSession;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

/// The option name.
pub const COUNT_TOKENS: &str = "countTokens";

/// Counts by text: its byte length and hash.
type Counts = HashMap<(usize, u64), u64>;

/// A count still to come: the future of the tokens of every text.
type PendingCounts = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<u64>, Error>>>>;

/// A failure of the host's counter: `E_INVALID_ARGUMENT` naming `countTokens`.
fn counter_error(reason: String) -> Error {
    Error::Argument { name: COUNT_TOKENS.to_owned(), reason }
}

thread_local! {
    /// The counts of the last `countTokens` function used, by text.
    static CACHE: RefCell<Option<(Function, Counts)>> = const { RefCell::new(None) };
}

fn key(text: &str) -> (usize, u64) {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    (text.len(), h.finish())
}

/// `options.countTokens`: `None` when absent; `E_INVALID_ARGUMENT` when it is not a function.
pub fn counter_of(options: &JsValue, what: &str) -> Result<Option<Function>, JsValue> {
    let f = get(options, COUNT_TOKENS);
    if f.is_undefined() || f.is_null() {
        return Ok(None);
    }
    f.dyn_into::<Function>().map(Some).map_err(|_| {
        bad_arg(&format!("{what}.{COUNT_TOKENS}"), "expected a function (text: string) => number | Promise<number>")
    })
}

/// The arguments `(settings, pruneConfig)` of the calls that plan a compaction with its preview:
/// the settings' `countTokens` (taken out), the settings without it, and the prune config.
/// `E_INVALID_ARGUMENT` on an unknown name or a bad value.
pub fn compaction_options(
    settings: &JsValue,
    prune_config: &JsValue,
) -> Result<(Option<Function>, CompactionSettings, PruneConfig), JsValue> {
    let counter = counter_of(settings, "settings")?;
    let parsed: CompactionSettings = to_options(settings, "settings", &[COUNT_TOKENS])?;
    let prune: PruneConfig = to_typed(prune_config, "pruneConfig")?;
    Ok((counter, parsed, prune))
}

/// A count returned by `countTokens` for `text_index`: a finite non-negative number (fractions
/// rounded up); anything else is `E_INVALID_ARGUMENT` naming `countTokens`.
fn count_of(v: &JsValue, at: usize) -> Result<u64, Error> {
    match v.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(n.ceil() as u64),
        _ => Err(counter_error(format!(
            "returned {} for text {at}; expected a non-negative number of tokens",
            describe(v)
        ))),
    }
}

fn describe(v: &JsValue) -> String {
    if let Some(n) = v.as_f64() {
        // As JavaScript prints it (`Infinity`, `NaN`), not Rust's `inf`.
        return session_compaction::js::format_number(n);
    }
    if v.is_undefined() {
        return "undefined".into();
    }
    if v.is_null() {
        return "null".into();
    }
    if v.as_string().is_some() {
        return "a string".into();
    }
    "a non-number".into()
}

fn cached(f: &Function, k: (usize, u64)) -> Option<u64> {
    CACHE.with(|c| match &*c.borrow() {
        Some((g, map)) if js_sys::Object::is(g, f) => map.get(&k).copied(),
        _ => None,
    })
}

fn remember(f: &Function, entries: impl IntoIterator<Item = ((usize, u64), u64)>) {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if !matches!(&*c, Some((g, _)) if js_sys::Object::is(g, f)) {
            *c = Some((f.clone(), HashMap::new()));
        }
        if let Some((_, map)) = c.as_mut() {
            map.extend(entries);
        }
    });
}

/// The tokens of each text: `Ok(Ok(tokens))` when every count is known or returned as a number,
/// `Ok(Err(future))` when one `countTokens` call returned a Promise (the future resolves to the
/// tokens). A throw, a rejection or a bad number is `E_INVALID_ARGUMENT` naming `countTokens`.
fn count_all(f: &Function, texts: &[CountedText]) -> Result<Result<Vec<u64>, PendingCounts>, Error> {
    let mut text_tokens: Vec<Option<u64>> = Vec::with_capacity(texts.len());
    // The Promises still to settle: (text index, key, promise), one per distinct text.
    let mut pending: Vec<(usize, (usize, u64), JsValue)> = Vec::new();
    // Texts repeated within this call: (text index, index of its first occurrence).
    let mut repeats: Vec<(usize, usize)> = Vec::new();
    let mut first: HashMap<(usize, u64), usize> = HashMap::new();
    let mut fresh = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        if t.text.is_empty() {
            text_tokens.push(Some(0));
            continue;
        }
        let k = key(&t.text);
        if let Some(n) = cached(f, k) {
            text_tokens.push(Some(n));
            continue;
        }
        if let Some(&at) = first.get(&k) {
            repeats.push((i, at));
            text_tokens.push(None);
            continue;
        }
        first.insert(k, i);
        let r = match f.call1(&JsValue::UNDEFINED, &JsValue::from_str(&t.text)) {
            Ok(r) => r,
            Err(e) => {
                silence(&pending);
                return Err(counter_error(format!("threw for text {i}: {}", js_message(&e))));
            }
        };
        if r.as_f64().is_some() || !(get(&r, "then").is_function()) {
            let n = count_of(&r, i).inspect_err(|_| silence(&pending))?;
            fresh.push((k, n));
            text_tokens.push(Some(n));
        } else {
            pending.push((i, k, r));
            text_tokens.push(None);
        }
    }
    remember(f, fresh);
    let images: Vec<CountedText> =
        texts.iter().map(|t| CountedText { text: String::new(), images: t.images }).collect();
    let finish = move |mut text_tokens: Vec<Option<u64>>| {
        for &(i, at) in &repeats {
            text_tokens[i] = text_tokens[at];
        }
        text_tokens.into_iter().zip(&images).map(|(n, t)| t.tokens_from(n.unwrap_or(0))).collect::<Vec<u64>>()
    };
    if pending.is_empty() {
        return Ok(Ok(finish(text_tokens)));
    }
    let f = f.clone();
    Ok(Err(Box::pin(async move {
        // Every Promise is awaited (allSettled): a rejection after the first one is never left
        // unhandled; the first failure in text order is the error.
        let all = js_sys::Promise::all_settled(&pending.iter().map(|p| p.2.clone()).collect::<js_sys::Array>());
        let settled = wasm_bindgen_futures::JsFuture::from(all)
            .await
            .map_err(|e| counter_error(format!("could not be awaited: {}", js_message(&e))))?;
        let settled: js_sys::Array = settled.unchecked_into();
        let mut fresh = Vec::new();
        for (n, (i, k, _)) in pending.iter().enumerate() {
            let outcome = settled.get(n as u32);
            if get(&outcome, "status").as_string().as_deref() != Some("fulfilled") {
                return Err(counter_error(format!("rejected for text {i}: {}", js_message(&get(&outcome, "reason")))));
            }
            let tokens = count_of(&get(&outcome, "value"), *i)?;
            fresh.push((*k, tokens));
            text_tokens[*i] = Some(tokens);
        }
        remember(&f, fresh);
        Ok(finish(text_tokens))
    })))
}

/// Marks the Promises of a count given up (a throw or a bad number came first) as handled: their
/// rejections are the host's counter failing for a call that already failed, not unhandled.
fn silence(pending: &[(usize, (usize, u64), JsValue)]) {
    if pending.is_empty() {
        return;
    }
    let ignore = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
    for (_, _, p) in pending {
        let _ = js_sys::Promise::resolve(p).catch(&ignore);
    }
    // Called at most once per failed count: the handler lives as long as the Promises need it.
    ignore.forget();
}

/// Runs `then` with the tokens of `texts` counted by `counter` (`None` without a counter) and
/// returns its value, or — when `countTokens` returned a Promise — a Promise of it.
pub fn with_counts(
    counter: Option<Function>,
    texts: impl FnOnce() -> Vec<CountedText>,
    then: impl FnOnce(Option<Vec<u64>>) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    let Some(f) = counter else { return then(None) };
    counted(&f, &texts(), Box::new(then))
}

/// What runs once the tokens are known (`None` without a counter): the JS value of the call.
type WithTokens = Box<dyn FnOnce(Option<Vec<u64>>) -> Result<JsValue, JsValue>>;

/// What [`with_counts`] runs once `countTokens` is given: `then` behind a pointer, so that this
/// code and the state machine of its Promise exist once for every caller (there are a dozen).
fn counted(f: &Function, texts: &[CountedText], then: WithTokens) -> Result<JsValue, JsValue> {
    match count_all(f, texts).map_err(error_js)? {
        Ok(tokens) => then(Some(tokens)),
        Err(later) => Ok(future_to_promise(async move { then(Some(later.await.map_err(error_js)?)) }).into()),
    }
}

/// The host's `countTokens` as the engine's tokenizer ([`CountTokens`]): numbers answer at
/// once, a Promise is awaited; counts are cached by text like every other use of the function.
struct JsCounter(Function);

impl CountTokens for JsCounter {
    fn count_texts<'a>(&'a self, texts: &'a [CountedText]) -> CountFuture<'a> {
        match count_all(&self.0, texts) {
            Ok(Ok(tokens)) => Box::pin(std::future::ready(Ok(tokens))),
            Ok(Err(later)) => later,
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

/// The engine's [`HostCounter`] of an optional `countTokens` function.
pub fn host_counter(counter: Option<Function>) -> HostCounter {
    counter.map(|f| HostCounter::new(JsCounter(f))).unwrap_or_default()
}

/// The options of a function whose only option is `countTokens` (`{countTokens?}`; `undefined`
/// for none): another key is `E_INVALID_ARGUMENT` naming it.
pub fn counter_option(options: &JsValue, what: &str) -> Result<Option<Function>, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(None);
    }
    if !options.is_object() {
        return Err(bad_arg(what, "expected an options object {countTokens?}"));
    }
    super::options::check_known_keys(options, what, &[COUNT_TOKENS])?;
    counter_of(options, what)
}

/// Runs `f` on the entries `values`: as they are without a counter, else with every entry's
/// tokens counted by `countTokens` ([`Recounted`]); a Promise of the result when a count is one.
pub fn on_values(
    counter: Option<Function>,
    values: Vec<Value>,
    f: impl FnOnce(&dyn EntrySource) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    let Some(counter) = counter else { return f(&EntryList::new(&values)) };
    let texts = entry_texts(&EntryList::new(&values));
    with_counts(
        Some(counter),
        move || texts,
        move |counts| {
            let list = EntryList::new(&values);
            f(&Recounted::new(&list, &counts.unwrap_or_default()))
        },
    )
}

/// [`on_values`] over any owned source (e.g. the caller's entries read in place): `f` gets the
/// source as counted (recounted with `countTokens` when a counter is given) and the source
/// itself (to hand back its own objects).
pub fn on_entries<S: EntrySource + 'static>(
    counter: Option<Function>,
    source: S,
    f: impl FnOnce(&dyn EntrySource, &S) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    let Some(counter) = counter else { return f(&source, &source) };
    let texts = entry_texts(&source);
    with_counts(
        Some(counter),
        move || texts,
        move |counts| f(&Recounted::new(&source, &counts.unwrap_or_default()), &source),
    )
}

/// Runs `f` on a session handle with the token numbers of its current branch counted by
/// `counter` (by branch position; `None` without a counter); a Promise of the result when a
/// count is one. The session is borrowed only while the texts are read and while `f` runs (the
/// counts apply only if the branch is still the one counted: the core checks its length).
pub fn with_branch_counts(
    counter: Option<Function>,
    session: SharedSession,
    f: impl FnOnce(&mut session_compaction::session::SessionTree, Option<&[u64]>) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    if counter.is_none() {
        return session.write(|s| f(s, None));
    }
    let texts = session.read(|s| entry_texts(&s.branch_source()));
    let counted = session.clone();
    with_counts(counter, move || texts, move |counts| counted.write(|s| f(s, counts.as_deref())))
}

/// `config.countTokens` of a prune config taken out: the counter and the config.
/// `E_INVALID_ARGUMENT` on an unknown name or a bad value.
pub fn prune_options(config: &JsValue) -> Result<(Option<Function>, PruneConfig), JsValue> {
    let counter = counter_of(config, "config")?;
    let parsed: PruneConfig = to_options(config, "config", &[COUNT_TOKENS])?;
    Ok((counter, parsed))
}

/// [`on_values`] on the current branch of a session handle (root first); the session is
/// borrowed only while the texts are read and while `f` runs, never across an await.
pub fn on_branch(
    counter: Function,
    session: SharedSession,
    f: impl FnOnce(&dyn EntrySource) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    with_branch_counts(Some(counter), session, move |s, counts| {
        let branch = s.branch_source();
        f(&Recounted::new(&branch, counts.unwrap_or_default()))
    })
}
