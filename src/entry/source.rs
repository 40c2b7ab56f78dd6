//! Read access to a sequence of entries by index, shared by every algorithm.
//!
//! The algorithms decide from [`EntryMeta`] alone and materialize a full entry (a
//! [`serde_json::Value`]) only for what they return. Two sources implement [`EntrySource`]:
//! [`EntryList`] over parsed values (the pure functions) and the session handle over raw JSON
//! lines ([`crate::session::SessionTree`]), which parses an entry only when it is returned.

use crate::entry::EntryMeta;
use serde_json::Value;
use std::borrow::Cow;

/// Indexed entries with their metadata.
pub trait EntrySource {
    /// Number of entries.
    fn len(&self) -> usize;
    /// True when there are no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Metadata of entry `i` (`i < len()`).
    fn meta(&self, i: usize) -> &EntryMeta;
    /// The head of entry `i`'s metadata (`i < len()`): a metadata whose entry fields (kind, ids,
    /// compaction, summary and label fields, settings) and message role and
    /// [`crate::entry::MessageMeta::provider_model`] are those of [`EntrySource::meta`], and
    /// whose other message fields may be defaults ([`crate::entry::read_entry_head`]). What reads
    /// every entry of a session (its tree, the kinds and settings along a branch) reads this, so
    /// that a source that reads entries on demand (the wasm binding's) reads the messages only
    /// where they are needed. Default: [`EntrySource::meta`].
    fn head(&self, i: usize) -> &EntryMeta {
        self.meta(i)
    }
    /// The full entry `i` as JSON (`i < len()`).
    fn entry(&self, i: usize) -> Cow<'_, Value>;
    /// The stored JSON text of entry `i` when the source keeps one (the session handle), so a
    /// reader that needs a few fields can skip the rest without building a value; `None` (the
    /// default): use [`EntrySource::entry`].
    fn entry_text(&self, _i: usize) -> Option<&str> {
        None
    }
    /// Tokens of the `summary` of entry `i` (a `branch_summary` or `compaction`): its UTF-16
    /// length over 4, rounded up, unless the source counts them otherwise
    /// ([`crate::plan::tokens::Recounted`]). SPEC §3.
    fn summary_tokens(&self, i: usize) -> u64 {
        self.meta(i).summary_len.div_ceil(4)
    }
    /// Tokens of `messageOf(entry i)` (SPEC §2): the message estimate of a `message` entry, the
    /// summary tokens of a `branch_summary` entry, 0 for everything else (a `custom_message`
    /// is a `custom` message, which counts 0).
    fn message_of_tokens(&self, i: usize) -> u64 {
        let meta = self.meta(i);
        match meta.kind {
            crate::entry::EntryKind::Message => meta.message_tokens(),
            crate::entry::EntryKind::BranchSummary => self.summary_tokens(i),
            _ => 0,
        }
    }
    /// The arguments of the `toolCall` blocks of entry `i`, as the staleness rule of pruning
    /// reads them ([`crate::plan::prune::call_arguments`]), when the source keeps them from call
    /// to call (the session handle); `None` (the default): read them from the entry. SPEC §13.6.
    fn call_arguments(&self, _i: usize) -> Option<std::sync::Arc<[crate::plan::prune::CallArguments]>> {
        None
    }
    /// True when `message` entry `i` has a message to give (SPEC §2, §12.2: an entry without one
    /// gives nothing to summarize or keep). Default: the entry's value has a `message` field
    /// that is not `null` ([`crate::entry::message_of::entry_message`]).
    fn has_message(&self, i: usize) -> bool {
        crate::entry::message_of::entry_message(&self.entry(i)).is_some()
    }
    /// The bytes of entry `i`'s JSON text, not checked to be UTF-8: where the spans the byte
    /// scanner recorded in its metadata ([`crate::entry::TextSpan`]) are read. Default: the
    /// bytes of [`EntrySource::entry_text`] (`None` when the source keeps no text).
    fn entry_bytes(&self, i: usize) -> Option<&[u8]> {
        self.entry_text(i).map(str::as_bytes)
    }
}

/// A reference to a source is a source (every method forwards), so code that takes
/// `&dyn EntrySource` can be handed any `&S`, sized or not.
impl<S: EntrySource + ?Sized> EntrySource for &S {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        (**self).meta(i)
    }
    fn head(&self, i: usize) -> &EntryMeta {
        (**self).head(i)
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        (**self).entry(i)
    }
    fn entry_text(&self, i: usize) -> Option<&str> {
        (**self).entry_text(i)
    }
    fn call_arguments(&self, i: usize) -> Option<std::sync::Arc<[crate::plan::prune::CallArguments]>> {
        (**self).call_arguments(i)
    }
    fn entry_bytes(&self, i: usize) -> Option<&[u8]> {
        (**self).entry_bytes(i)
    }
    fn has_message(&self, i: usize) -> bool {
        (**self).has_message(i)
    }
    fn summary_tokens(&self, i: usize) -> u64 {
        (**self).summary_tokens(i)
    }
    fn message_of_tokens(&self, i: usize) -> u64 {
        (**self).message_of_tokens(i)
    }
}

/// Parsed entries plus their metadata: the source of the pure functions.
#[derive(Debug, Clone)]
pub struct EntryList<'a> {
    values: &'a [Value],
    metas: Vec<EntryMeta>,
}

impl<'a> EntryList<'a> {
    /// Computes the metadata of every entry of `values`.
    pub fn new(values: &'a [Value]) -> Self {
        Self { values, metas: values.iter().map(EntryMeta::from_value).collect() }
    }

    /// The entries.
    pub fn values(&self) -> &'a [Value] {
        self.values
    }
}

impl EntrySource for EntryList<'_> {
    fn len(&self) -> usize {
        self.values.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        &self.metas[i]
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        Cow::Borrowed(&self.values[i])
    }
}

/// A selection of another source's entries (for example one branch), in the given order.
pub struct Selection<'a, S: EntrySource + ?Sized> {
    source: &'a S,
    indices: &'a [usize],
}

impl<'a, S: EntrySource + ?Sized> Selection<'a, S> {
    /// Views `source` through `indices` (each `< source.len()`).
    pub fn new(source: &'a S, indices: &'a [usize]) -> Self {
        Self { source, indices }
    }
}

impl<S: EntrySource + ?Sized> EntrySource for Selection<'_, S> {
    fn len(&self) -> usize {
        self.indices.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        self.source.meta(self.indices[i])
    }
    fn head(&self, i: usize) -> &EntryMeta {
        self.source.head(self.indices[i])
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        self.source.entry(self.indices[i])
    }
    fn entry_text(&self, i: usize) -> Option<&str> {
        self.source.entry_text(self.indices[i])
    }
    fn summary_tokens(&self, i: usize) -> u64 {
        self.source.summary_tokens(self.indices[i])
    }
    fn call_arguments(&self, i: usize) -> Option<std::sync::Arc<[crate::plan::prune::CallArguments]>> {
        self.source.call_arguments(self.indices[i])
    }
    fn entry_bytes(&self, i: usize) -> Option<&[u8]> {
        self.source.entry_bytes(self.indices[i])
    }
    fn has_message(&self, i: usize) -> bool {
        self.source.has_message(self.indices[i])
    }
}

/// Another source seen through its heads: [`EntrySource::meta`] of entry `i` is the source's
/// [`EntrySource::head`]. For the algorithms that read only the fields a head has (the tree
/// index and branch walks of [`crate::tree::TreeIndex`], the settings and message order of
/// [`crate::context::ContextFold`]), so that they read no message of a source that reads
/// messages on demand.
pub struct Heads<'a, S: EntrySource + ?Sized>(pub &'a S);

impl<S: EntrySource + ?Sized> EntrySource for Heads<'_, S> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        self.0.head(i)
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        self.0.entry(i)
    }
    fn entry_text(&self, i: usize) -> Option<&str> {
        self.0.entry_text(i)
    }
    fn summary_tokens(&self, i: usize) -> u64 {
        self.0.summary_tokens(i)
    }
    fn message_of_tokens(&self, i: usize) -> u64 {
        self.0.message_of_tokens(i)
    }
    fn call_arguments(&self, i: usize) -> Option<std::sync::Arc<[crate::plan::prune::CallArguments]>> {
        self.0.call_arguments(i)
    }
    fn entry_bytes(&self, i: usize) -> Option<&[u8]> {
        self.0.entry_bytes(i)
    }
    fn has_message(&self, i: usize) -> bool {
        self.0.has_message(i)
    }
}
