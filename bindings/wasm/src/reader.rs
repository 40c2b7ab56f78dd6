//! The caller's JavaScript entries read in place: [`JsRead`] answers the questions of the core's
//! one metadata rule ([`session_compaction::entry::read_entry`]) with property reads
//! (`Reflect.get`, whose exceptions come back as `Err`), a string's `length` as its UTF-16
//! length and `JSON.stringify` only for toolCall `arguments`. [`JsEntries`] is an entry array
//! as a core [`EntrySource`] read on demand: the heads of many entries in one `JSON.stringify`
//! restricted to the head keys ([`JsEntries::read_heads`]), an entry's whole metadata when a
//! decision asks for it, then cached (keyed by the object in a `WeakMap`); the per-turn
//! functions keep what they read per list ([`ListState`]), so a call after appending one entry
//! costs O(that entry). The engine never reads an entry object again after caching its
//! metadata: an entry changed in place is seen with its old metadata (replace the object
//! instead).

use super::convert::{bad_arg, ensure_room, entry_count, from_serde, to_value};
use js_sys::{Function, JsString, Reflect};
use serde_json::Value;
use session_compaction::context::ContextCache;
use session_compaction::entry::batch::{head_of_restricted, metas_of_json_array, HEAD_FIELDS};
use session_compaction::entry::{read_entry, EntryMeta, EntrySource, Field, JsonRead, Shape};
use session_compaction::plan::prepare::MessageRef;
use session_compaction::plan::prepare_cache::PrepareCache;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The JS strings of the keys the metadata reads ([`Field::ALL`] order), made once.
struct Keys {
    fields: Vec<JsValue>,
    length: JsValue,
    message: JsValue,
    /// The names of [`HEAD_FIELDS`] (a JS array: `JSON.stringify`'s list of keys).
    head_keys: JsValue,
    /// `["id"]`.
    id_keys: JsValue,
    /// `Array.prototype.slice`.
    slice: JsValue,
}

/// Entries whose heads are not known from which [`JsEntries::read_heads`] and
/// [`EntrySource::find_id`] read them in one `JSON.stringify` (fewer are read one by one).
const BATCH: usize = 32;

/// The names of `fields` as a JS array.
fn names(fields: &[Field]) -> JsValue {
    fields.iter().map(|f| JsValue::from_str(f.name())).collect::<js_sys::Array>().into()
}

thread_local! {
    static KEYS: Keys = Keys {
        fields: Field::ALL.iter().map(|f| JsValue::from_str(f.name())).collect(),
        length: JsValue::from_str("length"),
        message: JsValue::from_str("message"),
        head_keys: names(&HEAD_FIELDS),
        id_keys: names(&[Field::Id]),
        slice: builtin("Array", true, "slice").unwrap_or(JsValue::UNDEFINED),
    };
    static CACHE: RefCell<Option<MetaCache>> = const { RefCell::new(None) };
    /// Slots whose entry object was collected, freed at the start of the next read (the
    /// finalization callback never touches [`CACHE`] itself).
    static FREED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

use super::safe::{array_is_array, is_array};

/// What a JavaScript value is to JSON, told once when the value is read (each probe is a call
/// from wasm into JavaScript, the cost of reading objects in place).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Null,
    Bool(bool),
    Number(f64),
    String,
    /// `typeof` "object" and not `null`: an array or another object, told on demand
    /// ([`JsRead::array`]; `Array.isArray` throws for a revoked Proxy, an error only a read that
    /// needs it reports).
    Object,
    /// A BigInt (`JSON.stringify` throws for it: an error when its shape is asked).
    BigInt,
}

/// One JavaScript value, read as JSON would see it (see [`JsonRead`]): the value and its
/// [`Kind`], probed once.
pub struct JsRead {
    value: JsValue,
    kind: Kind,
    /// `Array.isArray(value)` once asked (objects only).
    array: OnceCell<bool>,
}

impl JsRead {
    /// The value `v` as a whole value (an entry, a message): a value `JSON.stringify` leaves
    /// out of an object (`undefined`, a function, a symbol) reads as `null`.
    pub fn new(v: JsValue) -> Self {
        Self::present(v).unwrap_or_else(|| Self { value: JsValue::NULL, kind: Kind::Null, array: OnceCell::new() })
    }

    /// `v` as the value of a key, `None` when `JSON.stringify` leaves the key out of an object
    /// (`undefined`, a function, a symbol). The common kinds are probed first: an absent key
    /// costs one probe, a string two.
    fn present(v: JsValue) -> Option<Self> {
        let kind = if v.is_undefined() {
            return None;
        } else if v.is_string() {
            Kind::String
        } else if v.is_object() {
            Kind::Object
        } else if let Some(n) = v.as_f64() {
            Kind::Number(n)
        } else if let Some(b) = v.as_bool() {
            Kind::Bool(b)
        } else if v.is_null() {
            Kind::Null
        } else if v.is_bigint() {
            Kind::BigInt
        } else {
            return None;
        };
        Some(Self { value: v, kind, array: OnceCell::new() })
    }

    /// Whether the value is an array; `Err` when `Array.isArray` throws (a revoked Proxy).
    fn array(&self) -> Result<bool, JsValue> {
        if self.kind != Kind::Object {
            return Ok(false);
        }
        if let Some(a) = self.array.get() {
            return Ok(*a);
        }
        let a = array_is_array(&self.value)?;
        let _ = self.array.set(a);
        Ok(a)
    }
}

impl JsonRead for JsRead {
    type Error = JsValue;

    fn field(&self, f: Field) -> Result<Option<Self>, JsValue> {
        if self.kind != Kind::Object {
            return Ok(None);
        }
        let v = KEYS.with(|k| Reflect::get(&self.value, &k.fields[f as usize]))?;
        Ok(Self::present(v))
    }

    fn shape(&self) -> Result<Shape, JsValue> {
        Ok(match self.kind {
            Kind::Object if self.array()? => Shape::Array,
            Kind::Object => Shape::Object,
            Kind::String => Shape::String,
            Kind::Number(n) if n.is_finite() => Shape::Number(n),
            Kind::Number(_) | Kind::Null => Shape::Null,
            Kind::Bool(b) => Shape::Bool(b),
            Kind::BigInt => return Err(JsValue::from_str("a BigInt cannot be converted to JSON")),
        })
    }

    fn string(&self) -> Result<Option<String>, JsValue> {
        Ok(if self.kind == Kind::String { self.value.as_string() } else { None })
    }

    fn text_len(&self) -> Result<Option<u64>, JsValue> {
        Ok((self.kind == Kind::String).then(|| u64::from(self.value.unchecked_ref::<JsString>().length())))
    }

    fn items(&self) -> Result<Vec<Self>, JsValue> {
        if !self.array()? {
            return Ok(Vec::new());
        }
        let len = KEYS.with(|k| Reflect::get(&self.value, &k.length))?.as_f64().unwrap_or(0.0);
        let len = if len.is_finite() && len > 0.0 { len.min(u32::MAX as f64) as u32 } else { 0 };
        (0..len).map(|i| Reflect::get_u32(&self.value, i).map(Self::new)).collect()
    }

    fn json_len(&self) -> Result<u64, JsValue> {
        Ok(js_sys::JSON::stringify(&self.value)?.length().into())
    }

    fn to_value(&self) -> Result<Value, JsValue> {
        to_value(&self.value, "value")
    }
}

/// `f.apply(this, args)` through `Reflect.apply` (exceptions come back as `Err`).
fn apply(f: &JsValue, this: &JsValue, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let list = js_sys::Array::new();
    for a in args {
        list.push(a);
    }
    Reflect::apply(f.unchecked_ref::<Function>(), this, &list)
}

/// `globalThis[a].prototype[b]` (or `globalThis[a][b]` when `proto` is false).
fn builtin(a: &str, proto: bool, b: &str) -> Result<JsValue, JsValue> {
    let mut o = Reflect::get(&js_sys::global(), &JsValue::from_str(a))?;
    if proto {
        o = Reflect::get(&o, &JsValue::from_str("prototype"))?;
    }
    Reflect::get(&o, &JsValue::from_str(b))
}

/// One cached entry: its whole metadata and whether it had a `message` when it was read.
struct Slot {
    meta: Rc<EntryMeta>,
    has_message: bool,
}

/// The per-object metadata cache: a `WeakMap` from entry object to a slot number; the slot
/// holds the whole metadata of an entry read whole (here) and the entry's `message` object as
/// it was read (in the JS array `messages`). A `FinalizationRegistry` frees a slot when its
/// object is collected. Only entries read whole are cached (heads are kept per list,
/// [`ListState`]).
///
/// A result's message array is built by one built-in call, not one call from wasm per message:
/// `Array.from(slots, Reflect.get bound to messages)`.
struct MetaCache {
    map: js_sys::WeakMap,
    registry: js_sys::FinalizationRegistry,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    /// Slot → the entry's `message` (JS array).
    messages: js_sys::Array,
    /// `Array.from`.
    array_from: JsValue,
    array_ctor: JsValue,
    /// `Reflect.get` bound to `messages` (`slot → message`).
    message_of_slot: JsValue,
    /// `Array.prototype.map`.
    array_map: JsValue,
    /// `WeakMap.prototype.get` bound to `map`.
    lookup: JsValue,
    /// The finalization callback (kept alive as long as the registry).
    _cleanup: Closure<dyn FnMut(JsValue)>,
}

impl MetaCache {
    /// The cache, or `None` where the runtime lacks a built-in it needs (then every call reads
    /// every entry it needs).
    fn new() -> Option<Self> {
        let global = js_sys::global();
        for name in ["WeakMap", "FinalizationRegistry"] {
            if !Reflect::get(&global, &JsValue::from_str(name)).is_ok_and(|c| c.is_function()) {
                return None;
            }
        }
        let cleanup = Closure::<dyn FnMut(JsValue)>::new(|held: JsValue| {
            if let Some(slot) = held.as_f64() {
                FREED.with(|f| f.borrow_mut().push(slot as u32));
            }
        });
        let registry = js_sys::FinalizationRegistry::new(cleanup.as_ref().unchecked_ref());
        let map = js_sys::WeakMap::new();
        let bind = builtin("Function", true, "bind").ok()?;
        let lookup = apply(&bind, &builtin("WeakMap", true, "get").ok()?, &[&map]).ok()?;
        let messages = js_sys::Array::new();
        let message_of_slot =
            apply(&bind, &builtin("Reflect", false, "get").ok()?, &[&JsValue::NULL, &messages]).ok()?;
        Some(Self {
            map,
            registry,
            slots: Vec::new(),
            free: Vec::new(),
            messages,
            array_from: builtin("Array", false, "from").ok()?,
            array_ctor: Reflect::get(&global, &JsValue::from_str("Array")).ok()?,
            message_of_slot,
            array_map: builtin("Array", true, "map").ok()?,
            lookup,
            _cleanup: cleanup,
        })
    }

    /// The slot number of every element of `entries` from index `from` on (`NaN` for those
    /// not cached), in one call: `Array.prototype.map.call(entries.slice(from), map.get)`; the
    /// result's element `k` is entry `from + k`'s.
    fn lookup_from(&self, entries: &JsValue, from: usize) -> Result<Vec<f64>, JsValue> {
        let tail = if from == 0 {
            entries.clone()
        } else {
            apply(&KEYS.with(|k| k.slice.clone()), entries, &[&JsValue::from(from as u32)])?
        };
        let found = apply(&self.array_map, &tail, &[&self.lookup])?;
        Ok(js_sys::Float64Array::new(&found).to_vec())
    }

    /// The slot `slot` (a number [`MetaCache::lookup_from`] gave) and its metadata, if cached.
    fn slot(&self, slot: f64) -> Option<(u32, Rc<EntryMeta>)> {
        if !(slot >= 0.0 && slot < self.slots.len() as f64) {
            return None;
        }
        let s = slot as u32;
        self.slots[s as usize].as_ref().map(|x| (s, x.meta.clone()))
    }

    /// The slot and metadata cached for the object `entry`, if any.
    fn lookup(&self, entry: &JsValue) -> Option<(u32, Rc<EntryMeta>)> {
        self.slot(self.map.get(entry.unchecked_ref()).as_f64()?)
    }

    /// Caches `meta` for `entry` (and its `message`); returns the slot.
    fn insert(&mut self, entry: &JsValue, meta: Rc<EntryMeta>, message: &JsValue) -> u32 {
        let slot = Slot { meta, has_message: !message.is_undefined() && !message.is_null() };
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(slot);
                s
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        let held = JsValue::from(s);
        self.map.set(entry.unchecked_ref(), &held);
        self.messages.set(s, message.clone());
        self.registry.register(entry, &held);
        s
    }

    fn release_collected(&mut self) {
        let freed = FREED.with(|f| std::mem::take(&mut *f.borrow_mut()));
        for s in freed {
            if let Some(slot) = self.slots.get_mut(s as usize) {
                if slot.take().is_some() {
                    self.messages.set(s, JsValue::UNDEFINED);
                    self.free.push(s);
                }
            }
        }
    }

    /// `slots.map(s => messages[s])` as one JS array, built by `Array.from`.
    fn messages_of(&self, slots: &[u32]) -> Result<js_sys::Array, JsValue> {
        let list = js_sys::Uint32Array::new_from_slice(slots);
        Ok(apply(&self.array_from, &self.array_ctor, &[&list, &self.message_of_slot])?.unchecked_into())
    }
}

/// A slot number no slot has: `messages[NO_SLOT]` is `undefined`.
const NO_SLOT: u32 = u32::MAX;

/// Runs `f` on the metadata cache (created on first use; `None` where the runtime cannot have
/// one). The cache is borrowed only while `f` runs, which never calls into JavaScript code of
/// the caller (only built-ins).
fn with_cache<T>(f: impl FnOnce(Option<&mut MetaCache>) -> T) -> T {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = MetaCache::new();
        }
        f(c.as_mut())
    })
}

/// What is known of one entry of a [`JsEntries`]: its head ([`read_entry_head`]) and its whole
/// metadata, each read on first need, and its cache slot ([`NO_SLOT`] when not cached).
#[derive(Default)]
pub struct Known {
    head: OnceCell<Rc<EntryMeta>>,
    full: OnceCell<Rc<EntryMeta>>,
    slot: Cell<u32>,
}

impl Known {
    fn new() -> Self {
        Self { head: OnceCell::new(), full: OnceCell::new(), slot: Cell::new(NO_SLOT) }
    }
}

/// An array of the caller's entry objects as an [`EntrySource`]. Each entry is read on first
/// need, through the core's one rule: its head ([`EntrySource::head`]: type, ids, settings, the
/// message's role and model) when only that is asked, its whole metadata
/// ([`EntrySource::meta`]) when that is (the cache of whole metadata by object is looked up
/// first). [`EntrySource::entry`] converts one entry to JSON when an algorithm needs all of it
/// (a previous compaction's details, a custom message); [`JsEntries::messages`] hands back the
/// entries' own `message` objects.
///
/// An entry that can be read neither in place nor through `JSON.stringify` reads as an entry of
/// no known type, and the error is kept: [`JsEntries::check`] returns it (the one of the lowest
/// index read), so a result computed over such an entry is never returned.
pub struct JsEntries {
    array: JsValue,
    /// The argument's name, for errors (`pathEntries[3] …`).
    what: String,
    known: Vec<Known>,
    /// The first error met, by entry index.
    error: RefCell<Option<(usize, JsValue)>>,
}

impl JsEntries {
    /// Reads the array argument `what` whole: every entry's metadata
    /// (`E_INVALID_ARGUMENT` when it is not an array, or an entry can be read neither in place
    /// nor through `JSON.stringify`, naming the first such entry).
    pub fn read(v: &JsValue, what: &str) -> Result<Self, JsValue> {
        let entries = Self::lazy(v, what, Vec::new())?;
        for i in 0..entries.len() {
            entries.meta(i);
        }
        entries.check()?;
        Ok(entries)
    }

    /// The array argument `what` as entries read on demand, of which the first `known.len()`
    /// are known (from the last call on the same objects, [`ListState`]). `E_INVALID_ARGUMENT`
    /// when it is not an array, its length cannot be read or its length is more entries than
    /// the memory has room for ([`ensure_room`]); the errors of entries come from [`JsEntries::check`].
    fn lazy(v: &JsValue, what: &str, mut known: Vec<Known>) -> Result<Self, JsValue> {
        if is_array(v) != Ok(true) {
            return Err(bad_arg(what, "expected an array of entries"));
        }
        let len = KEYS.with(|k| Reflect::get(v, &k.length)).map_err(|_| bad_arg(what, "cannot read its length"))?;
        let len = entry_count(&len);
        known.truncate(len);
        if len > known.capacity() {
            ensure_room(what, len)?;
        }
        known.resize_with(len, Known::new);
        with_cache(|c| {
            if let Some(c) = c {
                c.release_collected();
            }
        });
        Ok(Self { array: v.clone(), what: what.to_owned(), known, error: RefCell::new(None) })
    }

    /// Reads the heads of the entries from `from` on that are not known yet, when there are at
    /// least [`BATCH`] of them, in one call: `JSON.stringify` of those entries restricted to the
    /// keys the head reads ([`HEAD_FIELDS`], every depth), read by the core's byte reader
    /// ([`metas_of_json_array`], [`head_of_restricted`]). What reads every head (the tree of
    /// `buildSessionContext`) calls it first. Nothing is read when the text cannot be had (a
    /// getter throws, a BigInt, a Proxy): those entries are read one by one on demand, which
    /// reports their errors. Settings entries are always read one by one (their head is the
    /// whole entry). An entry with a `toJSON` method is read as `JSON.stringify` sees it.
    pub fn read_heads(&self, from: usize) {
        let from = from.min(self.len());
        let unknown = |k: &&Known| k.head.get().is_none() && k.full.get().is_none();
        if self.known[from..].iter().filter(unknown).count() < BATCH {
            return;
        }
        // The entries read whole before (by the other function, or an earlier list): from the
        // cache by object, looked up by one built-in pass.
        let found = with_cache(|c| c.and_then(|c| c.lookup_from(&self.array, from).ok()));
        for (k, slot) in self.known[from..].iter().zip(found.unwrap_or_default()) {
            if unknown(&k) {
                if let Some((s, meta)) = with_cache(|c| c.and_then(|c| c.slot(slot))) {
                    k.slot.set(s);
                    let _ = k.full.set(meta);
                }
            }
        }
        if self.known[from..].iter().filter(unknown).count() < BATCH {
            return;
        }
        let Some(metas) = self.restricted(from, self.len(), false) else { return };
        for (k, meta) in self.known[from..].iter().zip(metas) {
            if k.head.get().is_some() || k.full.get().is_some() {
                continue;
            }
            if let Some(head) = head_of_restricted(meta) {
                // Every kind but `message` has nothing more than its head.
                let _ = if head.message.is_some() { k.head.set(Rc::new(head)) } else { k.full.set(Rc::new(head)) };
            }
        }
    }

    /// The metadata of the JSON of entries `from..to` restricted to the head keys (`ids`: to
    /// `id` alone), one per entry; `None` when it cannot be had.
    fn restricted(&self, from: usize, to: usize, ids: bool) -> Option<Vec<EntryMeta>> {
        let (keys, slice) = KEYS.with(|k| (if ids { k.id_keys.clone() } else { k.head_keys.clone() }, k.slice.clone()));
        let part = if from == 0 && to == self.len() {
            self.array.clone()
        } else {
            if !slice.is_function() {
                return None;
            }
            apply(&slice, &self.array, &[&JsValue::from(from as u32), &JsValue::from(to as u32)]).ok()?
        };
        let text = js_sys::JSON::stringify_with_replacer(&part, &keys).ok()?.as_string()?;
        metas_of_json_array(text.as_bytes(), to - from).filter(|m| m.len() == to - from)
    }

    /// The first entry before `end` with id `id` (the search of
    /// [`session_compaction::plan::prepare::kept_start_by`]): from the known heads, or (with at
    /// least [`BATCH`] unknown) from one `JSON.stringify` of those entries restricted to `id`.
    pub fn find_id(&self, id: &str, end: usize) -> Option<usize> {
        let range = 0..end.min(self.len());
        let unknown = self.known[range.clone()].iter().filter(|k| k.head.get().is_none() && k.full.get().is_none());
        if unknown.count() >= BATCH {
            if let Some(metas) = self.restricted(range.start, range.end, true) {
                return metas.iter().position(|m| m.id.as_deref() == Some(id)).map(|k| range.start + k);
            }
        }
        range.into_iter().find(|&i| self.head(i).id.as_deref() == Some(id))
    }

    /// The error of the entry of lowest index that could not be read (of those read so far).
    pub fn check(&self) -> Result<(), JsValue> {
        match &*self.error.borrow() {
            Some((_, e)) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Keeps `error` for entry `i` (the one of the lowest index wins); the entry reads as an
    /// entry of no known type.
    fn fail(&self, i: usize, error: JsValue) -> Rc<EntryMeta> {
        let mut e = self.error.borrow_mut();
        if !e.as_ref().is_some_and(|(j, _)| *j <= i) {
            *e = Some((i, error));
        }
        Rc::new(EntryMeta::default())
    }

    /// The argument's name for entry `i`.
    fn name(&self, i: usize) -> String {
        format!("{}[{i}]", self.what)
    }

    /// Element `i` of the array.
    fn element(&self, i: usize) -> Result<JsValue, JsValue> {
        Reflect::get_u32(&self.array, i as u32).map_err(|_| bad_arg(&self.name(i), "cannot be read"))
    }

    /// Reads the whole metadata of entry `i`: from the cache by object, else in place (whole:
    /// the entry's own fields again, a few property reads, and its message); then caches it by
    /// object.
    fn read_full(&self, i: usize) -> Result<Rc<EntryMeta>, JsValue> {
        let e = self.element(i)?;
        if !e.is_object() {
            return Ok(Rc::new(EntryMeta::default()));
        }
        if let Some((s, meta)) = with_cache(|c| c.and_then(|c| c.lookup(&e))) {
            self.known[i].slot.set(s);
            return Ok(meta);
        }
        let meta = match read_entry(&JsRead::new(e.clone())) {
            Ok(m) => m,
            // A getter threw: the entry as `JSON.stringify` sees it (its failure is the error).
            Err(_) => EntryMeta::from_value(&to_value(&e, &self.name(i))?),
        };
        let meta = Rc::new(meta);
        let message = KEYS.with(|k| Reflect::get(&e, &k.message)).unwrap_or(JsValue::UNDEFINED);
        if let Some(s) = with_cache(|c| c.map(|c| c.insert(&e, meta.clone(), &message))) {
            self.known[i].slot.set(s);
        }
        Ok(meta)
    }

    /// The messages of `refs` as one JS array: for [`MessageRef::Entry`] the entry's own
    /// `message` object (as it was when the entry was first read whole; an entry without one is
    /// left out), the derived messages built from their JSON.
    pub fn messages<'a>(&self, refs: impl IntoIterator<Item = &'a MessageRef>) -> Result<js_sys::Array, JsValue> {
        let mut order: Vec<u32> = Vec::new();
        let mut fixups: Vec<(u32, JsValue)> = Vec::new();
        for r in refs {
            match r {
                MessageRef::Entry(i) => match self.entry_message(*i) {
                    EntryMessage::Kept(s) => order.push(s),
                    EntryMessage::Live(m) => {
                        fixups.push((order.len() as u32, m));
                        order.push(NO_SLOT);
                    }
                    EntryMessage::None => {}
                },
                MessageRef::Derived(v) => {
                    fixups.push((order.len() as u32, from_serde(v)?));
                    order.push(NO_SLOT);
                }
            }
        }
        self.check()?;
        let out = CACHE.with(|c| c.borrow().as_ref().map(|c| c.messages_of(&order)).transpose())?;
        let out = out.unwrap_or_else(|| js_sys::Array::new_with_length(order.len() as u32));
        for (k, m) in fixups {
            out.set(k, m);
        }
        Ok(out)
    }

    /// Where the `message` of entry `i` comes from in [`JsEntries::messages`]: the per-object
    /// cache's slot, the entry read now, or none (the entry has no message).
    fn entry_message(&self, i: usize) -> EntryMessage {
        self.meta(i);
        let s = self.known[i].slot.get();
        if s != NO_SLOT {
            let has = CACHE
                .with(|c| c.borrow().as_ref().and_then(|c| c.slots.get(s as usize)?.as_ref().map(|x| x.has_message)));
            return if has == Some(true) { EntryMessage::Kept(s) } else { EntryMessage::None };
        }
        self.live_message(i).map_or(EntryMessage::None, EntryMessage::Live)
    }

    /// The `message` property of entry `i`, read now (`None` when absent, `null` or
    /// unreadable: such an entry has no message, SPEC §2).
    fn live_message(&self, i: usize) -> Option<JsValue> {
        let e = Reflect::get_u32(&self.array, i as u32).ok()?;
        let m = KEYS.with(|k| Reflect::get(&e, &k.message)).ok()?;
        (!m.is_undefined() && !m.is_null()).then_some(m)
    }
}

/// What the engine keeps of the last call of one per-turn function (the glue's cache: see
/// `pkg-template/shared/pure.js`): what it read of the entries, in list order, and the core's
/// cache of the decision over them ([`ContextCache`] for `buildSessionContext`,
/// [`PrepareCache`] for `prepareCompaction`). The glue tells how many leading entries are the
/// same objects as in that call ([`ListState::entries`]); the rest is read on demand.
#[derive(Default)]
pub struct ListState {
    known: Vec<Known>,
    /// The context cache (`buildSessionContext`).
    pub context: ContextCache,
    /// The preparation cache (`prepareCompaction`).
    pub prepare: PrepareCache,
}

/// The per-turn functions that keep a [`ListState`].
#[derive(Clone, Copy)]
pub enum Channel {
    /// `prepareCompaction`.
    Prepare = 0,
    /// `buildSessionContext`.
    Context = 1,
}

thread_local! {
    static LISTS: RefCell<[Option<ListState>; 2]> = const { RefCell::new([None, None]) };
}

impl ListState {
    /// The state of `channel`, taken out (a default one when there is none); put it back with
    /// [`ListState::keep`] after a call that succeeded, so a call that failed leaves none.
    pub fn take(channel: Channel) -> Self {
        LISTS.with(|l| l.borrow_mut()[channel as usize].take()).unwrap_or_default()
    }

    /// Keeps this state (and what was read of `entries`) for the next call on `channel`.
    pub fn keep(mut self, channel: Channel, entries: JsEntries) {
        self.known = entries.known;
        LISTS.with(|l| l.borrow_mut()[channel as usize] = Some(self));
    }

    /// `v` as entries read on demand (see [`JsEntries`]), of which the first `unchanged`
    /// elements are the same objects as in the last call (the glue compared them): what was read
    /// of them is this state's. Returns the entries and how many of them were known
    /// (`unchanged`, or fewer when this state holds fewer); the core caches take that count.
    /// Call [`JsEntries::check`] before using a result computed over them.
    pub fn entries(&mut self, v: &JsValue, what: &str, unchanged: usize) -> Result<(JsEntries, usize), JsValue> {
        let mut known = std::mem::take(&mut self.known);
        known.truncate(unchanged);
        let count = known.len();
        let entries = JsEntries::lazy(v, what, known)?;
        let count = count.min(entries.len());
        Ok((entries, count))
    }
}

/// See [`JsEntries::entry_message`].
enum EntryMessage {
    /// In the per-object cache, at this slot.
    Kept(u32),
    /// Read from the entry now.
    Live(JsValue),
    /// The entry has none.
    None,
}

impl EntrySource for JsEntries {
    fn len(&self) -> usize {
        self.known.len()
    }
    /// As [`JsEntries::messages`] hands it back.
    fn has_message(&self, i: usize) -> bool {
        !matches!(self.entry_message(i), EntryMessage::None)
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        let k = &self.known[i];
        if let Some(m) = k.full.get() {
            return m;
        }
        let m = self.read_full(i).unwrap_or_else(|e| self.fail(i, e));
        k.full.get_or_init(|| m)
    }
    /// The head read in one call ([`JsEntries::read_heads`]), else the whole metadata (read
    /// now): what reads one head alone reads that entry's messages next in practice (the search
    /// for the latest compaction from the end of a branch, an appended entry).
    fn head(&self, i: usize) -> &EntryMeta {
        let k = &self.known[i];
        match k.full.get().or_else(|| k.head.get()) {
            Some(m) => m,
            None => self.meta(i),
        }
    }
    /// Entry `i` as JSON (`null` when it cannot be converted: its metadata was read, so only a
    /// value deep inside, a BigInt or a cycle, can make `JSON.stringify` fail).
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        let e = Reflect::get_u32(&self.array, i as u32).unwrap_or(JsValue::UNDEFINED);
        Cow::Owned(to_value(&e, "entry").unwrap_or(Value::Null))
    }
}
