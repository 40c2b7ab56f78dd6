'use strict';
// session-compaction, Node.js entry (require; index.node.mjs re-exports it for import, so both
// share one WebAssembly instance). Loading it compiles nothing: the module (web/*.wasm, the
// package's only copy) is compiled and instantiated synchronously by the first engine call,
// so there is nothing to await. `init()` and `initSync()` exist as no-ops so that code written
// for every runtime can call them unconditionally.
// `api`: the engine's exports, from wasm-bindgen's CommonJS glue, which the build writes here
// rather than shipping it as a module of its own (one file for Node to resolve, read and compile).
// @generated-node-glue

/** Freezes a JSON-like value and everything in it. */
// biome-ignore lint/correctness/noUnusedVariables: build.mjs appends the constants that call it
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

// The E_FREED guard, isSessionCompactionError, SessionTree.fromFile and the per-turn cache check:
// pkg-template/shared/freed-guard.js, errors.js, from-file.js and pure.js, inlined here by scripts/build.mjs.
// @generated-freed-guard

guardFreed(api.SessionTree.prototype);
addInspect(api.SessionTree, (tree) => ({
  entryCount: tree.entryCount,
  leafId: tree.leafId,
  sourceVersion: tree.sourceVersion,
  migrated: tree.migrated,
  loadErrors: tree.loadErrors.length,
}));
addInspect(api.PruneOutcome, (outcome) => outcome.toJSON());
addFromFile(api.SessionTree, () => require('node:fs'));

// `using tree = SessionTree.fromJsonl(...)`: the generated class defines Symbol.dispose when the
// runtime had the symbol at load time; add it if the symbol exists and the class still lacks it.
if (typeof Symbol.dispose === 'symbol' && typeof api.SessionTree.prototype[Symbol.dispose] !== 'function') {
  api.SessionTree.prototype[Symbol.dispose] = function dispose() {
    this.free();
  };
}

// DEFAULT_COMPACTION_SETTINGS (`{enabled, reserveTokens, keepRecentTokens}`) and
// DEFAULT_PRUNE_CONFIG (`{protectTokens, minimumSavings, protectedTools}`), frozen: the values of
// defaultCompactionSettings() and defaultPruneConfig(), written here by the build so that loading
// this file does not instantiate the module.
// @generated-defaults

// The package's API: the module's exports but the glue's own (`__…`, used by shared/pure.js).
const publicApi = Object.fromEntries(Object.entries(api).filter(([name]) => !name.startsWith('__')));

module.exports = {
  ...publicApi,
  // prepareCompaction and buildSessionContext with the per-turn cache check (shared/pure.js).
  ...perTurnFunctions(api),
  DEFAULT_COMPACTION_SETTINGS,
  DEFAULT_PRUNE_CONFIG,
  isSessionCompactionError,
  /** Already initialized in Node: resolves at once. */
  init: () => Promise.resolve(),
  /** Already initialized in Node: does nothing. */
  initSync: () => {},
};
