//! `prepareCompaction` on a branch that grows at its end between calls: the same decision as
//! [`super::prepare::prepare_compaction_refs`], with the one search over the whole branch (the
//! previous compaction's `firstKeptEntryId`, SPEC §12.1) answered by an id index kept from call
//! to call, so that a call after appending entries costs O(appended entries) plus the work on
//! the region since the latest compaction. SPEC §5, §12.1–§12.3.

use super::prepare::{
    plan_compaction_with, preparation_refs_of, CompactionPreparation, CompactionSettings, MessageRef,
};
use crate::entry::EntrySource;
use std::collections::HashMap;

/// The id index of a branch (root first) kept between [`PrepareCache::prepare_refs`] calls.
///
/// Use: [`PrepareCache::sync`] with the number of leading entries unchanged since the last call
/// (the caller knows: the same objects), then [`PrepareCache::prepare_refs`]. The result always
/// equals [`super::prepare::prepare_compaction_refs`] of the same branch (tested by
/// `tests/pure.rs`).
#[derive(Debug, Default)]
pub struct PrepareCache {
    /// Each id on the branch → its first position.
    first: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Branch entries indexed.
    len: usize,
}

impl PrepareCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the index to `path`, of which the first `unchanged` entries are those of the last
    /// call: a longer indexed prefix is dropped and rebuilt, then the entries after it are indexed.
    pub fn sync<S: EntrySource + ?Sized>(&mut self, path: &S, unchanged: usize) {
        if unchanged < self.len || path.len() < self.len {
            *self = Self::default();
        }
        for i in self.len..path.len() {
            if let Some(id) = path.meta(i).id.as_deref() {
                if !self.first.contains_key(id) {
                    self.first.insert(id.to_string(), i);
                }
            }
        }
        self.len = path.len();
    }

    /// [`super::prepare::kept_start`] from the index: the first position of the compaction at
    /// `p`'s `firstKeptEntryId` before `p`, or `p + 1`.
    pub fn kept_start<S: EntrySource + ?Sized>(&self, path: &S, p: usize) -> usize {
        let kept = path.meta(p).first_kept_entry_id.as_deref();
        kept.and_then(|id| self.first.get(id).copied()).filter(|&i| i < p).unwrap_or(p + 1)
    }

    /// [`super::prepare::prepare_compaction_refs`] of `path`, the branch of the last
    /// [`PrepareCache::sync`] (re-indexed first when its length differs).
    pub fn prepare_refs<S: EntrySource + ?Sized>(
        &mut self,
        path: &S,
        settings: &CompactionSettings,
    ) -> Option<(CompactionPreparation, [Vec<MessageRef>; 3])> {
        if self.len != path.len() {
            *self = Self::default();
            self.sync(path, 0);
        }
        let plan = plan_compaction_with(path, settings, |p| self.kept_start(path, p))?;
        preparation_refs_of(path, settings, plan)
    }
}
