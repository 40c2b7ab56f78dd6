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
    /// Per entry index: `None` not built yet; `Some((version, None))` the entry gives no
    /// message; `version` is the entry's version when it was built.
    objects: Vec<Option<(u32, Option<JsValue>)>>,
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
    fn built(&self, i: usize) -> Option<&JsValue> {
        self.objects.get(i)?.as_ref()?.1.as_ref()
    }

    /// Keeps `message` (the caller's own object) as the message of entry `i`, just appended to
    /// `s` from it. Values that are not objects are left to be built from the stored text.
    pub fn adopt(&mut self, s: &Core, i: usize, message: JsValue) {
        self.sync(s);
        if message.is_object() {
            if let Some(slot) = self.objects.get_mut(i) {
                *slot = Some((s.entry_version(i), Some(message)));
            }
        }
    }

    /// The messages of `wants` as one JS array, in order (wanted entries that give no message
    /// are left out). The entries' messages not built before are built together, by a
    /// `JSON.parse` of their stored texts (written in ASCII) per [`BATCH_BYTES`] of text, and
    /// kept.
    pub fn array(&mut self, s: &Core, wants: &[Want<'_>]) -> Result<js_sys::Array, JsValue> {
        self.sync(s);
        let mut batch = Batch::default();
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
            // The stored bytes (checked to be UTF-8 as they are copied), or the derived message.
            let built: Option<std::borrow::Cow<'_, [u8]>> = match text {
                None => s.message_bytes(i).map(std::borrow::Cow::Borrowed),
                Some(item) => item.materialize(s).map(|v| std::borrow::Cow::Owned(v.to_string().into_bytes())),
            };
            match built {
                Some(t) if batch.push(&t, i) => {
                    // Marked so that an entry wanted twice is built once.
                    self.objects[i] = Some((s.entry_version(i), None));
                    if batch.text.len() >= BATCH_BYTES {
                        batch.parse(self, s)?;
                    }
                }
                _ => self.objects[i] = Some((s.entry_version(i), None)),
            }
        }
        batch.parse(self, s)?;
        let out = js_sys::Array::new();
        for want in wants {
            match *want {
                Want::Item(item) => {
                    if let Some(o) = self.built(item.index()) {
                        out.push(o);
                    }
                }
                Want::Value(v) => {
                    out.push(&from_serde(v)?);
                }
            }
        }
        Ok(out)
    }
}

/// About how many bytes of message text one `JSON.parse` reads: a batch ends with the message
/// that reaches it. Smaller strings than the whole list's are cheaper to make in the engines
/// (a string this size is allocated where short-lived objects are, a larger one has pages of
/// its own) and the text buffer, reused, stays in the cache.
const BATCH_BYTES: usize = 64 * 1024;

/// Messages waiting for their `JSON.parse`: the array text and the entry of each element.
#[derive(Default)]
struct Batch {
    text: String,
    entries: Vec<usize>,
}

impl Batch {
    /// Adds the message text `json` of entry `i`; `false` (nothing added) when it is not
    /// UTF-8 (the entry gives no message, as [`Core::message_text`] says).
    fn push(&mut self, json: &[u8], i: usize) -> bool {
        let len = self.text.len();
        self.text.push(if self.entries.is_empty() { '[' } else { ',' });
        // In ASCII: decoded into a one-byte JS string and parsed faster.
        if !session_compaction::js::push_json_ascii_bytes(&mut self.text, json) {
            self.text.truncate(len);
            return false;
        }
        self.entries.push(i);
        true
    }

    /// Parses the messages waiting into `objects` and empties the batch. On an error their
    /// entries are left unbuilt.
    fn parse(&mut self, objects: &mut MessageObjects, s: &Core) -> Result<(), JsValue> {
        if self.entries.is_empty() {
            return Ok(());
        }
        self.text.push(']');
        let parsed = parse_js(&self.text);
        self.text.clear();
        let parsed: js_sys::Array = match parsed {
            Ok(v) => v.unchecked_into(),
            Err(e) => {
                for &i in &self.entries {
                    objects.objects[i] = None;
                }
                self.entries.clear();
                return Err(e);
            }
        };
        for (k, &i) in self.entries.iter().enumerate() {
            objects.objects[i] = Some((s.entry_version(i), Some(parsed.get(k as u32))));
        }
        self.entries.clear();
        Ok(())
    }
}
