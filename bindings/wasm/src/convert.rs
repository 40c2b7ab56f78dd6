//! Value and error conversion between JavaScript and the core: JSON text both ways (native
//! `JSON.parse`/`JSON.stringify` are the fastest way across the boundary and keep key order),
//! and JS `Error`s carrying the stable `code` of [`session_compaction::Error`].

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use session_compaction::error::Error;
use wasm_bindgen::prelude::*;

/// The one conversion of a core error to JavaScript: an `Error` with
/// `name = "SessionCompactionError"`, `code` = [`Error::code`], the error's message, and
/// `status` when the error carries an HTTP status ([`Error::http_status`]).
pub fn error_js(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("SessionCompactionError");
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    if let Some(status) = e.http_status() {
        let _ = js_sys::Reflect::set(&err, &JsValue::from_str("status"), &JsValue::from(status));
    }
    err.into()
}

/// An [`Error::Argument`] (`E_INVALID_ARGUMENT`) for a malformed argument, as a JS `Error`.
pub fn bad_arg(what: &str, detail: impl std::fmt::Display) -> JsValue {
    error_js(Error::Argument { name: what.to_owned(), reason: detail.to_string() })
}

/// An [`Error::Internal`] (`E_INTERNAL`), as a JS `Error`.
fn internal(message: impl std::fmt::Display) -> JsValue {
    error_js(Error::Internal { message: message.to_string() })
}

/// A JS value as JSON text (`JSON.stringify`; `undefined` → `null`).
pub fn stringify(v: &JsValue, what: &str) -> Result<String, JsValue> {
    if v.is_undefined() {
        return Ok("null".into());
    }
    let text = js_sys::JSON::stringify(v)
        .map_err(|_| bad_arg(what, "cannot be converted to JSON (cycle, BigInt or a throwing Proxy?)"))?;
    Ok(text.as_string().unwrap_or_else(|| "null".into()))
}

/// A JS value as JSON (`undefined` → `null`), read like a loaded line
/// ([`session_compaction::io::parse_line_value`]: nesting up to 512 levels).
pub fn to_value(v: &JsValue, what: &str) -> Result<Value, JsValue> {
    if v.is_undefined() {
        return Ok(Value::Null);
    }
    let text = stringify(v, what)?;
    session_compaction::io::parse_line_value(text.as_bytes()).map_err(|e| bad_arg(what, e))
}

/// Bytes of memory a list needs per entry to be read: what the reader keeps of it
/// (`reader::Known`) or its JSON value, and the metadata of an entry read whole (about 350
/// bytes, plus its strings), rounded up.
const BYTES_PER_ENTRY: usize = 512;

/// Whether the memory has room to read `len` entries ([`BYTES_PER_ENTRY`] each): one block of
/// that size allocated and freed at once (its untouched pages cost no resident memory, and the
/// reads that follow allocate from it). An allocation that fails would abort the module, so a
/// list too long to be read is an error before anything is read.
pub fn room_for(len: usize) -> bool {
    let Some(bytes) = len.checked_mul(BYTES_PER_ENTRY) else { return false };
    let mut block = Vec::<u8>::new();
    let ok = block.try_reserve_exact(bytes).is_ok();
    std::hint::black_box(&mut block);
    ok
}

/// An array's `length` value as a count of entries: a value that is not a finite number ≥ 0
/// counts 0, and the count is at most 2³² − 1 (the longest array).
pub fn entry_count(length: &JsValue) -> usize {
    length.as_f64().filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(0.0).min(u32::MAX as f64) as usize
}

/// `E_INVALID_ARGUMENT` naming `what` when the memory has no room to read `len` entries
/// ([`room_for`]; an array's `length` can be set to 2³² − 1 with nothing in it).
pub fn ensure_room(what: &str, len: usize) -> Result<(), JsValue> {
    if room_for(len) {
        return Ok(());
    }
    Err(bad_arg(what, format!("{len} entries are more than the memory has room for")))
}

/// A JS array as a vector of JSON values. `E_INVALID_ARGUMENT` when it is not an array, cannot be
/// converted, or its `length` is more entries than the memory has room for ([`room_for`]),
/// checked before anything is converted.
pub fn to_values(v: &JsValue, what: &str) -> Result<Vec<Value>, JsValue> {
    if super::safe::is_array(v) == Ok(true) {
        if let Ok(length) = js_sys::Reflect::get(v, &JsValue::from_str("length")) {
            ensure_room(what, entry_count(&length))?;
        }
    }
    match to_value(v, what)? {
        Value::Array(a) => Ok(a),
        other => Err(bad_arg(what, format!("expected an array, got {}", session_compaction::api::json_kind(&other)))),
    }
}

/// A typed options argument without callbacks (optional: `undefined`/`null` → `T::default()`),
/// read through JSON text; a key holding a function, and (for the core's option structs) any
/// unknown field, is `E_INVALID_ARGUMENT` naming it ([`super::options::to_options`]).
pub fn to_typed<T: DeserializeOwned + Default>(v: &JsValue, what: &str) -> Result<T, JsValue> {
    super::options::to_options(v, what, &[])
}

/// A typed argument that must be an object (`expected` says which, for the message: anything
/// else is `E_INVALID_ARGUMENT` saying what was given), read straight from its JSON text.
pub fn to_required<T: DeserializeOwned>(v: &JsValue, what: &str, expected: &str) -> Result<T, JsValue> {
    if !v.is_object() || super::safe::is_array(v) != Ok(false) {
        return Err(bad_arg(what, format!("expected {expected}, got {}", js_kind(v))));
    }
    let text = js_sys::JSON::stringify(v)
        .map_err(|_| bad_arg(what, "cannot be converted to JSON (cycle or BigInt?)"))?
        .as_string()
        .ok_or_else(|| bad_arg(what, "expected a JSON value"))?;
    serde_json::from_slice(text.as_bytes())
        .map_err(|e| error_js(session_compaction::api::options_error(what, text.as_bytes(), &e)))
}

/// The longest string a JavaScript engine holds, in UTF-16 units (V8's limit, the lowest of the
/// engines the package runs on).
const MAX_JS_STRING: usize = (1 << 29) - 24;

/// `E_INVALID_ARGUMENT` for `what` whose result would be `units` UTF-16 units, more than a
/// JavaScript string holds; `instead` says what to call instead.
fn too_long(what: &str, units: usize, instead: &str) -> JsValue {
    bad_arg(
        what,
        format!(
            "the result would be {units} characters, more than a JavaScript string holds ({MAX_JS_STRING}); {instead}"
        ),
    )
}

/// `text` as a string result, or `E_INVALID_ARGUMENT` naming `what` when it is longer than a
/// JavaScript string can be (returning it would throw from the glue); `instead` says what to
/// call instead.
pub fn js_text(text: String, what: &str, instead: &str) -> Result<String, JsValue> {
    match session_compaction::js::utf16_len_over(&text, MAX_JS_STRING) {
        None => Ok(text),
        Some(units) => Err(too_long(what, units, instead)),
    }
}

/// A JSON text as a JS value (native `JSON.parse`). A text longer than a JavaScript string can
/// be (a per-line result of an input with tens of millions of lines, such as `parseSession`'s
/// `opaqueLines`) is `E_INVALID_ARGUMENT` for the argument `input`.
pub fn parse_js(text: &str) -> Result<JsValue, JsValue> {
    if let Some(units) = session_compaction::js::utf16_len_over(text, MAX_JS_STRING) {
        return Err(too_long("input", units, "SessionTree.fromBytes loads such an input"));
    }
    js_sys::JSON::parse(text).map_err(|_| internal("result is not valid JSON"))
}

/// A Rust value as a JS value (through JSON text).
pub fn from_serde<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(v).map_err(internal)?;
    parse_js(&text)
}

/// `undefined` for `None`.
pub fn from_option<T: Serialize>(v: Option<T>) -> Result<JsValue, JsValue> {
    match v {
        Some(v) => from_serde(&v),
        None => Ok(JsValue::UNDEFINED),
    }
}

/// A required string argument (`E_INVALID_ARGUMENT` for anything else).
pub fn arg_string(v: &JsValue, what: &str) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| bad_arg(what, format!("expected a string, got {}", js_kind(v))))
}

/// An optional string argument: `undefined`/`null` → `None`.
pub fn arg_opt_string(v: &JsValue, what: &str) -> Result<Option<String>, JsValue> {
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        arg_string(v, what).map(Some)
    }
}

/// An array of strings. Read through `JSON.stringify` (whose exceptions are caught), never
/// element by element: a Proxy cannot throw through the glue.
pub fn arg_strings(v: &JsValue, what: &str) -> Result<Vec<String>, JsValue> {
    if super::safe::is_array(v) != Ok(true) {
        return Err(bad_arg(what, format!("expected an array of strings, got {}", js_kind(v))));
    }
    let items: Vec<Value> = serde_json::from_slice(stringify(v, what)?.as_bytes()).map_err(|e| bad_arg(what, e))?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Value::String(s) => Ok(s),
            other => {
                Err(bad_arg(what, format!("item {i} is {}, not a string", session_compaction::api::json_kind(&other))))
            }
        })
        .collect()
}

/// A number argument (not NaN).
pub fn arg_number(v: &JsValue, what: &str) -> Result<f64, JsValue> {
    match v.as_f64() {
        Some(n) if !n.is_nan() => Ok(n),
        Some(_) => Err(bad_arg(what, "expected a number, got NaN")),
        _ => Err(bad_arg(what, format!("expected a number, got {}", js_kind(v)))),
    }
}

/// An optional number argument: `undefined`/`null` → `None`.
pub fn arg_opt_number(v: &JsValue, what: &str) -> Result<Option<f64>, JsValue> {
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        arg_number(v, what).map(Some)
    }
}

/// A non-negative integer index argument.
pub fn arg_index(v: &JsValue, what: &str) -> Result<usize, JsValue> {
    let n = arg_number(v, what)?;
    if n < 0.0 || n.fract() != 0.0 || !n.is_finite() {
        return Err(bad_arg(what, format!("expected a non-negative integer, got {n}")));
    }
    Ok(n.min(usize::MAX as f64) as usize)
}

/// Bytes from a `Uint8Array` (or `ArrayBuffer`), copied; a Proxy of one is refused.
pub fn arg_bytes(v: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    match super::safe::bytes(v) {
        Some(super::safe::Bytes::Copied(b)) => Ok(b),
        Some(super::safe::Bytes::TooLarge(len)) => Err(bad_arg(what, too_large("a buffer", len))),
        None => Err(bad_arg(what, format!("expected a Uint8Array, got {}", js_kind(v)))),
    }
}

/// The message of input that does not fit in wasm memory: `what` (`a file`, `a buffer`) of
/// `len` bytes.
pub fn too_large(what: &str, len: f64) -> String {
    format!(
        "{what} of {} bytes does not fit in WebAssembly memory (at most 2 GiB in one piece, 4 GiB in all)",
        session_compaction::js::format_number(len)
    )
}

/// A short name of a JS value's type, for messages. Only `typeof` probes and a caught
/// `Array.isArray`: it never throws, whatever the value.
pub fn js_kind(v: &JsValue) -> &'static str {
    if v.is_undefined() {
        "undefined"
    } else if v.is_null() {
        "null"
    } else if v.as_string().is_some() {
        "a string"
    } else if v.as_f64().is_some() {
        "a number"
    } else if v.as_bool().is_some() {
        "a boolean"
    } else if v.is_bigint() {
        "a BigInt"
    } else if v.is_function() {
        "a function"
    } else if v.is_symbol() {
        "a symbol"
    } else {
        match super::safe::is_array(v) {
            Ok(true) => "an array",
            Ok(false) => "an object",
            Err(_) => "an object that cannot be read (a revoked or throwing Proxy)",
        }
    }
}
