// Inlined by scripts/build.mjs into both entries: the per-turn pure functions' cache check.
// A host calls prepareCompaction(branch) and buildSessionContext(entries) after every turn on
// lists that mostly hold the objects of its last call plus one or two new entries. For each of
// the two functions this keeps (a copy of) the list of its last successful call and counts how
// many leading elements of the new list are the very same objects (`===`); the engine kept their
// metadata and its work on them, and reads only the rest. Everything the functions decide is
// decided by the engine (`prepareCompaction`, `buildSessionContext` in bindings/wasm/src/api.rs,
// given the count as a third argument); this only compares object identities. The copies keep the objects
// of the last call alive until the next call of the same function.

/** How many leading elements of `list` are the objects of `last` (0 when either is not an array). */
function unchangedPrefix(last, list) {
  let i = 0;
  try {
    if (last === null || !Array.isArray(list)) return 0;
    const n = Math.min(last.length, list.length);
    while (i < n && list[i] === last[i]) i++;
  } catch {
    // A Proxy that throws (revoked, or from a trap): nothing is known; the engine reports the error.
    return 0;
  }
  return i;
}

/**
 * The copy of `list` to compare the next call's list with (`null` when it cannot be taken):
 * `last` itself with the elements from `unchanged` on written over (O(new elements)), or a new
 * copy when there is no `last`.
 */
function remember(last, list, unchanged) {
  try {
    if (!Array.isArray(list)) return null;
    if (last === null) return Array.prototype.slice.call(list);
    const n = list.length;
    for (let i = unchanged; i < n; i++) last[i] = list[i];
    last.length = n;
    return last;
  } catch {
    return null;
  }
}

/**
 * The two per-turn functions over the glue `raw`, one pair per glue instance: the engine keeps
 * its work of the last call per function in that instance, so both entries of one process (which
 * share the glue) must share the lists it is compared against too. Kept on the glue's
 * `SessionTree` class under a registered symbol, since each entry has its own copy of this code.
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries call it once scripts/build.mjs has inlined this file
function perTurnFunctions(raw) {
  const key = Symbol.for('session-compaction.perTurn');
  if (!Object.hasOwn(raw.SessionTree, key)) {
    Object.defineProperty(raw.SessionTree, key, { value: newPerTurnFunctions(raw) });
  }
  return raw.SessionTree[key];
}

/** prepareCompaction and buildSessionContext with their own last lists (see perTurnFunctions). */
function newPerTurnFunctions(raw) {
  let lastPath = null;
  let lastEntries = null;
  return {
    prepareCompaction: function prepareCompaction(pathEntries, settings) {
      const unchanged = unchangedPrefix(lastPath, pathEntries);
      const last = lastPath;
      lastPath = null;
      const result = raw.prepareCompaction(pathEntries, settings, unchanged);
      lastPath = remember(last, pathEntries, unchanged);
      return result;
    },
    buildSessionContext: function buildSessionContext(entries, leafId) {
      const unchanged = unchangedPrefix(lastEntries, entries);
      const last = lastEntries;
      lastEntries = null;
      const result = raw.buildSessionContext(entries, leafId, unchanged);
      lastEntries = remember(last, entries, unchanged);
      return result;
    },
  };
}
