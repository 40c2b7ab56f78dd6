//! `countTokens`, the host's tokenizer (text → tokens, a number or a Promise of one): the core
//! says which text of each entry is counted ([`session_compaction::plan::tokens`]), this module
//! calls `countTokens` on each text not counted before (one cache per counter function: an
//! entry's count is never recomputed), awaits only when a result is a Promise, and hands the
//! counts back to the core. Conversions only.

use super::convert::{bad_arg, error_js, to_typed};
use super::host::{get, js_message, settle};
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
        return n.to_string();
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
    let mut pending: Vec<(usize, (usize, u64), JsValue)> = Vec::new();
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
        let r = f
            .call1(&JsValue::UNDEFINED, &JsValue::from_str(&t.text))
            .map_err(|e| counter_error(format!("threw for text {i}: {}", js_message(&e))))?;
        if r.as_f64().is_some() || !(get(&r, "then").is_function()) {
            let n = count_of(&r, i)?;
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
    if pending.is_empty() {
        return Ok(Ok(text_tokens.into_iter().zip(&images).map(|(n, t)| t.tokens_from(n.unwrap_or(0))).collect()));
    }
    let f = f.clone();
    Ok(Err(Box::pin(async move {
        let mut fresh = Vec::new();
        for (i, k, p) in pending {
            let v = settle(p).await.map_err(|e| counter_error(format!("rejected for text {i}: {}", js_message(&e))))?;
            let n = count_of(&v, i)?;
            fresh.push((k, n));
            text_tokens[i] = Some(n);
        }
        remember(&f, fresh);
        Ok(text_tokens.into_iter().zip(&images).map(|(n, t)| t.tokens_from(n.unwrap_or(0))).collect())
    })))
}

/// Runs `then` with the tokens of `texts` counted by `counter` (`None` without a counter) and
/// returns its value, or — when `countTokens` returned a Promise — a Promise of it.
pub fn with_counts(
    counter: Option<Function>,
    texts: impl FnOnce() -> Vec<CountedText>,
    then: impl FnOnce(Option<Vec<u64>>) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    let Some(f) = counter else { return then(None) };
    match count_all(&f, &texts()).map_err(error_js)? {
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

/// [`on_values`] on the current branch of a session handle (root first); the session is
/// borrowed only while the texts are read and while `f` runs, never across an await.
pub fn on_branch(
    counter: Function,
    session: SharedSession,
    f: impl FnOnce(&dyn EntrySource) -> Result<JsValue, JsValue> + 'static,
) -> Result<JsValue, JsValue> {
    let texts = session.read(|s| entry_texts(&s.branch_source()));
    with_counts(
        Some(counter),
        move || texts,
        move |counts| {
            session.read(|s| {
                let branch = s.branch_source();
                f(&Recounted::new(&branch, &counts.unwrap_or_default()))
            })
        },
    )
}
