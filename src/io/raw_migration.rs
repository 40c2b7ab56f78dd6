//! The v1/v2 → v3 migration on the raw path (SPEC §1 "Older files"): the same result as
//! [`super::migrate_to_current_version`] on the values, written out as JSONL, without building a
//! value for most entries. An ordinary v1 entry (an object without `id` or `parentId`, not a
//! compaction, header or `hookMessage`) only gains `"id":…,"parentId":…` before its closing
//! brace, and its metadata gains the two ids; a v2 entry of that kind is kept as it is. Every
//! other record takes the value path, one record at a time.

use super::{is_type, parse_line_value, to_json_line, truthy, MetaLine, OpaqueSpan, RandomIds, RawLine, VersionPlan};
use crate::entry::{EntryKind, EntryMeta, Role};
use serde_json::Value;

/// What a compaction's `firstKeptEntryIndex` may point at, as the value path sees it at that
/// moment of the migration.
#[derive(Debug, Clone)]
enum Target {
    /// An object: its `id` (`None`: no `id` key) and whether it is a `session` record.
    Object { id: Option<Value>, session: bool },
    /// Any other record, with its JavaScript truthiness.
    Other { truthy: bool },
}

impl Target {
    fn of(v: &Value) -> Self {
        match v {
            Value::Object(o) => Target::Object { id: o.get("id").cloned(), session: is_type(v, "session") },
            other => Target::Other { truthy: truthy(other) },
        }
    }
}

/// True when the object text (one valid JSON object) has a top-level `id` or `parentId` key,
/// or a top-level key written with an escape (it might spell one): then the value path decides.
/// One pass that jumps from quote to quote, tracking the nesting depth between strings.
fn has_id_keys(text: &str) -> bool {
    let b = text.as_bytes();
    let mut depth = 0usize;
    // The last structural byte outside strings (`{`, `,`: a string there is a key).
    let mut last = 0u8;
    let mut i = 0;
    while let Some(q) = text.get(i..).and_then(|t| t.find('"')).map(|k| i + k) {
        for &c in &b[i..q] {
            match c {
                b'{' | b'[' => {
                    depth += 1;
                    last = c;
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    last = c;
                }
                b',' | b':' => last = c,
                _ => {}
            }
        }
        // The closing quote: the next one not escaped by an odd run of backslashes.
        let mut end = q + 1;
        loop {
            let Some(k) = text.get(end..).and_then(|t| t.find('"')).map(|k| end + k) else { return true };
            let backslashes = b[q + 1..k].iter().rev().take_while(|&&c| c == b'\\').count();
            if backslashes % 2 == 0 {
                end = k;
                break;
            }
            end = k + 1;
        }
        if depth == 1 && matches!(last, b'{' | b',') {
            let key = &b[q + 1..end];
            if key == b"id" || key == b"parentId" || key.contains(&b'\\') {
                return true;
            }
        }
        last = b'"';
        i = end + 1;
    }
    false
}

/// `text` without surrounding JSON whitespace.
fn trimmed(text: &str) -> &str {
    text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

/// The migration steps of one record on its value (`index`: its index in the file entries,
/// header included; `targets`: what the records before it are now).
struct Steps<'a> {
    plan: VersionPlan,
    /// The number of file entries (header included).
    len: usize,
    prev_id: Value,
    next_id: &'a mut dyn FnMut() -> String,
    targets: Vec<Target>,
}

impl Steps<'_> {
    /// v1 → v2 then v2 → v3 on one record, as [`super::migrate_to_current_version`] does them
    /// for it. `later(t)`: the record at file index `t > index`, as it was loaded.
    fn apply(&mut self, index: usize, v: &mut Value, later: &dyn Fn(usize) -> Option<Target>) {
        if self.plan.v1 {
            if is_type(v, "session") {
                if let Value::Object(o) = v {
                    o.insert("version".into(), Value::from(2));
                }
            } else if let Value::Object(o) = v {
                let id = Value::String((self.next_id)());
                o.insert("id".into(), id.clone());
                o.insert("parentId".into(), std::mem::replace(&mut self.prev_id, id.clone()));
                let is_compaction = o.get("type").and_then(Value::as_str) == Some("compaction");
                let kept = match o.get("firstKeptEntryIndex") {
                    Some(Value::Number(n)) if is_compaction => n.as_f64(),
                    _ => None,
                };
                if let Some(k) = kept {
                    let t = (k >= 0.0 && k.fract() == 0.0 && k < self.len as f64).then_some(k as usize);
                    let target = t.and_then(|t| match t.cmp(&index) {
                        std::cmp::Ordering::Less => self.targets.get(t).cloned(),
                        std::cmp::Ordering::Equal => Some(Target::Object { id: Some(id.clone()), session: false }),
                        std::cmp::Ordering::Greater => later(t),
                    });
                    let assign: Option<Option<Value>> = match target {
                        Some(Target::Object { id, session: false }) => Some(id),
                        Some(Target::Other { truthy: true }) => Some(None),
                        _ => None,
                    };
                    super::set_first_kept(o, assign);
                }
            }
        }
        if self.plan.v2 {
            if let Value::Object(o) = v {
                super::migrate_v2_record(o);
            }
        }
    }
}

/// The result of [`migrate_raw`]: the migrated JSONL and where each line is in it.
pub(super) struct Migrated {
    pub header: Value,
    pub text: String,
    pub header_line: RawLine,
    pub entries: Vec<MetaLine>,
    pub opaque: Vec<OpaqueSpan>,
}

/// Migrates a scanned v1/v2 session (valid header `header` on `header_line`, the records
/// `lines` and the opaque lines of `all`) to v3 as [`super::migrate_to_current_version`]
/// does (ids from `next_id`, else [`RandomIds::derived`] of the header, avoiding the ids in the file), and writes it out
/// as [`super::raw_from_parsed`] lays it out: header first, one record per line, opaque lines in
/// their places. Line numbers stay those of the input.
pub(super) fn migrate_raw(
    all: &str,
    mut header: Value,
    header_line: RawLine,
    mut lines: Vec<MetaLine>,
    opaque: Vec<OpaqueSpan>,
    plan: VersionPlan,
    next_id: Option<&mut dyn FnMut() -> String>,
) -> Migrated {
    let text_of = |l: &MetaLine| all.get(l.raw.range.clone()).unwrap_or_default();
    let mut derived = None;
    let mut draw;
    let next_id: &mut dyn FnMut() -> String = match next_id {
        Some(f) => f,
        None => {
            let taken = header.get("id").and_then(Value::as_str).map(str::to_owned);
            let taken = taken.into_iter().chain(lines.iter().filter_map(|l| l.meta.id.clone()));
            let ids = derived.insert(RandomIds::with_taken(taken).derived(&header));
            draw = move || ids.next_id();
            &mut draw
        }
    };
    let len = lines.len() + 1;
    // What each record is now, kept only when a compaction may point at one.
    let track = plan.v1 && lines.iter().any(|l| l.meta.kind == EntryKind::Compaction);
    let mut steps =
        Steps { plan, len, prev_id: Value::Null, next_id, targets: Vec::with_capacity(if track { len } else { 1 }) };
    // The records after `index` as loaded, for a compaction that keeps a later entry (rare).
    let loaded: Vec<&str> = if track { lines.iter().map(text_of).collect() } else { Vec::new() };
    let later = |t: usize| -> Option<Target> {
        let text = loaded.get(t.checked_sub(1)?)?;
        parse_line_value(text.as_bytes()).ok().map(|v| Target::of(&v))
    };

    steps.apply(0, &mut header, &later);
    steps.targets.push(Target::of(&header));
    let header_text = to_json_line(&header);

    let total = all.len() + lines.len() * 40 + header_text.len() + 16;
    let mut out = String::with_capacity(total);
    let mut spans = Vec::with_capacity(opaque.len());
    let mut pending = opaque.into_iter().peekable();
    let mut flush = |out: &mut String, position: usize| {
        while let Some(o) = pending.next_if(|o| o.position <= position) {
            // A run is copied whole, its inner line ends as they were (see `OpaqueSpan::lines`).
            let start = out.len();
            out.push_str(all.get(o.range.clone()).unwrap_or_default());
            spans.push(OpaqueSpan { range: start..out.len(), ..o });
            out.push('\n');
        }
    };
    flush(&mut out, 0);
    let start = out.len();
    out.push_str(&header_text);
    let header_line = RawLine { line: header_line.line, range: start..out.len() };
    out.push('\n');

    for (k, l) in lines.iter_mut().enumerate() {
        let index = k + 1;
        flush(&mut out, index);
        let text = trimmed(text_of(l));
        let start = out.len();
        let object = text.starts_with('{');
        let plain = object
            && !matches!(l.meta.kind, EntryKind::SessionHeader | EntryKind::Compaction)
            && !l.meta.message.as_ref().is_some_and(|m| m.role == Role::HookMessage);
        if !object {
            // Left alone, no id used.
            out.push_str(text);
            if track {
                let v = parse_line_value(text.as_bytes()).unwrap_or(Value::Null);
                steps.targets.push(Target::of(&v));
            }
        } else if plain && !plan.v1 {
            out.push_str(text);
            if track {
                steps.targets.push(Target::Object { id: l.meta.id.clone().map(Value::String), session: false });
            }
        } else if plain && !l.id_keys.unwrap_or_else(|| has_id_keys(text)) {
            let id = (steps.next_id)();
            let parent = std::mem::replace(&mut steps.prev_id, Value::String(id.clone()));
            let body = &text[..text.len() - 1];
            out.push_str(body);
            if !trimmed(&body[1..]).is_empty() {
                out.push(',');
            }
            out.push_str("\"id\":");
            out.push_str(&to_json_line(&Value::String(id.clone())));
            out.push_str(",\"parentId\":");
            out.push_str(&to_json_line(&parent));
            out.push('}');
            if l.meta.is_settings() || l.meta.kind == EntryKind::Other {
                l.meta = EntryMeta::from_json(&out.as_bytes()[start..]).unwrap_or_default();
            } else {
                l.meta.parent_id = parent.as_str().map(str::to_owned);
                l.meta.id = Some(id.clone());
            }
            if track {
                steps.targets.push(Target::Object { id: Some(Value::String(id)), session: false });
            }
        } else if let Ok(mut v) = parse_line_value(text.as_bytes()) {
            steps.apply(index, &mut v, &later);
            out.push_str(&to_json_line(&v));
            l.meta = EntryMeta::from_value(&v);
            if track {
                steps.targets.push(Target::of(&v));
            }
        } else {
            // No value can be built for it (nested deeper than `VALUE_MAX_DEPTH`): kept as
            // written, unconverted.
            out.push_str(text);
            if track {
                let id = l.meta.id.clone().map(Value::String);
                steps.targets.push(Target::Object { id, session: l.meta.kind == EntryKind::SessionHeader });
            }
        }
        l.raw.range = start..out.len();
        out.push('\n');
    }
    flush(&mut out, usize::MAX);
    Migrated { header, text: out, header_line, entries: lines, opaque: spans }
}

#[cfg(test)]
mod tests {
    use super::has_id_keys;

    #[test]
    fn id_keys_are_found_at_the_top_level_only() {
        for (text, want) in [
            (r#"{"type":"message","id":"a"}"#, true),
            (r#"{"parentId":null}"#, true),
            (r#"{ "x" : 1 , "id" : 2 }"#, true),
            (r#"{"\u0069d":"a"}"#, true),
            (r#"{"message":{"id":"nested","parentId":"n"}}"#, false),
            (r#"{"content":[{"type":"toolCall","id":"c1"}],"n":"id"}"#, false),
            (r#"{"text":"a \"id\": quoted","k":"\\","idx":1}"#, false),
            (r#"{"a":[1,{"b":2}],"ids":[],"parentIds":{}}"#, false),
            (r#"{}"#, false),
        ] {
            assert_eq!(has_id_keys(text), want, "{text}");
        }
    }
}
