//! The message objects a `SessionTree` hands out, kept per entry so that each is built at most
//! once: `prepareCompaction` and `buildSessionContext` after a turn build only the messages of
//! the entries appended since (SPEC §5, §6), and an entry appended from JavaScript keeps the
//! caller's own `message` object. Conversions only: which entries give which messages is the
//! core's decision ([`Core::context_plan`], [`Core::prepare_compaction_refs`]).

use super::convert::{from_serde, parse_js};
use serde_json::Value;
use session_compaction::context::ContextItem;
use session_compaction::session::SessionTree as Core;
use wasm_bindgen::prelude::*;

/// One message of a result: the message an entry gives (its own `message`, or the summary or
/// custom message built from it), or a message built from a value each time.
pub enum Want<'a> {
    /// The message of a context item (an entry's own message or one derived from the entry).
    Item(ContextItem),
    /// A message built for this result only.
    Value(&'a Value),
}

/// The message objects built so far, by entry index, for one session [`Core::revision`] (when
/// entries are removed, a rollback, they are all dropped) and each entry's
/// [`Core::entry_version`] (an entry replaced in place, as pruning does, is built again from
/// its new text on the next call; the others stay).
#[derive(Default)]
pub struct MessageObjects {
    revision: u64,
    /// Per entry index: `None` not built yet; `Some((version, undefined))` the entry gives no
    /// message; `version` is the entry's version when it was built.
    objects: Vec<Option<(u32, JsValue)>>,
}

impl MessageObjects {
    /// Forgets what was built for another revision of `s` and makes room for its entries.
    fn sync(&mut self, s: &Core) {
        if self.revision != s.revision() {
            self.objects.clear();
            self.revision = s.revision();
        }
        self.objects.resize(s.entry_count(), None);
    }

    /// The object built for entry `i`, if any.
    fn built(&self, i: usize) -> Option<JsValue> {
        self.objects.get(i).cloned().flatten().map(|(_, o)| o)
    }

    /// Keeps `message` (the caller's own object) as the message of entry `i`, just appended to
    /// `s` from it. Values that are not objects are left to be built from the stored text.
    pub fn adopt(&mut self, s: &Core, i: usize, message: JsValue) {
        self.sync(s);
        if message.is_object() {
            if let Some(slot) = self.objects.get_mut(i) {
                *slot = Some((s.entry_version(i), message));
            }
        }
    }

    /// The messages of `wants` as one JS array, in order (wanted entries that give no message
    /// are left out). The entries' messages not built before are built together, by one
    /// `JSON.parse` of their stored texts (written in ASCII), and kept.
    pub fn array(&mut self, s: &Core, wants: &[Want<'_>]) -> Result<js_sys::Array, JsValue> {
        self.sync(s);
        let mut batch = String::from("[");
        let mut pending: Vec<usize> = Vec::new();
        for want in wants {
            let (i, text) = match *want {
                Want::Item(ContextItem::Message(i)) => (i, None),
                Want::Item(item) => (item.index(), Some(item)),
                Want::Value(_) => continue,
            };
            match self.objects.get(i) {
                Some(Some((v, _))) if *v == s.entry_version(i) => continue,
                Some(_) => {}
                None => continue,
            }
            let built: Option<std::borrow::Cow<'_, str>> = match text {
                None => s.message_text(i).map(std::borrow::Cow::Borrowed),
                Some(item) => item.materialize(s).map(|v| std::borrow::Cow::Owned(v.to_string())),
            };
            match built {
                Some(t) => {
                    if !pending.is_empty() {
                        batch.push(',');
                    }
                    // In ASCII: decoded into a one-byte JS string and parsed faster.
                    session_compaction::js::push_json_ascii(&mut batch, &t);
                    pending.push(i);
                    // Marked so that an entry wanted twice is built once.
                    self.objects[i] = Some((s.entry_version(i), JsValue::NULL));
                }
                None => self.objects[i] = Some((s.entry_version(i), JsValue::UNDEFINED)),
            }
        }
        if !pending.is_empty() {
            batch.push(']');
            let parsed: js_sys::Array = match parse_js(&batch) {
                Ok(v) => v.unchecked_into(),
                Err(e) => {
                    for &i in &pending {
                        self.objects[i] = None;
                    }
                    return Err(e);
                }
            };
            for (k, &i) in pending.iter().enumerate() {
                self.objects[i] = Some((s.entry_version(i), parsed.get(k as u32)));
            }
        }
        let out = js_sys::Array::new();
        for want in wants {
            let object = match *want {
                Want::Item(item) => self.built(item.index()),
                Want::Value(v) => Some(from_serde(v)?),
            };
            if let Some(o) = object.filter(|o| !o.is_undefined()) {
                out.push(&o);
            }
        }
        Ok(out)
    }
}
