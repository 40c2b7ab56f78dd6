//! Value and error conversion between JavaScript and the core: JSON text both ways (native
//! `JSON.parse`/`JSON.stringify` are the fastest way across the boundary and keep key order),
//! and JS `Error`s carrying the stable `code` of [`crate::Error`].

use crate::error::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// A JS `Error` with `name = "SessionCompactionError"` and `code` set to a stable code.
pub fn js_error(code: &str, message: &str) -> JsValue {
    let err = js_sys::Error::new(message);
    err.set_name("SessionCompactionError");
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(code));
    err.into()
}

/// Converts a core error.
pub fn to_js(e: Error) -> JsValue {
    js_error(e.code(), &e.to_string())
}

/// An `E_INVALID_ARGUMENT` error for a malformed argument.
pub fn bad_arg(what: &str, detail: impl std::fmt::Display) -> JsValue {
    js_error("E_INVALID_ARGUMENT", &format!("invalid argument `{what}`: {detail}"))
}

/// A JS value as JSON (`undefined` → `null`).
pub fn to_value(v: &JsValue, what: &str) -> Result<Value, JsValue> {
    if v.is_undefined() {
        return Ok(Value::Null);
    }
    let text = js_sys::JSON::stringify(v).map_err(|_| bad_arg(what, "cannot be converted to JSON (cycle or BigInt?)"))?;
    let text = text.as_string().unwrap_or_else(|| "null".into());
    serde_json::from_str(&text).map_err(|e| bad_arg(what, e))
}

/// A JS array as a vector of JSON values.
pub fn to_values(v: &JsValue, what: &str) -> Result<Vec<Value>, JsValue> {
    match to_value(v, what)? {
        Value::Array(a) => Ok(a),
        other => Err(bad_arg(what, format!("expected an array, got {}", kind(&other)))),
    }
}

/// A typed argument (optional: `undefined`/`null` → `T::default()`).
pub fn to_typed<T: DeserializeOwned + Default>(v: &JsValue, what: &str) -> Result<T, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(to_value(v, what)?).map_err(|e| bad_arg(what, e))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON text as a JS value (native `JSON.parse`).
pub fn parse_js(text: &str) -> Result<JsValue, JsValue> {
    js_sys::JSON::parse(text).map_err(|_| js_error("E_INTERNAL", "result is not valid JSON"))
}

/// A Rust value as a JS value (through JSON text).
pub fn from_serde<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(v).map_err(|e| js_error("E_INTERNAL", &e.to_string()))?;
    parse_js(&text)
}

/// `undefined` for `None`.
pub fn from_option<T: Serialize>(v: Option<T>) -> Result<JsValue, JsValue> {
    match v {
        Some(v) => from_serde(&v),
        None => Ok(JsValue::UNDEFINED),
    }
}
