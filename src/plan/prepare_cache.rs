//! `prepareCompaction` on a branch that grows at its end between calls: the same decision as
//! [`super::prepare::prepare_compaction_refs`], with the one search over the whole branch (where
//! the previous compaction's kept region starts, SPEC §12.1) made once per compaction and kept
//! from call to call, so that a call after appending entries costs O(appended entries) plus the
//! work on the region since the latest compaction. SPEC §5, §12.1–§12.3.

use super::prepare::{
    kept_start_by, plan_compaction_with, preparation_refs_of, CompactionPreparation, CompactionSettings, MessageRef,
};
use crate::entry::EntrySource;
use std::cell::Cell;

/// What [`PrepareCache::prepare_refs`] keeps between calls on one branch (root first).
///
/// Use: [`PrepareCache::sync`] with the number of leading entries unchanged since the last call
/// (the caller knows: the same objects), then [`PrepareCache::prepare_refs`]. The result always
/// equals [`super::prepare::prepare_compaction_refs`] of the same branch (tested by
/// `tests/pure.rs`).
#[derive(Debug, Default)]
pub struct PrepareCache {
    /// The last compaction position asked about and its [`kept_start`]: it depends only on the
    /// entries up to that position, so it holds while they are unchanged.
    kept: Cell<Option<(usize, usize)>>,
}

impl PrepareCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the cache to `path`, of which the first `unchanged` entries are those of the last
    /// call: what depended on a later entry is dropped.
    pub fn sync<S: EntrySource + ?Sized>(&mut self, path: &S, unchanged: usize) {
        if let Some((p, _)) = self.kept.get() {
            if p >= unchanged.min(path.len()) {
                self.kept.set(None);
            }
        }
    }

    /// [`super::prepare::kept_start`] of the compaction at `p`, from the cache when it was
    /// asked before (else searched by `find`, see [`kept_start_by`]).
    pub fn kept_start(&self, path: &dyn EntrySource, p: usize, find: &dyn Fn(&str, usize) -> Option<usize>) -> usize {
        match self.kept.get() {
            Some((q, k)) if q == p => k,
            _ => {
                let k = kept_start_by(path, p, find);
                self.kept.set(Some((p, k)));
                k
            }
        }
    }

    /// [`super::prepare::prepare_compaction_refs`] of `path`, the branch of the last
    /// [`PrepareCache::sync`].
    pub fn prepare_refs(
        &mut self,
        path: &dyn EntrySource,
        settings: &CompactionSettings,
    ) -> Option<(CompactionPreparation, [Vec<MessageRef>; 3])> {
        self.prepare_refs_by(path, settings, &|id, p| (0..p).find(|&i| path.head(i).id.as_deref() == Some(id)))
    }

    /// [`PrepareCache::prepare_refs`] with the search of the previous compaction's kept entry
    /// answered by `find` (see [`kept_start_by`]).
    pub fn prepare_refs_by(
        &mut self,
        path: &dyn EntrySource,
        settings: &CompactionSettings,
        find: &dyn Fn(&str, usize) -> Option<usize>,
    ) -> Option<(CompactionPreparation, [Vec<MessageRef>; 3])> {
        let plan = plan_compaction_with(path, settings, &|p| self.kept_start(path, p, find))?;
        preparation_refs_of(path, settings, plan)
    }
}
