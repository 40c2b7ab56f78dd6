'use strict';
// session-compaction, Node.js entry (require; index.node.mjs re-exports it for import, so both
// share one WebAssembly instance). The module is compiled and instantiated synchronously when
// this file is first loaded: nothing to await. `init()` and `initSync()` exist as no-ops so that
// code written for every runtime can call them unconditionally.
const api = require('./node/session_compaction.js');

/** Freezes a JSON-like value and everything in it. */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

// `using tree = SessionTree.fromJsonl(...)`: the generated class defines Symbol.dispose when the
// runtime had the symbol at load time; add it if the symbol exists and the class still lacks it.
if (typeof Symbol.dispose === 'symbol' && typeof api.SessionTree.prototype[Symbol.dispose] !== 'function') {
  api.SessionTree.prototype[Symbol.dispose] = function dispose() {
    this.free();
  };
}

module.exports = {
  ...api,
  /** The default compaction settings (`{enabled, reserveTokens, keepRecentTokens}`), frozen. */
  DEFAULT_COMPACTION_SETTINGS: deepFreeze(api.defaultCompactionSettings()),
  /** The default pruning configuration (`{protectTokens, minimumSavings, protectedTools}`), frozen. */
  DEFAULT_PRUNE_CONFIG: deepFreeze(api.defaultPruneConfig()),
  /** Already initialized in Node: resolves at once. */
  init: () => Promise.resolve(),
  /** Already initialized in Node: does nothing. */
  initSync: () => {},
};
