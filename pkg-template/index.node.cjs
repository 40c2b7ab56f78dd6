'use strict';
// session-compaction, Node.js entry for `require`: the ES module index.node.mjs itself, loaded
// through Node's require(esm) (unflagged in Node.js ^20.19.0 and >=22.12.0; Bun has it), so that
// `require` and `import` share one module instance, one WebAssembly instance and one SessionTree
// class. On a Node.js without require(esm) this throws an Error with code ERR_REQUIRE_ESM (the
// code Node itself gives a require() of an ES module, which loaders that fall back to `import()`
// look for) saying which versions can `require` the package; `import` works on every Node.js ≥ 20.
if (process.features?.require_module !== true) {
  const error = new Error(
    `session-compaction: require() of this package needs Node.js ^20.19.0 or >=22.12.0 (require() of ES modules; ` +
      `this is Node.js ${process.version}${process.features?.require_module === false ? ', where it is turned off' : ''}). ` +
      "`import` works on every Node.js >= 20: `import { SessionTree } from 'session-compaction'` " +
      "or `const { SessionTree } = await import('session-compaction')`.",
  );
  error.code = 'ERR_REQUIRE_ESM';
  throw error;
}
module.exports = require('./index.node.mjs');
