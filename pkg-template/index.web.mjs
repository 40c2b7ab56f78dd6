/* @ts-self-types="./index.d.ts" */
// session-compaction, ES-module entry for browsers, Deno, Bun, bundlers and workers.
// (The line above points Deno at the package's declarations when this file is imported by path.)
//
// The WebAssembly module is instantiated by `await init()` (idempotent). Until it has finished,
// every export of the engine throws an Error with `code === "E_NOT_INITIALIZED"` instead of
// failing somewhere inside the generated glue. That includes the two constants
// DEFAULT_COMPACTION_SETTINGS and DEFAULT_PRUNE_CONFIG, which come from the module: they are
// live bindings that init() fills with frozen objects; before that they hold a placeholder whose
// every property access throws E_NOT_INITIALIZED (and which, once initialized, reads as the same
// frozen values, so a reference taken early keeps working).
import * as raw from './web/session_compaction.js';

let ready = false;

/**
 * Instantiates the WebAssembly module. Without an argument it loads `web/session_compaction_bg.wasm`
 * next to this file: read from disk when this module is a `file:` URL (Node, Deno, Bun), fetched
 * otherwise (browsers; served as `application/wasm` it is compiled while streaming). Pass the
 * bytes, a `WebAssembly.Module`, a `Response` or a URL to load it some other way.
 * Calling it again (also concurrently) returns the same promise; later arguments are ignored.
 * When the file cannot be had (HTTP error, an HTML page instead of the file, a missing file, no
 * read permission, no `import.meta.url`), it rejects with `code === "E_WASM_NOT_FOUND"` and a
 * message that names where it looked and how to pass the file instead.
 */
export function init(input) {
  return ready ? Promise.resolve() : initWeb(input);
}

/** init()'s one initialization (shared/wasm-file.js initOnce). */
const initWeb = initOnce(async (input) => {
  const given = await input;
  const source = given === undefined ? await load(defaultUrl()) : await loadIfLocation(given, import.meta.url);
  await instantiate(raw, source, false);
  markReady();
});

/** Synchronous variant of {@link init} for hosts that already hold the bytes or a Module. */
export function initSync(module) {
  if (ready) return;
  if (module === undefined || module === null) {
    throw new TypeError(
      'initSync(module) needs the .wasm bytes or a WebAssembly.Module; `await init()` loads the file itself',
    );
  }
  instantiate(raw, module, true);
  markReady();
}

/** Runs once the module is instantiated: fills the constants, then opens the guard. */
function markReady() {
  DEFAULT_COMPACTION_SETTINGS = fillPlaceholder(compactionSettingsTarget, raw.defaultCompactionSettings());
  DEFAULT_PRUNE_CONFIG = fillPlaceholder(pruneConfigTarget, raw.defaultPruneConfig());
  ready = true;
}

/**
 * Where the .wasm lies by default: beside this file. Written as this exact `new URL('…',
 * import.meta.url)` expression because Vite, webpack and Rollup's import-meta-assets plugin
 * recognise it and emit the file. Computed on first use: a runtime without `import.meta.url`
 * (Cloudflare Workers) can still import this module and pass the wasm module to init().
 */
function defaultUrl() {
  try {
    return new URL('./web/session_compaction_bg.wasm', import.meta.url);
  } catch (cause) {
    throw wasmNotFound(
      'this module has no URL of its own (`import.meta.url` is not set, as in Cloudflare Workers)',
      cause,
    );
  }
}

function notInitialized(name) {
  const error = new Error(
    `session-compaction: \`${name}\` was used before the WebAssembly module was initialized; ` +
      'call `await init()` (or `initSync(bytes)`) first',
  );
  error.name = 'NotInitializedError';
  error.code = 'E_NOT_INITIALIZED';
  return error;
}

/**
 * Wraps an exported function or class so that calling it, constructing it or calling one of its
 * static methods throws E_NOT_INITIALIZED until init() has finished. The wrapper is a Proxy of
 * the original: `name`, `length`, `prototype` and `instanceof` behave as the original's, and
 * after initialization every call goes straight through.
 */
// biome-ignore lint/correctness/noUnusedVariables: build.mjs appends the export lines that call it
function guard(name, value) {
  if (typeof value !== 'function') return value;
  return new Proxy(value, {
    apply(target, thisArg, args) {
      if (!ready) throw notInitialized(name);
      return Reflect.apply(target, thisArg, args);
    },
    construct(target, args, newTarget) {
      if (!ready) throw notInitialized(name);
      return Reflect.construct(target, args, newTarget);
    },
    get(target, property, receiver) {
      const member = Reflect.get(target, property, receiver);
      if (ready || typeof member !== 'function' || property === 'prototype' || !Object.hasOwn(target, property)) {
        return member;
      }
      return () => {
        throw notInitialized(`${name}.${String(property)}`);
      };
    },
  });
}

// The E_FREED guard, isSessionCompactionError, SessionTree.fromFile and the per-turn cache check:
// pkg-template/shared/freed-guard.js, errors.js, from-file.js and pure.js, inlined here by scripts/build.mjs.
// @generated-freed-guard

export { isSessionCompactionError };

// The guard, inspect, fromFile and Symbol.dispose (shared/freed-guard.js); Node's fs where this
// entry runs in Node or Bun (process.getBuiltinModule), Deno's API otherwise.
setUpGlue(raw, () => globalThis.process?.getBuiltinModule?.('node:fs'));

/** prepareCompaction and buildSessionContext with the per-turn cache check (shared/pure.js). */
// biome-ignore lint/correctness/noUnusedVariables: build.mjs appends the export lines that use it
const perTurn = perTurnFunctions(raw);

/** Freezes a JSON-like value and everything in it. */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/**
 * A stand-in for a constant that only exists once the module is initialized: every operation on
 * it throws E_NOT_INITIALIZED until then. `fillPlaceholder` later copies the real values into
 * its target and freezes it, after which the proxy reads exactly as the frozen object.
 */
function placeholder(name, target) {
  const check = () => {
    if (!ready) throw notInitialized(name);
  };
  const handler = {};
  for (const trap of Object.getOwnPropertyNames(Reflect)) {
    handler[trap] = (...args) => {
      check();
      return Reflect[trap](...args);
    };
  }
  return new Proxy(target, handler);
}

function fillPlaceholder(target, values) {
  if (!Object.isFrozen(target)) Object.freeze(Object.assign(target, deepFreeze(values)));
  // The live binding gets a plain frozen copy (cheaper than the proxy, and structured-cloneable).
  return deepFreeze({ ...target });
}

const compactionSettingsTarget = {};
const pruneConfigTarget = {};

/**
 * The default compaction settings (`{enabled, reserveTokens, keepRecentTokens}`), frozen.
 * Filled by init(); before that every property access throws E_NOT_INITIALIZED.
 */
export let DEFAULT_COMPACTION_SETTINGS = placeholder('DEFAULT_COMPACTION_SETTINGS', compactionSettingsTarget);
/**
 * The default pruning configuration (`{protectTokens, minimumSavings, protectedTools}`),
 * frozen. Filled by init(); before that every property access throws E_NOT_INITIALIZED.
 */
export let DEFAULT_PRUNE_CONFIG = placeholder('DEFAULT_PRUNE_CONFIG', pruneConfigTarget);

// @generated-exports
