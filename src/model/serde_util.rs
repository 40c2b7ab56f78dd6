//! Field (de)serializers shared by the model: presence without null-to-absent folding, and
//! JavaScript numbers.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::Serializer;
use serde_json::{Map, Value};
use std::fmt;

/// For `Option<T>` fields with `#[serde(default, skip_serializing_if = "Option::is_none")]`:
/// a present key is always `Some`. With `T = Option<U>` this keeps `null` (`Some(None)`) apart
/// from absent (`None`); with a `T` that has no null (a string, a number, a struct), a `null` is
/// an error, so the enclosing object falls back to its `Unknown` form instead of losing the key.
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// For required `Option<T>` fields (`parentId`): `null` is `None`; a missing key is an error
/// (serde only treats a missing `Option` as `None` when no `deserialize_with` is given).
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// Largest magnitude below which an integral `f64` is written as a JSON integer (2^53).
const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// Writes a JavaScript number the way `JSON.stringify` does: integral values as integers,
/// non-finite values as `null` (serde_json writes a non-finite `f64` as `null`).
fn write_js_number<S: Serializer>(v: f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < MAX_SAFE {
        // Exact: |v| < 2^53 is integral. `-0` becomes `0`, as in JSON.stringify.
        s.serialize_i64(v as i64)
    } else {
        s.serialize_f64(v)
    }
}

/// Reads any JSON number as a JavaScript number; `null` reads as NaN when `null_is_nan`.
struct JsNumber {
    null_is_nan: bool,
}

impl Visitor<'_> for JsNumber {
    type Value = Option<f64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.null_is_nan { "a number or null" } else { "a number" })
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        if self.null_is_nan {
            Ok(Some(f64::NAN))
        } else {
            Ok(None)
        }
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }
}

/// `#[serde(with = "js_number")]` for `f64` fields holding JavaScript numbers (message
/// timestamps in ms, costs): any JSON number reads; `null` reads as NaN and NaN writes as `null`
/// (`JSON.stringify(NaN)`), so both round-trip.
pub(crate) mod js_number {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        write_js_number(*v, s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        d.deserialize_any(JsNumber { null_is_nan: true }).map(|v| v.unwrap_or(f64::NAN))
    }
}

/// `#[serde(default, with = "opt_nullable_js_number", skip_serializing_if = "Option::is_none")]`
/// for optional nullable JavaScript numbers (`prunedAt`): absent is `None`, `null` is
/// `Some(None)`, a number is `Some(Some(ms))`.
pub(crate) mod opt_nullable_js_number {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Option<Option<f64>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(Some(n)) => write_js_number(*n, s),
            _ => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
        d.deserialize_any(JsNumber { null_is_nan: false }).map(Some)
    }
}

/// The object of a value built as `Value::Object` (an empty map for anything else, which the
/// callers never pass).
pub(crate) fn into_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The JSON type name of a value, for error messages.
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Serializes `value` to a JSON value. Serializing the model cannot fail (all map keys are
/// strings, non-finite numbers become `null`); the `Null` fallback only keeps this panic-free.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
