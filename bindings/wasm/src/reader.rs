//! The caller's JavaScript entries read in place: [`JsRead`] answers the questions of the core's
//! one metadata rule ([`session_compaction::entry::read_entry`]) with property reads
//! (`Reflect.get`, whose exceptions come back as `Err`), a string's `length` as its UTF-16
//! length and `JSON.stringify` only for toolCall `arguments`. [`JsEntries`] is an entry array
//! as a core [`EntrySource`]: each entry object's metadata is computed once and cached (keyed by
//! the object in a `WeakMap`), so a call after appending one entry costs O(that entry) plus a
//! lookup per entry. The engine never reads an entry object again after caching its metadata:
//! an entry changed in place is seen with its old metadata (replace the object instead).

use super::convert::{bad_arg, from_serde, to_value};
use js_sys::{Function, JsString, Reflect};
use serde_json::Value;
use session_compaction::context::ContextCache;
use session_compaction::entry::{read_entry, EntryMeta, EntrySource, Field, JsonRead, Shape};
use session_compaction::plan::prepare::MessageRef;
use session_compaction::plan::prepare_cache::PrepareCache;
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The JS strings of the keys the metadata reads ([`Field::ALL`] order), made once.
struct Keys {
    fields: Vec<JsValue>,
    length: JsValue,
    message: JsValue,
    /// `Array.isArray`.
    is_array: Option<Function>,
}

thread_local! {
    static KEYS: Keys = Keys {
        fields: Field::ALL.iter().map(|f| JsValue::from_str(f.name())).collect(),
        length: JsValue::from_str("length"),
        message: JsValue::from_str("message"),
        is_array: Reflect::get(&js_sys::global(), &JsValue::from_str("Array"))
            .and_then(|a| Reflect::get(&a, &JsValue::from_str("isArray")))
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok()),
    };
    static CACHE: RefCell<Option<MetaCache>> = const { RefCell::new(None) };
    /// Slots whose entry object was collected, freed at the start of the next read (the
    /// finalization callback never touches [`CACHE`] itself).
    static FREED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// `Array.isArray(v)`; `Err` when it throws (a revoked Proxy).
fn is_array(v: &JsValue) -> Result<bool, JsValue> {
    if !v.is_object() {
        return Ok(false);
    }
    KEYS.with(|k| match &k.is_array {
        Some(f) => f.call1(&JsValue::UNDEFINED, v).map(|r| r.is_truthy()),
        None => Ok(false),
    })
}

/// One JavaScript value, read as JSON would see it (see [`JsonRead`]).
pub struct JsRead(pub JsValue);

impl JsonRead for JsRead {
    type Error = JsValue;

    fn field(&self, f: Field) -> Result<Option<Self>, JsValue> {
        if !self.0.is_object() {
            return Ok(None);
        }
        let v = KEYS.with(|k| Reflect::get(&self.0, &k.fields[f as usize]))?;
        // Keys JSON.stringify leaves out of an object.
        if v.is_undefined() || v.is_function() || v.is_symbol() {
            return Ok(None);
        }
        Ok(Some(JsRead(v)))
    }

    fn shape(&self) -> Result<Shape, JsValue> {
        let v = &self.0;
        if v.is_object() {
            return Ok(if is_array(v)? { Shape::Array } else { Shape::Object });
        }
        if v.is_string() {
            return Ok(Shape::String);
        }
        if let Some(n) = v.as_f64() {
            return Ok(if n.is_finite() { Shape::Number(n) } else { Shape::Null });
        }
        if let Some(b) = v.as_bool() {
            return Ok(Shape::Bool(b));
        }
        if v.is_bigint() {
            return Err(JsValue::from_str("a BigInt cannot be converted to JSON"));
        }
        Ok(Shape::Null)
    }

    fn string(&self) -> Result<Option<String>, JsValue> {
        Ok(self.0.as_string())
    }

    fn text_len(&self) -> Result<Option<u64>, JsValue> {
        Ok(self.0.dyn_ref::<JsString>().map(|s| u64::from(s.length())))
    }

    fn items(&self) -> Result<Vec<Self>, JsValue> {
        if !is_array(&self.0)? {
            return Ok(Vec::new());
        }
        let len = KEYS.with(|k| Reflect::get(&self.0, &k.length))?.as_f64().unwrap_or(0.0);
        let len = if len.is_finite() && len > 0.0 { len.min(u32::MAX as f64) as u32 } else { 0 };
        (0..len).map(|i| Reflect::get_u32(&self.0, i).map(JsRead)).collect()
    }

    fn json_len(&self) -> Result<u64, JsValue> {
        Ok(js_sys::JSON::stringify(&self.0)?.length().into())
    }

    fn to_value(&self) -> Result<Value, JsValue> {
        to_value(&self.0, "value")
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

/// One cached entry: its metadata and whether it had a `message` when it was read.
struct Slot {
    meta: Rc<EntryMeta>,
    has_message: bool,
}

/// The per-object metadata cache: a `WeakMap` from entry object to a slot number; the slot
/// holds the metadata (here) and the entry's `message` object as it was read (in the JS array
/// `messages`). A `FinalizationRegistry` frees a slot when its object is collected.
///
/// The per-call work is done by built-in functions over the whole array, not one call from
/// wasm per entry: `Array.prototype.map` with the map's bound `get` looks up every entry, and
/// `Array.from(slots, Reflect.get bound to messages)` builds a result's message array.
struct MetaCache {
    map: js_sys::WeakMap,
    registry: js_sys::FinalizationRegistry,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    /// Slot → the entry's `message` (JS array).
    messages: js_sys::Array,
    /// `Array.prototype.map`.
    array_map: JsValue,
    /// `Array.from`.
    array_from: JsValue,
    /// `Array.prototype.slice`.
    array_slice: JsValue,
    array_ctor: JsValue,
    /// `WeakMap.prototype.get` bound to `map`.
    lookup: JsValue,
    /// `Reflect.get` bound to `messages` (`slot → message`).
    message_of_slot: JsValue,
    /// The finalization callback (kept alive as long as the registry).
    _cleanup: Closure<dyn FnMut(JsValue)>,
}

/// A slot number no slot has: `messages[NO_SLOT]` is `undefined`.
const NO_SLOT: u32 = u32::MAX;

impl MetaCache {
    /// The cache, or `None` where the runtime lacks a built-in it needs (then every call reads
    /// every entry).
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
        let messages = js_sys::Array::new();
        let bind = builtin("Function", true, "bind").ok()?;
        let lookup = apply(&bind, &builtin("WeakMap", true, "get").ok()?, &[&map]).ok()?;
        let reflect_get = builtin("Reflect", false, "get").ok()?;
        let message_of_slot = apply(&bind, &reflect_get, &[&JsValue::NULL, &messages]).ok()?;
        Some(Self {
            map,
            registry,
            slots: Vec::new(),
            free: Vec::new(),
            messages,
            array_map: builtin("Array", true, "map").ok()?,
            array_from: builtin("Array", false, "from").ok()?,
            array_slice: builtin("Array", true, "slice").ok()?,
            array_ctor: Reflect::get(&global, &JsValue::from_str("Array")).ok()?,
            lookup,
            message_of_slot,
            _cleanup: cleanup,
        })
    }

    /// The slot number of every element of `entries` (`NaN` for those not cached), in one
    /// call: `Array.prototype.map.call(entries, map.get)`.
    fn lookup_all(&self, entries: &JsValue) -> Result<Vec<f64>, JsValue> {
        let found = apply(&self.array_map, entries, &[&self.lookup])?;
        Ok(js_sys::Float64Array::new(&found).to_vec())
    }

    /// [`MetaCache::lookup_all`] of the elements from index `from` on (`Array.prototype.slice`
    /// first): the result's element `k` is entry `from + k`'s.
    fn lookup_from(&self, entries: &JsValue, from: usize) -> Result<Vec<f64>, JsValue> {
        if from == 0 {
            return self.lookup_all(entries);
        }
        let tail = apply(&self.array_slice, entries, &[&JsValue::from(from as u32)])?;
        self.lookup_all(&tail)
    }

    fn slot(&self, slot: f64) -> Option<(u32, &Slot)> {
        if !(slot >= 0.0 && slot < self.slots.len() as f64) {
            return None;
        }
        let s = slot as u32;
        self.slots[s as usize].as_ref().map(|x| (s, x))
    }

    /// Caches `meta` for `entry` (and its `message`); returns the slot.
    fn insert(&mut self, entry: &JsValue, meta: Rc<EntryMeta>, message: &JsValue) -> u32 {
        let slot = Slot { meta, has_message: !message.is_undefined() };
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
        self.messages.set(s, message.clone());
        let held = JsValue::from(s);
        self.map.set(entry.unchecked_ref(), &held);
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

/// Reads one entry object in place; an entry whose properties cannot be read in place (a
/// getter throws) is read through `JSON.stringify`, whose failure is the error, naming `what`.
fn read_one(entry: &JsValue, what: &dyn Fn() -> String) -> Result<EntryMeta, JsValue> {
    match read_entry(&JsRead(entry.clone())) {
        Ok(m) => Ok(m),
        Err(_) => Ok(EntryMeta::from_value(&to_value(entry, &what())?)),
    }
}

/// An array of the caller's entry objects as an [`EntrySource`]: the array and the entries'
/// metadata. [`EntrySource::entry`] converts one entry to JSON when an algorithm needs all of it
/// (a previous compaction's details, a custom message); [`JsEntries::messages`] hands back the
/// entries' own `message` objects.
pub struct JsEntries {
    array: JsValue,
    metas: Vec<Rc<EntryMeta>>,
    /// The cache slot of each entry ([`NO_SLOT`] when not cached).
    slots: Vec<u32>,
}

impl JsEntries {
    /// Reads the array argument `what` (`E_INVALID_ARGUMENT` when it is not an array, or an
    /// entry can be read neither in place nor through `JSON.stringify`).
    pub fn read(v: &JsValue, what: &str) -> Result<Self, JsValue> {
        Self::read_after(v, what, Vec::new(), Vec::new())
    }

    /// [`JsEntries::read`] of an array whose first `metas.len()` entries are known: `metas` and
    /// `slots` are theirs (from the last call on the same objects, [`ListState`]); only the
    /// entries after them are looked up or read.
    fn read_after(
        v: &JsValue,
        what: &str,
        mut metas: Vec<Rc<EntryMeta>>,
        mut slots: Vec<u32>,
    ) -> Result<Self, JsValue> {
        if is_array(v) != Ok(true) {
            return Err(bad_arg(what, "expected an array of entries"));
        }
        let len = KEYS.with(|k| Reflect::get(v, &k.length)).map_err(|_| bad_arg(what, "cannot read its length"))?;
        let len = len.as_f64().filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(0.0).min(u32::MAX as f64) as usize;
        let known = metas.len().min(slots.len()).min(len);
        metas.truncate(known);
        slots.truncate(known);
        let item =
            |i: usize| Reflect::get_u32(v, i as u32).map_err(|_| bad_arg(&format!("{what}[{i}]"), "cannot be read"));
        let name = |i: usize| move || format!("{what}[{i}]");
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_none() {
                *c = MetaCache::new();
            }
            metas.reserve(len - known);
            slots.reserve(len - known);
            match c.as_mut() {
                Some(cache) => {
                    cache.release_collected();
                    let found = if known < len {
                        cache.lookup_from(v, known).map_err(|_| bad_arg(what, "cannot be read"))?
                    } else {
                        Vec::new()
                    };
                    for i in known..len {
                        if let Some((s, slot)) = found.get(i - known).and_then(|&f| cache.slot(f)) {
                            metas.push(slot.meta.clone());
                            slots.push(s);
                            continue;
                        }
                        let e = item(i)?;
                        let meta = Rc::new(read_one(&e, &name(i))?);
                        metas.push(meta.clone());
                        if e.is_object() {
                            let message = KEYS.with(|k| Reflect::get(&e, &k.message)).unwrap_or(JsValue::UNDEFINED);
                            slots.push(cache.insert(&e, meta, &message));
                        } else {
                            slots.push(NO_SLOT);
                        }
                    }
                }
                None => {
                    for i in known..len {
                        metas.push(Rc::new(read_one(&item(i)?, &name(i))?));
                        slots.push(NO_SLOT);
                    }
                }
            }
            Ok(Self { array: v.clone(), metas, slots })
        })
    }

    /// The messages of `refs` as one JS array: for [`MessageRef::Entry`] the entry's own
    /// `message` object (as it was when the entry was first read; an entry without one is left
    /// out), the derived messages built from their JSON.
    pub fn messages<'a>(&self, refs: impl IntoIterator<Item = &'a MessageRef>) -> Result<js_sys::Array, JsValue> {
        let mut order: Vec<u32> = Vec::new();
        let mut fixups: Vec<(u32, JsValue)> = Vec::new();
        let cached = CACHE.with(|c| c.borrow().is_some());
        for r in refs {
            match r {
                MessageRef::Entry(i) => {
                    let s = self.slots[*i];
                    if s != NO_SLOT {
                        let has = CACHE.with(|c| {
                            c.borrow().as_ref().and_then(|c| c.slots.get(s as usize)?.as_ref().map(|x| x.has_message))
                        });
                        if has == Some(true) {
                            order.push(s);
                        }
                    } else if let Some(m) = self.live_message(*i) {
                        fixups.push((order.len() as u32, m));
                        order.push(NO_SLOT);
                    }
                }
                MessageRef::Derived(v) => {
                    fixups.push((order.len() as u32, from_serde(v)?));
                    order.push(NO_SLOT);
                }
            }
        }
        let out = if cached {
            CACHE.with(|c| c.borrow().as_ref().map(|c| c.messages_of(&order)).transpose())?.unwrap_or_default()
        } else {
            js_sys::Array::new_with_length(order.len() as u32)
        };
        for (k, m) in fixups {
            out.set(k, m);
        }
        Ok(out)
    }

    /// The `message` property of entry `i`, read now (`None` when absent or unreadable).
    fn live_message(&self, i: usize) -> Option<JsValue> {
        let e = Reflect::get_u32(&self.array, i as u32).ok()?;
        let m = KEYS.with(|k| Reflect::get(&e, &k.message)).ok()?;
        (!m.is_undefined()).then_some(m)
    }
}

/// What the engine keeps of the last call of one per-turn function (the glue's cache: see
/// `pkg-template/shared/pure.js`): the entries' metadata and cache slots in list order, and the
/// core's cache of the decision over them ([`ContextCache`] for `buildSessionContext`,
/// [`PrepareCache`] for `prepareCompaction`). The glue tells how many leading entries are the
/// same objects as in that call ([`ListState::entries`]); the rest is read.
#[derive(Default)]
pub struct ListState {
    metas: Vec<Rc<EntryMeta>>,
    slots: Vec<u32>,
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

    /// Keeps this state (and `entries`' metadata) for the next call on `channel`.
    pub fn keep(mut self, channel: Channel, entries: JsEntries) {
        self.metas = entries.metas;
        self.slots = entries.slots;
        LISTS.with(|l| l.borrow_mut()[channel as usize] = Some(self));
    }

    /// Reads `v` (see [`JsEntries::read`]) of which the first `unchanged` elements are the
    /// same objects as in the last call (the glue compared them): their metadata is this
    /// state's. Returns the entries and how many of them were known (`unchanged`, or fewer
    /// when this state holds fewer); the core caches take that count.
    pub fn entries(&mut self, v: &JsValue, what: &str, unchanged: usize) -> Result<(JsEntries, usize), JsValue> {
        let mut metas = std::mem::take(&mut self.metas);
        let mut slots = std::mem::take(&mut self.slots);
        let known = unchanged.min(metas.len());
        metas.truncate(known);
        slots.truncate(known);
        let entries = JsEntries::read_after(v, what, metas, slots)?;
        let known = known.min(entries.metas.len());
        Ok((entries, known))
    }
}

impl EntrySource for JsEntries {
    fn len(&self) -> usize {
        self.metas.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        &self.metas[i]
    }
    /// Entry `i` as JSON (`null` when it cannot be converted: its metadata was read, so only a
    /// value deep inside, a BigInt or a cycle, can make `JSON.stringify` fail).
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        let e = Reflect::get_u32(&self.array, i as u32).unwrap_or(JsValue::UNDEFINED);
        Cow::Owned(to_value(&e, "entry").unwrap_or(Value::Null))
    }
}
