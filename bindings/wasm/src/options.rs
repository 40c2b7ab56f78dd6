//! Options objects that mix data and JavaScript-only values. The data part is read by serde into
//! the core's option structs, which refuse unknown fields (`E_INVALID_ARGUMENT` naming the field);
//! the JavaScript-only keys (callbacks, hooks, `AbortSignal`, the remote endpoint) are listed here
//! per call, taken out before serde reads the rest, and checked themselves: a key that holds a
//! function but is no callback of the call is refused too (`JSON.stringify` would drop it
//! silently). Conversions only: what each option means is the core's.

use super::convert::{bad_arg, error_js, to_value};
use js_sys::Reflect;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// The JavaScript-only keys of `compact(preparation, options)` and
/// `generateBranchSummary(entries, options)`: the model and the signal.
pub const MODEL_CALL_KEYS: &[&str] = &["complete", "remoteEndpoint", "remoteTimeoutMs", "signal"];

/// The JavaScript-only keys of `generateBranchSummary(entries, options)`: the model, the signal
/// and the tokenizer of the budget.
pub const BRANCH_CALL_KEYS: &[&str] = &["complete", "remoteEndpoint", "remoteTimeoutMs", "signal", "countTokens"];

/// The JavaScript-only keys of `SessionTree.compact()` (`settings.countTokens`: a key of the
/// nested `settings` object).
pub const SESSION_CALL_KEYS: &[&str] =
    &["complete", "remoteEndpoint", "remoteTimeoutMs", "signal", "hooks", "settings.countTokens"];

/// The JavaScript-only keys of `SessionTree.navigateTree()`.
pub const NAVIGATE_KEYS: &[&str] = &["complete", "remoteEndpoint", "remoteTimeoutMs", "signal", "hooks", "countTokens"];

/// The JavaScript-only keys of `SessionTree.checkCompaction()`.
pub const CHECK_KEYS: &[&str] = &[
    "candidates",
    "complete",
    "remoteEndpoint",
    "remoteTimeoutMs",
    "signal",
    "hooks",
    "onEvent",
    "settings.countTokens",
];

/// The keys of one `checkCompaction` candidate (`{complete, model?}`).
pub const CANDIDATE_KEYS: &[&str] = &["complete", "model"];

/// The hook names the engine calls (SPEC §11), the keys a `hooks` object may hold.
pub const HOOK_NAMES: &[&str] =
    &["session_before_compact", "session.compacting", "session_compact", "session_before_tree", "session_tree"];

/// The own string keys of an object (none for anything else); a throwing Proxy is an
/// `E_INVALID_ARGUMENT` naming `what`.
fn own_keys(v: &JsValue, what: &str) -> Result<Vec<String>, JsValue> {
    if !v.is_object() || super::safe::is_array(v).map_err(|_| bad_arg(what, "cannot be read"))? {
        return Ok(Vec::new());
    }
    let keys = Reflect::own_keys(v).map_err(|_| bad_arg(what, "cannot be read"))?;
    Ok(keys.iter().filter_map(|k| k.as_string()).collect())
}

/// Fails with `E_INVALID_ARGUMENT` naming the first own key of the object `v` that is not in
/// `known` (`what` names the object, e.g. `options.hooks`).
pub fn check_known_keys(v: &JsValue, what: &str, known: &[&str]) -> Result<(), JsValue> {
    for key in own_keys(v, what)? {
        if !known.contains(&key.as_str()) {
            return Err(unknown(what, &key, known));
        }
    }
    Ok(())
}

fn unknown(what: &str, key: &str, known: &[&str]) -> JsValue {
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    bad_arg(what, format!("unknown option `{key}` (expected one of {list})"))
}

/// The data part of an options object as JSON: `v` without the keys in `js_only` (a key
/// `outer.inner` names a key of a nested object, e.g. `settings.countTokens`). A key outside
/// `js_only` that holds a function, in `v` or in an object it holds (`settings`, `prune`, …), is
/// an unknown option (no data field takes a function; `JSON.stringify` would drop it). The
/// JavaScript-only keys are never read here (their getters run once, where they are used): the
/// JSON text is written from a copy of the data keys read.
fn data_part(v: &JsValue, what: &str, js_only: &[&str]) -> Result<Value, JsValue> {
    if !v.is_object() || super::safe::is_array(v).map_err(|_| bad_arg(what, "cannot be read"))? {
        return to_value(v, what);
    }
    let data = js_sys::Object::new();
    for key in own_keys(v, what)? {
        if js_only.contains(&key.as_str()) {
            continue;
        }
        let value = Reflect::get(v, &JsValue::from_str(&key)).map_err(|_| bad_arg(what, "cannot be read"))?;
        not_finite(&value, &format!("{what}.{key}"))?;
        if value.is_function() {
            return Err(bad_arg(what, format!("unknown option `{key}` (a function; the callbacks are {js_only:?})")));
        }
        let inner = format!("{what}.{key}");
        // What was read of a nested object, and whether it has a JavaScript-only key
        // (`settings.countTokens`): then the copy without that key is written, not `value`.
        let mut read: Vec<(String, JsValue)> = Vec::new();
        let mut has_js_only = false;
        for nested in own_keys(&value, &inner)? {
            if js_only.iter().any(|k| k.split_once('.') == Some((key.as_str(), nested.as_str()))) {
                has_js_only = true;
                continue;
            }
            let f = Reflect::get(&value, &JsValue::from_str(&nested)).map_err(|_| bad_arg(&inner, "cannot be read"))?;
            not_finite(&f, &format!("{inner}.{nested}"))?;
            if f.is_function() {
                return Err(bad_arg(&inner, format!("unknown option `{nested}` (a function is no setting here)")));
            }
            read.push((nested, f));
        }
        let value = if has_js_only {
            let copy = js_sys::Object::new();
            for (nested, f) in &read {
                let _ = Reflect::set(&copy, &JsValue::from_str(nested), f);
            }
            copy.into()
        } else {
            value
        };
        let _ = Reflect::set(&data, &JsValue::from_str(&key), &value);
    }
    to_value(&data, what)
}

/// A number option that is NaN or an infinity (which `JSON.stringify` would write as `null`):
/// `E_INVALID_ARGUMENT` naming it (`name`: `settings.reserveTokens`).
fn not_finite(v: &JsValue, name: &str) -> Result<(), JsValue> {
    match v.as_f64() {
        Some(n) if !n.is_finite() => {
            Err(bad_arg(name, format!("expected a finite number, got {}", session_compaction::js::format_number(n))))
        }
        _ => Ok(()),
    }
}

/// An optional options object (`undefined`/`null` → `T::default()`): its data part read into
/// `T`, whose unknown fields are refused (`E_INVALID_ARGUMENT` naming the field and `what`).
pub fn to_options<T: DeserializeOwned + Default>(v: &JsValue, what: &str, js_only: &[&str]) -> Result<T, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    to_required_options(v, what, js_only)
}

/// [`to_options`] for an options object that must be given.
///
/// The data part is read from its JSON text, by the byte reader every other typed argument uses
/// (`serde_json::from_slice`): reading it from the `Value` would compile a second deserializer of
/// each option struct (the figures: docs/BENCHMARKS.md, "Size"). A failure names the field and
/// says what was expected and given ([`session_compaction::api::options_error`]).
pub fn to_required_options<T: DeserializeOwned>(v: &JsValue, what: &str, js_only: &[&str]) -> Result<T, JsValue> {
    let text = serde_json::to_vec(&data_part(v, what, js_only)?).map_err(|e| bad_arg(what, e))?;
    serde_json::from_slice(&text).map_err(|e| error_js(session_compaction::api::options_error(what, &text, &e)))
}
