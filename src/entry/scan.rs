//! The fast reader of an entry: one pass over its JSON bytes (see [`scan_entry`]).

use super::bytes16;
use super::kind::{EntryKind, Role};
use super::meta::{
    ArgsText, BlockKind, BlockLens, ContentBlock, ContentShape, Counted, EntryMeta, MessageMeta, MessageShape,
    TextSpan, ToolCallMeta, UsageMeta,
};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Fast path: one pass over an entry's bytes that validates the JSON and extracts only the
// fields above, skipping large strings eight bytes at a time and counting their UTF-16 units
// from the UTF-8 bytes directly. It gives up (returns `None`) on anything unusual, and the
// callers then take the serde path, so the result is always the serde path's result.

/// Extracts the metadata of the JSON object that starts at `buf[start]` (no leading
/// whitespace), returning it and the offset just past the object's closing `}`.
///
/// `Some` only when the bytes from `start` hold a complete JSON object that the value parser
/// accepts ([`crate::io::parse_line_value`]: valid UTF-8, strict JSON syntax, escapes of
/// unpaired surrogates read as U+FFFD); the metadata is then exactly
/// [`EntryMeta::from_value`] of that value (for an object nested deeper than a value can be
/// built, [`crate::io::VALUE_MAX_DEPTH`], what it would be of its value). `None` (take the
/// serde path) for anything else and for a few valid but unusual texts: a raw `\n` inside the
/// object (whitespace or string), nesting deeper than 100 levels in a part the metadata reads
/// (a part it skips is skipped at any depth), a number that might exceed the double range, an escaped key
/// in an object whose keys matter, a duplicate key inside toolCall `arguments`, a `message`
/// skipped before a later duplicate `type` made it a message, or a settings entry
/// (`model_change`, …) that serde cannot read whole. What follows the object is not looked at.
pub(crate) fn scan_entry(buf: &[u8], start: usize) -> Option<(EntryMeta, usize)> {
    EntryScanner::default().scan(buf, start)
}

/// [`scan_entry`] with buffers kept from one entry to the next (for scanning many lines).
#[derive(Default)]
pub(crate) struct EntryScanner {
    blocks: Vec<BlockView>,
}

impl EntryScanner {
    /// See [`scan_entry`].
    pub(crate) fn scan(&mut self, buf: &[u8], start: usize) -> Option<(EntryMeta, usize)> {
        self.scan_keys(buf, start).map(|(meta, end, _)| (meta, end))
    }

    /// [`EntryScanner::scan`], also telling whether the object has a top-level `id` or
    /// `parentId` key, whatever its value (what the raw v1 migration must know).
    pub(crate) fn scan_keys(&mut self, buf: &[u8], start: usize) -> Option<(EntryMeta, usize, bool)> {
        let mut blocks = std::mem::take(&mut self.blocks);
        blocks.clear();
        let mut s = Scanner { b: buf, i: start, depth: 0, blocks, canonical: true };
        let view = s.entry();
        let end = s.i;
        let id_keys = view.as_ref().is_ok_and(|v| v.id_keys);
        let meta = view.and_then(|v| v.into_meta(buf, start, &s.blocks));
        self.blocks = s.blocks;
        let meta = meta.ok()?;
        let meta = if meta.is_settings() {
            let v: Value = serde_json::from_slice(&buf[start..end]).ok()?;
            EntryMeta { settings: Some(Box::new(v)), ..meta }
        } else {
            meta
        };
        Some((meta, end, id_keys))
    }
}

/// The scanner gave up: the caller takes the serde path.
struct Bail;
type Fast<T> = Result<T, Bail>;

/// Deepest nesting the scanner follows (serde_json refuses 128 levels).
const FAST_MAX_DEPTH: u32 = 100;

/// A string literal: its content range (between the quotes) and lengths.
#[derive(Debug, Clone, Copy, Default)]
struct Str {
    start: usize,
    end: usize,
    /// It contains escapes (the decoded text differs from the bytes).
    escaped: bool,
    /// UTF-16 length of the decoded text.
    units: u64,
    /// UTF-16 length of `JSON.stringify(text)` (quotes included).
    json_len: u64,
}

impl Str {
    #[inline(always)]
    fn raw<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.start..self.end]
    }

    /// The decoded text (unpaired surrogate escapes become U+FFFD).
    fn decode(&self, buf: &[u8]) -> Fast<String> {
        let raw = self.raw(buf);
        if !self.escaped {
            return std::str::from_utf8(raw).map(str::to_owned).map_err(|_| Bail);
        }
        let mut out = String::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            let j = raw[i..].iter().position(|&c| c == b'\\').map_or(raw.len(), |p| i + p);
            out.push_str(std::str::from_utf8(&raw[i..j]).map_err(|_| Bail)?);
            if j == raw.len() {
                break;
            }
            i = j + 2;
            let c = match raw.get(j + 1) {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let cp = hex4(raw, j + 2).ok_or(Bail)?;
                    i = j + 6;
                    match cp {
                        0xD800..=0xDBFF => {
                            let low = (raw.get(i) == Some(&b'\\') && raw.get(i + 1) == Some(&b'u'))
                                .then(|| hex4(raw, i + 2))
                                .flatten()
                                .filter(|l| (0xDC00..=0xDFFF).contains(l));
                            match low {
                                Some(l) => {
                                    i += 6;
                                    char::from_u32(0x10000 + ((cp - 0xD800) << 10) + (l - 0xDC00)).unwrap_or('\u{fffd}')
                                }
                                None => '\u{fffd}',
                            }
                        }
                        _ => char::from_u32(cp).unwrap_or('\u{fffd}'),
                    }
                }
                _ => return Err(Bail),
            };
            out.push(c);
        }
        Ok(out)
    }

    /// The text equals `lit` (an ASCII literal).
    #[inline(always)]
    fn is(&self, buf: &[u8], lit: &str) -> bool {
        if self.escaped {
            self.decode(buf).is_ok_and(|s| s == lit)
        } else {
            self.raw(buf) == lit.as_bytes()
        }
    }
}

/// The value of four hex digits at `raw[at..at + 4]`.
fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let d = raw.get(at..at + 4)?;
    d.iter().try_fold(0u32, |acc, &c| Some(acc * 16 + (c as char).to_digit(16)?))
}

/// A number literal: its range and whether it is a plain non-negative integer of at most 15
/// digits (its double is exact and prints as written).
#[derive(Clone, Copy)]
struct Num {
    start: usize,
    end: usize,
    plain: bool,
}

impl Num {
    /// The double serde_json reads (`Number::as_f64`).
    fn value(&self, buf: &[u8]) -> Fast<f64> {
        let raw = &buf[self.start..self.end];
        if self.plain {
            return Ok(raw.iter().fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0')) as f64);
        }
        match serde_json::from_slice::<Value>(raw) {
            Ok(Value::Number(n)) => Ok(n.as_f64().unwrap_or(f64::NAN)),
            _ => Err(Bail),
        }
    }

    /// `JSON.stringify(number).length`.
    fn json_len(&self, buf: &[u8]) -> Fast<u64> {
        if self.plain {
            return Ok((self.end - self.start) as u64);
        }
        let v = self.value(buf)?;
        Ok(if v.is_finite() { crate::js::format_number(v).len() as u64 } else { 4 })
    }
}

/// A value that is shown with `String(x)` (`provider`, `model`).
#[derive(Clone, Copy)]
enum Shown {
    Str(Str),
    Other(usize, usize),
}

/// One content block, reduced (see `RawBlock`).
#[derive(Clone, Copy)]
struct BlockView {
    ty: BlockKind,
    text: Option<u64>,
    thinking: Option<u64>,
    id: Option<Str>,
    name: Option<Str>,
    /// `JSON.stringify(arguments).length` when `arguments` is present and not null.
    args_len: Option<u64>,
    /// `arguments.path` when a string.
    path: Option<Str>,
    /// `arguments` as [`ArgsText`] with absolute byte offsets (`None`: not written as
    /// `JSON.stringify` writes it). Absent `arguments`: `Some` without a span.
    args_text: Option<(Option<(usize, usize)>, bool)>,
}

impl Default for BlockView {
    fn default() -> Self {
        Self {
            ty: BlockKind::Other,
            text: None,
            thinking: None,
            id: None,
            name: None,
            args_len: None,
            path: None,
            args_text: Some((None, false)),
        }
    }
}

/// A span of absolute offsets `(a, b)` of `buf` as a [`TextSpan`] counted from `origin`
/// (`None` when it does not fit in `u32`).
fn span_from(origin: usize, (a, b): (usize, usize)) -> Option<TextSpan> {
    Some(TextSpan { start: u32::try_from(a - origin).ok()?, end: u32::try_from(b - origin).ok()? })
}

#[derive(Default)]
enum ContentView {
    Text(u64),
    /// These blocks of [`Scanner::blocks`].
    Blocks(std::ops::Range<usize>),
    #[default]
    None,
}

/// A message, reduced (see `RawMessage`).
#[derive(Default)]
struct MessageView {
    role: Option<Str>,
    content: ContentView,
    /// Where the value of the `content` key lies (absolute offsets), and how many `content`
    /// keys were seen.
    content_span: Option<(usize, usize)>,
    content_keys: u32,
    command: Option<u64>,
    output: Option<u64>,
    summary: Option<u64>,
    exclude: bool,
    usage: Option<UsageMeta>,
    stop_reason: Option<Str>,
    error_message: Option<Str>,
    tool_call_id: Option<Str>,
    tool_name: Option<Str>,
    pruned: bool,
    provider: Option<Shown>,
    model: Option<Shown>,
}

/// An entry, reduced (see `RawEntry`).
#[derive(Default)]
struct EntryView {
    ty: Option<Str>,
    id: Option<Str>,
    parent_id: Option<Str>,
    message: Option<MessageView>,
    /// `message` was skipped (the entry was not a message when it came).
    message_skipped: bool,
    /// A top-level `id` or `parentId` key was seen (any value).
    id_keys: bool,
    /// Where the value of the only `message` key lies (absolute offsets), unless it is `null`.
    message_span: Option<(usize, usize)>,
    /// How many `message` keys were seen.
    message_keys: u32,
    first_kept_entry_id: Option<Str>,
    from_extension: bool,
    summary: Option<u64>,
    target_id: Option<Str>,
    label: Option<Str>,
}

fn opt_string(buf: &[u8], s: Option<Str>) -> Fast<Option<String>> {
    s.map(|s| s.decode(buf)).transpose()
}

impl Shown {
    fn display(&self, buf: &[u8]) -> Fast<String> {
        match self {
            Shown::Str(s) => s.decode(buf),
            Shown::Other(a, b) => {
                let v: Value = serde_json::from_slice(&buf[*a..*b]).map_err(|_| Bail)?;
                Ok(crate::js::js_string(&v))
            }
        }
    }
}

/// Appends `String(v)` to `out` (`undefined` for `None`).
fn push_shown(out: &mut String, buf: &[u8], v: Option<Shown>) -> Fast<()> {
    match v {
        None => out.push_str("undefined"),
        Some(Shown::Str(s)) if !s.escaped => out.push_str(std::str::from_utf8(s.raw(buf)).map_err(|_| Bail)?),
        Some(v) => out.push_str(&v.display(buf)?),
    }
    Ok(())
}

/// `` `${provider}/${model}` `` in one allocation.
fn provider_model(buf: &[u8], provider: Option<Shown>, model: Option<Shown>) -> Fast<String> {
    let len = |v: Option<Shown>| match v {
        Some(Shown::Str(s)) => s.end - s.start,
        Some(Shown::Other(a, b)) => b - a,
        None => 9,
    };
    let mut s = String::with_capacity(len(provider) + 1 + len(model));
    push_shown(&mut s, buf, provider)?;
    s.push('/');
    push_shown(&mut s, buf, model)?;
    Ok(s)
}

/// A block of [`Scanner::blocks`] with the bytes its strings point into.
#[derive(Clone, Copy)]
struct ScannedBlock<'a> {
    view: BlockView,
    buf: &'a [u8],
    /// Where the entry's object starts in `buf` (what the spans count from).
    origin: usize,
}

impl ContentBlock for ScannedBlock<'_> {
    type Error = Bail;

    fn lens(&self) -> BlockLens {
        let b = &self.view;
        BlockLens {
            kind: b.ty,
            text: b.text.unwrap_or(0),
            thinking: b.thinking.unwrap_or(0),
            name: b.name.map_or(0, |n| n.units),
            args: b.args_len.unwrap_or(0),
        }
    }

    fn tool_call(self) -> Fast<ToolCallMeta> {
        let (b, buf) = (self.view, self.buf);
        let path = match b.path {
            Some(p) if p.end > p.start => Some(p.decode(buf)?),
            _ => None,
        };
        let args_text = match b.args_text {
            Some((None, ranged)) => Some(ArgsText { span: None, ranged }),
            Some((Some(span), ranged)) => {
                span_from(self.origin, span).map(|span| ArgsText { span: Some(span), ranged })
            }
            None => None,
        };
        Ok(ToolCallMeta { id: opt_string(buf, b.id)?, name: opt_string(buf, b.name)?, path, args_text })
    }
}

impl MessageView {
    /// The metadata of the message, like `RawMessage::into_meta` (`blocks`: the scanner's
    /// blocks).
    fn into_meta(self, buf: &[u8], origin: usize, blocks: &[BlockView]) -> Fast<MessageMeta> {
        let role = match &self.role {
            Some(r) if r.escaped => Role::from_name(&r.decode(buf)?),
            Some(r) => std::str::from_utf8(r.raw(buf)).map_or(Role::Other, Role::from_name),
            None => Role::Other,
        };
        let shape = MessageShape {
            role,
            content: match self.content {
                ContentView::Text(n) => ContentShape::Text(n),
                ContentView::Blocks(range) => {
                    ContentShape::Blocks(blocks[range].iter().map(|&view| ScannedBlock { view, buf, origin }))
                }
                ContentView::None => ContentShape::None,
            },
            command: self.command.unwrap_or(0),
            output: self.output.unwrap_or(0),
            summary: self.summary.unwrap_or(0),
            exclude_from_context: self.exclude,
        };
        let Counted { tokens, tool_calls } = shape.count()?;
        let provider_model =
            if role == Role::Assistant { Some(provider_model(buf, self.provider, self.model)?) } else { None };
        Ok(MessageMeta {
            role,
            tokens,
            exclude_from_context: role == Role::BashExecution && self.exclude,
            usage: if role == Role::Assistant { self.usage } else { None },
            stop_reason: opt_string(buf, self.stop_reason)?,
            tool_calls,
            tool_call_id: opt_string(buf, self.tool_call_id)?,
            tool_name: opt_string(buf, self.tool_name)?,
            pruned: self.pruned,
            error_message: opt_string(buf, self.error_message)?,
            provider_model,
            content_span: match (self.content_keys, self.content_span) {
                (1, Some(span)) => span_from(origin, span),
                _ => None,
            },
        })
    }
}

impl EntryView {
    /// The metadata of the entry, like `RawEntry::into_meta` (`blocks`: the scanner's blocks).
    fn into_meta(self, buf: &[u8], origin: usize, blocks: &[BlockView]) -> Fast<EntryMeta> {
        let kind = match &self.ty {
            Some(t) if t.escaped => EntryKind::from_type(&t.decode(buf)?),
            Some(t) => std::str::from_utf8(t.raw(buf)).map_or(EntryKind::Other, EntryKind::from_type),
            None => EntryKind::Other,
        };
        let message = if kind == EntryKind::Message {
            if self.message_skipped && self.message.is_none() {
                return Err(Bail);
            }
            Some(self.message.unwrap_or_default().into_meta(buf, origin, blocks)?)
        } else {
            None
        };
        Ok(EntryMeta {
            kind,
            id: opt_string(buf, self.id)?,
            parent_id: opt_string(buf, self.parent_id)?,
            message,
            first_kept_entry_id: opt_string(buf, self.first_kept_entry_id)?,
            from_extension: self.from_extension,
            summary_len: self.summary.unwrap_or(0),
            settings: None,
            target_id: opt_string(buf, self.target_id)?,
            label: opt_string(buf, self.label)?,
            message_span: match (self.message_keys, self.message_span) {
                (1, Some(span)) => span_from(origin, span),
                _ => None,
            },
            not_object: None,
            no_type: self.ty.is_none(),
        })
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    depth: u32,
    /// The content blocks of the entry's messages (reused from entry to entry).
    blocks: Vec<BlockView>,
    /// Everything read since it was last set is written as `JSON.stringify` would write it:
    /// cleared by whitespace between tokens, escapes other than `\" \\ \b \f \n \r \t`, numbers
    /// other than plain integers ([`Num::plain`]) and keys that start with a digit (where
    /// `JSON.stringify` may order keys differently). Read for toolCall `arguments`.
    canonical: bool,
}

impl<'a> Scanner<'a> {
    /// The current byte (0 at the end: never valid where a byte is expected).
    #[inline(always)]
    fn peek(&self) -> u8 {
        self.b.get(self.i).copied().unwrap_or(0)
    }

    /// Skips whitespace within a line (a `\n` ends the scan: lines never contain one).
    #[inline(always)]
    fn ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\r') {
            self.i += 1;
            self.canonical = false;
        }
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Fast<()> {
        if self.peek() == c {
            self.i += 1;
            Ok(())
        } else {
            Err(Bail)
        }
    }

    fn literal(&mut self, lit: &[u8]) -> Fast<()> {
        if self.b.get(self.i..self.i + lit.len()) == Some(lit) {
            self.i += lit.len();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// A string literal at `"`. Validates it (no raw control characters, known escapes only,
    /// valid UTF-8) and measures it, sixteen bytes at a time ([`bytes16`]).
    ///
    /// A chunk without special bytes (`"`, `\`, control characters) and without bytes ≥ 0x80 is
    /// passed over with nothing counted: the lengths are derived at the end from the string's
    /// byte length, less what its escapes and multi-byte characters do not make. The escapes of
    /// a chunk are read from its mask of special bytes without loading it again: after an
    /// escape, the next special byte is the next bit of the mask past the escape (an escape that
    /// runs past the chunk starts the next chunk at its end). UTF-8 is checked by
    /// `str::from_utf8` at the end, from the first byte ≥ 0x80 only (the bytes before are ASCII).
    #[inline]
    fn string(&mut self) -> Fast<Str> {
        let b = self.b;
        let start = self.i + 1;
        // The bytes from the current chunk on.
        let mut rest = b.get(start..).unwrap_or_default();
        // The string's lengths are counted from its bytes: `units` = bytes - `less_units`,
        // `json_len` = 2 + bytes - `less_json`, where the bytes of the chunks that have bytes
        // ≥ 0x80 (`high_bytes` of them) count as the UTF-16 units they make (`high_units`), and
        // each escape takes off its bytes less the one unit it decodes to (`less_units`), and
        // less what `JSON.stringify` writes for that unit (`less_json`).
        let mut high_bytes: u64 = 0;
        let mut high_units: u64 = 0;
        let mut less_units: u64 = 0;
        let mut less_json: u64 = 0;
        // Where the first byte ≥ 0x80 is (`usize::MAX`: none yet).
        let mut high_from = usize::MAX;
        let mut pad: [u8; 16];
        loop {
            // The next chunk with a special or a high byte.
            let (chunk, c) = loop {
                match rest.split_first_chunk::<16>() {
                    Some((w, tail)) => {
                        let c = bytes16::classify(w);
                        if c.special | c.high != 0 {
                            break (w, c);
                        }
                        rest = tail;
                    }
                    None => {
                        // The last bytes of the buffer, padded with zero bytes (which stop the
                        // scan below like control characters do).
                        pad = [0u8; 16];
                        pad[..rest.len()].copy_from_slice(rest);
                        break (&pad, bytes16::classify(&pad));
                    }
                }
            };
            // Where the next chunk starts, from this one: past it, or past an escape that runs
            // over its end.
            let mut next = 16;
            let mut special = c.special;
            // The string's end in this chunk, if it ends here.
            let end = loop {
                if special == 0 {
                    break None;
                }
                let n = special.trailing_zeros() as usize;
                match chunk.get(n) {
                    Some(b'"') => break Some(n),
                    Some(b'\\') => {
                        next = n + match rest.get(n + 1) {
                            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {
                                less_units += 1;
                                2
                            }
                            Some(b'/') => {
                                less_units += 1;
                                less_json += 1;
                                self.canonical = false;
                                2
                            }
                            Some(b'u') => {
                                self.canonical = false;
                                let cp = hex4(rest, n + 2).ok_or(Bail)?;
                                less_units += 5;
                                less_json += match cp {
                                    0x22 | 0x5c | 0x08 | 0x0c | 0x0a | 0x0d | 0x09 => 4,
                                    0..=0x1f => 0,
                                    _ => 5,
                                };
                                6
                            }
                            _ => return Err(Bail),
                        };
                        // The special bytes past the escape (`next` ≤ 15 + 6: the shift is
                        // in range).
                        special &= u32::MAX << next;
                    }
                    // A control character, or the padding past the end of the buffer.
                    _ => return Err(Bail),
                }
            };
            let at = b.len() - rest.len();
            if c.high != 0 {
                let k = end.unwrap_or(16);
                let high = c.high & bytes16::low_bits(k);
                if high != 0 {
                    high_from = high_from.min(at + high.trailing_zeros() as usize);
                    high_bytes += k as u64;
                    high_units += bytes16::utf16_units(chunk, k);
                }
            }
            if let Some(n) = end {
                let end = at + n;
                if high_from < end && !b.get(high_from..end).is_some_and(|s| std::str::from_utf8(s).is_ok()) {
                    return Err(Bail);
                }
                self.i = end + 1;
                let bytes = (end - start) as u64 - high_bytes + high_units;
                return Ok(Str {
                    start,
                    end,
                    escaped: less_units != 0,
                    units: bytes - less_units,
                    json_len: 2 + bytes - less_json,
                });
            }
            rest = rest.get(next.max(16)..).unwrap_or_default();
        }
    }

    /// A number literal (validated; gives up on numbers that might overflow a double).
    fn number(&mut self) -> Fast<Num> {
        let b = self.b;
        let start = self.i;
        let mut i = start;
        let neg = b.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return Err(Bail),
        }
        let int_digits = (i - int_start) as i64;
        let mut plain = !neg && int_digits <= 15;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let f = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == f {
                return Err(Bail);
            }
            plain = false;
        }
        let mut exp: i64 = 0;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            let sign = match b.get(i) {
                Some(b'-') => {
                    i += 1;
                    -1
                }
                Some(b'+') => {
                    i += 1;
                    1
                }
                _ => 1,
            };
            let e = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                if i - e >= 4 {
                    return Err(Bail);
                }
                exp = exp * 10 + i64::from(b[i] - b'0');
                i += 1;
            }
            if i == e {
                return Err(Bail);
            }
            exp *= sign;
            plain = false;
        }
        if int_digits + exp > 300 {
            return Err(Bail);
        }
        if !plain {
            self.canonical = false;
        }
        self.i = i;
        Ok(Num { start, end: i, plain })
    }

    #[inline]
    fn enter(&mut self) -> Fast<()> {
        self.depth += 1;
        if self.depth > FAST_MAX_DEPTH {
            return Err(Bail);
        }
        self.i += 1;
        self.ws();
        Ok(())
    }

    /// An object at `{`: calls `f(self, key)` with the cursor on each value, which `f` must
    /// consume. `plain_keys`: give up on escaped keys (where key names matter).
    #[inline]
    fn object(&mut self, plain_keys: bool, mut f: impl FnMut(&mut Self, Str) -> Fast<()>) -> Fast<()> {
        self.enter()?;
        if self.peek() == b'}' {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            if self.peek() != b'"' {
                return Err(Bail);
            }
            let key = self.string()?;
            if plain_keys && key.escaped {
                return Err(Bail);
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            f(self, key)?;
            self.ws();
            match self.peek() {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(Bail),
            }
        }
    }

    /// An array at `[`: calls `f(self)` with the cursor on each element.
    #[inline]
    fn array(&mut self, mut f: impl FnMut(&mut Self) -> Fast<()>) -> Fast<()> {
        self.enter()?;
        if self.peek() == b']' {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            f(self)?;
            self.ws();
            match self.peek() {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b']' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(Bail),
            }
        }
    }

    /// Validates and skips any value.
    fn skip(&mut self) -> Fast<()> {
        match self.peek() {
            b'{' | b'[' => self.skip_nested(),
            _ => self.skip_scalar(),
        }
    }

    /// Validates and skips a value that is no object or array.
    #[inline]
    fn skip_scalar(&mut self) -> Fast<()> {
        match self.peek() {
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => Err(Bail),
        }
    }

    /// Validates and skips an object or array at any depth, without recursion: the containers
    /// open around the cursor are a stack of kinds (`true`: object), the first 128 in a bit
    /// set, deeper ones in a vector (allocated only then). A value the metadata does not read
    /// (`details`, a tool's `arguments` inside, a custom entry's `data`) may nest deeper than
    /// the scanner follows what it reads ([`FAST_MAX_DEPTH`]).
    fn skip_nested(&mut self) -> Fast<()> {
        let mut bits: u128 = 0;
        let mut deep: Vec<bool> = Vec::new();
        let mut open = 0usize;
        loop {
            // The cursor is on a value.
            let (c, object) = match self.peek() {
                b'{' => (b'}', true),
                b'[' => (b']', false),
                _ => {
                    self.skip_scalar()?;
                    (0, false)
                }
            };
            if c != 0 {
                self.i += 1;
                self.ws();
                if self.peek() == c {
                    self.i += 1;
                } else {
                    if open < 128 {
                        bits = bits & !(1 << open) | (u128::from(object) << open);
                    } else {
                        deep.push(object);
                    }
                    open += 1;
                    if object {
                        self.key()?;
                    }
                    continue;
                }
            }
            // After a value: close the containers it ends, or go on to the next element.
            loop {
                if open == 0 {
                    return Ok(());
                }
                let object = if open > 128 { deep[open - 129] } else { bits >> (open - 1) & 1 == 1 };
                self.ws();
                match self.peek() {
                    b',' => {
                        self.i += 1;
                        self.ws();
                        if object {
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return Err(Bail),
                }
                self.i += 1;
                open -= 1;
                if open >= 128 {
                    deep.pop();
                }
            }
        }
    }

    /// A key of an object being skipped and its `:`, leaving the cursor on the value.
    #[inline]
    fn key(&mut self) -> Fast<()> {
        if self.peek() != b'"' {
            return Err(Bail);
        }
        self.string()?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Ok(())
    }

    /// A string (`Some`) or any other value (skipped, `None`): `LStr`.
    #[inline]
    fn lstr(&mut self) -> Fast<Option<Str>> {
        if self.peek() == b'"' {
            self.string().map(Some)
        } else {
            self.skip().map(|_| None)
        }
    }

    /// The UTF-16 length of a string, `None` for other values: `TextLen`.
    #[inline]
    fn text_len(&mut self) -> Fast<Option<u64>> {
        Ok(self.lstr()?.map(|s| s.units))
    }

    /// `=== true`: `IsTrue`.
    fn is_true(&mut self) -> Fast<bool> {
        if self.peek() == b't' {
            self.literal(b"true").map(|_| true)
        } else {
            self.skip().map(|_| false)
        }
    }

    /// `String(x)` material: `None` for `null` (an absent `Option<Value>`).
    fn shown(&mut self) -> Fast<Option<Shown>> {
        match self.peek() {
            b'"' => self.string().map(|s| Some(Shown::Str(s))),
            b'n' => self.literal(b"null").map(|_| None),
            _ => {
                let a = self.i;
                self.skip()?;
                Ok(Some(Shown::Other(a, self.i)))
            }
        }
    }

    /// A number as `undefined` arithmetic sees it: `LNum`.
    fn lnum(&mut self) -> Fast<f64> {
        match self.peek() {
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                n.value(self.b)
            }
            b'n' => self.literal(b"null").map(|_| 0.0),
            b't' => self.literal(b"true").map(|_| 1.0),
            b'f' => self.literal(b"false").map(|_| 0.0),
            _ => self.skip().map(|_| f64::NAN),
        }
    }

    fn usage(&mut self) -> Fast<Option<UsageMeta>> {
        if self.peek() != b'{' {
            return self.skip().map(|_| None);
        }
        let mut u = UsageMeta {
            input: f64::NAN,
            output: f64::NAN,
            cache_read: f64::NAN,
            cache_write: f64::NAN,
            total_tokens: f64::NAN,
        };
        let b = self.b;
        self.object(true, |s, k| {
            match k.raw(b) {
                b"input" => u.input = s.lnum()?,
                b"output" => u.output = s.lnum()?,
                b"cacheRead" => u.cache_read = s.lnum()?,
                b"cacheWrite" => u.cache_write = s.lnum()?,
                b"totalTokens" => u.total_tokens = s.lnum()?,
                _ => s.skip()?,
            }
            Ok(())
        })?;
        Ok(Some(u))
    }

    /// `JSON.stringify(value).length` of any value (validated). Gives up on duplicate or
    /// escaped keys and on objects of more than 64 keys (`keys`: the keys of the open objects).
    fn json_len(&mut self, keys: &mut Vec<(usize, usize)>) -> Fast<u64> {
        match self.peek() {
            b'"' => self.string().map(|s| s.json_len),
            b'{' => {
                let base = keys.len();
                let b = self.b;
                let mut n: u64 = 2;
                self.object(true, |s, k| {
                    let raw = k.raw(b);
                    if keys.len() - base >= 64 || keys[base..].iter().any(|&(x, y)| &b[x..y] == raw) {
                        return Err(Bail);
                    }
                    if raw.first().is_some_and(u8::is_ascii_digit) {
                        s.canonical = false;
                    }
                    if keys.len() > base {
                        n += 1;
                    }
                    keys.push((k.start, k.end));
                    n += k.json_len + 1 + s.json_len(keys)?;
                    Ok(())
                })?;
                keys.truncate(base);
                Ok(n)
            }
            b'[' => {
                let mut n: u64 = 2;
                let mut first = true;
                self.array(|s| {
                    if !first {
                        n += 1;
                    }
                    first = false;
                    n += s.json_len(keys)?;
                    Ok(())
                })?;
                Ok(n)
            }
            b't' => self.literal(b"true").map(|_| 4),
            b'f' => self.literal(b"false").map(|_| 5),
            b'n' => self.literal(b"null").map(|_| 4),
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                n.json_len(self.b)
            }
            _ => Err(Bail),
        }
    }

    /// `arguments` of a toolCall: its stringified length (`None` for `null`) and `path`.
    fn arguments(&mut self, block: &mut BlockView) -> Fast<()> {
        block.path = None;
        let from = self.i;
        self.canonical = true;
        let mut ranged = false;
        match self.peek() {
            b'n' => {
                self.literal(b"null")?;
                block.args_len = None;
            }
            b'{' => {
                let mut keys = Vec::new();
                let b = self.b;
                let mut n: u64 = 2;
                let mut path = None;
                self.object(true, |s, k| {
                    let raw = k.raw(b);
                    if keys.len() >= 64 || keys.iter().any(|&(x, y)| &b[x..y] == raw) {
                        return Err(Bail);
                    }
                    if raw.first().is_some_and(u8::is_ascii_digit) {
                        s.canonical = false;
                    }
                    if matches!(raw, b"offset" | b"limit") && s.peek() != b'n' {
                        ranged = true;
                    }
                    if !keys.is_empty() {
                        n += 1;
                    }
                    keys.push((k.start, k.end));
                    n += k.json_len + 1;
                    if raw == b"path" && s.peek() == b'"' {
                        let p = s.string()?;
                        n += p.json_len;
                        path = Some(p);
                    } else {
                        let mut inner = Vec::new();
                        n += s.json_len(&mut inner)?;
                    }
                    Ok(())
                })?;
                block.args_len = Some(n);
                block.path = path;
            }
            _ => block.args_len = Some(self.json_len(&mut Vec::new())?),
        }
        block.args_text = self.canonical.then_some((Some((from, self.i)), ranged));
        Ok(())
    }

    /// One element of `content`: a block object, or anything else (an empty block).
    fn block(&mut self) -> Fast<BlockView> {
        let mut block = BlockView::default();
        if self.peek() != b'{' {
            self.skip()?;
            return Ok(block);
        }
        let b = self.b;
        self.object(true, |s, k| {
            match k.raw(b) {
                b"type" => {
                    block.ty = match s.lstr()? {
                        Some(t) if t.is(b, "text") => BlockKind::Text,
                        Some(t) if t.is(b, "image") => BlockKind::Image,
                        Some(t) if t.is(b, "thinking") => BlockKind::Thinking,
                        Some(t) if t.is(b, "toolCall") => BlockKind::ToolCall,
                        _ => BlockKind::Other,
                    }
                }
                b"text" => block.text = s.text_len()?,
                b"thinking" => block.thinking = s.text_len()?,
                b"id" => block.id = s.lstr()?,
                b"name" => block.name = s.lstr()?,
                b"arguments" => s.arguments(&mut block)?,
                _ => s.skip()?,
            }
            Ok(())
        })?;
        Ok(block)
    }

    fn content(&mut self) -> Fast<ContentView> {
        match self.peek() {
            b'"' => self.string().map(|s| ContentView::Text(s.units)),
            b'[' => {
                let start = self.blocks.len();
                self.array(|s| {
                    let block = s.block()?;
                    s.blocks.push(block);
                    Ok(())
                })?;
                Ok(ContentView::Blocks(start..self.blocks.len()))
            }
            _ => self.skip().map(|_| ContentView::None),
        }
    }

    /// `message`: an object, or anything else (the default message).
    fn message(&mut self) -> Fast<MessageView> {
        let mut m = MessageView::default();
        if self.peek() != b'{' {
            self.skip()?;
            return Ok(m);
        }
        let b = self.b;
        self.object(true, |s, k| {
            match k.raw(b) {
                b"role" => m.role = s.lstr()?,
                b"content" => {
                    let from = s.i;
                    m.content = s.content()?;
                    m.content_span = Some((from, s.i));
                    m.content_keys += 1;
                }
                b"command" => m.command = s.text_len()?,
                b"output" => m.output = s.text_len()?,
                b"summary" => m.summary = s.text_len()?,
                b"excludeFromContext" => m.exclude = s.is_true()?,
                b"usage" => m.usage = s.usage()?,
                b"stopReason" => m.stop_reason = s.lstr()?,
                b"errorMessage" => m.error_message = s.lstr()?,
                b"toolCallId" => m.tool_call_id = s.lstr()?,
                b"toolName" => m.tool_name = s.lstr()?,
                b"prunedAt" => {
                    s.skip()?;
                    m.pruned = true;
                }
                b"provider" => m.provider = s.shown()?,
                b"model" => m.model = s.shown()?,
                _ => s.skip()?,
            }
            Ok(())
        })?;
        Ok(m)
    }

    /// The entry object at the cursor.
    fn entry(&mut self) -> Fast<EntryView> {
        if self.peek() != b'{' {
            return Err(Bail);
        }
        let mut e = EntryView::default();
        let b = self.b;
        self.object(true, |s, k| {
            match k.raw(b) {
                b"type" => e.ty = s.lstr()?,
                b"id" => {
                    e.id_keys = true;
                    e.id = s.lstr()?;
                }
                b"parentId" => {
                    e.id_keys = true;
                    e.parent_id = s.lstr()?;
                }
                b"message" => {
                    let from = s.i;
                    let null = s.peek() == b'n';
                    // Skip (validate only) the message of an entry already known not to be one.
                    if e.ty.is_some_and(|t| !t.is(b, "message")) {
                        s.skip()?;
                        e.message = None;
                        e.message_skipped = true;
                    } else {
                        e.message = Some(s.message()?);
                    }
                    e.message_keys += 1;
                    e.message_span = (!null).then_some((from, s.i));
                }
                b"firstKeptEntryId" => e.first_kept_entry_id = s.lstr()?,
                b"fromExtension" => e.from_extension = s.is_true()?,
                b"summary" => e.summary = s.text_len()?,
                b"targetId" => e.target_id = s.lstr()?,
                b"label" => e.label = s.lstr()?,
                _ => s.skip()?,
            }
            Ok(())
        })?;
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A JSON text writer with the freedoms JSON allows: whitespace, escapes, number forms,
    /// duplicate keys (kept as written).
    #[derive(Debug, Clone)]
    enum J {
        Null,
        Bool(bool),
        Num(String),
        Str(Vec<Piece>),
        Arr(Vec<J>),
        Obj(Vec<(Vec<Piece>, J)>),
    }

    /// A piece of a string literal: a char written plainly or escaped in some way, or a raw
    /// escape text (lone surrogates and the like).
    #[derive(Debug, Clone)]
    enum Piece {
        Plain(char),
        UEscape(char),
        Raw(&'static str),
    }

    fn write_str(out: &mut String, s: &[Piece]) {
        out.push('"');
        for p in s {
            match p {
                Piece::Plain(c) => match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '/' => out.push_str("\\/"),
                    c if (*c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", *c as u32)),
                    c => out.push(*c),
                },
                Piece::UEscape(c) => {
                    let mut buf = [0u16; 2];
                    for u in c.encode_utf16(&mut buf) {
                        out.push_str(&format!("\\u{:04X}", u));
                    }
                }
                Piece::Raw(r) => out.push_str(r),
            }
        }
        out.push('"');
    }

    fn write(out: &mut String, v: &J, ws: &str) {
        match v {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => out.push_str(n),
            J::Str(s) => write_str(out, s),
            J::Arr(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        out.push_str(ws);
                    }
                    write(out, x, ws);
                }
                out.push(']');
            }
            J::Obj(o) => {
                out.push('{');
                out.push_str(ws);
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, k);
                    out.push_str(ws);
                    out.push(':');
                    write(out, x, ws);
                }
                out.push_str(ws);
                out.push('}');
            }
        }
    }

    fn key(k: &'static str) -> Vec<Piece> {
        k.chars().map(Piece::Plain).collect()
    }

    fn piece() -> impl Strategy<Value = Piece> {
        prop_oneof![
            6 => prop_oneof![Just('a'), Just('Z'), Just(' '), Just('é'), Just('設'), Just('😀'), Just('"'), Just('\\'), Just('\n'), Just('\u{1}'), Just('/'), Just('\u{7f}'), Just('\u{2028}')].prop_map(Piece::Plain),
            2 => prop_oneof![Just('a'), Just('"'), Just('\u{8}'), Just('\u{1f}'), Just('😀'), Just('\u{fffd}'), Just('\\')].prop_map(Piece::UEscape),
            1 => prop_oneof![Just("\\ud800"), Just("\\uDC00x"), Just("\\ud83d\\ude00"), Just("\\uD800\\uD800\\uDC00"), Just("\\b\\f\\r")].prop_map(Piece::Raw),
        ]
    }

    fn text() -> impl Strategy<Value = Vec<Piece>> {
        prop_oneof![
            3 => "[a-z./]{0,12}".prop_map(|s| s.chars().map(Piece::Plain).collect()),
            2 => proptest::collection::vec(piece(), 0..24),
        ]
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("0".to_string()),
            Just("-0".to_string()),
            Just("12".to_string()),
            Just("1.5".to_string()),
            Just("-3".to_string()),
            Just("1e3".to_string()),
            Just("2.50E-2".to_string()),
            Just("1e400".to_string()),
            Just("123456789012345678901234".to_string()),
            Just("1e-400".to_string()),
            Just("0.1".to_string()),
            Just("9007199254740993".to_string()),
            Just("100000000000000000000000".to_string()),
            (0u64..1_000_000).prop_map(|n| n.to_string()),
        ]
    }

    fn scalar() -> impl Strategy<Value = J> {
        prop_oneof![Just(J::Null), any::<bool>().prop_map(J::Bool), number().prop_map(J::Num), text().prop_map(J::Str),]
    }

    fn any_json() -> impl Strategy<Value = J> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just(key("path")),
                            Just(key("a")),
                            Just(key("b")),
                            Just(key("offset")),
                            Just(key("limit")),
                            Just(key("1")),
                            text()
                        ],
                        inner
                    ),
                    0..4
                )
                .prop_map(J::Obj),
            ]
        })
    }

    /// A value for a field: usually of the expected type, sometimes anything.
    fn field(expected: BoxedStrategy<J>) -> BoxedStrategy<J> {
        prop_oneof![4 => expected, 1 => any_json()].boxed()
    }

    fn str_of(options: &'static [&'static str]) -> BoxedStrategy<J> {
        prop_oneof![
            4 => proptest::sample::select(options).prop_map(|s| J::Str(key(s))),
            1 => proptest::sample::select(options).prop_map(|s| J::Str(s.chars().map(Piece::UEscape).collect())),
        ]
        .boxed()
    }

    fn fields(list: Vec<(&'static str, BoxedStrategy<J>)>) -> BoxedStrategy<J> {
        let n = list.len();
        let strategies: Vec<BoxedStrategy<(Vec<Piece>, J)>> = list
            .into_iter()
            .map(|(k, s)| {
                prop_oneof![
                    8 => s.prop_map(move |v| (key(k), v)),
                    1 => (text(), any_json()).prop_map(|(k, v)| (k, v)),
                ]
                .boxed()
            })
            .collect();
        (proptest::collection::vec(proptest::sample::select((0..n).collect::<Vec<_>>()), 0..n + 3), strategies)
            .prop_map(|(order, kv): (Vec<usize>, Vec<(Vec<Piece>, J)>)| {
                J::Obj(order.into_iter().map(|i| kv[i].clone()).collect())
            })
            .boxed()
    }

    fn usage() -> BoxedStrategy<J> {
        let num = || prop_oneof![4 => number().prop_map(J::Num), 1 => scalar()].boxed();
        fields(vec![
            ("input", num()),
            ("output", num()),
            ("cacheRead", num()),
            ("cacheWrite", num()),
            ("totalTokens", num()),
            ("cost", any_json().boxed()),
        ])
    }

    fn block() -> BoxedStrategy<J> {
        fields(vec![
            ("type", str_of(&["text", "thinking", "toolCall", "image", "other"])),
            ("text", field(text().prop_map(J::Str).boxed())),
            ("thinking", field(text().prop_map(J::Str).boxed())),
            ("id", field(text().prop_map(J::Str).boxed())),
            ("name", field(str_of(&["read", "write", "edit", "bash"]))),
            ("arguments", field(any_json().boxed())),
        ])
    }

    fn message() -> BoxedStrategy<J> {
        let content = prop_oneof![
            text().prop_map(J::Str),
            proptest::collection::vec(prop_oneof![4 => block(), 1 => any_json().boxed()], 0..4).prop_map(J::Arr),
            any_json(),
        ]
        .boxed();
        let s = || field(text().prop_map(J::Str).boxed());
        fields(vec![
            (
                "role",
                str_of(&[
                    "user",
                    "assistant",
                    "toolResult",
                    "bashExecution",
                    "custom",
                    "hookMessage",
                    "branchSummary",
                    "compactionSummary",
                    "x",
                ]),
            ),
            ("content", content),
            ("command", s()),
            ("output", s()),
            ("summary", s()),
            ("excludeFromContext", field(any::<bool>().prop_map(J::Bool).boxed())),
            ("usage", field(usage())),
            ("stopReason", s()),
            ("errorMessage", s()),
            ("toolCallId", s()),
            ("toolName", s()),
            ("prunedAt", field(Just(J::Null).boxed())),
            ("provider", field(str_of(&["anthropic", "openai"]))),
            ("model", field(str_of(&["claude", "gpt"]))),
        ])
    }

    fn entry() -> BoxedStrategy<J> {
        let s = || field(text().prop_map(J::Str).boxed());
        fields(vec![
            (
                "type",
                str_of(&[
                    "message",
                    "compaction",
                    "branch_summary",
                    "custom_message",
                    "custom",
                    "label",
                    "model_change",
                    "thinking_level_change",
                    "mode_change",
                    "ttsr_injection",
                    "session",
                    "zzz",
                ]),
            ),
            ("id", s()),
            ("parentId", s()),
            ("message", field(message())),
            ("firstKeptEntryId", s()),
            ("fromExtension", field(any::<bool>().prop_map(J::Bool).boxed())),
            ("summary", s()),
            ("targetId", s()),
            ("label", s()),
            ("details", any_json().boxed()),
        ])
    }

    /// What the loaders decide for a line: `None` when it is rejected, else the metadata
    /// (compared through Debug text, since NaN usage numbers are not equal to themselves).
    fn reference(text: &[u8]) -> Option<String> {
        let v = crate::io::parse_line_value(text).ok()?;
        Some(format!("{:?}", EntryMeta::from_value(&v)))
    }

    /// The spans the scanner recorded in `meta` for the JSON object `object` are right: the
    /// `message` span is the text of the message value, and each tool call's arguments text is
    /// `JSON.stringify(arguments)` with `ranged` as the value says.
    fn check_spans(meta: &EntryMeta, object: &[u8]) -> Result<(), TestCaseError> {
        let Ok(v) = crate::io::parse_line_value(object) else { return Ok(()) };
        let text = std::str::from_utf8(object).unwrap();
        if let Some(span) = meta.message_span {
            let m = span.of(object).unwrap();
            prop_assert_eq!(Some(&crate::io::parse_line_value(m.as_bytes()).unwrap()), v.get("message"));
        }
        let Some(m) = meta.message.as_ref().filter(|m| m.role == Role::Assistant) else { return Ok(()) };
        let blocks: Vec<&Value> = v["message"]["content"]
            .as_array()
            .map(|a| a.iter().filter(|b| b.is_object() && b["type"] == "toolCall").collect())
            .unwrap_or_default();
        prop_assert_eq!(blocks.len(), m.tool_calls.len());
        for (call, block) in m.tool_calls.iter().zip(blocks) {
            let Some(args) = call.args_text else { continue };
            let value = block.get("arguments").unwrap_or(&Value::Null);
            let written = args.span.map_or(Some("null"), |s| s.of(object));
            let expected = crate::js::json_stringify(value);
            prop_assert_eq!(written, Some(expected.as_str()), "{}", text);
            let ranged = ["offset", "limit"].iter().any(|k| value.get(*k).is_some_and(|x| !x.is_null()));
            prop_assert_eq!(args.ranged, ranged, "{}", text);
        }
        Ok(())
    }

    fn check(text: &[u8]) -> Result<(), TestCaseError> {
        if let Some((meta, end)) = scan_entry(text, 0) {
            // The object alone is a good line with this metadata, and so is the whole text when
            // only whitespace follows.
            let object = &text[..end];
            check_spans(&meta, object)?;
            let meta = meta.without_text_spans();
            prop_assert_eq!(Some(format!("{meta:?}")), reference(object), "{}", String::from_utf8_lossy(text));
            if text[end..].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                prop_assert_eq!(Some(format!("{meta:?}")), reference(text), "{}", String::from_utf8_lossy(text));
            }
            if let Ok(serde) = EntryMeta::from_json_serde(object) {
                prop_assert_eq!(format!("{meta:?}"), format!("{serde:?}"));
            }
        }
        // The public entry point agrees with the loaders whenever the serde path accepts.
        if let Ok(serde) = EntryMeta::from_json_serde(text) {
            let m = EntryMeta::from_json(text).unwrap().without_text_spans();
            prop_assert_eq!(format!("{m:?}"), format!("{serde:?}"));
        }
        Ok(())
    }

    proptest! {
        // Many cases in release test runs, fewer in (slow) debug builds.
        #![proptest_config(ProptestConfig::with_cases(crate::test_cases(if cfg!(debug_assertions) { 400 } else { 3000 })))]

        #[test]
        fn fast_path_equals_serde_path(e in entry(), ws in prop_oneof![Just(""), Just(" "), Just("\t \r")]) {
            let mut s = String::new();
            write(&mut s, &e, ws);
            check(s.as_bytes())?;
        }

        #[test]
        fn fast_path_rejects_what_serde_rejects(e in entry(), cut in any::<proptest::sample::Index>(), byte in any::<u8>(), op in 0..3u8) {
            let mut s = String::new();
            write(&mut s, &e, "");
            let mut b = s.into_bytes();
            let at = cut.index(b.len() + 1);
            match op {
                0 => b.insert(at, byte),
                1 if at < b.len() => { b.remove(at); }
                _ => b.truncate(at),
            }
            check(&b)?;
        }
    }

    #[test]
    fn fast_path_on_real_sessions() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            let text = std::fs::read(&path).unwrap();
            let mut fast = 0;
            for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                if let Some((meta, end)) = scan_entry(line, 0) {
                    fast += 1;
                    assert_eq!(end, line.len());
                    let meta = meta.without_text_spans();
                    assert_eq!(Some(format!("{meta:?}")), reference(line), "{}", String::from_utf8_lossy(line));
                }
            }
            assert!(fast > 900, "{}: only {fast} lines on the fast path", path.display());
        }
    }

    #[test]
    fn fast_path_edge_cases() {
        let cases: &[&str] = &[
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","name":"w","arguments":{"path":"p","x":[1,2.5,-0,1e2,"\"q\"",{"k":null}]}}],"provider":7,"model":[1,null,"x"]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"path":1,"path":"x"}}]}}"#,
            r#"{"type":"message","id":"\u0061\ud800","message":{"role":"user","content":"\ud83d\ude00\ud800"}}"#,
            r#"{"type":"custom","message":{"role":"user"},"type":"message"}"#,
            r#"{"type":"model_change","id":"m","provider":"x","modelId":"y"}"#,
            r#"{"type":"message","message":{"role":"assistant","usage":{"input":1e3,"output":-0,"cacheRead":null,"cacheWrite":true,"totalTokens":"5"},"usage":{"input":2}}}"#,
            r#"{"type":"message","message":{"role":"bashExecution","command":"ls","output":"\t\u0001","excludeFromContext":1}}"#,
            r#"{"type":"label","id":"l","targetId":"a","label":null,"label":"x"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"é"#,
            "{\"a\":\"\n\"}",
            r#"{"a":01}"#,
        ];
        for c in cases {
            check(c.as_bytes()).unwrap();
        }
        assert!(scan_entry(cases[0].as_bytes(), 0).is_some());
        assert!(scan_entry(cases[2].as_bytes(), 0).is_some());
        assert!(scan_entry(cases[5].as_bytes(), 0).is_some());
    }
}

/// [`Scanner::string`] against a simple reference: the value parser's text of the literal
/// ([`crate::io::parse_line_value`]: serde_json, unpaired surrogate escapes read as U+FFFD), its
/// UTF-16 length, and the UTF-16 length of serde_json's serialization of it (what
/// `JSON.stringify` writes for it). Escapes and multi-byte characters are put at every position
/// around the sixteen-byte chunk edges, and the literal is followed by none to many bytes (the
/// padded last chunk of the buffer).
#[cfg(test)]
mod string_tests {
    use super::*;
    use proptest::prelude::*;

    /// What the scanner must find in a literal: units, json_len, escaped, canonical.
    type Measure = (u64, u64, bool, bool);

    /// The reference measure of the literal `lit` (quotes included), `None` if it is not a valid
    /// JSON string literal.
    fn reference(lit: &[u8]) -> Option<Measure> {
        let Ok(Value::String(s)) = crate::io::parse_line_value(lit) else {
            return None;
        };
        let json = serde_json::to_string(&s).unwrap();
        let body = &lit[1..lit.len() - 1];
        // Escapes other than `\" \\ \b \f \n \r \t` make the text non-canonical.
        let mut canonical = true;
        let mut i = 0;
        while i < body.len() {
            if body[i] == b'\\' {
                canonical &= !matches!(body.get(i + 1), Some(b'/' | b'u'));
                i += 2;
            } else {
                i += 1;
            }
        }
        Some((s.encode_utf16().count() as u64, json.encode_utf16().count() as u64, body.contains(&b'\\'), canonical))
    }

    /// The scanner's measure of the literal at the start of `buf`, checking its range and where
    /// the cursor is left.
    fn scanned(buf: &[u8], lit_len: usize) -> Option<Measure> {
        let mut s = Scanner { b: buf, i: 0, depth: 0, blocks: Vec::new(), canonical: true };
        let r = s.string().ok()?;
        assert_eq!((r.start, r.end, s.i), (1, lit_len - 1, lit_len), "range of {:?}", String::from_utf8_lossy(buf));
        Some((r.units, r.json_len, r.escaped, s.canonical))
    }

    /// Checks the literal `lit` followed by each of a few tails against the reference.
    fn check(lit: &[u8]) {
        let want = reference(lit);
        for tail in [&b""[..], b",", br#","k":"v"}"#, br#","x":[1,2,3],"long":"0123456789abcdef"}"#] {
            let buf = [lit, tail].concat();
            assert_eq!(scanned(&buf, lit.len()), want, "{:?} + {:?}", String::from_utf8_lossy(lit), tail);
        }
    }

    /// `"` + `a` × `p` + `piece` + `z` × `q` + `"` (`z`: not a hex digit).
    fn around(p: usize, piece: &[u8], q: usize) -> Vec<u8> {
        [&b"\""[..], &b"a".repeat(p), piece, &b"z".repeat(q), b"\""].concat()
    }

    const ESCAPES: &[&str] = &[
        r#"\""#,
        r"\\",
        r"\/",
        r"\b",
        r"\f",
        r"\n",
        r"\r",
        r"\t",
        r"\u0041",
        r"\u001f",
        r"\u000a",
        r"\u0022",
        r"\u005C",
        r"\u00e9",
        r"\ud83d\ude00",
        r"\ud800",
        r"\udfff x",
        r#"\\\""#,
        r#"\"\n\t\\"#,
    ];

    #[test]
    fn escapes_at_every_position_around_the_chunk_edges() {
        for p in 0..=35 {
            for e in ESCAPES {
                for q in [0, 1, 2, 9, 14, 15, 16, 17, 30] {
                    check(&around(p, e.as_bytes(), q));
                    // Two escapes `q` bytes apart, the second also at every position.
                    let two = [e.as_bytes(), &b"c".repeat(q), b"\\n"].concat();
                    check(&around(p, &two, 3));
                }
            }
        }
    }

    #[test]
    fn invalid_escapes_at_every_position() {
        for p in 0..=35 {
            for e in [&br"\x"[..], br"\u12", br"\u12g4", br"\uZZZZ", br"\U0041", br"\ ", b"\\\xc3\xa9", b"\\\x00"] {
                for q in [0, 1, 15, 16] {
                    let lit = around(p, e, q);
                    assert_eq!(reference(&lit), None);
                    check(&lit);
                }
            }
            // Raw control characters.
            for c in [0x00u8, 0x01, b'\n', b'\t', 0x1f] {
                check(&around(p, &[c], 2));
            }
        }
    }

    #[test]
    fn multibyte_characters_split_across_chunk_boundaries() {
        let chars = ["\u{80}", "é", "\u{7ff}", "\u{800}", "設", "\u{ffff}", "\u{10000}", "😀", "\u{10ffff}"];
        for p in 0..=35 {
            for c in chars {
                for q in [0, 1, 13, 14, 15, 16, 17] {
                    check(&around(p, c.as_bytes(), q));
                    // After an escape, and several in a row (each at every offset).
                    check(&around(p, format!("\\n{c}").as_bytes(), q));
                    check(&around(p, c.repeat(6).as_bytes(), q));
                    check(&around(p, format!("{c}\\t{c}\\u0041{c}").as_bytes(), q));
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_of_every_kind_at_every_position() {
        let bad: &[&[u8]] = &[
            b"\x80",                 // continuation byte without a lead
            b"\xbf",                 //
            b"\xc0\x80",             // overlong 2-byte forms
            b"\xc1\xbf",             //
            b"\xe0\x80\x80",         // overlong 3-byte forms
            b"\xe0\x9f\xbf",         //
            b"\xed\xa0\x80",         // surrogates
            b"\xed\xbf\xbf",         //
            b"\xf0\x80\x80\x80",     // overlong 4-byte forms
            b"\xf0\x8f\xbf\xbf",     //
            b"\xf4\x90\x80\x80",     // above U+10FFFF
            b"\xf5\x80\x80\x80",     //
            b"\xf8\x88\x80\x80\x80", // 5-byte form
            b"\xfe",                 //
            b"\xff",                 //
            b"\xc3",                 // truncated sequences
            b"\xe2\x82",             //
            b"\xf0\x9f\x98",         //
            b"\xc3A",                // a lead byte followed by ASCII
            b"\xe2\x82A",            //
            b"\xc3\xa9\xa9",         // one continuation byte too many
        ];
        for p in 0..=35 {
            for &s in bad {
                for q in [0, 1, 14, 15, 16, 17] {
                    let lit = around(p, s, q);
                    assert_eq!(reference(&lit), None, "{lit:?}");
                    check(&lit);
                    // After valid multi-byte text and an escape.
                    let lit = around(p, &[b"\xc3\xa9\\n".as_slice(), s].concat(), q);
                    assert_eq!(reference(&lit), None, "{lit:?}");
                    check(&lit);
                }
            }
        }
    }

    #[test]
    fn plain_strings_of_every_length() {
        for p in 0..=40 {
            check(&around(p, b"", 0));
            // A byte >= 0x80 or a special byte right after the end, in the same chunk.
            for tail in [&b"\xc3\xa9\""[..], b"\\n\"", b"\x01", b"\""] {
                let lit = around(p, b"", 0);
                let buf = [lit.as_slice(), tail].concat();
                assert_eq!(scanned(&buf, lit.len()), reference(&lit));
            }
        }
    }

    #[test]
    fn unterminated_strings() {
        for p in 0..=40 {
            for end in [&b""[..], b"\\", b"\\u00", b"\xc3", b"\xe2\x82", b"\\n"] {
                let buf = [&b"\""[..], &b"a".repeat(p), end].concat();
                assert_eq!(scanned(&buf, 0), None);
            }
        }
    }

    /// Invalid escapes, raw control characters and invalid UTF-8.
    const BAD: &[&[u8]] = &[br"\x", br"\u12", b"\\", b"\x00", b"\n", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc3"];

    /// Bytes of a string literal's content: plain, special, escaped, multi-byte, invalid.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => "[a-z ]{1,20}".prop_map(String::into_bytes),
            2 => proptest::sample::select(ESCAPES).prop_map(|e| e.as_bytes().to_vec()),
            2 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
            1 => proptest::sample::select(&["é", "設", "😀", "\u{10ffff}", "\u{80}", "\u{ffff}"][..]).prop_map(|c| c.as_bytes().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 1..4),
            1 => proptest::sample::select(BAD).prop_map(<[u8]>::to_vec),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::test_cases(2000)))]
        #[test]
        fn random_strings_match_the_reference(pieces in proptest::collection::vec(piece(), 0..24), tail in "[,:\"a-z0-9{}\\[\\] ]{0,20}") {
            let lit = [&b"\""[..], &pieces.concat(), b"\""].concat();
            // A literal whose content holds a `"` ends there: measure what the scanner reads.
            let buf = [lit.as_slice(), tail.as_bytes()].concat();
            let mut s = Scanner { b: &buf, i: 0, depth: 0, blocks: Vec::new(), canonical: true };
            let got = s.string().ok().map(|r| (r.units, r.json_len, r.escaped, s.canonical, r.end));
            // The reference of the literal the scanner should have found: up to the first `"`
            // not escaped.
            let mut end = 1;
            while end < buf.len() && buf[end] != b'"' {
                end += if buf[end] == b'\\' { 2 } else { 1 };
            }
            let want = if end < buf.len() {
                reference(&buf[..=end]).map(|(u, j, e, c)| (u, j, e, c, end))
            } else {
                None
            };
            prop_assert_eq!(got, want);
        }
    }
}
