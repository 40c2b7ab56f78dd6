//! Reading JavaScript values that may throw: a `Proxy` (revoked, or with throwing traps) throws
//! from `Array.isArray`, `instanceof` and property reads. Every such probe here goes through
//! `Reflect.apply` / `Reflect.get`, whose exceptions come back as `Err`, so that an argument can
//! never throw through the glue (which would leave the handle borrowed and leak its memory);
//! `Array.isArray` is bound directly, with its exception caught by the glue the same way.

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// `globalThis[a][b]` (a built-in function), `None` if it is missing.
fn builtin(a: &str, b: &JsValue) -> Option<Function> {
    let ctor = Reflect::get(&js_sys::global(), &JsValue::from_str(a)).ok()?;
    Reflect::get(&ctor, b).ok()?.dyn_into::<Function>().ok()
}

/// `Reflect.apply(f, this, args)`: what `f` returns, or what it throws as `Err`.
fn apply(f: &Function, this: &JsValue, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let list = js_sys::Array::new();
    for a in args {
        list.push(a);
    }
    Reflect::apply(f, this, &list)
}

#[wasm_bindgen]
extern "C" {
    /// `Array.isArray(v)` in one call from wasm; what it throws (a revoked Proxy) comes back as
    /// `Err`.
    #[wasm_bindgen(js_namespace = Array, js_name = isArray, catch)]
    pub fn array_is_array(v: &JsValue) -> Result<bool, JsValue>;
}

/// `Array.isArray(v)` (`false` for anything but an object); `Err` when it throws (a revoked
/// Proxy).
pub fn is_array(v: &JsValue) -> Result<bool, JsValue> {
    if !v.is_object() {
        return Ok(false);
    }
    array_is_array(v)
}

/// `v instanceof C` for the built-in constructor `globalThis[ctor]`; `Err` when it throws.
pub fn instance_of(v: &JsValue, ctor: &str) -> Result<bool, JsValue> {
    if !v.is_object() && !v.is_function() {
        return Ok(false);
    }
    let c = Reflect::get(&js_sys::global(), &JsValue::from_str(ctor))?;
    let has_instance = builtin("Function", &JsValue::from_str("prototype"))
        .map(JsValue::from)
        .and_then(|proto| Reflect::get(&proto, &js_sys::Symbol::has_instance()).ok())
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or(JsValue::UNDEFINED)?;
    Ok(apply(&has_instance, &c, &[v])?.is_truthy())
}

/// What [`bytes`] read of a byte buffer.
pub enum Bytes {
    /// Its bytes, copied into wasm memory.
    Copied(Vec<u8>),
    /// Its length (bytes), when a copy of that size does not fit in wasm memory.
    TooLarge(f64),
}

/// The bytes of a real `Uint8Array` (not a Proxy of one), or of a real `ArrayBuffer`, copied
/// (or its length when they do not fit in wasm memory); `None` for anything else, throwing
/// values included.
pub fn bytes(v: &JsValue) -> Option<Bytes> {
    if !v.is_object() {
        return None;
    }
    // `%TypedArray%.prototype[Symbol.toStringTag]` is "Uint8Array" for a real Uint8Array only,
    // and never throws; ArrayBuffer's `byteLength` getter throws for anything but an ArrayBuffer.
    let getter = |ctor: &str, key: &JsValue, up: bool| -> Option<Function> {
        let c = Reflect::get(&js_sys::global(), &JsValue::from_str(ctor)).ok()?;
        let mut proto = Reflect::get(&c, &JsValue::from_str("prototype")).ok()?;
        if up {
            proto = Reflect::get_prototype_of(&proto).ok()?.into();
        }
        let d = Reflect::get_own_property_descriptor(proto.unchecked_ref::<js_sys::Object>(), key).ok()?;
        Reflect::get(&d, &JsValue::from_str("get")).ok()?.dyn_into::<Function>().ok()
    };
    let tag = getter("Uint8Array", &js_sys::Symbol::to_string_tag(), true)
        .and_then(|g| apply(&g, v, &[]).ok())
        .and_then(|t| t.as_string());
    // A plain `Uint8Array` over the same bytes, made from the array's internal buffer, offset and
    // length (the `%TypedArray%.prototype` getters, which never throw nor run the host's code):
    // a `length` property of the object itself (or of a subclass) is not its length, and the
    // copy read it (a RangeError through the glue, or bytes past the array's end).
    let ctor = Reflect::get(&js_sys::global(), &JsValue::from_str("Uint8Array")).ok()?;
    let ctor = ctor.dyn_ref::<Function>()?;
    if tag.as_deref() == Some("Uint8Array") {
        let slot = |key: &str| getter("Uint8Array", &JsValue::from_str(key), true).and_then(|g| apply(&g, v, &[]).ok());
        let (buffer, offset, length) = (slot("buffer")?, slot("byteOffset")?, slot("length")?);
        let len = length.as_f64()?;
        if len == 0.0 {
            // Empty, or over a detached buffer (which no view can be made of).
            return Some(Bytes::Copied(Vec::new()));
        }
        let view = Reflect::construct(ctor, &js_sys::Array::of3(&buffer, &offset, &length)).ok()?;
        return Some(copy_out(view.unchecked_ref::<js_sys::Uint8Array>(), len));
    }
    let length = getter("ArrayBuffer", &JsValue::from_str("byteLength"), false).and_then(|g| apply(&g, v, &[]).ok());
    if let Some(len) = length.and_then(|l| l.as_f64()) {
        if len == 0.0 {
            // Empty, or detached (`new Uint8Array` of a detached buffer throws).
            return Some(Bytes::Copied(Vec::new()));
        }
        let view = Reflect::construct(ctor, &js_sys::Array::of1(v)).ok()?;
        return Some(copy_out(view.unchecked_ref::<js_sys::Uint8Array>(), len));
    }
    None
}

/// The `len` bytes of the plain view `a` (its length as a JS number: `length()` is a `u32`, which
/// a buffer of 4 GiB or more wraps) copied into a vector that holds exactly them, or their
/// length when the memory has no room for it (`Uint8Array::to_vec` would panic: a capacity
/// above 2 GiB, or an allocation that fails).
fn copy_out(a: &js_sys::Uint8Array, len: f64) -> Bytes {
    if len > isize::MAX as f64 {
        return Bytes::TooLarge(len);
    }
    let len = len as usize;
    let mut out = Vec::<u8>::new();
    if out.try_reserve_exact(len).is_err() {
        return Bytes::TooLarge(len as f64);
    }
    a.copy_to_uninit(&mut out.spare_capacity_mut()[..len]);
    // SAFETY: `copy_to_uninit` initialized the first `len` bytes of the spare capacity.
    unsafe { out.set_len(len) };
    Bytes::Copied(out)
}
