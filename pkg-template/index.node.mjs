// session-compaction, Node.js entry (`import`; index.node.cjs hands this same module to `require`
// through Node's require(esm), so both share one WebAssembly instance and one SessionTree class).
// An ES module that loads no CommonJS (the CommonJS loader's first use in a process costs ~1.5–2 ms)
// and imports no built-in module (a first `import … from 'node:fs'` costs about as much; Node's
// `fs` comes from process.getBuiltinModule instead). The engine comes from the web entry's glue
// (wasm-bindgen's --target web output, the package's one glue), imported with a `?node` suffix so
// that it is a module instance of its own: the web entry (`session-compaction/web`) used in the
// same process keeps its own instance, its own init() and its own per-turn state, as it has always
// had. Loading this file compiles nothing: the glue (patched by scripts/build.mjs, firstUseHook)
// runs the hook set below on the first engine call, which reads web/*.wasm (the package's only
// copy) and compiles and instantiates it synchronously, so there is nothing to await. `init()` and
// `initSync()` exist as no-ops so that code written for every runtime can call them
// unconditionally; only on a Node.js without process.getBuiltinModule (before 20.16 and 22.3)
// does `await init()` do something: it imports `node:fs`, which the first call then needs.
import * as raw from './web/session_compaction.js?node';

/** Node's `fs` as init() imported it where process.getBuiltinModule is missing. */
let importedFs = null;
const nodeFs = () => globalThis.process?.getBuiltinModule?.('node:fs') ?? importedFs;

raw.__onFirstUse(() => {
  const fs = nodeFs();
  if (!fs) {
    const error = new Error(
      `session-compaction: this Node.js (${globalThis.process?.version}) has no process.getBuiltinModule ` +
        '(Node.js >= 20.16 or >= 22.3), so the module cannot read its WebAssembly file on first use: ' +
        'call `await init()` once before the first call',
    );
    error.name = 'NotInitializedError';
    error.code = 'E_NOT_INITIALIZED';
    throw error;
  }
  raw.initSync({ module: fs.readFileSync(new URL('./web/session_compaction_bg.wasm', import.meta.url)) });
});

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

export { isSessionCompactionError };

// The guard, inspect, fromFile and Symbol.dispose (shared/freed-guard.js).
setUpClasses(raw, nodeFs);

/** prepareCompaction and buildSessionContext with the per-turn cache check (shared/pure.js). */
// biome-ignore lint/correctness/noUnusedVariables: build.mjs appends the export lines that use it
const perTurn = perTurnFunctions(raw);

// DEFAULT_COMPACTION_SETTINGS (`{enabled, reserveTokens, keepRecentTokens}`) and
// DEFAULT_PRUNE_CONFIG (`{protectTokens, minimumSavings, protectedTools}`), frozen: the values of
// defaultCompactionSettings() and defaultPruneConfig(), written here by the build so that loading
// this file does not instantiate the module.
// @generated-defaults

/**
 * Nothing to do in Node (resolves at once), except where process.getBuiltinModule is missing:
 * there it imports `node:fs` for the first call (see the top of this file).
 */
export const init = async () => {
  if (nodeFs() === null) importedFs = (await import('node:fs')).default;
};
/** Already initialized in Node: does nothing. */
export const initSync = () => {};

// The engine's exports (the glue's own `__…` ones, used by shared/pure.js, are not the package's API).
// @generated-exports
