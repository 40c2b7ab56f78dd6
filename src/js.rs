//! JavaScript semantics the reference depends on: UTF-16 lengths, `JSON.stringify`,
//! number-to-string, `Object.entries` key order, `Date` parsing, `String.prototype.trim`,
//! `String.prototype.toLowerCase` and the default `Array.prototype.sort` order.
//!
//! The reference engine is TypeScript; its token estimates and its texts are defined by these
//! JavaScript behaviours (SPEC §3, §8), so they are reproduced here exactly.

use serde_json::{Map, Value};
use std::cmp::Ordering;

/// Length of `s` in UTF-16 code units (JavaScript `string.length`). SPEC §3.
pub fn utf16_len(s: &str) -> u64 {
    if s.is_ascii() {
        return s.len() as u64;
    }
    crate::entry::bytes16::utf16_len(s.as_bytes())
}

/// The UTF-16 length of `s` when it exceeds `limit` units (a text too long for a JavaScript
/// string of at most `limit` units), `None` when it fits. Only a text of more than `limit` bytes
/// is counted: one of at most `limit` bytes has at most `limit` units.
pub fn utf16_len_over(s: &str, limit: usize) -> Option<usize> {
    if s.len() <= limit {
        return None;
    }
    let units = s.encode_utf16().count();
    (units > limit).then_some(units)
}

/// Appends the JSON text `json` to `out` with every non-ASCII character written as a `\uXXXX`
/// escape (a surrogate pair above U+FFFF): the same value for `JSON.parse`, in a text made of
/// ASCII only, which a JavaScript engine decodes from bytes and parses faster (a one-byte
/// string). `json` must be JSON text: outside its strings there are no non-ASCII characters.
pub fn push_json_ascii(out: &mut String, json: &str) {
    push_json_ascii_bytes(out, json.as_bytes());
}

/// [`push_json_ascii`] of bytes not known to be UTF-8, checked as they are read (no separate
/// pass): `false`, and `out` as it was, when they are not UTF-8.
pub fn push_json_ascii_bytes(out: &mut String, json: &[u8]) -> bool {
    let start = out.len();
    let mut from = 0;
    while let Some(rest) = json.get(from..) {
        let run = &rest[..ascii_len(rest)];
        // SAFETY: every byte of `run` is below 0x80 (`ascii_len`), and ASCII is UTF-8.
        out.push_str(unsafe { std::str::from_utf8_unchecked(run) });
        let at = from + run.len();
        if at == json.len() {
            return true;
        }
        let width = match json[at] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        // The one character there, checked (an empty or cut-off sequence is none).
        let Some(c) = json.get(at..at + width).and_then(|b| std::str::from_utf8(b).ok()).and_then(|s| s.chars().next())
        else {
            out.truncate(start);
            return false;
        };
        let mut units = [0u16; 2];
        for &mut unit in c.encode_utf16(&mut units) {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u");
            for shift in [12, 8, 4, 0] {
                out.push(char::from(HEX[usize::from((unit >> shift) & 0xf)]));
            }
        }
        from = at + width;
    }
    true
}

/// How many bytes `b` starts with that are ASCII, sixteen at a time.
fn ascii_len(b: &[u8]) -> usize {
    const HIGH: u128 = 0x8080_8080_8080_8080_8080_8080_8080_8080;
    let mut n = 0;
    for chunk in b.chunks_exact(16) {
        let word = u128::from_le_bytes(<[u8; 16]>::try_from(chunk).unwrap_or([0x80; 16]));
        if word & HIGH != 0 {
            break;
        }
        n += 16;
    }
    n + b[n..].iter().position(|&x| x >= 0x80).unwrap_or(b.len() - n)
}

/// Compares two strings by UTF-16 code units, the order of JavaScript's default
/// `Array.prototype.sort` (astral characters sort before U+E000..U+FFFF). SPEC §8.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // The texts agree up to the first byte that differs; the order is that of the characters
    // there (UTF-8 keeps code point order, UTF-16 only puts astral characters elsewhere), so
    // only those two are encoded. Bytes before the difference are equal, so a character
    // boundary of `a` there is one of `b`.
    let same = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let mut start = same;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    let (mut x, mut y) = ([0u16; 2], [0u16; 2]);
    match (a[start..].chars().next(), b[start..].chars().next()) {
        (Some(c), Some(d)) => c.encode_utf16(&mut x).cmp(&d.encode_utf16(&mut y)),
        (c, d) => c.is_some().cmp(&d.is_some()),
    }
}

/// Sorts strings in place with JavaScript's default sort order ([`cmp_utf16`]).
pub fn sort_utf16(list: &mut [String]) {
    list.sort_by(|a, b| cmp_utf16(a, b));
}

/// Sorts `items` stably by an integer key (ascending; equal keys keep their order), the order
/// of JavaScript's stable `Array.prototype.sort` with a numeric comparator.
///
/// Every caller shares one sort of `(key, index)` pairs: each `sort_by_key` would compile its own
/// copy of the standard library's stable sort (about 3.5 KB of WebAssembly per element type).
pub fn sort_by_key_stable<T>(items: &mut [T], key: impl Fn(&T) -> usize) {
    if items.len() < 2 {
        return;
    }
    let mut order: Vec<(usize, usize)> = items.iter().enumerate().map(|(i, t)| (key(t), i)).collect();
    // Unique indices make the unstable sort of the pairs a stable sort of the items.
    order.sort_unstable();
    // Position k receives the item at order[k].1: applied in place, one cycle at a time.
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        let mut k = start;
        while !placed[k] {
            placed[k] = true;
            let from = order[k].1;
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

/// Formats a double exactly as JavaScript's `Number.prototype.toString` does
/// (`1e+21`, `0.1`, `-0` → `0`, `NaN`, `Infinity`).
pub fn format_number(n: f64) -> String {
    if n == 0.0 {
        return "0".to_string();
    }
    let mut buf = ryu_js::Buffer::new();
    buf.format(n).to_string()
}

/// Parses a decimal number with the grammar of Rust's `f64::from_str` (`[+-]`, digits with an
/// optional `.` and fraction, either part may be empty but not both, an optional `e`/`E` exponent;
/// or `inf`, `infinity`, `nan` in any case) to the same, correctly rounded value; `None` when `s`
/// is not such a number. Too large a magnitude is `±inf`, too small `±0`, as `from_str` gives.
///
/// The digits are read by serde_json's exact reader (the engine's one float parser), so the
/// WebAssembly module carries no second decimal-to-binary converter (`core`'s tables).
pub fn parse_f64(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let (negative, rest) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let signed = |v: f64| if negative { -v } else { v };
    if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") {
        return Some(signed(f64::INFINITY));
    }
    if rest.eq_ignore_ascii_case(b"nan") {
        return Some(f64::NAN);
    }
    let digits = |from: usize| from + rest[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int_end = digits(0);
    let (frac, mut i) = match rest.get(int_end) {
        Some(b'.') => {
            let end = digits(int_end + 1);
            (&rest[int_end + 1..end], end)
        }
        _ => (&rest[..0], int_end),
    };
    if int_end == 0 && frac.is_empty() {
        return None;
    }
    let mut exponent = &rest[..0];
    if matches!(rest.get(i), Some(b'e' | b'E')) {
        let start = i + 1;
        let sign = usize::from(matches!(rest.get(start), Some(b'+' | b'-')));
        let end = digits(start + sign);
        if end == start + sign {
            return None;
        }
        exponent = &rest[start..end];
        i = end;
    }
    if i != rest.len() {
        return None;
    }
    // The same number as JSON text: no sign but `-`, no leading zeros, no empty part.
    let mut json = Vec::with_capacity(rest.len() + 3);
    if negative {
        json.push(b'-');
    }
    match rest[..int_end].iter().position(|&c| c != b'0') {
        Some(first) => json.extend_from_slice(&rest[first..int_end]),
        None => json.push(b'0'),
    }
    if !frac.is_empty() {
        json.push(b'.');
        json.extend_from_slice(frac);
    }
    if !exponent.is_empty() {
        json.push(b'e');
        json.extend_from_slice(exponent);
    }
    // Valid JSON by construction: the only error left is a magnitude beyond f64 (serde_json
    // refuses it; `from_str` gives infinity).
    Some(serde_json::from_slice::<f64>(&json).unwrap_or(signed(f64::INFINITY)))
}

/// The JavaScript double value of a JSON number.
pub fn number_value(n: &serde_json::Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// True when `key` is a canonical array index (`"0"`, `"17"`, up to 4294967294): JavaScript
/// orders such keys first, ascending, in `Object.keys` / `JSON.stringify`.
pub fn array_index_key(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 {
        return None;
    }
    if key.len() > 1 && key.starts_with('0') {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: u64 = key.parse().ok()?;
    if v <= 4_294_967_294 {
        Some(v as u32)
    } else {
        None
    }
}

/// The entries of an object in JavaScript property order (`Object.entries`): array-index keys
/// ascending first, then the other keys in insertion order.
pub fn object_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut idx: Vec<(u32, &String, &Value)> = Vec::new();
    let mut rest: Vec<(&String, &Value)> = Vec::new();
    for (k, v) in map {
        match array_index_key(k) {
            Some(i) => idx.push((i, k, v)),
            None => rest.push((k, v)),
        }
    }
    sort_by_key_stable(&mut idx, |&(i, _, _)| i as usize);
    idx.into_iter().map(|(_, k, v)| (k, v)).chain(rest).collect()
}

/// Appends `s` as a JSON string literal the way `JSON.stringify` writes it (well-formed
/// JSON.stringify: `"`, `\\`, `\b \f \n \r \t`, other controls as `\u00XX`).
pub fn push_json_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    // Runs of characters written as they are go in whole; only `"`, `\\` and the controls
    // (all ASCII, so every cut is at a character boundary) are replaced.
    let bytes = s.as_bytes();
    let mut run = 0;
    while let Some(n) = crate::entry::bytes16::first_special(&bytes[run..]) {
        let i = run + n;
        out.push_str(&s[run..i]);
        let b = bytes[i];
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            _ => "",
        };
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(escape);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// `JSON.stringify(value)` with JavaScript key order and number formatting.
/// Non-finite numbers cannot occur in parsed JSON; they would print as `null` like in JS.
pub fn json_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value);
    out
}

fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = number_value(n);
            if f.is_finite() {
                out.push_str(&format_number(f));
            } else {
                out.push_str("null");
            }
        }
        Value::String(s) => push_json_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, v);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, v)) in object_entries(m).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, k);
                out.push(':');
                write_json(out, v);
            }
            out.push('}');
        }
    }
}

/// `JSON.stringify(value).length` in UTF-16 code units, without building the string for
/// plain strings. SPEC §3 (toolCall arguments).
pub fn json_stringify_len(value: &Value) -> u64 {
    utf16_len(&json_stringify(value))
}

/// JavaScript `String(value)` for JSON values (objects print `[object Object]`, arrays are
/// joined with `,`, `null` prints `null`).
pub fn js_string(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format_number(number_value(n)),
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// JavaScript truthiness of an optional JSON value (`undefined`, `null`, `false`, `0`, `NaN`
/// and `""` are falsy; arrays and objects are truthy).
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// True for the characters JavaScript's `String.prototype.trim` removes (WhiteSpace and
/// LineTerminator of ECMA-262).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// JavaScript `String.prototype.trim`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// JavaScript `String.prototype.toLowerCase` (the Unicode default lowercase mapping, full
/// mappings and the final sigma included; the same as [`str::to_lowercase`]): the case-insensitive
/// comparisons of the engine (overflow and transient error texts, SPEC §11; the extractive
/// summarizer's cue words) lowercase with it. ASCII text is lowercased here; other text, in the
/// WebAssembly build (feature `js-host`), by the host's `toLowerCase`, so that the module carries
/// no Unicode case tables (about 10 KB of the gzipped module, docs/BENCHMARKS.md, "Size"); natively
/// by [`str::to_lowercase`].
pub fn lowercase(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        lowercase_unicode(s)
    }
}

#[cfg(all(target_arch = "wasm32", feature = "js-host"))]
fn lowercase_unicode(s: &str) -> String {
    #[wasm_bindgen::prelude::wasm_bindgen]
    extern "C" {
        /// `String.prototype.toLowerCase.call(s)`.
        #[wasm_bindgen(js_namespace = ["String", "prototype", "toLowerCase"], js_name = call)]
        fn to_lower_case(s: &str) -> String;
    }
    to_lower_case(s)
}

#[cfg(not(all(target_arch = "wasm32", feature = "js-host")))]
fn lowercase_unicode(s: &str) -> String {
    s.to_lowercase()
}

/// `new Date(text).getTime()` for the ISO-8601 forms sessions use: `YYYY-MM-DD` (UTC),
/// `YYYY-MM-DDTHH:mm[:ss[.fff…]]` with `Z` or `±HH:mm` (without an offset the time is read as
/// UTC, the reference's runtime zone), more than 3 fraction digits truncated. Returns `None`
/// (JavaScript `NaN`) when the text is not such a date. Result in ms since the epoch.
pub fn parse_iso_timestamp(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let mut p = 0usize;
    let num = |p: &mut usize, n: usize| -> Option<i64> {
        let s = b.get(*p..*p + n)?;
        if !s.iter().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *p += n;
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    // year: 4 digits or ±6 digits
    let year = match b.first()? {
        b'+' | b'-' => {
            let neg = b[0] == b'-';
            p = 1;
            let y = num(&mut p, 6)?;
            if neg && y == 0 {
                return None;
            }
            if neg {
                -y
            } else {
                y
            }
        }
        _ => num(&mut p, 4)?,
    };
    let (mut month, mut day) = (1i64, 1i64);
    let (mut hour, mut minute, mut second, mut millis) = (0i64, 0i64, 0i64, 0f64);
    let mut offset_min = 0i64;
    if b.get(p) == Some(&b'-') {
        p += 1;
        month = num(&mut p, 2)?;
        if b.get(p) == Some(&b'-') {
            p += 1;
            day = num(&mut p, 2)?;
        }
    }
    if p < b.len() {
        if b[p] != b'T' && b[p] != b't' {
            return None;
        }
        p += 1;
        hour = num(&mut p, 2)?;
        if b.get(p) != Some(&b':') {
            return None;
        }
        p += 1;
        minute = num(&mut p, 2)?;
        if b.get(p) == Some(&b':') {
            p += 1;
            second = num(&mut p, 2)?;
            if b.get(p) == Some(&b'.') || b.get(p) == Some(&b',') {
                p += 1;
                let start = p;
                while p < b.len() && b[p].is_ascii_digit() {
                    p += 1;
                }
                if p == start {
                    return None;
                }
                let frac = &text[start..p.min(start + 3)];
                let scale = 10f64.powi(3 - frac.len() as i32);
                millis = f64::from(frac.parse::<u16>().ok()?) * scale;
            }
        }
        match b.get(p) {
            None => {}
            Some(b'Z') | Some(b'z') => {
                p += 1;
            }
            Some(b'+') | Some(b'-') => {
                let sign = if b[p] == b'-' { -1 } else { 1 };
                p += 1;
                let oh = num(&mut p, 2)?;
                if b.get(p) == Some(&b':') {
                    p += 1;
                }
                let om = num(&mut p, 2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = sign * (oh * 60 + om);
            }
            _ => return None,
        }
        if p != b.len() {
            return None;
        }
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 24 || minute > 59 || second > 59 || (hour == 24 && (minute, second, millis as i64) != (0, 0, 0)) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let ms = (((days * 24 + hour) * 60 + minute - offset_min) * 60 + second) as f64 * 1000.0 + millis;
    if ms.abs() > 8.64e15 {
        return None;
    }
    Some(ms)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats ms since the epoch as an ISO-8601 UTC string (`Date.prototype.toISOString`).
pub fn format_iso_timestamp(ms: f64) -> String {
    let ms_i = ms.floor() as i64;
    let days = ms_i.div_euclid(86_400_000);
    let rem = ms_i.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A JSON number holding `v` the way JavaScript's `JSON.stringify` writes it: a whole number
/// is written as an integer (`123`, not serde's `123.0`; `-0` as `0`), any other finite number
/// as it is (`1.5`), NaN and the infinities as `null`. Every number the engine writes into an
/// entry line goes through it (`tokensBefore`, `prunedAt`; SPEC §13.3).
pub fn js_number(v: f64) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    if v.fract() == 0.0 {
        // Exact conversions: every whole f64 in [-2^63, 2^63) is an i64, in [0, 2^64) a u64.
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        if (-TWO_63..TWO_63).contains(&v) {
            return Value::from(v as i64);
        }
        if (0.0..2.0 * TWO_63).contains(&v) {
            return Value::from(v as u64);
        }
    }
    serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
}

/// A JSON number holding `ms` the way JavaScript would serialize it ([`js_number`]; absent
/// becomes `null`).
pub fn ms_value(ms: Option<f64>) -> Value {
    ms.map_or(Value::Null, js_number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_over_counts_units_not_bytes() {
        assert_eq!(utf16_len_over("abcd", 4), None);
        assert_eq!(utf16_len_over("abcde", 4), Some(5));
        // 3 bytes and 1 unit each: 9 bytes, 3 units.
        assert_eq!(utf16_len_over("€€€", 4), None);
        // 4 bytes and 2 units each (a surrogate pair): 8 bytes and 4 units, then 6 units.
        assert_eq!(utf16_len_over("😀😀", 4), None);
        assert_eq!(utf16_len_over("😀😀😀", 4), Some(6));
    }

    #[test]
    fn json_ascii_is_the_same_value_in_ascii() {
        let json = r#"{"a":"é→😀 \"x\"","b":["ü",1],"c":"plain"}"#;
        let mut out = String::from("[");
        push_json_ascii(&mut out, json);
        out.push(']');
        assert!(out.is_ascii());
        assert_eq!(out, r#"[{"a":"\u00e9\u2192\ud83d\ude00 \"x\"","b":["\u00fc",1],"c":"plain"}]"#);
        let back: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back[0], serde_json::from_str::<Value>(json).unwrap());
    }

    /// Runs of plain ASCII longer than a chunk are copied whole, and bytes that are not UTF-8
    /// (a bad lead byte, a stray continuation byte, a cut-off sequence, an overlong form, a
    /// surrogate) leave `out` as it was: what `str::from_utf8` rejects.
    #[test]
    fn json_ascii_bytes_checks_utf8_as_it_reads() {
        let long = format!("\"{}é{}\"", "a".repeat(37), "b".repeat(20));
        let mut out = String::from("x");
        assert!(push_json_ascii_bytes(&mut out, long.as_bytes()));
        assert_eq!(out, format!("x\"{}\\u00e9{}\"", "a".repeat(37), "b".repeat(20)));
        for bad in [
            &b"\"a\xffb\""[..],
            b"\"\x80\"",
            b"\"ab\xe2\x82\"",
            b"\"\xc0\xaf\"",
            b"\"\xed\xa0\x80\"",
            b"\"\xf4\x90\x80\x80\"",
        ] {
            let mut out = String::from("[1,");
            assert!(!push_json_ascii_bytes(&mut out, bad), "{bad:?}");
            assert_eq!(out, "[1,");
            assert!(std::str::from_utf8(bad).is_err());
        }
        let mut out = String::new();
        assert!(push_json_ascii_bytes(&mut out, "\"😀\"".as_bytes()));
        assert_eq!(out, "\"\\ud83d\\ude00\"");
    }
    use serde_json::json;

    /// [`lowercase`] is `str::to_lowercase`: ASCII, Latin-1, Cyrillic, the final sigma, a
    /// one-to-many mapping and the KELVIN SIGN (which lowercases to an ASCII `k`).
    #[test]
    fn lowercase_is_unicode_lowercase() {
        for s in [
            "PROMPT Is Too Long",
            "",
            "ÜBER Straße",
            "ОШИБКА",
            "ΟΔΟΣ ΟΔΟΣ.",
            "İstanbul",
            "10 TO\u{212A}ENS",
            "日本語 ABC",
        ] {
            assert_eq!(lowercase(s), s.to_lowercase(), "{s}");
        }
        assert_eq!(lowercase("ΟΔΟΣ"), "οδος");
        assert_eq!(lowercase("TO\u{212A}ENS"), "tokens");
    }

    /// [`parse_f64`] agrees with `f64::from_str` (value and sign, NaN with NaN, refusal with
    /// refusal) on the forms that matter: signs, leading zeros, empty parts, exponents, huge and
    /// tiny magnitudes, long digit strings, halfway cases and words.
    #[test]
    fn parse_f64_is_from_str() {
        let cases = [
            "0",
            "-0",
            "+0",
            "00",
            "0.0",
            "-0.0",
            ".5",
            "5.",
            "-.5",
            "+5.",
            ".",
            "-",
            "+",
            "",
            "e5",
            ".e5",
            "1e",
            "1e+",
            "1e-",
            "1e5",
            "1E5",
            "1e+05",
            "1e-05",
            "007.25",
            "1.5e308",
            "1.8e308",
            "-1.8e308",
            "4.9e-324",
            "2.4e-324",
            "2.5e-324",
            "1e-400",
            "-1e-400",
            "1e400",
            "0e999999999999",
            "1e999999999999",
            "1e-999999999999",
            "123456789012345678901234567890",
            "9007199254740993",
            "18446744073709551615",
            "18446744073709551616",
            "0.1",
            "0.30000000000000004",
            "2.2250738585072011e-308",
            "1.7976931348623157e308",
            "inf",
            "-inf",
            "+inf",
            "Infinity",
            "-INFINITY",
            "NaN",
            "nan",
            "-nan",
            "infin",
            "1.2.3",
            "1e5.0",
            " 1",
            "1 ",
            "0x10",
            "1_000",
            "١",
            "12a",
            "9.999999999999999999999999999999999999e22",
            "179769313486231580793728971405301e276",
        ];
        for s in cases {
            let want = s.parse::<f64>().ok();
            let got = parse_f64(s);
            match (want, got) {
                (None, None) => {}
                (Some(w), Some(g)) if w.is_nan() => assert!(g.is_nan(), "{s:?}: {g}"),
                (Some(w), Some(g)) => assert_eq!(w.to_bits(), g.to_bits(), "{s:?}: {w} vs {g}"),
                _ => panic!("{s:?}: from_str {want:?}, parse_f64 {got:?}"),
            }
        }
    }

    #[test]
    fn sort_by_key_stable_keeps_ties_in_order() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e'), (3, 'f')];
        sort_by_key_stable(&mut v, |&(k, _)| k);
        assert_eq!(v, [(0, 'd'), (1, 'b'), (1, 'e'), (3, 'a'), (3, 'c'), (3, 'f')]);
        let mut one = vec![7];
        sort_by_key_stable(&mut one, |&k| k);
        assert_eq!(one, [7]);
        let mut big: Vec<(usize, usize)> = (0..500).map(|i| (i * 7919 % 13, i)).collect();
        let mut want = big.clone();
        want.sort_by_key(|&(k, _)| k);
        sort_by_key_stable(&mut big, |&(k, _)| k);
        assert_eq!(big, want);
    }

    #[test]
    fn utf16_lengths() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("e\u{301}"), 2);
        assert_eq!(utf16_len("日本"), 2);
        assert_eq!(utf16_len(""), 0);
    }

    proptest::proptest! {
        /// JavaScript's string order: the order of the texts' UTF-16 code units, for texts that
        /// share a prefix and differ in 1- to 4-byte characters, astral ones included.
        #[test]
        fn cmp_utf16_is_the_order_of_utf16_units(
            prefix in "(\\PC|[\u{e000}-\u{ffff}]){0,6}",
            a in "([a-z]|[\u{80}-\u{7ff}]|[\u{e000}-\u{ffff}]|[\u{10000}-\u{10ffff}]){0,4}",
            b in "([a-z]|[\u{80}-\u{7ff}]|[\u{e000}-\u{ffff}]|[\u{10000}-\u{10ffff}]){0,4}",
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            proptest::prop_assert_eq!(cmp_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }

        /// The byte count of UTF-16 units is the number of units the text encodes to, for text
        /// of 1- to 4-byte characters in any mix.
        #[test]
        fn utf16_len_counts_what_utf16_encodes(s in "(\\PC|[\\x00-\\x7f]|[\u{80}-\u{7ff}]|[\u{10000}-\u{10ffff}]){0,40}") {
            proptest::prop_assert_eq!(utf16_len(&s), s.encode_utf16().count() as u64);
        }

        /// A string literal is what `JSON.stringify` writes (as serde_json writes it: the same
        /// escapes), and reads back as the text, controls, quotes and backslashes included.
        #[test]
        fn json_string_literals_are_json_stringify_s(s in "([\\x00-\\x20\"\\\\/]|\\PC){0,40}") {
            let mut out = String::from("x");
            push_json_string(&mut out, &s);
            proptest::prop_assert_eq!(&out[1..], serde_json::to_string(&s).unwrap());
            proptest::prop_assert_eq!(serde_json::from_str::<String>(&out[1..]).unwrap(), s);
        }
    }

    #[test]
    fn numbers_like_js() {
        assert_eq!(format_number(1e21), "1e+21");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(1.0), "1");
        assert_eq!(format_number(12345678901234567890f64), "12345678901234567000");
        assert_eq!(format_number(0.000001), "0.000001");
        assert_eq!(format_number(1e-7), "1e-7");
    }

    #[test]
    fn stringify_orders_index_keys_first() {
        let v: Value = serde_json::from_str(r#"{"b":1,"2":true,"a":[1.0,-0,1e21],"1":"x\n","01":null}"#).unwrap();
        assert_eq!(json_stringify(&v), r#"{"1":"x\n","2":true,"b":1,"a":[1,0,1e+21],"01":null}"#);
    }

    #[test]
    fn dates() {
        assert_eq!(parse_iso_timestamp("2025-06-01T10:00:01.000Z"), Some(1748772001000.0));
        assert_eq!(parse_iso_timestamp("2025-06-01T12:00:01.000+02:00"), Some(1748772001000.0));
        assert_eq!(parse_iso_timestamp("2025-06-01T10:00:01.123456Z"), Some(1748772001123.0));
        assert_eq!(parse_iso_timestamp("2025-06-01"), Some(1748736000000.0));
        assert_eq!(parse_iso_timestamp("garbage"), None);
        assert_eq!(format_iso_timestamp(1748772001000.0), "2025-06-01T10:00:01.000Z");
        assert_eq!(ms_value(Some(5.0)), json!(5));
    }

    #[test]
    fn numbers_are_written_as_json_stringify_writes_them() {
        for (v, text) in [
            (123.0, "123"),
            (-0.0, "0"),
            (-7.0, "-7"),
            (1.5, "1.5"),
            (9_007_199_254_740_993.0, "9007199254740992"),
            (1.0e16, "10000000000000000"),
            (1.0e19, "10000000000000000000"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(js_number(v).to_string(), text, "{v}");
        }
        assert_eq!(ms_value(None), Value::Null);
        assert_eq!(ms_value(Some(1.7e12)).to_string(), "1700000000000");
    }

    #[test]
    fn sort_order_is_utf16() {
        let mut v = vec!["\u{ff01}".to_string(), "😀".to_string(), "a".to_string()];
        sort_utf16(&mut v);
        assert_eq!(v, vec!["a", "😀", "\u{ff01}"]);
    }
}
