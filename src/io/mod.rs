//! JSON Lines loading and saving of session files: lenient or strict parsing with 1-based line
//! numbers on every error, the session-header check, the v1 → v2 → v3 migration, and writing a
//! session back. SPEC §1 ("Older files", "Lossless rule"); conformance README "loadSession" and
//! op `parseJsonlLenient`.
//!
//! Two paths share one line splitter and one error detection:
//! - the **value path** ([`parse_jsonl`], [`parse_session`]) builds a [`serde_json::Value`] per
//!   line (key order preserved, unknown types and fields untouched);
//! - the **raw path** ([`scan_jsonl`], [`scan_session`]) only extracts each line's
//!   [`EntryMeta`] and its byte range, for a session handle that keeps the original bytes.
//!
//! A line is accepted by both paths exactly when it holds one JSON value (see
//! [`parse_line_value`] for the two known exceptions). Blank and whitespace-only lines are
//! ignored, CRLF line ends are accepted, a UTF-8 byte-order mark at the very start is skipped.
//! Nothing here panics on any input.

use crate::entry::EntryList;
use crate::entry::{EntryKind, EntryMeta};
use crate::error::{Error, Result};
use crate::js::{js_string, js_trim};
use serde::ser::{Serialize, Serializer};
use serde_json::Value;
use std::collections::HashSet;
use std::ops::Range;

/// The session format version this crate reads and writes (SPEC §1).
pub const CURRENT_SESSION_VERSION: u32 = 3;

/// How to treat bad lines: the options of `parseSession`, `SessionTree.fromJsonl` and
/// `SessionTree.fromBytes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "ParseSessionOptions"))]
#[serde(default)]
pub struct ParseOptions {
    /// `false` (default): keep every good line and report each bad one in `errors`.
    /// `true`: fail with the error of the first bad line (lowest line number: `E_PARSE`,
    /// `E_MISSING_FIELD` or `E_HEADER`) instead of reporting it in `errors`.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub strict: bool,
}

impl ParseOptions {
    /// Lenient parsing (the reference's behaviour).
    pub fn lenient() -> Self {
        Self { strict: false }
    }
    /// Strict parsing: the first bad line is an error.
    pub fn strict() -> Self {
        Self { strict: true }
    }
}

/// One non-blank line of a JSONL buffer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawLine {
    /// 1-based line number in the buffer (lines are separated by `\n`).
    pub line: usize,
    /// Byte range of the line's JSON text in the buffer, without the line end and without
    /// surrounding JSON whitespace (space, tab, CR, LF).
    pub range: Range<usize>,
}

/// A bad line: its 1-based number and what is wrong with it.
///
/// `error` is [`Error::Parse`] (malformed JSON, two records on one line, truncated last line),
/// [`Error::MissingField`] (an entry without string `type` or `id`) or [`Error::Header`] (the
/// first record is not a session header). Serializes as `{line, code, message}`.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// The error, with its stable code ([`Error::code`]).
    pub error: Error,
}

impl std::fmt::Display for LineError {
    /// The error's message (it already names the line).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)
    }
}

impl Serialize for LineError {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        LineErrorShape { line: self.line, code: self.error.code(), message: self.error.to_string() }.serialize(s)
    }
}

/// How a [`LineError`] crosses to a host: a bad JSONL line as its 1-based number, stable code
/// and message.
#[derive(serde::Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "LineError"))]
pub struct LineErrorShape {
    /// 1-based line number.
    pub line: usize,
    /// The stable code ([`Error::code`]).
    #[cfg_attr(feature = "tsify", tsify(type = "ErrorCode"))]
    pub code: &'static str,
    /// The message (it names the line).
    pub message: String,
}

// ---------------------------------------------------------------------------------------------
// Line splitting (shared by both paths)

/// A line plus whether a `\n` follows it (the last line of a file may lack one).
struct Segment {
    raw: RawLine,
    terminated: bool,
}

fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Position of the next `\n` at or after `from`, eight bytes at a time.
fn find_newline(bytes: &[u8], from: usize) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8).and_then(|w| <&[u8; 8]>::try_from(w).ok()) {
        // An array reference, not `copy_from_slice` (a `memcpy` call when optimized for size).
        let x = u64::from_le_bytes(*word) ^ NL;
        if (x.wrapping_sub(LO) & !x & HI) != 0 {
            break;
        }
        i += 8;
    }
    bytes.get(i..)?.iter().position(|&b| b == b'\n').map(|p| i + p)
}

/// `start..end` without the JSON whitespace at both ends.
fn trim_json_ws(bytes: &[u8], start: usize, end: usize) -> (usize, usize) {
    let (mut a, mut b) = (start, end);
    while a < b && is_json_ws(bytes[a]) {
        a += 1;
    }
    while b > a && is_json_ws(bytes[b - 1]) {
        b -= 1;
    }
    (a, b)
}

/// Calls `f` for every non-blank line, in order.
fn for_each_segment(bytes: &[u8], mut f: impl FnMut(Segment)) {
    let mut pos = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut line = 0usize;
    while pos <= bytes.len() {
        line += 1;
        let (end, next, terminated) = match find_newline(bytes, pos) {
            Some(nl) => (nl, nl + 1, true),
            None => (bytes.len(), bytes.len() + 1, false),
        };
        let (a, b) = trim_json_ws(bytes, pos, end);
        if a < b {
            f(Segment { raw: RawLine { line, range: a..b }, terminated });
        }
        pos = next;
    }
}

/// The non-blank lines of `bytes` (1-based numbers, trimmed byte ranges), in order. Lines are
/// separated by `\n`; a trailing `\r` and other JSON whitespace around the text are excluded from
/// the range; whitespace-only lines are skipped; a UTF-8 BOM at offset 0 is skipped.
pub fn split_lines(bytes: &[u8]) -> Vec<RawLine> {
    let mut out = Vec::new();
    for_each_segment(bytes, |s| out.push(s.raw));
    out
}

// ---------------------------------------------------------------------------------------------
// Per-line parsing and error detection (shared by both paths)

/// True when the text contains a `\u` escape of a UTF-16 surrogate (`\uD800`–`\uDFFF`).
fn has_surrogate_escape(text: &[u8]) -> bool {
    let mut i = 0;
    while i + 3 < text.len() {
        if text[i] == b'\\' {
            if text[i + 1] == b'u'
                && matches!(text[i + 2], b'd' | b'D')
                && matches!(text[i + 3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

fn hex4(text: &[u8], at: usize) -> Option<u16> {
    let s = std::str::from_utf8(text.get(at..at + 4)?).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// Rewrites the escapes of unpaired UTF-16 surrogates inside strings as `\ufffd` (JavaScript's
/// `JSON.stringify` writes lone surrogates as escapes; Rust strings cannot hold them).
fn repair_lone_surrogates(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if !in_string {
            in_string = b == b'"';
            out.push(b);
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                out.push(b);
                i += 1;
            }
            b'\\' if text.get(i + 1) == Some(&b'u') => match hex4(text, i + 2) {
                Some(0xD800..=0xDBFF) => {
                    let paired = text.get(i + 6) == Some(&b'\\')
                        && text.get(i + 7) == Some(&b'u')
                        && matches!(hex4(text, i + 8), Some(0xDC00..=0xDFFF));
                    if paired {
                        out.extend_from_slice(&text[i..i + 12]);
                        i += 12;
                    } else {
                        out.extend_from_slice(b"\\ufffd");
                        i += 6;
                    }
                }
                Some(0xDC00..=0xDFFF) => {
                    out.extend_from_slice(b"\\ufffd");
                    i += 6;
                }
                _ => {
                    out.extend_from_slice(&text[i..(i + 2).min(text.len())]);
                    i += 2;
                }
            },
            b'\\' => {
                out.extend_from_slice(&text[i..(i + 2).min(text.len())]);
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Parses one line's JSON text into a value, the way both paths decide whether a line is good.
///
/// Accepted: exactly one JSON value (any type). Unpaired UTF-16 surrogate escapes (which
/// JavaScript writes and Rust strings cannot hold) are read as U+FFFD (same UTF-16 length), so
/// such lines are not lost; the raw path keeps their original bytes. Rejected, with the parser's
/// error: malformed JSON, trailing characters or a second record, invalid UTF-8, nesting deeper
/// than 128 levels and numbers beyond the double range (such as `1e400`; JavaScript writers never
/// produce them). Known divergence: the raw path ([`scan_jsonl`]) does not detect the last case
/// when the number sits in a field its metadata does not read.
///
/// # Errors
/// The serde_json error of a rejected line (the loaders report it as an [`Error::Parse`] naming
/// the line and whether it holds two records or is a truncated last line).
pub fn parse_line_value(text: &[u8]) -> std::result::Result<Value, serde_json::Error> {
    match serde_json::from_slice::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) => {
            if has_surrogate_escape(text) {
                if let Ok(v) = serde_json::from_slice::<Value>(&repair_lone_surrogates(text)) {
                    return Ok(v);
                }
            }
            Err(e)
        }
    }
}

/// The metadata of one line, deciding acceptance exactly like [`parse_line_value`] (up to the
/// divergence documented there). `utf8_checked`: the buffer is known to be valid UTF-8.
fn parse_line_meta(text: &[u8], utf8_checked: bool) -> std::result::Result<EntryMeta, serde_json::Error> {
    if utf8_checked || std::str::from_utf8(text).is_ok() {
        if let Ok(meta) = EntryMeta::from_json_serde(text) {
            // Fields the metadata does not read are skipped without a depth limit: a line that
            // could nest deeper than the value parser allows is checked by the value parser.
            if !may_exceed_depth(text) {
                return Ok(meta);
            }
            return parse_line_value(text).map(|_| meta);
        }
    }
    parse_line_value(text).map(|v| EntryMeta::from_value(&v))
}

/// A nesting depth below the one serde_json refuses when building a value (128): lines that
/// nest deeper are decided by the value parser.
const SAFE_DEPTH: usize = 100;

/// True when the JSON text may nest deeper than [`SAFE_DEPTH`]: first a count of all opening
/// brackets (cheap), then the real depth outside strings.
fn may_exceed_depth(text: &[u8]) -> bool {
    if text.len() <= SAFE_DEPTH || text.iter().filter(|&&b| b == b'[' || b == b'{').count() <= SAFE_DEPTH {
        return false;
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        match (in_string, text[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => in_string = false,
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > SAFE_DEPTH {
                    return true;
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// The serde_json message without its " at line L column C" suffix (every line is parsed on its
/// own, so the line is always 1).
fn bare_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match s.strip_suffix(&suffix) {
        Some(m) => format!("{m} (column {})", e.column()),
        None => s,
    }
}

/// The [`Error::Parse`] of a rejected line: a truncated last line, two records on one line, or
/// malformed JSON.
fn line_parse_error(seg: &Segment, text: &[u8], err: &serde_json::Error) -> Error {
    let mut stream = serde_json::Deserializer::from_slice(text).into_iter::<serde::de::IgnoredAny>();
    let reason = match stream.next() {
        Some(Ok(_)) => match stream.next() {
            Some(Ok(_)) => "two or more JSON records on one line".to_string(),
            _ => format!("malformed JSON: {}", bare_message(err)),
        },
        Some(Err(e)) if e.is_eof() && !seg.terminated => {
            format!("truncated last line (no line end, JSON incomplete): {}", bare_message(&e))
        }
        _ => format!("malformed JSON: {}", bare_message(err)),
    };
    Error::Parse { line: seg.raw.line, reason }
}

fn sort_errors(errors: &mut [LineError]) {
    errors.sort_by_key(|e| e.line);
}

// ---------------------------------------------------------------------------------------------
// Plain JSONL (no session semantics)

/// Every good line of a JSONL buffer as a value, plus the bad lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonlValues {
    /// The parsed values, in file order.
    pub values: Vec<Value>,
    /// The 1-based line number of each value (parallel to `values`).
    pub lines: Vec<usize>,
    /// The bad lines ([`Error::Parse`]), by line number.
    pub errors: Vec<LineError>,
}

fn values_of(bytes: &[u8]) -> JsonlValues {
    let mut out = JsonlValues::default();
    for_each_segment(bytes, |seg| {
        let text = &bytes[seg.raw.range.clone()];
        match parse_line_value(text) {
            Ok(v) => {
                out.values.push(v);
                out.lines.push(seg.raw.line);
            }
            Err(e) => out.errors.push(LineError { line: seg.raw.line, error: line_parse_error(&seg, text, &e) }),
        }
    });
    out
}

/// Parses JSONL text leniently: every line holding one JSON value (of any type) is kept, every
/// other non-blank line is reported with its line number. Never fails.
pub fn parse_jsonl(text: &str) -> JsonlValues {
    values_of(text.as_bytes())
}

/// [`parse_jsonl`] over bytes (lines with invalid UTF-8 are bad lines).
pub fn parse_jsonl_bytes(bytes: &[u8]) -> JsonlValues {
    values_of(bytes)
}

/// The reference's `parseJsonlLenient(text)`: the values of the good lines, bad lines skipped
/// silently. Conformance op `parseJsonlLenient`.
pub fn parse_jsonl_lenient(text: &str) -> Vec<Value> {
    parse_jsonl(text).values
}

/// One good line of the raw path: where it is and its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct MetaLine {
    /// Line number and byte range.
    pub raw: RawLine,
    /// The entry metadata extracted from the line's bytes.
    pub meta: EntryMeta,
}

/// The good lines of a buffer with their metadata, plus the bad lines (raw path).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonlMetas {
    /// Good lines, in file order.
    pub lines: Vec<MetaLine>,
    /// Bad lines ([`Error::Parse`]), by line number.
    pub errors: Vec<LineError>,
}

/// The raw path's line loop. Each line is first handed to the one-pass scanner
/// ([`crate::entry::scan_entry`]), which also finds where the line's object ends, so that a good
/// line costs one pass and no separate search for its line end. When the scanner gives up, or
/// something other than whitespace follows the object on its line, the line takes the general
/// path of [`for_each_segment`] + [`parse_line_meta`], with the same result.
fn metas_of(bytes: &[u8], utf8_checked: bool) -> JsonlMetas {
    let mut out = JsonlMetas::default();
    // A rough guess of the entry count (lines average some hundreds of bytes), to grow less.
    out.lines.reserve(bytes.len() / 2048);
    scan_lines(
        bytes,
        utf8_checked,
        |l| {
            out.lines.push(l);
            true
        },
        |e| out.errors.push(e),
    );
    out
}

/// The line loop of [`metas_of`]: calls `good` for each good line and `bad` for each bad one,
/// in file order; stops when `good` returns false.
fn scan_lines(
    bytes: &[u8],
    utf8_checked: bool,
    mut good: impl FnMut(MetaLine) -> bool,
    mut bad: impl FnMut(LineError),
) {
    let mut scanner = crate::entry::EntryScanner::default();
    let n = bytes.len();
    let mut pos = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut line = 0usize;
    while pos <= n {
        line += 1;
        let mut a = pos;
        while a < n && matches!(bytes[a], b' ' | b'\t' | b'\r') {
            a += 1;
        }
        if a < n && bytes[a] == b'{' {
            if let Some((meta, end)) = scanner.scan(bytes, a) {
                let mut e = end;
                while e < n && matches!(bytes[e], b' ' | b'\t' | b'\r') {
                    e += 1;
                }
                if e == n || bytes[e] == b'\n' {
                    if !good(MetaLine { raw: RawLine { line, range: a..end }, meta }) {
                        return;
                    }
                    pos = e + 1;
                    continue;
                }
            }
        }
        // General path for this one line.
        let (end, next, terminated) = match find_newline(bytes, pos) {
            Some(nl) => (nl, nl + 1, true),
            None => (n, n + 1, false),
        };
        let (a, b) = trim_json_ws(bytes, pos, end);
        if a < b {
            let seg = Segment { raw: RawLine { line, range: a..b }, terminated };
            let text = &bytes[a..b];
            match parse_line_meta(text, utf8_checked) {
                Ok(meta) => {
                    if !good(MetaLine { raw: seg.raw, meta }) {
                        return;
                    }
                }
                Err(e) => bad(LineError { line, error: line_parse_error(&seg, text, &e) }),
            }
        }
        pos = next;
    }
}

/// Splits a buffer into lines and extracts each good line's [`EntryMeta`] without building a
/// [`Value`] (the fast path of a session handle that keeps the raw bytes). Accepts and rejects
/// the same lines as [`parse_jsonl_bytes`] (see [`parse_line_value`]). Never fails.
pub fn scan_jsonl(bytes: &[u8]) -> JsonlMetas {
    metas_of(bytes, false)
}

// ---------------------------------------------------------------------------------------------
// Migration (conformance README "loadSession" step 3)

/// JavaScript `ToNumber` of a string (`Number(s)`).
fn js_string_to_number(s: &str) -> f64 {
    let t = js_trim(s);
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let radix = match t.get(..2) {
        Some("0x") | Some("0X") => 16,
        Some("0o") | Some("0O") => 8,
        Some("0b") | Some("0B") => 2,
        _ => 10,
    };
    if radix != 10 {
        let digits = &t[2..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return f64::NAN;
        }
        return digits.chars().fold(0.0, |acc, c| acc * radix as f64 + c.to_digit(radix).unwrap_or(0) as f64);
    }
    // StrDecimalLiteral: [+-] (digits [. digits?] | . digits) ([eE] [+-] digits)?
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+') | Some(b'-')));
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return f64::NAN;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return f64::NAN;
        }
    }
    if i != b.len() {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// The header's `version ?? 1`, as the number JavaScript compares (`version >= 3`).
fn header_version(header: &Value) -> f64 {
    match header.get("version") {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::String(s)) => js_string_to_number(s),
        Some(a @ Value::Array(_)) => js_string_to_number(&js_string(a)),
        Some(Value::Object(_)) => f64::NAN,
    }
}

/// What loading must do for a header's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct VersionPlan {
    /// `migrateToCurrentVersion` returns true.
    migrated: bool,
    /// Run v1 → v2.
    v1: bool,
    /// Run v2 → v3.
    v2: bool,
}

fn version_plan(header: Option<&Value>) -> VersionPlan {
    let v = header.map_or(1.0, header_version);
    if v >= f64::from(CURRENT_SESSION_VERSION) {
        return VersionPlan { migrated: false, v1: false, v2: false };
    }
    // NaN compares false everywhere: "migrated" without any step, as in the reference.
    VersionPlan { migrated: true, v1: v < 2.0, v2: v < 3.0 }
}

fn is_type(v: &Value, t: &str) -> bool {
    v.get("type").and_then(Value::as_str) == Some(t)
}

/// True when `v` is a session header the loader accepts: an object with `type: "session"` and a
/// string `id` (conformance README "loadSession" step 2).
pub fn is_session_header(v: &Value) -> bool {
    is_type(v, "session") && v.get("id").is_some_and(Value::is_string)
}

/// JavaScript truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// v1 → v2: ids from `next_id` and a `parentId` chain for every non-header entry, in order;
/// `compaction.firstKeptEntryIndex` (a number: an index into `file_entries`, header included)
/// becomes `firstKeptEntryId`, the index key is deleted; headers get `version: 2`.
fn migrate_v1_to_v2(file_entries: &mut [Value], next_id: &mut dyn FnMut() -> String) {
    let mut prev_id = Value::Null;
    for i in 0..file_entries.len() {
        if is_type(&file_entries[i], "session") {
            if let Value::Object(o) = &mut file_entries[i] {
                o.insert("version".into(), Value::from(2));
            }
            continue;
        }
        let Value::Object(o) = &mut file_entries[i] else { continue };
        let id = Value::String(next_id());
        o.insert("id".into(), id.clone());
        o.insert("parentId".into(), std::mem::replace(&mut prev_id, id));
        let is_compaction = o.get("type").and_then(Value::as_str) == Some("compaction");
        let index = match o.get("firstKeptEntryIndex") {
            Some(Value::Number(n)) if is_compaction => n.as_f64(),
            _ => None,
        };
        let Some(index) = index else { continue };
        // `entries[index]`: only integral, in-range numbers name an entry.
        let target = if index >= 0.0 && index.fract() == 0.0 && index < file_entries.len() as f64 {
            Some(index as usize)
        } else {
            None
        };
        // `if (target && target.type !== "session") comp.firstKeptEntryId = target.id`
        let assign: Option<Option<Value>> = target.and_then(|t| {
            let t = &file_entries[t];
            (truthy(t) && !is_type(t, "session")).then(|| t.get("id").cloned())
        });
        if let Value::Object(o) = &mut file_entries[i] {
            match assign {
                Some(Some(id)) => {
                    o.insert("firstKeptEntryId".into(), id);
                }
                // Assigning `undefined`: JSON.stringify drops the key.
                Some(None) => {
                    o.shift_remove("firstKeptEntryId");
                }
                None => {}
            }
            o.shift_remove("firstKeptEntryIndex");
        }
    }
}

/// v2 → v3: message role `hookMessage` becomes `custom`; headers get `version: 3`.
fn migrate_v2_to_v3(file_entries: &mut [Value]) {
    for e in file_entries.iter_mut() {
        let Value::Object(o) = e else { continue };
        match o.get("type").and_then(Value::as_str) {
            Some("session") => {
                o.insert("version".into(), Value::from(CURRENT_SESSION_VERSION));
            }
            Some("message") => {
                if let Some(Value::Object(m)) = o.get_mut("message") {
                    if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                        m.insert("role".into(), Value::from("custom"));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Migrates a session's file entries (header included, in file order) to version 3 in place,
/// exactly as the reference's `migrateToCurrentVersion` (conformance README "loadSession"
/// step 3; SPEC §1 "Older files"):
/// - the version is the first `type: "session"` entry's `version ?? 1`, compared with
///   JavaScript semantics; nothing happens when it is `>= 3`;
/// - below 2, v1 → v2: every non-header object entry, in order, gets `id = next_id()` (exactly one
///   call per such entry) and `parentId` = the previous one's id (`null` for the first);
///   a compaction's numeric `firstKeptEntryIndex` (index into `file_entries`, header included)
///   becomes `firstKeptEntryId` (absent when the target has no id yet or is a header / out of
///   range) and the index key is deleted;
/// - below 3, v2 → v3: message role `hookMessage` becomes `custom`, and every header gets
///   `version: 3`.
///
/// Returns `true` when a migration was due (the reference's `migrated` flag; also for a
/// non-numeric version, where no step runs). Non-object lines are left alone and consume no id.
pub fn migrate_to_current_version(file_entries: &mut [Value], next_id: &mut dyn FnMut() -> String) -> bool {
    let plan = version_plan(file_entries.iter().find(|e| is_type(e, "session")));
    if plan.v1 {
        migrate_v1_to_v2(file_entries, next_id);
    }
    if plan.v2 {
        migrate_v2_to_v3(file_entries);
    }
    plan.migrated
}

/// The default id generator of the v1 migration: random 8-digit lowercase hex ids (the
/// reference's `randomUUID().slice(-8)` shape), never repeating an id it returned or was told is
/// taken. Randomness comes from the OS (`getrandom`); if that fails, from a deterministic mixer.
#[derive(Debug, Clone, Default)]
pub struct RandomIds {
    taken: HashSet<String>,
    state: u64,
}

impl RandomIds {
    /// A generator with no taken ids.
    pub fn new() -> Self {
        Self::default()
    }

    /// A generator that also avoids the given ids (for example the ids already in a session).
    pub fn with_taken<I: IntoIterator<Item = String>>(taken: I) -> Self {
        Self { taken: taken.into_iter().collect(), state: 0 }
    }

    fn random_u32(&mut self) -> u32 {
        let mut buf = [0u8; 4];
        if getrandom::getrandom(&mut buf).is_ok() {
            return u32::from_le_bytes(buf);
        }
        // splitmix64 over a counter and this generator's address.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15 ^ (self as *const Self as u64));
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u32
    }

    /// The next unique id: 8 lowercase hex digits.
    pub fn next_id(&mut self) -> String {
        let mut candidate = self.random_u32();
        for attempt in 0u64.. {
            let id = format!("{candidate:08x}");
            if !self.taken.contains(&id) {
                self.taken.insert(id.clone());
                return id;
            }
            // After a few random draws, probe linearly: terminates while fewer than 2^32 are taken.
            candidate = if attempt < 16 { self.random_u32() } else { candidate.wrapping_add(1) };
        }
        String::new()
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions (value path)

/// A loaded session (value path): the header, the entries after it, and the bad lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedSession {
    /// The header (the first record), after migration; `None` when the first record is not a
    /// valid header, in which case `entries` is empty (the reference loads nothing).
    pub header: Option<Value>,
    /// 1-based line of the header (0 when there is none).
    pub header_line: usize,
    /// Every record after the header, in file order, after migration. Records of type
    /// `session` after the first (extra headers) stay here, as in the reference's file entries.
    pub entries: Vec<Value>,
    /// The 1-based source line of each entry (parallel to `entries`).
    pub lines: Vec<usize>,
    /// Bad lines by line number: [`Error::Parse`] (dropped), [`Error::MissingField`] (an entry
    /// without a string `type` or `id` after migration; kept, as the reference keeps it, so that
    /// saving stays lossless) and [`Error::Header`] (no valid header; nothing loaded).
    pub errors: Vec<LineError>,
    /// A migration was due and applied (the reference's `migrateToCurrentVersion` result).
    pub migrated: bool,
}

impl ParsedSession {
    /// The file entries, header first (the reference's `fileEntries`).
    pub fn file_entries(&self) -> Vec<&Value> {
        self.header.iter().chain(self.entries.iter()).collect()
    }

    /// Consumes the session into its file entries, header first.
    pub fn into_file_entries(self) -> Vec<Value> {
        let mut out = Vec::with_capacity(self.entries.len() + 1);
        out.extend(self.header);
        out.extend(self.entries);
        out
    }

    /// The entries as an [`EntrySource`](crate::entry::EntrySource) for the algorithms.
    pub fn entry_list(&self) -> EntryList<'_> {
        EntryList::new(&self.entries)
    }

    /// The session as JSONL ([`serialize_session`]).
    pub fn to_jsonl(&self) -> String {
        serialize_session(self.header.as_ref(), &self.entries)
    }
}

fn header_error(line: usize, reason: String) -> LineError {
    LineError { line, error: Error::Header { reason } }
}

fn missing_field(line: usize, field: &str) -> LineError {
    LineError { line, error: Error::MissingField { location: format!("line {line}"), field: field.to_string() } }
}

/// The field an entry lacks (`type` or `id`, each must be a string), if any.
fn missing_field_of(entry: &Value) -> Option<&'static str> {
    if !entry.get("type").is_some_and(Value::is_string) {
        Some("type")
    } else if !entry.get("id").is_some_and(Value::is_string) {
        Some("id")
    } else {
        None
    }
}

fn header_problem(first: Option<&Value>, line: usize) -> Option<String> {
    match first {
        None => Some("the input holds no records".into()),
        Some(v) if !is_type(v, "session") => Some(format!("the first record (line {line}) is not of type \"session\"")),
        Some(v) if !v.get("id").is_some_and(Value::is_string) => {
            Some(format!("the header (line {line}) has no string \"id\""))
        }
        _ => None,
    }
}

/// Sorts the errors by line; in strict mode, the first one is returned as the error.
fn check_strict(options: &ParseOptions, errors: &mut [LineError]) -> Result<()> {
    sort_errors(errors);
    match errors.first() {
        Some(e) if options.strict => Err(e.error.clone()),
        _ => Ok(()),
    }
}

fn string_ids<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    values.into_iter().filter_map(|v| v.get("id").and_then(Value::as_str).map(str::to_owned)).collect()
}

fn session_of(
    values: JsonlValues,
    options: &ParseOptions,
    next_id: Option<&mut dyn FnMut() -> String>,
) -> Result<ParsedSession> {
    let JsonlValues { values: mut file, lines, mut errors } = values;
    let first_line = lines.first().copied().unwrap_or(1);
    if let Some(reason) = header_problem(file.first(), first_line) {
        errors.push(header_error(first_line, reason));
        check_strict(options, &mut errors)?;
        return Ok(ParsedSession { errors, ..Default::default() });
    }
    let migrated = match next_id {
        Some(f) => migrate_to_current_version(&mut file, f),
        None => {
            let mut ids = RandomIds::with_taken(string_ids(&file));
            migrate_to_current_version(&mut file, &mut || ids.next_id())
        }
    };
    for (v, &line) in file.iter().zip(&lines).skip(1) {
        if let Some(field) = missing_field_of(v) {
            errors.push(missing_field(line, field));
        }
    }
    let mut file = file.into_iter();
    let header = file.next();
    check_strict(options, &mut errors)?;
    Ok(ParsedSession {
        header,
        header_line: first_line,
        entries: file.collect(),
        lines: lines.get(1..).unwrap_or_default().to_vec(),
        errors,
        migrated,
    })
}

/// Loads a session from JSONL text (conformance README "loadSession"; SPEC §1):
/// 1. parses every non-blank line (blank lines ignored, CRLF accepted); malformed lines, lines
///    with two records and a truncated last line are bad lines ([`Error::Parse`]);
/// 2. the first parsed record must be a header `{type: "session", id: <string>}`, else nothing
///    is loaded ([`Error::Header`]);
/// 3. migrates v1/v2 to v3 ([`migrate_to_current_version`]) with random ids ([`RandomIds`]);
/// 4. reports entries without a string `type` or `id` ([`Error::MissingField`]).
///
/// Lenient (default): returns every good line and the bad ones in `errors`. Strict: returns the
/// error of the first bad line. Never panics.
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn parse_session(text: &str, options: &ParseOptions) -> Result<ParsedSession> {
    session_of(values_of(text.as_bytes()), options, None)
}

/// [`parse_session`] over bytes (lines with invalid UTF-8 are bad lines).
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn parse_session_bytes(bytes: &[u8], options: &ParseOptions) -> Result<ParsedSession> {
    session_of(values_of(bytes), options, None)
}

/// [`parse_session_bytes`] with the v1 ids drawn from `next_id` (exactly one call per non-header
/// entry, in file order; never called for v2/v3 files). Used to reproduce recorded migrations.
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn parse_session_with_ids(
    bytes: &[u8],
    options: &ParseOptions,
    next_id: &mut dyn FnMut() -> String,
) -> Result<ParsedSession> {
    session_of(values_of(bytes), options, Some(next_id))
}

// ---------------------------------------------------------------------------------------------
// Sessions (raw path)

/// A loaded session (raw path): the header, each entry's line and metadata, and the bad lines.
/// Entry byte ranges refer to the input buffer, or to `migrated_text` when that is set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSession {
    /// The header (parsed; it is small), `None` when the first record is not a valid header (then
    /// `entries` is empty).
    pub header: Option<Value>,
    /// The header's line.
    pub header_line: Option<RawLine>,
    /// Every good record after the header, in file order, with its metadata.
    pub entries: Vec<MetaLine>,
    /// Bad lines, as in [`ParsedSession::errors`].
    pub errors: Vec<LineError>,
    /// A migration was due and applied.
    pub migrated: bool,
    /// For v1/v2 input: the migrated session as JSONL (header first, one record per line); the
    /// ranges of `header_line` and `entries` point into it, their `line` numbers stay those of
    /// the input. `None`: the ranges point into the input buffer.
    pub migrated_text: Option<String>,
    /// The format version of the input as its header gave it (`version ?? 1`, the number
    /// JavaScript compares), before any migration; `None` without a valid header. SPEC §1.
    pub source_version: Option<f64>,
}

impl RawSession {
    /// The buffer the ranges refer to: `migrated_text` if set, else `input`.
    pub fn buffer<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        self.migrated_text.as_deref().map_or(input, str::as_bytes)
    }

    /// `(line, range)` of every entry, the input of a handle built over the buffer.
    pub fn spans(&self) -> Vec<(usize, Range<usize>)> {
        self.entries.iter().map(|e| (e.raw.line, e.raw.range.clone())).collect()
    }
}

/// A migrated [`ParsedSession`] written out as JSONL, with ranges and metadata per entry.
fn raw_from_parsed(p: ParsedSession) -> RawSession {
    let mut text = String::new();
    let mut push = |v: &Value| -> Range<usize> {
        let start = text.len();
        text.push_str(&to_json_line(v));
        let end = text.len();
        text.push('\n');
        start..end
    };
    let header_line = p.header.as_ref().map(|h| RawLine { line: p.header_line, range: push(h) });
    let entries = p
        .entries
        .iter()
        .zip(&p.lines)
        .map(|(v, &line)| MetaLine { raw: RawLine { line, range: push(v) }, meta: EntryMeta::from_value(v) })
        .collect();
    RawSession {
        header: p.header,
        header_line,
        entries,
        errors: p.errors,
        migrated: p.migrated,
        migrated_text: Some(text),
        source_version: None,
    }
}

fn raw_session_of(
    bytes: &[u8],
    utf8_checked: bool,
    options: &ParseOptions,
    next_id: Option<&mut dyn FnMut() -> String>,
) -> Result<RawSession> {
    // The first good line (the header) apart from the others, so that the entries need not be
    // shifted afterwards.
    // A v1/v2 file is migrated through the value path, which redoes every line: the scan stops
    // at a good header that calls for a migration.
    let mut first: Option<MetaLine> = None;
    let mut header: Option<Value> = None;
    let mut migrate = false;
    let mut lines: Vec<MetaLine> = Vec::with_capacity(bytes.len() / 2048);
    let mut errors = Vec::new();
    scan_lines(
        bytes,
        utf8_checked,
        |l| {
            if first.is_some() {
                lines.push(l);
                return true;
            }
            header = parse_line_value(&bytes[l.raw.range.clone()]).ok();
            let plan = version_plan(header.as_ref());
            migrate = (plan.v1 || plan.v2) && header_problem(header.as_ref(), l.raw.line).is_none();
            first = Some(l);
            !migrate
        },
        |e| errors.push(e),
    );
    let first_line = first.as_ref().map_or(1, |l| l.raw.line);
    if let Some(reason) = header_problem(header.as_ref(), first_line) {
        errors.push(header_error(first_line, reason));
        check_strict(options, &mut errors)?;
        return Ok(RawSession { errors, ..Default::default() });
    }
    let plan = version_plan(header.as_ref());
    if migrate {
        // Migration rewrites entries: take the value path and write the result out.
        let values = values_of(bytes);
        let source_version = header.as_ref().map(header_version);
        return session_of(values, options, next_id)
            .map(raw_from_parsed)
            .map(|raw| RawSession { source_version, ..raw });
    }
    let header_line = first.map(|l| l.raw);
    let entries = lines;
    for e in &entries {
        let field = if e.meta.kind == EntryKind::Other {
            // Unknown or missing `type`: look at the line itself (rare).
            parse_line_value(&bytes[e.raw.range.clone()]).ok().as_ref().and_then(missing_field_of)
        } else if e.meta.id.is_none() {
            Some("id")
        } else {
            None
        };
        if let Some(field) = field {
            errors.push(missing_field(e.raw.line, field));
        }
    }
    check_strict(options, &mut errors)?;
    let source_version = header.as_ref().map(header_version);
    Ok(RawSession {
        header,
        header_line,
        entries,
        errors,
        migrated: plan.migrated,
        migrated_text: None,
        source_version,
    })
}

/// Loads a session without building values for its entries (raw path of [`parse_session`]):
/// same line handling, header check, migration, errors and strict mode. A v1/v2 file is migrated
/// through the value path and returned as `migrated_text`.
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn scan_session(bytes: &[u8], options: &ParseOptions) -> Result<RawSession> {
    raw_session_of(bytes, false, options, None)
}

/// [`scan_session`] over text already known to be UTF-8 (skips the UTF-8 check).
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn scan_session_str(text: &str, options: &ParseOptions) -> Result<RawSession> {
    raw_session_of(text.as_bytes(), true, options, None)
}

/// [`scan_session`] with the v1 ids drawn from `next_id` (see [`parse_session_with_ids`]).
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn scan_session_with_ids(
    bytes: &[u8],
    options: &ParseOptions,
    next_id: &mut dyn FnMut() -> String,
) -> Result<RawSession> {
    raw_session_of(bytes, false, options, Some(next_id))
}

// ---------------------------------------------------------------------------------------------
// Saving

/// One value as compact JSON (keys in their stored order, numbers as serde_json writes them).
fn to_json_line(v: &Value) -> String {
    let mut buf = Vec::new();
    if serde_json::to_writer(&mut buf, v).is_err() {
        return "null".into();
    }
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes values as JSONL: one compact JSON value per line, each line ended by `\n`. Keys keep
/// their order; unknown types and fields are written unchanged (SPEC §1 "Lossless rule").
pub fn serialize_jsonl<'a, I: IntoIterator<Item = &'a Value>>(values: I) -> String {
    let mut out = String::new();
    for v in values {
        out.push_str(&to_json_line(v));
        out.push('\n');
    }
    out
}

/// Writes a session back as JSONL: the header first (when there is one), then every entry, one
/// per line (see [`serialize_jsonl`]). Parsing the result gives back equal values. SPEC §1.
pub fn serialize_session(header: Option<&Value>, entries: &[Value]) -> String {
    serialize_jsonl(header.into_iter().chain(entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_lines_with_crlf_and_blanks() {
        let text = b"{\"a\":1}\r\n\r\n   \n  {\"b\":2}  \r\n{\"c\":[1,2]}";
        let lines = split_lines(text);
        assert_eq!(lines.iter().map(|l| l.line).collect::<Vec<_>>(), vec![1, 4, 5]);
        assert_eq!(&text[lines[1].range.clone()], b"{\"b\":2}");
    }

    #[test]
    fn newline_search_matches_naive() {
        let data: Vec<u8> = (0..200u32).map(|i| if i % 37 == 5 { b'\n' } else { b'a' + (i % 20) as u8 }).collect();
        for from in 0..data.len() {
            let naive = data[from..].iter().position(|&b| b == b'\n').map(|p| p + from);
            assert_eq!(find_newline(&data, from), naive);
        }
    }

    #[test]
    fn error_kinds() {
        let text = "{\"a\":1}\n{bad}\n{\"a\":1}{\"b\":2}\n{\"x\":";
        let r = parse_jsonl(text);
        assert_eq!(r.values, vec![json!({"a":1})]);
        let lines: Vec<_> = r.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        let msg: Vec<String> = r.errors.iter().map(|e| e.error.to_string()).collect();
        assert!(msg[0].contains("malformed"), "{}", msg[0]);
        assert!(msg[1].contains("two or more"), "{}", msg[1]);
        assert!(msg[2].contains("truncated"), "{}", msg[2]);
        // An incomplete line followed by a newline is malformed, not truncated.
        let r = parse_jsonl("{\"x\":\n");
        assert!(r.errors[0].error.to_string().contains("malformed"));
    }

    #[test]
    fn lone_surrogates_are_kept() {
        let text = r#"{"t":"a\ud83d","u":"\ud83d\ude00","v":"\udc00x"}"#;
        let r = parse_jsonl(text);
        assert!(r.errors.is_empty());
        assert_eq!(r.values[0]["t"], json!("a\u{fffd}"));
        assert_eq!(r.values[0]["u"], json!("\u{1f600}"));
        assert_eq!(r.values[0]["v"], json!("\u{fffd}x"));
        assert!(scan_jsonl(text.as_bytes()).errors.is_empty());
    }

    #[test]
    fn raw_and_value_paths_agree_on_bad_lines() {
        let cases: &[&[u8]] = &[
            b"{\"a\":\"\xff\"}",
            b"{bad}",
            b"1 2",
            b"{\"a\":1}x",
            b"[",
            b"\"s\"",
            b"null",
            b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\\ud800\"}}",
        ];
        for c in cases {
            let a = parse_jsonl_bytes(c);
            let b = scan_jsonl(c);
            assert_eq!(a.errors, b.errors, "{:?}", String::from_utf8_lossy(c));
            assert_eq!(a.values.len(), b.lines.len());
        }
    }

    #[test]
    fn fast_line_loop_matches_the_value_path() {
        let text = concat!(
            "\u{feff}{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\r\n",
            "  \t{\"type\":\"custom\",\"id\":\"b\"} \t\r\n",
            "{\"type\":\"custom\",\"id\":\"c\"} x\n",
            "{\"type\":\"custom\",\"id\":\"d\"}{\"id\":\"e\"}\n",
            "\n   \n",
            "{\"type\":\"model_change\",\"id\":\"f\",\"provider\":\"p\",\"modelId\":\"m\"}\n",
            "{\"type\":\"custom\",\"id\":\"g\",\"n\":[-1.5e-3,0,{}]}\n",
            "{\"type\":\"custom\",\"id\":\"h\",\"s\":\"\u{7}\"}\n",
            "[1,2]\n",
            "{\"type\":\"message\",\"id\":\"i\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"\u{e9}\\ud83d\"}]}}\n",
            "{\"type\":\"custom\",\"id\":\"j\"",
        );
        let bytes = text.as_bytes().to_vec();
        let a = parse_jsonl_bytes(&bytes);
        let b = scan_jsonl(&bytes);
        assert_eq!(a.errors, b.errors);
        assert_eq!(a.lines, b.lines.iter().map(|l| l.raw.line).collect::<Vec<_>>());
        for (v, m) in a.values.iter().zip(&b.lines) {
            let parsed: Value = serde_json::from_slice(&bytes[m.raw.range.clone()]).unwrap_or(Value::Null);
            if !parsed.is_null() {
                assert_eq!(&parsed, v);
            }
            assert_eq!(format!("{:?}", m.meta), format!("{:?}", EntryMeta::from_value(v)));
        }
        assert_eq!(b.lines.iter().map(|l| l.raw.line).collect::<Vec<_>>(), vec![1, 2, 7, 8, 10, 11]);
        assert_eq!(b.errors.iter().map(|e| e.line).collect::<Vec<_>>(), vec![3, 4, 9, 12]);
    }

    #[test]
    fn deep_nesting_is_rejected_by_both_paths() {
        let deep = format!("{{\"type\":\"x\",\"id\":\"a\",\"z\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(parse_jsonl(&deep).errors.len(), 1);
        assert_eq!(scan_jsonl(deep.as_bytes()).errors, parse_jsonl(&deep).errors);
        for d in [99, 100, 101, 126, 127, 128, 129] {
            let line = format!("{{\"type\":\"x\",\"z\":{}1{}}}", "[".repeat(d), "]".repeat(d));
            assert_eq!(scan_jsonl(line.as_bytes()).errors, parse_jsonl(&line).errors, "depth {d}");
        }
        let ok = format!("{{\"z\":\"{}\",\"y\":{}1{}}}", "[".repeat(300), "[".repeat(100), "]".repeat(100));
        assert!(parse_jsonl(&ok).errors.is_empty());
        assert!(scan_jsonl(ok.as_bytes()).errors.is_empty());
    }

    #[test]
    fn js_number_conversion() {
        assert_eq!(js_string_to_number(" 2 "), 2.0);
        assert_eq!(js_string_to_number(""), 0.0);
        assert_eq!(js_string_to_number("0x10"), 16.0);
        assert!(js_string_to_number("inf").is_nan());
        assert!(js_string_to_number("1e").is_nan());
        assert_eq!(js_string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert_eq!(header_version(&json!({"version": [3]})), 3.0);
        assert_eq!(header_version(&json!({"version": null})), 1.0);
        assert!(header_version(&json!({"version": {}})).is_nan());
    }

    #[test]
    fn random_ids_are_unique_hex() {
        let mut g = RandomIds::with_taken(vec!["00000000".to_string()]);
        let ids: HashSet<String> = (0..500).map(|_| g.next_id()).collect();
        assert_eq!(ids.len(), 500);
        assert!(ids
            .iter()
            .all(|i| i.len() == 8 && i.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())));
    }
}
