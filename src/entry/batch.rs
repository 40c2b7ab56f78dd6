//! The heads of many entries from one JSON text: a host that holds its entries as values of
//! its own (the wasm binding: JavaScript objects) can have them written as one JSON array
//! restricted to the keys the head reads ([`HEAD_FIELDS`]; in JavaScript
//! `JSON.stringify(entries, keys)`, which keeps those keys at every depth), and read that text
//! here with the byte reader of the handle, instead of asking each entry for each key. SPEC §1.

use super::kind::NotObject;
use super::meta::{EntryMeta, MessageMeta};
use super::read::Field;
use super::scan_entry;

/// The keys [`super::read_entry_head`] reads, at any depth (the entry's own and its
/// message's): an entry written with only these keys has the head of the whole entry, except
/// a settings entry, whose head keeps the whole value ([`head_of_restricted`]).
pub const HEAD_FIELDS: [Field; 12] = [
    Field::Type,
    Field::Id,
    Field::ParentId,
    Field::Message,
    Field::Role,
    Field::Provider,
    Field::Model,
    Field::FirstKeptEntryId,
    Field::FromExtension,
    Field::Summary,
    Field::TargetId,
    Field::Label,
];

/// [`EntryMeta::from_json`] of every element of the JSON array `text`, in order, by the byte
/// scanner (a `null` is an entry of no known type), without the spans of the scanner
/// ([`EntryMeta::without_text_spans`]: they would point into `text`, not into the entries'
/// own texts). `None` when `text` is not one JSON array
/// of objects and `null`s, or holds an object the scanner leaves to the value parser (a few
/// unusual texts, [`EntryMeta::from_json`]): then read the entries another way. `expected`:
/// the number of elements the caller expects (room is made for them).
pub fn metas_of_json_array(text: &[u8], expected: usize) -> Option<Vec<EntryMeta>> {
    let ws = |mut i: usize| {
        while i < text.len() && matches!(text[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        i
    };
    let mut i = ws(0);
    if text.get(i) != Some(&b'[') {
        return None;
    }
    i = ws(i + 1);
    let mut out = Vec::with_capacity(expected.min(text.len() / 2));
    if text.get(i) == Some(&b']') {
        return (ws(i + 1) == text.len()).then_some(out);
    }
    loop {
        let (mut meta, end) = match scan_entry(text, i) {
            Some(found) => found,
            // What `JSON.stringify` writes for `undefined` and functions: no entry.
            None if text[i..].starts_with(b"null") => (EntryMeta::of_non_object(NotObject::Null), i + 4),
            None => return None,
        };
        meta.clear_text_spans();
        out.push(meta);
        i = ws(end);
        match text.get(i) {
            Some(b',') => i = ws(i + 1),
            Some(b']') => return (ws(i + 1) == text.len()).then_some(out),
            _ => return None,
        }
    }
}

/// The head ([`super::read_entry_head`]) of an entry from the metadata of its JSON restricted
/// to [`HEAD_FIELDS`] (see [`metas_of_json_array`]): that metadata with the message fields a
/// head does not have reset. `None` for a settings entry (its head keeps the whole entry, which
/// the restricted text does not hold: read it whole).
pub fn head_of_restricted(mut meta: EntryMeta) -> Option<EntryMeta> {
    if meta.is_settings() {
        return None;
    }
    if let Some(m) = meta.message.as_mut() {
        *m = MessageMeta { role: m.role, provider_model: m.provider_model.take(), ..MessageMeta::default() };
    }
    Some(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::read_entry_head;
    use serde_json::{Map, Value};

    /// `JSON.stringify(v, keys)`: only the listed keys of every object, at every depth.
    fn restricted(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut out = Map::new();
                for f in HEAD_FIELDS {
                    if let Some(x) = o.get(f.name()) {
                        out.insert(f.name().to_string(), restricted(x));
                    }
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(restricted).collect()),
            other => other.clone(),
        }
    }

    #[test]
    fn restricted_text_gives_the_heads() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions");
        let mut values: Vec<Value> = Vec::new();
        for file in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            values.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
        }
        values.push(Value::Null);
        let text = serde_json::to_string(&values.iter().map(restricted).collect::<Vec<_>>()).unwrap();
        let metas = metas_of_json_array(format!(" {text} ").as_bytes(), values.len()).unwrap();
        assert_eq!(metas.len(), values.len());
        let mut settings = 0;
        for (meta, v) in metas.into_iter().zip(&values) {
            let Ok(head) = read_entry_head(&v);
            match head_of_restricted(meta) {
                Some(h) => assert_eq!(format!("{h:?}"), format!("{head:?}"), "{v}"),
                None => {
                    assert!(head.is_settings());
                    settings += 1;
                }
            }
        }
        assert!(settings > 0);
        assert_eq!(metas_of_json_array(b"[]", 0).map(|m| m.len()), Some(0));
        for bad in [&b""[..], b"{}", b"[1]", b"[null,", b"[null null]", b"[null]x", b"[{\"a\":1}"] {
            assert!(metas_of_json_array(bad, 1).is_none(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
