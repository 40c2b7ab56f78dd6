'use strict';
// session-compaction, Node.js entry (require; index.node.mjs re-exports it for import, so both
// share one WebAssembly instance). The module is compiled and instantiated synchronously when
// this file is first loaded: nothing to await. `init()` and `initSync()` exist as no-ops so that
// code written for every runtime can call them unconditionally.
const api = require('./node/session_compaction.js');

module.exports = {
  ...api,
  /** Already initialized in Node: resolves at once. */
  init: () => Promise.resolve(),
  /** Already initialized in Node: does nothing. */
  initSync: () => {},
};
