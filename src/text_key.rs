//! Hash-map keys over the session's own texts (tool-call ids, tool names, tool-call arguments,
//! paths), shared by the staleness rule (SPEC §13.6) and the provider-valid check (SPEC §13.1):
//! one fast hasher and one byte comparison, so the map's code is compiled once for both.

use std::collections::HashMap;

/// A hash map with the fast hasher (keys are the session's own ids and texts).
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// An empty [`FastMap`] with room for `n` keys.
pub(crate) fn sized<K, V>(n: usize) -> FastMap<K, V> {
    FastMap::with_capacity_and_hasher(n, Default::default())
}

/// Whether two texts are the same bytes, compared eight bytes at a time (the texts compared
/// here are short names and ids, or tool-call arguments of a few hundred bytes; the module's
/// `memcmp` on wasm compares one byte at a time).
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |w: &[u8]| w.try_into().map_or(0, u64::from_ne_bytes);
    (&mut x).zip(&mut y).all(|(p, q)| word(p) == word(q))
        && x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

/// A text as a hash-map key, compared by [`same_bytes`].
#[derive(Clone, Copy)]
pub(crate) struct TextKey<'a>(pub(crate) &'a [u8]);

impl PartialEq for TextKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        same_bytes(self.0, other.0)
    }
}

impl Eq for TextKey<'_> {}

impl std::hash::Hash for TextKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0);
    }
}
