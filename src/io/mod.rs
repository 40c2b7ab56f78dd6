//! JSON Lines loading and saving of session files: lenient or strict parsing with 1-based line
//! numbers on every error, the session-header check, the v1 → v2 → v3 migration, and writing a
//! session back. SPEC §1 ("Older files", "Lossless rule"), §13.3 (lossless storage); conformance
//! README "loadSession" and op `parseJsonlLenient`.
//!
//! Two paths share one line splitter and one decision per line ([`classify_line`]):
//! - the **value path** ([`parse_jsonl`], [`parse_session`]) builds a [`serde_json::Value`] per
//!   record (key order preserved, unknown types and fields untouched);
//! - the **raw path** ([`scan_jsonl`], [`scan_session`]) only extracts each record's
//!   [`EntryMeta`] and its byte range, for a session handle that keeps the original bytes (and for
//!   the JS `parseSession`, which splices those bytes into its result: [`parsed_session_json`]).
//!
//! **Nothing a user wrote is lost** (SPEC §13.3). Every line of the input survives a load and a
//! save in its place:
//! - a line holding one JSON value is a record (the header or an entry); any text `JSON.parse`
//!   accepts is one, whatever its nesting depth and however large its numbers;
//! - a line holding several JSON values glued together (`{…}{…}`) is split into its records,
//!   with an [`Error::Parse`] warning for the line;
//! - every other line (malformed JSON, a truncated last line) and every blank line is kept as an
//!   **opaque line**: its text as written, its 1-based line number and its position among the
//!   records ([`OpaqueLine`]); malformed ones are reported ([`Error::Parse`]), blank ones are not;
//! - invalid UTF-8 is replaced by U+FFFD (as `TextDecoder` does), never fatal;
//! - a header line that is not JSON (a truncated header) is kept as an opaque line and the
//!   entries after it load without a header ([`Error::Header`] reported); a first record that is
//!   JSON but not a session header means the input is not a session (the reference's rule): no
//!   entries, every line kept as an opaque line.
//!
//! Saving writes the header, the entries and the opaque lines in file order, one per line, each
//! ended by `\n`. The only changes a load and save make are the line ends (CRLF → LF, a final line
//! end added), a UTF-8 byte-order mark dropped, glued records written one per line, and a v1/v2
//! file migrated to v3. Nothing here panics on any input.
//!
//! **Any input loads in time linear in its size**, with structures beside it bounded by a small
//! constant times its size, whatever its shape (millions of blank, malformed or non-object
//! lines, one huge line, nesting a million levels deep):
//! - on the raw path, consecutive opaque lines (no record between them) are one
//!   [`OpaqueSpan`], a run over the buffer with its first line number and its line count, and
//!   an input that is not a session is one run: outputs that list lines ([`OpaqueSpan::lines`],
//!   `parseSession`'s `opaqueLines`, [`parsed_session_json`]) expand runs as they write them;
//! - at most [`MAX_LISTED_ERRORS`] bad lines are listed, the ones with the lowest line numbers,
//!   then one error counts the others (no message is built for them); every line is kept;
//! - nesting is only ever counted or skipped without recursion, and values are built at most
//!   [`VALUE_MAX_DEPTH`] deep (deeper lines: an error of the value path, a record of the raw
//!   path);
//! - a raw load whose records do not fit in memory is an error ([`too_large`]), not an
//!   allocation failure.
//!
//! The value path ([`parse_session`], [`parse_jsonl`]) still lists every opaque line as its own
//! [`OpaqueLine`] (its text a `String`) and builds a value per record, some tens of bytes per
//! blank line: the raw path is the one for inputs of any size.

use crate::entry::EntryList;
use crate::entry::EntryMeta;
use crate::error::{Error, Result};
use serde::ser::{Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

mod raw_migration;

/// The session format version this crate reads and writes (SPEC §1).
pub const CURRENT_SESSION_VERSION: u32 = 3;

/// How to treat bad lines: the options of `parseSession`, `SessionTree.fromJsonl` and
/// `SessionTree.fromBytes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "ParseSessionOptions"))]
#[serde(default, deny_unknown_fields)]
pub struct ParseOptions {
    /// `false` (default): keep every line and report each bad one in `errors`.
    /// `true`: fail with the error of the first bad line (lowest line number: `E_PARSE`,
    /// `E_MISSING_FIELD`, `E_HEADER` or `E_UNSUPPORTED_VERSION`) instead of reporting it in `errors`.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub strict: bool,
}

impl ParseOptions {
    /// Lenient parsing (the reference's behaviour, minus its losses).
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
    /// Byte range of the line's JSON text in the buffer. For a line holding one record: the whole
    /// line without its line end (`\n`, and the `\r`s before it), surrounding whitespace included,
    /// so that it is written back byte for byte. For a record of a glued line: that record's
    /// text only.
    pub range: Range<usize>,
}

/// A line kept as written: a line that holds no JSON record (malformed JSON, a truncated last
/// line, a blank line), or any line of an input that is not a session (SPEC §13.3). `parseSession`
/// returns them in `opaqueLines`; `serializeSession` writes them back in their places.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct OpaqueLine {
    /// 1-based line number in the input (ignored by `serializeSession`).
    #[serde(default)]
    pub line: usize,
    /// Where it goes back: the number of records (the header, when there is one, and the
    /// entries) written before it. Lines with the same position keep their order.
    pub position: usize,
    /// The line's text without its line end (`\n`, and the `\r`s before it).
    pub text: String,
}

/// A run of consecutive opaque lines of the raw path (no record between them, so they share one
/// position): like [`OpaqueLine`], its text a byte range of the buffer. One span holds the whole
/// run, however many lines it has, so that a file of a million blank lines costs one span, not a
/// million (the structures of a load stay within a small constant of the input's size). Outputs
/// that list lines ([`OpaqueSpan::lines`], `parseSession`'s `opaqueLines`) expand it per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpaqueSpan {
    /// 1-based line number in the input of the run's first line; the others follow it.
    pub line: usize,
    /// The number of records written before the run (see [`OpaqueLine::position`]).
    pub position: usize,
    /// The run's text in the buffer: from its first line's start to its last line's end
    /// without that line's line end; the lines inside are separated by their own line ends
    /// (`\n`, and the `\r`s before it, which [`OpaqueSpan::lines`] drops).
    pub range: Range<usize>,
    /// How many lines the run holds (at least 1).
    pub count: usize,
}

impl OpaqueSpan {
    /// A run of one line.
    pub fn one(line: usize, position: usize, range: Range<usize>) -> Self {
        Self { line, position, range, count: 1 }
    }

    /// Each line of the run as `(line number, text)`, the text without its line end (the `\r`s
    /// before a `\n` dropped, as the line splitter does). `buffer`: the one the range refers to.
    pub fn lines<'a>(&self, buffer: &'a [u8]) -> impl Iterator<Item = (usize, &'a str)> + 'a {
        let text = buffer.get(self.range.clone()).unwrap_or_default();
        let first = self.line;
        text.split(|&b| b == b'\n').enumerate().map(move |(k, l)| {
            let end = line_text_end(l, 0, l.len());
            (first + k, std::str::from_utf8(&l[..end]).unwrap_or_default())
        })
    }

    /// The run's text as pieces that, each followed by the line end `end`, write its lines back
    /// (the [`write_lines`] items): the whole range at once when `end` is `\n` and the run holds
    /// no `\r` (the common case: one copy), else one piece per line.
    pub fn pieces<'a>(&self, buffer: &'a [u8], end: LineEnd) -> impl Iterator<Item = &'a str> + 'a {
        let text = buffer.get(self.range.clone()).unwrap_or_default();
        let whole = end == LineEnd::Lf && !text.contains(&b'\r');
        let one = whole.then(|| std::str::from_utf8(text).unwrap_or_default());
        let per_line = (!whole).then(|| self.lines(buffer).map(|(_, t)| t));
        one.into_iter().chain(per_line.into_iter().flatten())
    }
}

/// Appends the `count` opaque lines from `line` on (text `range`, `position` records before
/// them) to `spans`, extending the last run when they follow it directly (the next line number,
/// the same position, and only a line end between them in the buffer: the caller's guarantee).
fn push_opaque(spans: &mut Vec<OpaqueSpan>, line: usize, position: usize, range: Range<usize>, count: usize) {
    if let Some(last) = spans.last_mut() {
        if last.position == position && last.line + last.count == line && last.range.end <= range.start {
            last.range.end = range.end;
            last.count += count;
            return;
        }
    }
    spans.push(OpaqueSpan { line, position, range, count });
}

/// A bad line: its 1-based number and what is wrong with it.
///
/// `error` is [`Error::Parse`] (malformed JSON or a truncated last line: the line is kept as an
/// opaque line; two records on one line: split into entries), [`Error::MissingField`] (an entry
/// without string `type` or `id`: kept) or [`Error::Header`] (no readable session header).
/// Serializes as `{line, code, message}`.
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

/// One line of the buffer.
struct Segment {
    /// Line number and the JSON text's range (trimmed of JSON whitespace).
    raw: RawLine,
    /// The whole line without its `\n` and the `\r`s before it.
    full: Range<usize>,
    /// A `\n` follows the line (the last line of a file may lack one).
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

/// `start..end` (a line without its `\n`) without the `\r`s that end it: a run of `\r` before
/// the `\n` is part of the line end (`\r\r\n` ends a line like `\r\n`), so a saved line
/// (written with `\n`) reads back as the same text.
fn line_text_end(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    end
}

/// The offset where the lines start: after a UTF-8 BOM at offset 0.
fn text_start(bytes: &[u8]) -> usize {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    }
}

/// Calls `f` for every line, blank ones included, in order. An empty text after the last `\n`
/// is not a line.
fn for_each_line(bytes: &[u8], mut f: impl FnMut(Segment)) {
    let mut pos = text_start(bytes);
    let mut line = 0usize;
    while pos < bytes.len() {
        line += 1;
        let (end, next, terminated) = match find_newline(bytes, pos) {
            Some(nl) => (nl, nl + 1, true),
            None => (bytes.len(), bytes.len() + 1, false),
        };
        let (a, b) = trim_json_ws(bytes, pos, end);
        f(Segment { raw: RawLine { line, range: a..b }, full: pos..line_text_end(bytes, pos, end), terminated });
        pos = next;
    }
}

/// The non-blank lines of `bytes` (1-based numbers, trimmed byte ranges), in order. Lines are
/// separated by `\n`; a trailing `\r` and other JSON whitespace around the text are excluded from
/// the range; whitespace-only lines are skipped; a UTF-8 BOM at offset 0 is skipped.
pub fn split_lines(bytes: &[u8]) -> Vec<RawLine> {
    let mut out = Vec::new();
    for_each_line(bytes, |s| {
        if !s.raw.range.is_empty() {
            out.push(s.raw)
        }
    });
    out
}

/// The buffer as UTF-8: borrowed when it is valid, else with every invalid sequence replaced by
/// U+FFFD (the WHATWG decoder's replacement, so a file read with `TextDecoder` loads the same).
/// Line ends are never part of an invalid sequence: line numbers do not change.
pub fn utf8_text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

// ---------------------------------------------------------------------------------------------
// Per-line decisions (shared by both paths)

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

/// Rewrites every number outside strings that is beyond the double range (such as `1e400`) as
/// `null`: what `JSON.stringify(JSON.parse(text))` writes for it (JavaScript reads it as
/// `Infinity`), since a [`Value`] cannot hold it. `text` is valid JSON.
fn nullify_huge_numbers(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == b'"' {
            let start = i;
            i += 1;
            while i < text.len() && text[i] != b'"' {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(text.len());
            out.extend_from_slice(&text[start..i]);
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < text.len() && matches!(text[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                i += 1;
            }
            let token = &text[start..i];
            let huge = std::str::from_utf8(token).ok().and_then(crate::js::parse_f64).is_some_and(f64::is_infinite);
            out.extend_from_slice(if huge { b"null" } else { token });
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

/// The nesting depth of a JSON text (brackets outside strings), counted without recursion.
fn json_depth(text: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        match (in_string, text[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => in_string = false,
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// The deepest nesting a [`Value`] is built for (values are recursive: deeper ones would risk the
/// stack, 1 MB under WebAssembly). Deeper records are still records on the raw path (their
/// text is kept and `JSON.parse` reads them); see [`parse_line_value`].
pub const VALUE_MAX_DEPTH: usize = 512;

/// serde_json's own nesting limit when building a value.
const SERDE_DEPTH: usize = 128;

/// A value nested deeper than serde_json's default limit (up to [`VALUE_MAX_DEPTH`]).
fn deep_value(text: &[u8]) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_slice(text);
    de.disable_recursion_limit();
    let v = Value::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Parses one record's JSON text into a value, the way the value path reads a record.
///
/// Accepts exactly one JSON value, as `JSON.parse` does, with three adjustments a [`Value`]
/// needs: unpaired UTF-16 surrogate escapes (which JavaScript writes and Rust strings cannot
/// hold) read as U+FFFD (same UTF-16 length); numbers beyond the double range (`1e400`, which
/// JavaScript reads as `Infinity`) read as `null`, what `JSON.stringify` writes for them; nesting
/// up to [`VALUE_MAX_DEPTH`] levels (serde_json's default limit is 128).
///
/// # Errors
/// The serde_json error when the text is not one JSON value, or when it nests deeper than
/// [`VALUE_MAX_DEPTH`] (the only JSON the value path cannot hold; the raw path keeps it).
pub fn parse_line_value(text: &[u8]) -> std::result::Result<Value, serde_json::Error> {
    let first = match serde_json::from_slice::<Value>(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let mut owned: Cow<'_, [u8]> = Cow::Borrowed(text);
    if has_surrogate_escape(&owned) {
        owned = Cow::Owned(repair_lone_surrogates(&owned));
    }
    // Only a valid JSON text is adjusted further.
    if serde_json::from_slice::<serde::de::IgnoredAny>(&owned).is_err() {
        return Err(first);
    }
    let depth = json_depth(&owned);
    if depth > VALUE_MAX_DEPTH {
        return Err(first);
    }
    let build = |t: &[u8]| if depth >= SERDE_DEPTH { deep_value(t) } else { serde_json::from_slice::<Value>(t) };
    match build(&owned) {
        Ok(v) => Ok(v),
        Err(_) => build(&nullify_huge_numbers(&owned)).map_err(|_| first),
    }
}

/// The metadata of one record's text (valid JSON). Never fails: a record no parser here can
/// build (nested deeper than [`VALUE_MAX_DEPTH`]) gets the metadata of its top-level `type`,
/// `id`, `parentId` and `timestamp` only.
fn record_meta(text: &[u8], utf8_checked: bool) -> EntryMeta {
    if utf8_checked || std::str::from_utf8(text).is_ok() {
        // Fields the metadata does not read are skipped without a depth limit: a line that
        // could nest deeper than serde's limit is read through a value.
        if !may_exceed_depth(text) {
            if let Ok(meta) = EntryMeta::from_json_serde(text) {
                return meta;
            }
        }
    }
    let mut meta = match parse_line_value(text) {
        Ok(v) => EntryMeta::from_value(&v),
        Err(_) => EntryMeta::from_value(&shallow_value(text)),
    };
    // `shallow_value` reads only objects: the text's first byte tells an object or an array.
    match text.trim_ascii_start().first() {
        Some(b'{') => meta.not_object = None,
        Some(b'[') => meta.not_object = Some(crate::entry::NotObject::Array),
        _ => {}
    }
    meta
}

/// The top-level `type`, `id`, `parentId` and `timestamp` of a JSON object text (skipping the
/// rest without a depth limit); `null` when they cannot be read.
fn shallow_value(text: &[u8]) -> Value {
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(rename = "type")]
        ty: Option<Value>,
        id: Option<Value>,
        #[serde(rename = "parentId")]
        parent_id: Option<Value>,
        timestamp: Option<Value>,
    }
    // The four fields are scalars in any real entry; other shapes are dropped.
    let scalar = |v: Option<Value>| v.filter(|v| !v.is_array() && !v.is_object());
    match serde_json::from_slice::<Top>(text) {
        Ok(t) => {
            let mut o = serde_json::Map::new();
            for (k, v) in [("type", t.ty), ("id", t.id), ("parentId", t.parent_id), ("timestamp", t.timestamp)] {
                if let Some(v) = scalar(v) {
                    o.insert(k.into(), v);
                }
            }
            Value::Object(o)
        }
        Err(_) => Value::Null,
    }
}

/// A nesting depth below serde_json's limit for values (128): lines that may nest deeper are
/// read through [`parse_line_value`].
const SAFE_DEPTH: usize = 100;

/// True when the JSON text may nest deeper than [`SAFE_DEPTH`]: first a count of all opening
/// brackets (cheap), then the real depth outside strings.
fn may_exceed_depth(text: &[u8]) -> bool {
    if text.len() <= SAFE_DEPTH || text.iter().filter(|&&b| b == b'[' || b == b'{').count() <= SAFE_DEPTH {
        return false;
    }
    json_depth(text) > SAFE_DEPTH
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

/// What one line holds ([`classify_line`]).
#[derive(Debug, Clone, PartialEq)]
pub enum LineContent {
    /// Whitespace only: kept as an opaque line, not reported.
    Blank,
    /// One JSON value: the record's byte range (the whole line without its line end).
    Record(Range<usize>),
    /// Two or more JSON values glued on one line: each one's byte range, and the warning.
    Glued(Vec<Range<usize>>, Error),
    /// Not JSON (malformed, or a truncated last line): kept as an opaque line, reported.
    Malformed(Error),
}

/// Decides what one line holds, the one rule both paths follow (SPEC §13.3): exactly the JSON
/// texts `JSON.parse` accepts are records, whatever their depth and number sizes (unpaired
/// surrogate escapes included); a line of several such texts one after the other is split.
/// `bytes` must be valid UTF-8 (see [`utf8_text`]). `listed`: the error of a bad line will be
/// listed (see [`MAX_LISTED_ERRORS`]); when not, it gets no message (none would show it).
fn classify(bytes: &[u8], seg: &Segment, listed: bool) -> LineContent {
    let Range { start: a, end: b } = seg.raw.range.clone();
    if a >= b {
        return LineContent::Blank;
    }
    let text = &bytes[a..b];
    let mut stream = serde_json::Deserializer::from_slice(text).into_iter::<serde::de::IgnoredAny>();
    let mut ranges = Vec::new();
    let mut start = 0usize;
    loop {
        match stream.next() {
            None => break,
            Some(Ok(_)) => {
                let end = stream.byte_offset();
                let (s, e) = trim_json_ws(text, start, end);
                ranges.push(a + s..a + e);
                start = end;
            }
            Some(Err(_)) if !listed => {
                return LineContent::Malformed(Error::Parse { line: seg.raw.line, reason: String::new() });
            }
            Some(Err(e)) => {
                let reason = if e.is_eof() && !seg.terminated && ranges.is_empty() {
                    format!("truncated last line (no line end, JSON incomplete): {}", bare_message(&e))
                } else {
                    format!("malformed JSON: {}", bare_message(&e))
                };
                return LineContent::Malformed(Error::Parse {
                    line: seg.raw.line,
                    reason: format!("{reason}; the line is kept as written"),
                });
            }
        }
    }
    match ranges.len() {
        0 => LineContent::Blank,
        1 => LineContent::Record(seg.full.clone()),
        n => LineContent::Glued(
            ranges,
            Error::Parse {
                line: seg.raw.line,
                reason: format!("two or more JSON records on one line: split into {n} entries"),
            },
        ),
    }
}

/// The decision of the line loops for the one line of `text` (for tests and tools): blank, one record, glued
/// records or malformed.
pub fn classify_line(text: &str) -> LineContent {
    let bytes = text.as_bytes();
    let end = find_newline(bytes, 0).unwrap_or(bytes.len());
    let (a, b) = trim_json_ws(bytes, 0, end);
    let seg = Segment {
        raw: RawLine { line: 1, range: a..b },
        full: 0..line_text_end(bytes, 0, end),
        terminated: end < bytes.len(),
    };
    classify(bytes, &seg, true)
}

fn sort_errors(errors: &mut [LineError]) {
    crate::js::sort_by_key_stable(errors, |e| e.line);
}

/// The most bad lines a load lists one by one (in `errors`, `loadErrors`): the ones with the
/// lowest line numbers. Past it, one more error closes the list: an [`Error::Parse`] on the
/// first line not listed that says how many bad lines were left out (every line is still kept
/// and saved as written; only the report is bounded). A file with millions of bad lines would
/// otherwise cost a message per line, tens of times the size of the file itself (and as many
/// objects in JavaScript), to tell the same thing over and over. Strict mode is not affected:
/// its error is the first bad line's.
pub const MAX_LISTED_ERRORS: usize = 10_000;

/// The bad lines of a load as they are found, keeping the [`MAX_LISTED_ERRORS`] lowest lines
/// (see there) in memory bounded by twice that many errors.
#[derive(Debug, Default)]
struct ErrorLog {
    kept: Vec<LineError>,
    /// How many errors were left out, and the lowest line among them.
    more: usize,
    first_more: usize,
}

impl ErrorLog {
    fn push(&mut self, e: LineError) {
        // Once errors were left out, a later line than the first left out can never be listed.
        if self.more > 0 && e.line >= self.first_more {
            self.more += 1;
            return;
        }
        if self.kept.len() >= 2 * MAX_LISTED_ERRORS {
            self.shrink();
        }
        self.kept.push(e);
    }

    /// [`ErrorLog::push`] of the error `make` builds, built only when it will be listed.
    fn push_with(&mut self, line: usize, make: impl FnOnce() -> LineError) {
        if self.listed(line) {
            self.push(make());
        } else {
            self.more += 1;
        }
    }

    /// The first line whose errors will not be listed (`usize::MAX` while none was left out).
    fn unlisted(&self) -> usize {
        if self.more > 0 {
            self.first_more
        } else {
            usize::MAX
        }
    }

    /// Whether an error of `line` would be listed.
    fn listed(&self, line: usize) -> bool {
        line < self.unlisted()
    }

    /// Sorts the kept errors by line and leaves out all but the lowest [`MAX_LISTED_ERRORS`].
    fn shrink(&mut self) {
        sort_errors(&mut self.kept);
        if self.kept.len() > MAX_LISTED_ERRORS {
            let first = self.kept[MAX_LISTED_ERRORS].line;
            self.first_more = if self.more == 0 { first } else { self.first_more.min(first) };
            self.more += self.kept.len() - MAX_LISTED_ERRORS;
            self.kept.truncate(MAX_LISTED_ERRORS);
        }
    }

    /// The lowest line of an [`Error::Parse`] kept (a malformed line or glued records).
    fn first_parse_line(&self) -> Option<usize> {
        self.kept.iter().filter(|e| matches!(e.error, Error::Parse { .. })).map(|e| e.line).min()
    }

    /// The list by line number, closed by the count of the ones left out, if any.
    fn finish(mut self) -> Vec<LineError> {
        self.shrink();
        if self.more > 0 {
            let line = self.first_more;
            let reason = format!(
                "{} more bad lines from this one on are not listed (a load lists at most {MAX_LISTED_ERRORS}); \
                 they are kept as written like every line",
                self.more
            );
            self.kept.push(LineError { line, error: Error::Parse { line, reason } });
        }
        self.kept
    }
}

// ---------------------------------------------------------------------------------------------
// Plain JSONL (no session semantics)

/// Every record of a JSONL buffer as a value, plus the opaque lines and the bad lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonlValues {
    /// The parsed values, in file order (the records of a glued line one after the other).
    pub values: Vec<Value>,
    /// The 1-based line number of each value (parallel to `values`).
    pub lines: Vec<usize>,
    /// The lines that hold no record, in file order; `position` counts the values before them.
    pub opaque: Vec<OpaqueLine>,
    /// The bad lines ([`Error::Parse`]), by line number, at most [`MAX_LISTED_ERRORS`] of them
    /// and one counting the others.
    pub errors: Vec<LineError>,
}

fn opaque_line(bytes: &[u8], line: usize, range: Range<usize>, position: usize) -> OpaqueLine {
    OpaqueLine { line, position, text: String::from_utf8_lossy(&bytes[range]).into_owned() }
}

/// The value path's line loop over UTF-8 `bytes`.
fn values_of_utf8(bytes: &[u8]) -> JsonlValues {
    let (out, log) = values_and_log(bytes);
    JsonlValues { errors: log.finish(), ..out }
}

/// [`values_of_utf8`] with the bad lines still in their log (`errors` is empty).
fn values_and_log(bytes: &[u8]) -> (JsonlValues, ErrorLog) {
    let mut out = JsonlValues::default();
    let mut log = ErrorLog::default();
    for_each_line(bytes, |seg| {
        // The common case first: the whole line is one value.
        if !seg.raw.range.is_empty() {
            if let Ok(v) = serde_json::from_slice::<Value>(&bytes[seg.raw.range.clone()]) {
                out.values.push(v);
                out.lines.push(seg.raw.line);
                return;
            }
        }
        let line = seg.raw.line;
        let push_records = |out: &mut JsonlValues, ranges: &[Range<usize>]| -> Option<Error> {
            let values: std::result::Result<Vec<Value>, _> =
                ranges.iter().map(|r| parse_line_value(&bytes[r.clone()])).collect();
            match values {
                Ok(vs) => {
                    for v in vs {
                        out.values.push(v);
                        out.lines.push(line);
                    }
                    None
                }
                Err(_) => Some(Error::Parse {
                    line,
                    reason: format!(
                        "a JSON value nested deeper than {VALUE_MAX_DEPTH} levels: kept as written \
                         (a session handle loads it as an entry)"
                    ),
                }),
            }
        };
        let bad = match classify(bytes, &seg, log.listed(line)) {
            LineContent::Blank => None,
            LineContent::Record(_) => match push_records(&mut out, std::slice::from_ref(&seg.raw.range)) {
                None => return,
                Some(e) => Some(e),
            },
            LineContent::Glued(ranges, warning) => match push_records(&mut out, &ranges) {
                None => {
                    log.push(LineError { line, error: warning });
                    return;
                }
                Some(e) => Some(e),
            },
            LineContent::Malformed(e) => Some(e),
        };
        let position = out.values.len();
        out.opaque.push(opaque_line(bytes, line, seg.full.clone(), position));
        if let Some(error) = bad {
            log.push(LineError { line, error });
        }
    });
    (out, log)
}

fn values_of(bytes: &[u8]) -> JsonlValues {
    values_of_utf8(utf8_text(bytes).as_bytes())
}

/// Parses JSONL text leniently: every record (a line holding one JSON value of any type, or each
/// value of a glued line) is kept, every other line is an opaque line, and malformed or glued
/// lines are reported with their line number. Never fails.
pub fn parse_jsonl(text: &str) -> JsonlValues {
    values_of_utf8(text.as_bytes())
}

/// [`parse_jsonl`] over bytes (invalid UTF-8 is replaced by U+FFFD, see [`utf8_text`]).
pub fn parse_jsonl_bytes(bytes: &[u8]) -> JsonlValues {
    values_of(bytes)
}

/// The reference's `parseJsonlLenient(text)`: the values of the records, other lines skipped
/// silently. Conformance op `parseJsonlLenient`.
pub fn parse_jsonl_lenient(text: &str) -> Vec<Value> {
    parse_jsonl(text).values
}

/// One record of the raw path: where it is and its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct MetaLine {
    /// Line number and byte range.
    pub raw: RawLine,
    /// The entry metadata extracted from the record's bytes.
    pub meta: EntryMeta,
    /// Whether the record has a top-level `id` or `parentId` key, when the scanner read it
    /// (`None`: not known; the raw v1 migration then looks at the text).
    pub(crate) id_keys: Option<bool>,
}

impl MetaLine {
    /// A record at `raw` with its metadata.
    pub fn new(raw: RawLine, meta: EntryMeta) -> Self {
        Self { raw, meta, id_keys: None }
    }
}

/// The records of a buffer with their metadata, plus the opaque and the bad lines (raw path).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonlMetas {
    /// Records, in file order.
    pub lines: Vec<MetaLine>,
    /// The lines that hold no record, as runs of consecutive lines ([`OpaqueSpan`]); `position`
    /// counts the records before them.
    pub opaque: Vec<OpaqueSpan>,
    /// Bad lines ([`Error::Parse`]), by line number, at most [`MAX_LISTED_ERRORS`] of them and
    /// one counting the others.
    pub errors: Vec<LineError>,
    /// The input with invalid UTF-8 replaced (see [`utf8_text`]) when it was not valid UTF-8:
    /// the ranges then point into it. `None`: they point into the input.
    pub text: Option<String>,
}

/// What the consumer of [`scan_lines`] still wants, updated by it as the loop goes.
struct ScanControl {
    /// The first line whose error will not be listed ([`ErrorLog::unlisted`]): bad lines from
    /// there on get no message.
    unlisted: std::cell::Cell<usize>,
    /// The records' metadata is wanted (`false`: the records of the general path are handed
    /// on with empty metadata, which is not read).
    metas: std::cell::Cell<bool>,
}

impl Default for ScanControl {
    fn default() -> Self {
        Self { unlisted: std::cell::Cell::new(usize::MAX), metas: std::cell::Cell::new(true) }
    }
}

/// What the raw line loop hands on, in file order. Passed by value to a closure and never
/// stored, so a record's metadata is not boxed (that would cost an allocation per line).
#[allow(clippy::large_enum_variant)]
enum RawItem {
    Record(MetaLine),
    /// `count` consecutive opaque lines from `line` on, `range` covering them (an
    /// [`OpaqueSpan`]'s run).
    Opaque {
        line: usize,
        range: Range<usize>,
        count: usize,
    },
    Error(LineError),
}

/// The raw path's line loop over UTF-8 `bytes`. Each line is first handed to the one-pass
/// scanner ([`crate::entry::scan_entry`]), which also finds where the line's object ends, so
/// that a good line costs one pass and no separate search for its line end. When the scanner
/// gives up, or something other than whitespace follows the object on its line, the line takes
/// the general path of [`classify`] + [`record_meta`], with the same result as the value path.
/// Stops when `f` returns false.
///
/// `utf8_checked`: `bytes` is known to be UTF-8. Otherwise the loop checks it as it goes: a line
/// the scanner reads is valid UTF-8 by the scanner's own checks (bytes outside strings must be
/// ASCII, strings are validated), and a line of the general path is checked before it is
/// classified; at the first line that is not valid UTF-8 the loop stops and returns `false`
/// (the caller then reads the input through [`utf8_text`]). So the buffer is read once, not
/// once more for a UTF-8 check up front.
///
/// `control`: what `f` still wants, kept up to date by it.
fn scan_lines(bytes: &[u8], utf8_checked: bool, control: &ScanControl, mut f: impl FnMut(RawItem) -> bool) -> bool {
    let mut scanner = crate::entry::EntryScanner::default();
    let n = bytes.len();
    let mut pos = text_start(bytes);
    let mut line = 0usize;
    while pos < n {
        line += 1;
        let mut a = pos;
        while a < n && matches!(bytes[a], b' ' | b'\t' | b'\r') {
            a += 1;
        }
        if a == n || bytes[a] == b'\n' {
            // A blank line (the same JSON whitespace `trim_json_ws` drops), without the general
            // path; empty lines after it are taken with it at once.
            let mut end = a;
            let mut count = 1;
            while end + 1 < n && bytes[end + 1] == b'\n' {
                end += 1;
                count += 1;
            }
            let text_end = if count == 1 { line_text_end(bytes, pos, a) } else { end };
            if !f(RawItem::Opaque { line, range: pos..text_end, count }) {
                return true;
            }
            line += count - 1;
            pos = end + 1;
            continue;
        }
        if bytes[a] == b'{' {
            if let Some((meta, end, id_keys)) = scanner.scan_keys(bytes, a) {
                let mut e = end;
                while e < n && matches!(bytes[e], b' ' | b'\t' | b'\r') {
                    e += 1;
                }
                if e == n || bytes[e] == b'\n' {
                    let range = pos..line_text_end(bytes, pos, e);
                    if !f(RawItem::Record(MetaLine { raw: RawLine { line, range }, meta, id_keys: Some(id_keys) })) {
                        return true;
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
        if !utf8_checked && std::str::from_utf8(&bytes[pos..end]).is_err() {
            return false;
        }
        let (a, b) = trim_json_ws(bytes, pos, end);
        let seg = Segment { raw: RawLine { line, range: a..b }, full: pos..line_text_end(bytes, pos, end), terminated };
        let meta_of = |text: &[u8]| if control.metas.get() { record_meta(text, true) } else { EntryMeta::default() };
        let go = match classify(bytes, &seg, line < control.unlisted.get()) {
            LineContent::Blank => f(RawItem::Opaque { line, range: seg.full, count: 1 }),
            LineContent::Record(range) => {
                let meta = meta_of(&bytes[a..b]);
                f(RawItem::Record(MetaLine::new(RawLine { line, range }, meta)))
            }
            LineContent::Glued(ranges, warning) => {
                let mut go = f(RawItem::Error(LineError { line, error: warning }));
                for range in ranges {
                    if !go {
                        break;
                    }
                    let meta = meta_of(&bytes[range.clone()]);
                    go = f(RawItem::Record(MetaLine::new(RawLine { line, range }, meta)));
                }
                go
            }
            LineContent::Malformed(error) => {
                f(RawItem::Opaque { line, range: seg.full, count: 1 }) && f(RawItem::Error(LineError { line, error }))
            }
        };
        if !go {
            return true;
        }
        pos = next;
    }
    true
}

fn metas_of_utf8(bytes: &[u8]) -> JsonlMetas {
    let mut out = JsonlMetas::default();
    let mut log = ErrorLog::default();
    // A rough guess of the entry count (lines average some hundreds of bytes), to grow less.
    out.lines.reserve(bytes.len() / 2048);
    let control = ScanControl::default();
    scan_lines(bytes, true, &control, |item| {
        match item {
            RawItem::Record(l) => out.lines.push(l),
            RawItem::Opaque { line, range, count } => push_opaque(&mut out.opaque, line, out.lines.len(), range, count),
            RawItem::Error(e) => {
                log.push(e);
                control.unlisted.set(log.unlisted());
            }
        }
        true
    });
    out.errors = log.finish();
    out
}

/// Splits a UTF-8 buffer into lines and extracts each record's [`EntryMeta`] without building
/// a [`Value`] (the fast path of a session handle that keeps the raw bytes). Decides every line
/// like [`parse_jsonl_bytes`] (see [`LineContent`]). Never fails. Input with invalid UTF-8 is
/// read as [`utf8_text`] returns it, and the ranges point into [`JsonlMetas::text`].
pub fn scan_jsonl(bytes: &[u8]) -> JsonlMetas {
    match std::str::from_utf8(bytes) {
        Ok(_) => metas_of_utf8(bytes),
        Err(_) => {
            let text = utf8_text(bytes).into_owned();
            JsonlMetas { text: Some(text.clone()), ..metas_of_utf8(text.as_bytes()) }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Migration (conformance README "loadSession" step 3)

/// What a session header's `version` says: the one rule of both load paths, the migration
/// ([`migrate_to_current_version`]) and validation ([`crate::tree::header_issue`]). SPEC §1,
/// §13.11.
///
/// A valid version is a whole number from 1 to 3 (`3.0` is 3, as `JSON.parse` reads it); an
/// absent or `null` one is 1 (the v1 files, which have none). A file whose version is not valid
/// — a newer one or one that is no version at all — is read as version 3: nothing is migrated,
/// no id is assigned, the header line and every entry are saved as they were.
#[derive(Debug, Clone, PartialEq)]
pub enum HeaderVersion {
    /// A version this engine reads (1, 2 or 3): 1 and 2 are migrated to 3 on load.
    Known(u32),
    /// A whole number above 3: read as version 3, reported as [`Error::UnsupportedVersion`].
    Newer(f64),
    /// Anything else (0, a negative number, a fraction, a string such as `"3"`, a boolean, an
    /// array, an object), kept as given: read as version 3, reported as
    /// [`Error::InvalidVersion`] (`E_MISSING_FIELD`).
    Invalid(Value),
}

impl HeaderVersion {
    /// The version of a header (any JSON value; `version` absent or `null`: 1).
    pub fn of(header: &Value) -> Self {
        let n = match header.get("version") {
            None | Some(Value::Null) => return Self::Known(1),
            Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(other) => return Self::Invalid(other.clone()),
        };
        let max = f64::from(CURRENT_SESSION_VERSION);
        if (1.0..=max).contains(&n) && n.fract() == 0.0 {
            Self::Known(n as u32)
        } else if n > max && n.fract() == 0.0 {
            Self::Newer(n)
        } else {
            Self::Invalid(header["version"].clone())
        }
    }

    /// The version the file is read as: the known one, else [`CURRENT_SESSION_VERSION`].
    pub fn read_as(&self) -> u32 {
        match self {
            Self::Known(v) => *v,
            _ => CURRENT_SESSION_VERSION,
        }
    }

    /// The version as a number, when the header gives one (1 when absent): what
    /// `SessionTree.sourceVersion` reports; `None` for a version that is no JSON number.
    pub fn number(&self) -> Option<f64> {
        match self {
            Self::Known(v) => Some(f64::from(*v)),
            Self::Newer(n) => Some(*n),
            Self::Invalid(v) => v.as_f64(),
        }
    }

    /// The load error of this version on the header's `line`: [`Error::UnsupportedVersion`] for
    /// a newer one, [`Error::InvalidVersion`] for one that is no version; `None` for a known one.
    pub fn problem(&self, line: usize) -> Option<Error> {
        match self {
            Self::Known(_) => None,
            Self::Newer(n) => Some(Error::UnsupportedVersion { line, version: crate::js::format_number(*n) }),
            Self::Invalid(v) => Some(Error::InvalidVersion { line, given: given_version(v) }),
        }
    }

    /// What is wrong with this version: the text of [`HeaderVersion::problem`]'s error without
    /// its `line N: `; `None` for a known one.
    pub fn problem_text(&self) -> Option<String> {
        match self {
            Self::Known(_) => None,
            Self::Newer(n) => Some(VersionProblem::Newer(&crate::js::format_number(*n)).to_string()),
            Self::Invalid(v) => Some(VersionProblem::Invalid(&given_version(v)).to_string()),
        }
    }
}

/// What is wrong with a header's version, as the messages write it: a newer version (as
/// JavaScript writes the number), or what a header gives that is no version.
pub(crate) enum VersionProblem<'a> {
    /// [`Error::UnsupportedVersion`].
    Newer(&'a str),
    /// [`Error::InvalidVersion`].
    Invalid(&'a str),
}

impl std::fmt::Display for VersionProblem<'_> {
    /// The error's text without its `line N: `: one text for the loaders' errors and the
    /// validator's issues ([`crate::tree::header_issue`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = CURRENT_SESSION_VERSION;
        match self {
            Self::Newer(version) => write!(
                f,
                "session format version {version} is newer than this engine reads ({v}); the file is read as \
                 version {v} and what this engine does not know is kept unchanged"
            ),
            Self::Invalid(given) => write!(
                f,
                "invalid field `version` of the session header: expected a whole number from 1 to {v} (absent: 1), \
                 got {given}; the file is read as version {v} (nothing migrated) and saved unchanged"
            ),
        }
    }
}

/// How a message shows a `version` that is no version: a number as JavaScript writes it, a
/// string as JSON (`the string "3"`), `true`/`false`, `an array`, `an object`.
fn given_version(v: &Value) -> String {
    match v {
        Value::Number(n) => crate::js::format_number(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(_) => format!("the string {v}"),
        Value::Bool(b) => b.to_string(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        Value::Null => "null".into(),
    }
}

/// The load error of a header whose version is not one this engine reads (on `line`):
/// [`HeaderVersion::problem`]. The file still loads as the current version, every field kept.
/// SPEC §1, §13.11.
fn version_error(header: &Value, line: usize) -> Option<LineError> {
    HeaderVersion::of(header).problem(line).map(|error| LineError { line, error })
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
    let v = header.map_or(1, |h| HeaderVersion::of(h).read_as());
    VersionPlan { migrated: v < CURRENT_SESSION_VERSION, v1: v < 2, v2: v < CURRENT_SESSION_VERSION }
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
            set_first_kept(o, assign);
        }
    }
}

/// v1 → v2 on one compaction record: `firstKeptEntryId` set to the id its index resolved to
/// (`Some(Some(id))`), removed (`Some(None)`: assigning `undefined`, which JSON.stringify drops) or
/// left (`None`); `firstKeptEntryIndex` always removed. Shared by the value and the raw path.
pub(crate) fn set_first_kept(o: &mut serde_json::Map<String, Value>, assign: Option<Option<Value>>) {
    match assign {
        Some(Some(id)) => {
            o.insert("firstKeptEntryId".into(), id);
        }
        Some(None) => {
            o.shift_remove("firstKeptEntryId");
        }
        None => {}
    }
    o.shift_remove("firstKeptEntryIndex");
}

/// v2 → v3: message role `hookMessage` becomes `custom`; headers get `version: 3`.
fn migrate_v2_to_v3(file_entries: &mut [Value]) {
    for e in file_entries.iter_mut() {
        if let Value::Object(o) = e {
            migrate_v2_record(o);
        }
    }
}

/// v2 → v3 on one record: a header gets `version: 3`, a message of role `hookMessage` becomes
/// `custom`. Shared by the value and the raw path.
pub(crate) fn migrate_v2_record(o: &mut serde_json::Map<String, Value>) {
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

/// Migrates a session's file entries (header included, in file order) to version 3 in place,
/// exactly as the reference's `migrateToCurrentVersion` (conformance README "loadSession"
/// step 3; SPEC §1 "Older files"):
/// - the version is the first `type: "session"` entry's, read by [`HeaderVersion`] (a whole
///   number from 1 to 3, absent or `null`: 1); nothing happens when it is 3 or not a version
///   this engine reads (a newer one, `-1`, `"3"`, …: read as 3, SPEC §13.11) — unlike the
///   reference, which compares it with JavaScript's semantics;
/// - below 2, v1 → v2: every non-header object entry, in order, gets `id = next_id()` (exactly one
///   call per such entry) and `parentId` = the previous one's id (`null` for the first);
///   a compaction's numeric `firstKeptEntryIndex` (index into `file_entries`, header included)
///   becomes `firstKeptEntryId` (absent when the target has no id yet or is a header / out of
///   range) and the index key is deleted;
/// - below 3, v2 → v3: message role `hookMessage` becomes `custom`, and every header gets
///   `version: 3`.
///
/// Returns `true` when a migration was due (the reference's `migrated` flag; `false` for a
/// version that is not one this engine reads). Non-object lines are left alone and consume no id.
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

/// The number an id of [`RandomIds`]' shape (exactly 8 lowercase hex digits) spells.
fn id_number(id: &str) -> Option<u32> {
    (id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| u32::from_str_radix(id, 16).ok())
        .flatten()
}

/// The id generator of the engine: 8-digit lowercase hex ids (the reference's
/// `randomUUID().slice(-8)` shape), never repeating an id it returned or was told is taken.
///
/// - [`RandomIds::new`], [`RandomIds::with_taken`]: random ids, for new entries (SPEC §1 "New
///   entries"). Randomness comes from the OS (`getrandom`); if that fails, from a deterministic
///   mixer.
/// - [`RandomIds::derived`]: ids derived from a file, the default of the v1 migration (SPEC
///   §13.10), so that loading the same file twice gives the same ids (the ids a tool prints for
///   a v1 file can be used on the next run). The `n`-th id (from 0: the `n`-th entry that gets
///   one, in file order) is the low 32 bits of a 64-bit mix of the header's `id` and
///   `timestamp` (strings; another type counts as empty) and `n`.
///
/// Either way, an id that is taken (an id of the file, or one returned before) is drawn again
/// (16 times; a derived id with the attempt number mixed in, so deterministically), then probed
/// upwards (`+1`, wrapping).
#[derive(Debug, Clone, Default)]
pub struct RandomIds {
    /// The taken ids of the generator's shape (8 lowercase hex digits) as numbers: no other id
    /// can equal one it returns.
    taken: HashSet<u32, foldhash::fast::RandomState>,
    state: u64,
    /// Random numbers drawn from the OS in one call and not used yet (one call per id would
    /// cost a system call, or a call into JavaScript on wasm, for every entry of a v1 file).
    pool: Vec<u32>,
    /// Derived ids: the mix of the header's `id` and `timestamp` ([`RandomIds::derived`]);
    /// 0: random ids.
    seed: u64,
    /// How many ids were returned.
    count: u64,
}

/// FNV-1a (64 bits) of `bytes`, continued from `h`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The splitmix64 finalizer: a 64-bit mix whose every output bit depends on every input bit.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RandomIds {
    /// A generator with no taken ids.
    pub fn new() -> Self {
        Self::default()
    }

    /// A generator that also avoids the given ids (for example the ids already in a session).
    pub fn with_taken<I: IntoIterator<Item = String>>(taken: I) -> Self {
        let taken = taken.into_iter().filter_map(|id| id_number(&id)).collect();
        Self { taken, state: 0, pool: Vec::new(), seed: 0, count: 0 }
    }

    /// This generator, its ids now derived from the file whose header is `header` (SPEC
    /// §13.10); make it with the ids already in the file ([`RandomIds::with_taken`], the
    /// header's included).
    pub fn derived(mut self, header: &Value) -> Self {
        let id = header.get("id").and_then(Value::as_str).unwrap_or_default();
        let timestamp = header.get("timestamp").and_then(Value::as_str).unwrap_or_default();
        let h = fnv1a(fnv1a(0xCBF2_9CE4_8422_2325, id.as_bytes()), timestamp.as_bytes());
        // Odd: never 0 (random ids).
        self.seed = mix64(h) | 1;
        self
    }

    /// Draw `attempt` of the id numbered `n >> 8`.
    fn draw(&mut self, n: u64, attempt: u64) -> u32 {
        if self.seed != 0 {
            return mix64(self.seed ^ mix64(n ^ attempt)) as u32;
        }
        if let Some(r) = self.pool.pop() {
            return r;
        }
        let mut buf = [0u8; 1024];
        if getrandom::getrandom(&mut buf).is_ok() {
            self.pool.extend(buf.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            if let Some(r) = self.pool.pop() {
                return r;
            }
        }
        // splitmix64 over a counter and this generator's address.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15 ^ (self as *const Self as u64));
        mix64(self.state) as u32
    }

    /// The next unique id: 8 lowercase hex digits.
    pub fn next_id(&mut self) -> String {
        // The attempt goes in the low byte.
        let n = self.count << 8;
        self.count += 1;
        let mut candidate = self.draw(n, 0);
        for attempt in 1u64.. {
            if self.taken.insert(candidate) {
                break;
            }
            // After a few draws, probe linearly: terminates while fewer than 2^32 are taken.
            candidate = if attempt <= 16 { self.draw(n, attempt) } else { candidate.wrapping_add(1) };
        }
        format!("{candidate:08x}")
    }
}

/// A new v3 session header (SPEC §1): `{type: "session", version: 3, id, timestamp, cwd: ""}`
/// with a random UUID-shaped (version 4) `id` and `now_ms` (ms since the epoch) as its ISO
/// 8601 timestamp. What a session built in memory is saved under, so that the saved file loads.
pub fn new_session_header(now_ms: f64) -> Value {
    let mut ids = RandomIds::new();
    let hex: String = (0..4).map(|_| ids.next_id()).collect();
    let id = format!("{}-{}-4{}-{}-{}", &hex[0..8], &hex[8..12], &hex[13..16], &hex[16..20], &hex[20..32]);
    serde_json::json!({
        "type": "session",
        "version": 3,
        "id": id,
        "timestamp": crate::js::format_iso_timestamp(now_ms),
        "cwd": "",
    })
}

// ---------------------------------------------------------------------------------------------
// Sessions (value path)

/// A loaded session (value path): the header, the entries after it, the opaque lines and the
/// bad lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedSession {
    /// The header (the first record), after migration; `None` when there is no valid header:
    /// then either the header line was not JSON and `entries` holds every record, or the input
    /// is not a session and `entries` is empty (every line is then in `opaque`).
    pub header: Option<Value>,
    /// 1-based line of the header (0 when there is none).
    pub header_line: usize,
    /// Every record after the header, in file order, after migration. Records of type
    /// `session` after the first (extra headers) stay here, as in the reference's file entries.
    pub entries: Vec<Value>,
    /// The 1-based source line of each entry (parallel to `entries`).
    pub lines: Vec<usize>,
    /// The lines that hold no record, in file order, with their place among the records
    /// ([`OpaqueLine::position`] counts the header, when there is one, and the entries).
    pub opaque: Vec<OpaqueLine>,
    /// Bad lines by line number: [`Error::Parse`] (malformed: kept in `opaque`; glued records:
    /// split into entries), [`Error::MissingField`] (an entry without a string `type` or `id`
    /// after migration; kept, as the reference keeps it) and [`Error::Header`] (no valid header);
    /// at most [`MAX_LISTED_ERRORS`] of them, then one [`Error::Parse`] counting the others.
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

    /// The session as JSONL, opaque lines in their places ([`serialize_session_lines`]).
    pub fn to_jsonl(&self) -> String {
        serialize_session_lines(self.header.as_ref(), &self.entries, &self.opaque)
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
    let has = |key: &str| entry.get(key).is_some_and(Value::is_string);
    crate::entry::missing_required_field(has("type"), has("id"))
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

/// What the first record means (conformance README "loadSession" step 2, SPEC §13.3).
enum HeaderState {
    /// A session header.
    Valid,
    /// The first non-blank line is not JSON (a truncated or damaged header): it stays an opaque
    /// line, and every record is an entry of a session without header.
    Damaged(LineError),
    /// The first record is JSON but not a session header, or there is no record: not a session
    /// (the reference loads nothing); every line is kept as an opaque line.
    NotASession(LineError),
}

/// `first`: the first record and its line; `first_parse`: the lowest line of an
/// [`Error::Parse`] (a malformed line before the first record means the first non-blank line is
/// not JSON).
fn header_state(first: Option<(&Value, usize)>, first_parse: Option<usize>) -> HeaderState {
    let line = first.map_or(1, |(_, l)| l);
    let Some(reason) = header_problem(first.map(|(v, _)| v), line) else {
        return HeaderState::Valid;
    };
    let damaged = first_parse.filter(|&l| l < line);
    match (first, damaged) {
        (Some(_), Some(header_line)) => HeaderState::Damaged(header_error(
            header_line,
            format!(
                "line {header_line} is not a readable session header (kept as written); the records \
                 from line {line} on are loaded as entries of a session without header"
            ),
        )),
        _ => HeaderState::NotASession(header_error(line, reason)),
    }
}

/// Every line of `bytes` as an opaque line at position 0 (an input that is not a session).
fn all_lines_opaque(bytes: &[u8]) -> Vec<OpaqueLine> {
    let mut out = Vec::new();
    for_each_line(bytes, |seg| out.push(opaque_line(bytes, seg.raw.line, seg.full, 0)));
    out
}

/// Every line of `bytes` as one run of opaque lines at position 0 (an input that is not a
/// session), without looking at the lines: from the first line's start (after a byte-order
/// mark) to the end of the last line's text; none for an input without lines.
fn all_lines_run(bytes: &[u8]) -> Vec<OpaqueSpan> {
    let start = text_start(bytes);
    if start >= bytes.len() {
        return Vec::new();
    }
    let terminated = bytes.last() == Some(&b'\n');
    let end = if terminated { bytes.len() - 1 } else { bytes.len() };
    let newlines = bytes[start..end].iter().filter(|&&b| b == b'\n').count();
    vec![OpaqueSpan { line: 1, position: 0, range: start..line_text_end(bytes, start, end), count: newlines + 1 }]
}

/// The errors of a load, sorted by line ([`ErrorLog::finish`]); in strict mode, the first one
/// is returned as the error.
fn check_strict(options: &ParseOptions, log: ErrorLog) -> Result<Vec<LineError>> {
    let errors = log.finish();
    match errors.first() {
        Some(e) if options.strict => Err(e.error.clone()),
        _ => Ok(errors),
    }
}

fn string_ids<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    values.into_iter().filter_map(|v| v.get("id").and_then(Value::as_str).map(str::to_owned)).collect()
}

/// The session of the records of UTF-8 `bytes` (`values` = [`values_and_log`] of them).
fn session_of(
    bytes: &[u8],
    (values, mut errors): (JsonlValues, ErrorLog),
    options: &ParseOptions,
    next_id: Option<&mut dyn FnMut() -> String>,
) -> Result<ParsedSession> {
    let JsonlValues { values: mut file, lines, opaque, .. } = values;
    let first_line = lines.first().copied().unwrap_or(1);
    match header_state(file.first().zip(lines.first().copied()), errors.first_parse_line()) {
        HeaderState::Valid => {
            if let Some(e) = file.first().and_then(|h| version_error(h, first_line)) {
                errors.push(e);
            }
        }
        HeaderState::Damaged(e) => {
            errors.push(e);
            for (v, &line) in file.iter().zip(&lines) {
                if let Some(field) = missing_field_of(v) {
                    errors.push(missing_field(line, field));
                }
            }
            let errors = check_strict(options, errors)?;
            return Ok(ParsedSession { entries: file, lines, opaque, errors, ..Default::default() });
        }
        HeaderState::NotASession(e) => {
            errors.push(e);
            let errors = check_strict(options, errors)?;
            drop((file, opaque));
            return Ok(ParsedSession { opaque: all_lines_opaque(bytes), errors, ..Default::default() });
        }
    }
    let migrated = match next_id {
        Some(f) => migrate_to_current_version(&mut file, f),
        None => {
            static NULL: Value = Value::Null;
            let mut ids = RandomIds::with_taken(string_ids(&file)).derived(file.first().unwrap_or(&NULL));
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
    let errors = check_strict(options, errors)?;
    Ok(ParsedSession {
        header,
        header_line: first_line,
        entries: file.collect(),
        lines: lines.get(1..).unwrap_or_default().to_vec(),
        opaque,
        errors,
        migrated,
    })
}

fn parse_session_utf8(
    bytes: &[u8],
    options: &ParseOptions,
    next_id: Option<&mut dyn FnMut() -> String>,
) -> Result<ParsedSession> {
    session_of(bytes, values_and_log(bytes), options, next_id)
}

/// Loads a session from JSONL text (conformance README "loadSession"; SPEC §1, §13.3):
/// 1. decides every line ([`LineContent`]): records are kept (glued ones split, reported),
///    blank and malformed lines are kept as opaque lines (malformed ones reported,
///    [`Error::Parse`]);
/// 2. the first record must be a header `{type: "session", id: <string>}`: when the first
///    non-blank line is not JSON, the records load as entries without a header; otherwise the
///    input is not a session and only opaque lines are returned ([`Error::Header`] either way);
/// 3. migrates v1/v2 to v3 ([`migrate_to_current_version`]) with ids derived from the file
///    ([`RandomIds::derived`], SPEC §13.10: the same file gets the same ids);
/// 4. reports entries without a string `type` or `id` ([`Error::MissingField`]).
///
/// Lenient (default): returns every line and the bad ones in `errors`. Strict: returns the
/// error of the first bad line. Never panics.
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn parse_session(text: &str, options: &ParseOptions) -> Result<ParsedSession> {
    parse_session_utf8(text.as_bytes(), options, None)
}

/// [`parse_session`] over bytes (invalid UTF-8 is replaced by U+FFFD, see [`utf8_text`]).
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn parse_session_bytes(bytes: &[u8], options: &ParseOptions) -> Result<ParsedSession> {
    parse_session_utf8(utf8_text(bytes).as_bytes(), options, None)
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
    parse_session_utf8(utf8_text(bytes).as_bytes(), options, Some(next_id))
}

// ---------------------------------------------------------------------------------------------
// Sessions (raw path)

/// A loaded session (raw path): the header, each entry's line and metadata, the opaque lines
/// and the bad lines. Byte ranges refer to the input buffer, or to `text` when that is set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSession {
    /// The header (parsed; it is small), `None` when there is no valid header (as in
    /// [`ParsedSession::header`]).
    pub header: Option<Value>,
    /// The header's line.
    pub header_line: Option<RawLine>,
    /// Every record after the header, in file order, with its metadata.
    pub entries: Vec<MetaLine>,
    /// The lines that hold no record, as in [`ParsedSession::opaque`] but as runs of consecutive
    /// lines ([`OpaqueSpan`]; [`OpaqueSpan::lines`] lists a run's lines).
    pub opaque: Vec<OpaqueSpan>,
    /// Bad lines, as in [`ParsedSession::errors`].
    pub errors: Vec<LineError>,
    /// A migration was due and applied.
    pub migrated: bool,
    /// The text the ranges point into when it is not the input: for v1/v2 input, the migrated
    /// session as JSONL (header first, one record per line, opaque lines in their places); for
    /// input with invalid UTF-8, the input with it replaced ([`utf8_text`]). The `line` numbers
    /// stay those of the input. `None`: the ranges point into the input buffer.
    pub text: Option<String>,
    /// The format version of the input as its header gave it (`version ?? 1`, when a JSON
    /// number: [`HeaderVersion::number`]), before any migration; `None` without a valid header
    /// or for a `version` that is no number. SPEC §1, §13.11.
    pub source_version: Option<f64>,
}

impl RawSession {
    /// The buffer the ranges refer to: `text` if set, else `input`.
    pub fn buffer<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        self.text.as_deref().map_or(input, str::as_bytes)
    }

    /// `(line, range)` of every entry, the input of a handle built over the buffer.
    pub fn spans(&self) -> Vec<(usize, Range<usize>)> {
        self.entries.iter().map(|e| (e.raw.line, e.raw.range.clone())).collect()
    }
}

/// A migrated [`ParsedSession`] written out as JSONL, with ranges and metadata per entry.
fn raw_from_parsed(p: ParsedSession) -> RawSession {
    let mut text = String::new();
    let mut push = |t: &str| -> Range<usize> {
        let start = text.len();
        text.push_str(t);
        let end = text.len();
        text.push('\n');
        start..end
    };
    let mut opaque = p.opaque.iter().peekable();
    let mut spans = Vec::new();
    let mut flush = |push: &mut dyn FnMut(&str) -> Range<usize>, position: usize| {
        while let Some(o) = opaque.next_if(|o| o.position <= position) {
            // Consecutive lines are written one after the other: one run.
            push_opaque(&mut spans, o.line, o.position, push(&o.text), 1);
        }
    };
    let mut position = 0;
    let header_line = p.header.as_ref().map(|h| {
        flush(&mut push, position);
        position += 1;
        RawLine { line: p.header_line, range: push(&to_json_line(h)) }
    });
    let mut entries = Vec::with_capacity(p.entries.len());
    for (v, &line) in p.entries.iter().zip(&p.lines) {
        flush(&mut push, position);
        position += 1;
        entries.push(MetaLine::new(RawLine { line, range: push(&to_json_line(v)) }, EntryMeta::from_value(v)));
    }
    flush(&mut push, usize::MAX);
    RawSession {
        header: p.header,
        header_line,
        entries,
        opaque: spans,
        errors: p.errors,
        migrated: p.migrated,
        text: Some(text),
        source_version: None,
    }
}

/// Reports the entries (records of `bytes`) without a string `type` or `id`
/// ([`Error::MissingField`]).
fn missing_field_errors(entries: &[MetaLine], errors: &mut ErrorLog) {
    for e in entries {
        if let Some(field) = e.meta.missing_field() {
            errors.push_with(e.raw.line, || missing_field(e.raw.line, field));
        }
    }
}

/// `checked`: `bytes` as text when the caller has it (then `bytes == checked.as_bytes()`).
fn raw_session_of(
    bytes: &[u8],
    checked: Option<&str>,
    options: &ParseOptions,
    next_id: Option<&mut dyn FnMut() -> String>,
) -> Result<RawSession> {
    // Input that is not valid UTF-8 is read as `utf8_text` returns it (the scan below finds out).
    let lossy = |next_id: Option<&mut dyn FnMut() -> String>| -> Result<RawSession> {
        let text = utf8_text(bytes).into_owned();
        let mut raw = raw_session_of(text.as_bytes(), Some(&text), options, next_id)?;
        if raw.text.is_none() {
            raw.text = Some(text);
        }
        Ok(raw)
    };
    // The first record (the header) apart from the others, so that the entries need not be
    // shifted afterwards. A v1/v2 file is migrated through the value path, which redoes every
    // line: the scan stops at a good header that calls for a migration.
    let mut first: Option<MetaLine> = None;
    let mut header: Option<Value> = None;
    let mut migrate = false;
    let mut lines: Vec<MetaLine> = Vec::with_capacity(bytes.len() / 2048);
    let mut opaque: Vec<OpaqueSpan> = Vec::new();
    let mut errors = ErrorLog::default();
    // The lowest line of a malformed line or of glued records, and whether the first record
    // already showed that the input is not a session: then the records and the opaque lines
    // that follow are not kept (every line is returned as one run below), only the errors.
    let mut first_parse: Option<usize> = None;
    let mut not_a_session = false;
    // The records' list grows fallibly: an input of more records than memory holds is an error.
    let mut full = false;
    let control = ScanControl::default();
    let utf8 = scan_lines(bytes, checked.is_some(), &control, |item| {
        match item {
            RawItem::Record(_) | RawItem::Opaque { .. } if not_a_session => {}
            RawItem::Record(l) if first.is_some() => {
                if lines.len() == lines.capacity() && lines.try_reserve(lines.len().max(1024)).is_err() {
                    full = true;
                    return false;
                }
                lines.push(l);
            }
            RawItem::Record(l) => {
                header = parse_line_value(&bytes[l.raw.range.clone()]).ok();
                let plan = version_plan(header.as_ref());
                let problem = header_problem(header.as_ref(), l.raw.line).is_some();
                migrate = (plan.v1 || plan.v2) && !problem;
                not_a_session = problem && !first_parse.is_some_and(|p| p < l.raw.line);
                first = Some(l);
                if not_a_session {
                    opaque = Vec::new();
                    control.metas.set(false);
                }
            }
            RawItem::Opaque { line, range, count } => {
                let position = lines.len() + usize::from(first.is_some());
                push_opaque(&mut opaque, line, position, range, count);
            }
            RawItem::Error(e) => {
                if matches!(e.error, Error::Parse { .. }) && first_parse.is_none() {
                    first_parse = Some(e.line);
                }
                errors.push(e);
                control.unlisted.set(errors.unlisted());
            }
        }
        true
    });
    if full {
        return Err(too_large(lines.len()));
    }
    if !utf8 {
        return lossy(next_id);
    }
    let first_line = first.as_ref().map(|l| l.raw.line);
    let null = Value::Null;
    let state = header_state(first_line.map(|l| (header.as_ref().unwrap_or(&null), l)), first_parse);
    let (header, header_line, entries) = match state {
        HeaderState::Valid if migrate => {
            // Migration rewrites entries: written out as a new text (raw_migration).
            let (Some(h), Some(first)) = (header, first) else {
                return parse_session_utf8(bytes, options, next_id).map(raw_from_parsed);
            };
            let source_version = HeaderVersion::of(&h).number();
            let plan = version_plan(Some(&h));
            // Valid UTF-8: every line was checked by the scan above.
            let Some(all) = checked.or_else(|| std::str::from_utf8(bytes).ok()) else {
                return lossy(next_id);
            };
            let m = raw_migration::migrate_raw(all, h, first.raw, lines, opaque, plan, next_id);
            missing_field_errors(&m.entries, &mut errors);
            let errors = check_strict(options, errors)?;
            return Ok(RawSession {
                header: Some(m.header),
                header_line: Some(m.header_line),
                entries: m.entries,
                opaque: m.opaque,
                errors,
                migrated: plan.migrated,
                text: Some(m.text),
                source_version,
            });
        }
        HeaderState::Valid => {
            if let Some(e) = header.as_ref().zip(first.as_ref()).and_then(|(h, l)| version_error(h, l.raw.line)) {
                errors.push(e);
            }
            (header, first.map(|l| l.raw), lines)
        }
        HeaderState::Damaged(e) => {
            errors.push(e);
            let mut entries = Vec::with_capacity(lines.len() + 1);
            entries.extend(first);
            entries.append(&mut lines);
            (None, None, entries)
        }
        HeaderState::NotASession(e) => {
            errors.push(e);
            let errors = check_strict(options, errors)?;
            drop((first, lines, opaque));
            return Ok(RawSession { opaque: all_lines_run(bytes), errors, ..Default::default() });
        }
    };
    let plan = version_plan(header.as_ref());
    missing_field_errors(&entries, &mut errors);
    let errors = check_strict(options, errors)?;
    let migrated = header.is_some() && plan.migrated;
    let source_version = header.as_ref().and_then(|h| HeaderVersion::of(h).number());
    Ok(RawSession { header, header_line, entries, opaque, errors, migrated, text: None, source_version })
}

/// The error of a load whose records do not fit in memory (`records`: how many were read when
/// it ran out): [`Error::Argument`] (`E_INVALID_ARGUMENT`) for the argument `input`. Under
/// WebAssembly the memory is 4 GiB in all; the structures of a load cost some hundreds of bytes
/// per record (and a few bytes per blank or bad line), so it takes tens of millions of tiny
/// records (`{}` lines) to get there.
pub fn too_large(records: usize) -> Error {
    Error::Argument {
        name: "input".into(),
        reason: format!(
            "too many records for the memory left: {records} were read when no more room could be \
             found for their metadata; nothing was loaded"
        ),
    }
}

/// Loads a session without building values for its entries (raw path of [`parse_session`]):
/// same line decisions, header check, migration, errors and strict mode. A v1/v2 file is
/// migrated through the value path and returned as `text`.
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn scan_session(bytes: &[u8], options: &ParseOptions) -> Result<RawSession> {
    raw_session_of(bytes, None, options, None)
}

/// [`scan_session`] over text already known to be UTF-8 (skips the UTF-8 check).
///
/// # Errors
/// Only in strict mode: the error of the first bad line ([`Error::Parse`],
/// [`Error::MissingField`] or [`Error::Header`]). Lenient mode always returns `Ok`.
pub fn scan_session_str(text: &str, options: &ParseOptions) -> Result<RawSession> {
    raw_session_of(text.as_bytes(), Some(text), options, None)
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
    raw_session_of(bytes, None, options, Some(next_id))
}

/// The JS `parseSession` result of a raw load, as one JSON text:
/// `{"header", "entries", "errors", "migrated", "opaqueLines"}`, the header and every entry
/// spliced from their stored bytes (no value is built, so `JSON.parse` of the result reads each
/// record exactly as `JSON.parse` of its line would: any depth, numbers as JavaScript reads
/// them). `input`: the buffer given to [`scan_session`]. SPEC §1, §13.3.
pub fn parsed_session_json(raw: &RawSession, input: &[u8]) -> String {
    use std::fmt::Write;
    let buf = raw.buffer(input);
    let text = |r: &Range<usize>| std::str::from_utf8(buf.get(r.clone()).unwrap_or_default()).unwrap_or("null");
    let errors = serde_json::to_string(&raw.errors).unwrap_or_else(|_| "[]".into());
    let size: usize = raw.entries.iter().map(|e| e.raw.range.len() + 1).sum::<usize>()
        + raw.header_line.as_ref().map_or(4, |h| h.range.len())
        + raw.opaque.iter().map(|o| o.range.len() + 48 * o.count).sum::<usize>()
        + errors.len()
        + 96;
    let mut out = String::with_capacity(size);
    out.push_str("{\"header\":");
    match (&raw.header, &raw.header_line) {
        (Some(_), Some(h)) => out.push_str(text(&h.range)),
        (Some(h), None) => out.push_str(&to_json_line(h)),
        _ => out.push_str("null"),
    }
    out.push_str(",\"entries\":[");
    for (k, e) in raw.entries.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(text(&e.raw.range));
    }
    out.push_str("],\"errors\":");
    out.push_str(&errors);
    out.push_str(",\"migrated\":");
    out.push_str(if raw.migrated { "true" } else { "false" });
    out.push_str(",\"opaqueLines\":[");
    let mut comma = false;
    for o in &raw.opaque {
        for (line, text) in o.lines(buf) {
            if std::mem::replace(&mut comma, true) {
                out.push(',');
            }
            // `{"line":…,"position":…,"text":…}`, the shape of an `OpaqueLine`, written in place
            // (a blank line, the common opaque line, without a call to the serializer).
            let _ = write!(out, "{{\"line\":{line},\"position\":{},\"text\":", o.position);
            if text.is_empty() {
                out.push_str("\"\"");
            } else {
                out.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into()));
            }
            out.push('}');
        }
    }
    out.push_str("]}");
    out
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

/// The line end a session file is written with (SPEC §13.3): the one its first line ends
/// with when loaded (`\r\n` or `\n`), `\n` for a session built from values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LineEnd {
    /// `\n`.
    #[default]
    Lf,
    /// `\r\n`.
    CrLf,
}

impl LineEnd {
    /// The line end of the first line of `bytes` that has one: `\r\n` when a `\r` comes right
    /// before its `\n` (a longer run of `\r` too), else `\n` (also when no line ends).
    pub fn of(bytes: &[u8]) -> Self {
        match bytes.iter().position(|&b| b == b'\n') {
            Some(i) if i > 0 && bytes[i - 1] == b'\r' => Self::CrLf,
            _ => Self::Lf,
        }
    }

    /// The line end's text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }
}

/// Writes records and opaque lines in file order: before record `r` (0-based, the header
/// counting as record 0 when there is one) every opaque line whose position is `r`, after the
/// last record those with a larger position; lines of one position keep their order. Each line
/// ends with `end`. `opaque` must be sorted by position (stable). SPEC §13.3.
pub fn write_lines<'a>(
    out: &mut String,
    records: impl IntoIterator<Item = &'a str>,
    opaque: impl IntoIterator<Item = (usize, &'a str)>,
    end: LineEnd,
) {
    let end = end.as_str();
    let mut opaque = opaque.into_iter().peekable();
    for (r, record) in records.into_iter().enumerate() {
        while let Some((_, text)) = opaque.next_if(|(p, _)| *p <= r) {
            out.push_str(text);
            out.push_str(end);
        }
        out.push_str(record);
        out.push_str(end);
    }
    for (_, text) in opaque {
        out.push_str(text);
        out.push_str(end);
    }
}

/// [`serialize_session`] with opaque lines put back in their places (see [`OpaqueLine`] and
/// [`write_lines`]; they are sorted by position first, stably). Their text is written as given;
/// one containing a line end is the caller's error (the JS binding refuses it). SPEC §13.3.
pub fn serialize_session_lines(header: Option<&Value>, entries: &[Value], opaque: &[OpaqueLine]) -> String {
    let records: Vec<String> = header.into_iter().chain(entries).map(to_json_line).collect();
    let mut sorted: Vec<&OpaqueLine> = opaque.iter().collect();
    crate::js::sort_by_key_stable(&mut sorted, |o| o.position);
    let size =
        records.iter().map(|r| r.len() + 1).sum::<usize>() + sorted.iter().map(|o| o.text.len() + 1).sum::<usize>();
    let mut out = String::with_capacity(size);
    write_lines(
        &mut out,
        records.iter().map(String::as_str),
        sorted.iter().map(|o| (o.position, o.text.as_str())),
        LineEnd::Lf,
    );
    out
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
    fn malformed_lines_are_kept_and_glued_records_split() {
        let text = "{\"a\":1}\n{bad}\n{\"a\":1}{\"b\":2}\n{\"x\":";
        let r = parse_jsonl(text);
        assert_eq!(r.values, vec![json!({"a":1}), json!({"a":1}), json!({"b":2})]);
        assert_eq!(r.lines, vec![1, 3, 3]);
        let lines: Vec<_> = r.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        let msg: Vec<String> = r.errors.iter().map(|e| e.error.to_string()).collect();
        assert!(msg[0].contains("malformed") && msg[0].contains("kept as written"), "{}", msg[0]);
        assert!(msg[1].contains("two or more") && msg[1].contains("split into 2 entries"), "{}", msg[1]);
        assert!(msg[2].contains("truncated"), "{}", msg[2]);
        let opaque: Vec<_> = r.opaque.iter().map(|o| (o.line, o.position, o.text.as_str())).collect();
        assert_eq!(opaque, vec![(2, 1, "{bad}"), (4, 3, "{\"x\":")]);
        // An incomplete line followed by a newline is malformed, not truncated.
        let r = parse_jsonl("{\"x\":\n");
        assert!(r.errors[0].error.to_string().contains("malformed"));
        // The raw path decides the same.
        let m = scan_jsonl(text.as_bytes());
        assert_eq!(m.errors, parse_jsonl(text).errors);
        assert_eq!(m.lines.iter().map(|l| l.raw.line).collect::<Vec<_>>(), vec![1, 3, 3]);
        let spans: Vec<_> = m.opaque.iter().map(|o| (o.line, o.position, &text[o.range.clone()])).collect();
        assert_eq!(spans, vec![(2, 1, "{bad}"), (4, 3, "{\"x\":")]);
    }

    #[test]
    fn line_classification() {
        assert_eq!(classify_line("   "), LineContent::Blank);
        assert_eq!(classify_line(" {\"a\":1} \r\n"), LineContent::Record(0..9));
        match classify_line("{\"a\":1} {\"b\":[2]}") {
            LineContent::Glued(ranges, e) => {
                assert_eq!(ranges, vec![0..7, 8..17]);
                assert_eq!(e.code(), "E_PARSE");
            }
            other => panic!("{other:?}"),
        }
        for bad in ["{\"a\":1}x", "{\"a\":\"\t\"}", "01", "{\"a\":1,}", "[1 2]"] {
            assert!(matches!(classify_line(bad), LineContent::Malformed(_)), "{bad}");
        }
        // What JSON.parse accepts: any depth, any number, lone surrogate escapes.
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        for good in ["1e400", "-1e400", "\"\\ud800\"", deep.as_str(), "12345678901234567890123"] {
            assert!(matches!(classify_line(good), LineContent::Record(_)), "{good}");
        }
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
            assert_eq!(format!("{:?}", m.meta.without_text_spans()), format!("{:?}", EntryMeta::from_value(v)));
        }
        assert_eq!(b.lines.iter().map(|l| l.raw.line).collect::<Vec<_>>(), vec![1, 2, 4, 4, 7, 8, 10, 11]);
        assert_eq!(b.errors.iter().map(|e| e.line).collect::<Vec<_>>(), vec![3, 4, 9, 12]);
    }

    #[test]
    fn deep_nesting_and_huge_numbers_load_on_both_paths() {
        for d in [99, 100, 101, 126, 127, 128, 129, 200, 511] {
            let line = format!("{{\"type\":\"x\",\"id\":\"a\",\"z\":{}1{}}}", "[".repeat(d), "]".repeat(d));
            let v = parse_jsonl(&line);
            assert!(v.errors.is_empty(), "depth {d}: {:?}", v.errors);
            assert_eq!(v.values.len(), 1, "depth {d}");
            assert_eq!(v.values[0]["id"], "a");
            let m = scan_jsonl(line.as_bytes());
            assert!(m.errors.is_empty() && m.lines.len() == 1, "depth {d}");
            assert_eq!(m.lines[0].meta.id.as_deref(), Some("a"));
        }
        // Deeper than a value can be: the raw path keeps the record (with its top-level fields),
        // the value path keeps the line as written and says why.
        let deep = format!("{{\"type\":\"x\",\"id\":\"a\",\"z\":{}1{}}}", "[".repeat(3000), "]".repeat(3000));
        let m = scan_jsonl(deep.as_bytes());
        assert!(m.errors.is_empty());
        assert_eq!(m.lines[0].meta.id.as_deref(), Some("a"));
        let v = parse_jsonl(&deep);
        assert!(v.values.is_empty());
        assert_eq!(v.opaque[0].text, deep);
        assert!(v.errors[0].error.to_string().contains("nested deeper than 512"), "{}", v.errors[0]);
        // Numbers beyond the double range: JavaScript reads Infinity and writes null.
        let big = r#"{"type":"custom","id":"n","a":1e400,"b":[-1e999,"1e400"],"c":1.5}"#;
        let v = parse_jsonl(big);
        assert!(v.errors.is_empty());
        assert_eq!(v.values[0], json!({"type":"custom","id":"n","a":null,"b":[null,"1e400"],"c":1.5}));
        let m = scan_jsonl(big.as_bytes());
        assert!(m.errors.is_empty());
        assert_eq!(&big[m.lines[0].raw.range.clone()], big);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let bytes = b"{\"type\":\"custom\",\"id\":\"a\",\"t\":\"x\xffy\"}\n\xfe\n";
        let v = parse_jsonl_bytes(bytes);
        assert_eq!(v.values, vec![json!({"type":"custom","id":"a","t":"x\u{fffd}y"})]);
        assert_eq!(v.opaque[0].text, "\u{fffd}");
        let m = scan_jsonl(bytes);
        assert_eq!(m.errors, v.errors);
        let text = m.text.expect("repaired text");
        assert_eq!(&text[m.lines[0].raw.range.clone()], "{\"type\":\"custom\",\"id\":\"a\",\"t\":\"x\u{fffd}y\"}");
    }

    #[test]
    fn only_ids_of_the_generated_shape_are_kept_as_taken() {
        assert_eq!(id_number("0000000a"), Some(10));
        assert_eq!(id_number("ffffffff"), Some(u32::MAX));
        for other in ["ABCDEF12", "abc", "0000000a0", "0000000g", "+0000000", "d7af861d-", ""] {
            assert_eq!(id_number(other), None, "{other}");
        }
        let g = RandomIds::with_taken(vec!["0000000a".into(), "not-hex!".into(), "0000000b".into()]);
        assert_eq!(g.taken.len(), 2);
        assert!(g.taken.contains(&10) && g.taken.contains(&11));
    }

    #[test]
    fn derived_ids_depend_on_the_header_and_the_count_only() {
        let h = json!({"type": "session", "id": "s1", "timestamp": "2024-01-01T00:00:00.000Z"});
        let draw = |h: &Value, taken: Vec<String>| {
            let mut g = RandomIds::with_taken(taken).derived(h);
            (0..4).map(|_| g.next_id()).collect::<Vec<_>>()
        };
        let a = draw(&h, Vec::new());
        assert_eq!(a, draw(&h, Vec::new()), "same header, same ids");
        assert!(a.iter().all(|i| id_number(i).is_some()), "{a:?}");
        assert_eq!(a.iter().collect::<HashSet<_>>().len(), 4);
        let other = json!({"type": "session", "id": "s1", "timestamp": "2024-01-01T00:00:00.001Z"});
        assert_ne!(draw(&other, Vec::new())[0], a[0], "the timestamp counts");
        assert_ne!(draw(&json!({"type": "session", "id": "s2"}), Vec::new())[0], a[0], "the id counts");
        // A taken id is drawn again, deterministically; the later ids are unchanged.
        let b = draw(&h, vec![a[0].clone(), a[2].clone()]);
        assert_eq!(b, draw(&h, vec![a[0].clone(), a[2].clone()]));
        assert!(b[0] != a[0] && b[2] != a[2] && b[1] == a[1] && b[3] == a[3], "{a:?} {b:?}");
        assert!(!b.contains(&a[0]) && !b.contains(&a[2]));
        // Every draw taken: the linear probe still returns unique ids.
        let mut g = RandomIds::new().derived(&h);
        g.taken.extend(0..=u16::MAX as u32);
        g.seed = 1;
        let ids: HashSet<String> = (0..100).map(|_| g.next_id()).collect();
        assert_eq!(ids.len(), 100);
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
