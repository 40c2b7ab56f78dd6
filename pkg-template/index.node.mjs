// session-compaction, Node.js entry (`import`; index.node.cjs hands this same module to `require`
// through Node's require(esm), so both share one WebAssembly instance and one SessionTree class).
// An ES module that loads no CommonJS (the CommonJS loader's first use in a process costs ~1.5–2 ms)
// and imports no built-in module (a first `import … from 'node:fs'` costs about as much; Node's
// `fs` comes from process.getBuiltinModule instead). The engine comes from the web entry's glue
// (wasm-bindgen's --target web output, the package's one glue), the same module instance as the
// web entry's (`session-compaction/web`) when both are used in one process: one WebAssembly
// instance, one SessionTree class and one per-turn state, each entry with its own init() rules.
// The plain path (no query, no second copy) is what every bundler resolves, also for Node.js
// targets. Loading this file compiles nothing: the glue (patched by scripts/build.mjs,
// firstUseHook) runs the hook set below on the first engine call, which reads web/*.wasm (the
// package's only copy) and compiles and instantiates it synchronously, so there is nothing to
// await. A bundle that does not keep that file beside it passes the .wasm first with
// `initSync(bytesOrModule)` or `await init(urlOrBytesOrModule)`; without an argument both are
// no-ops, so that code written for every runtime can call them unconditionally. Only on a
// Node.js without process.getBuiltinModule (before 20.16 and 22.3) does `await init()` do
// something then: it imports `node:fs`, which the first call needs.
import * as raw from './web/session_compaction.js';

/** Node's `fs` as init() imported it where process.getBuiltinModule is missing. */
let importedFs = null;
const nodeFs = () => globalThis.process?.getBuiltinModule?.('node:fs') ?? importedFs;

/**
 * Where the .wasm lies by default: beside this file. Written as this exact `new URL('…',
 * import.meta.url)` expression because webpack and Rollup's import-meta-assets plugin recognise
 * it and emit the file into a bundle.
 */
const defaultUrl = () => new URL('./web/session_compaction_bg.wasm', import.meta.url);

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
  let bytes;
  const url = defaultUrl();
  try {
    bytes = fs.readFileSync(url);
  } catch (cause) {
    // Typically a bundle that left the file behind (esbuild, Rollup without the assets plugin).
    throw wasmNotFound(`could not read ${url.href} (${cause?.message ?? cause})`, cause);
  }
  instantiate(raw, bytes, true);
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
setUpGlue(raw, nodeFs);

/** prepareCompaction and buildSessionContext with the per-turn cache check (shared/pure.js). */
// biome-ignore lint/correctness/noUnusedVariables: build.mjs appends the export lines that use it
const perTurn = perTurnFunctions(raw);

// DEFAULT_COMPACTION_SETTINGS (`{enabled, reserveTokens, keepRecentTokens}`) and
// DEFAULT_PRUNE_CONFIG (`{protectTokens, minimumSavings, protectedTools}`), frozen: the values of
// defaultCompactionSettings() and defaultPruneConfig(), written here by the build so that loading
// this file does not instantiate the module.
// @generated-defaults

/**
 * Without an argument: nothing to do in Node (resolves at once; the first call reads the file),
 * except where process.getBuiltinModule is missing: there it imports `node:fs` for the first call
 * (see the top of this file). With the `.wasm` (its bytes, a `WebAssembly.Module`, a `Response`,
 * a file path or URL, or a promise of one): instantiates the module from it, for bundles that do
 * not keep the file beside them. Once the module is instantiated (by an earlier call, or by the
 * first engine call) later arguments are ignored. Errors: `E_WASM_NOT_FOUND` (an unreadable
 * location, an HTTP error, bytes that are not the module).
 */
export const init = (input) => {
  if (input === undefined || input === null) {
    return nodeFs() !== null
      ? Promise.resolve()
      : import('node:fs').then((fs) => {
          importedFs = fs.default;
        });
  }
  return initFrom(input);
};

/** init(input)'s one initialization from what it is given (shared/wasm-file.js initOnce). */
const initFrom = initOnce(async (input) => {
  await instantiate(raw, await loadIfLocation(await input, import.meta.url), false);
});

/**
 * Instantiates the module from the `.wasm` bytes or a `WebAssembly.Module` (a bundle's copy);
 * without an argument, or once the module is instantiated, does nothing (the first call reads
 * the file beside this entry).
 */
export const initSync = (module) => {
  if (module !== undefined && module !== null) instantiate(raw, module, true);
};

// The engine's exports (the glue's own `__…` ones, used by shared/pure.js, are not the package's API).
// @generated-exports
