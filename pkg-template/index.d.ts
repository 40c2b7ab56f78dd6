// Types of every entry of session-compaction (the build copies this file to index.d.cts and points
// index.*.d.mts/.d.cts at it): the engine's API is generated from the Rust crate by wasm-bindgen;
// init/initSync are the package's own.
export * from './node/session_compaction.js';

import type { CompactionSettings, ErrorCode, ParseSessionOptions, PruneConfig } from './node/session_compaction.js';

declare module './node/session_compaction.js' {
  namespace SessionTree {
    /**
     * Loads a session file (SPEC §1) by reading it straight into WebAssembly memory: the engine
     * allocates exactly the file's size and the runtime reads the file into that memory, so the
     * host never holds a copy (peak memory about one file size less than `readFileSync` +
     * `fromBytes`). Then the same as {@link SessionTree.fromBytes} (lenient unless
     * `{strict: true}`; bad lines in `loadErrors`). Node, Bun and Deno (with read permission);
     * `path` is a file path or a `file:` URL.
     * @throws `E_FILE` when the file cannot be read (missing, unreadable, a directory) or the
     * runtime has no file system (browsers, Workers: read the bytes and use `fromBytes`), with
     * the runtime's error as `cause`; otherwise the errors of `fromBytes`.
     */
    function fromFile(path: string | URL, options?: ParseSessionOptions): SessionTree;
  }
}

/**
 * `WebAssembly.Module` where the environment's types declare it (the DOM lib, Deno, Bun);
 * `never` with Node-only types (@types/node has no `WebAssembly`), so this file needs no lib.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** What {@link init} can load the WebAssembly module from. */
export type InitInput = string | URL | Request | Response | ArrayBuffer | ArrayBufferView | WasmModule;

/**
 * Instantiates the WebAssembly module. On the web entry (browsers, bundlers, Deno, and
 * `session-compaction/web` anywhere) it must be awaited before any other call: until then every
 * engine function throws an `Error` with `code === "E_NOT_INITIALIZED"`. Idempotent: later and
 * concurrent calls return the same promise. Without an argument the `.wasm` file shipped next to
 * the entry is read from disk (`file:` URLs: Node, Deno, Bun) or fetched (browsers); a string,
 * `URL` or `Request` argument is loaded the same way (relative strings: to the page in a browser).
 * When the file cannot be had (an HTTP error, an HTML page instead of the file, a missing or
 * unreadable file, no `import.meta.url` as in Cloudflare Workers) it rejects with
 * `code === "E_WASM_NOT_FOUND"`; the message names where it looked and how to pass the file
 * (the README's "Runtimes and bundlers" says what each bundler needs).
 * On the Node entry (Node.js and Bun by default) it is not needed: the first engine call reads
 * the `.wasm` beside the entry. Without an argument it resolves at once, except on a Node.js
 * without `process.getBuiltinModule` (before 20.16 and 22.3): there it imports `node:fs`, which
 * the first call needs, and must be awaited first (the first call throws `E_NOT_INITIALIZED`
 * otherwise). With an argument (the bytes, a `WebAssembly.Module`, a `Response`, a file path or
 * URL) it instantiates the module from it, for a bundle that does not keep the file beside it;
 * when the file is missing the first call throws `E_WASM_NOT_FOUND` naming it and this fix.
 * Both entries of one process share one module instance (the web entry still needs its own
 * `init()` before its first call).
 */
export declare function init(input?: InitInput | Promise<InitInput>): Promise<void>;

/**
 * Synchronous {@link init} from the `.wasm` bytes or a compiled `WebAssembly.Module`; a no-op once
 * the module is instantiated. On the Node entry it is only needed by a bundle that does not keep
 * the file beside it (e.g. an esbuild bundle with `loader: { '.wasm': 'binary' }`:
 * `import wasm from 'session-compaction/session_compaction_bg.wasm'; initSync(wasm);`).
 */
export declare function initSync(module: ArrayBuffer | ArrayBufferView | WasmModule): void;

/** Code of the error thrown by the web entry when it is used before {@link init} finished. */
export type NotInitializedCode = 'E_NOT_INITIALIZED';

/**
 * The errors the engine throws: a JS `Error` whose `code` is one of the stable {@link ErrorCode}s
 * and whose message names the line or entry id concerned (`name` is `"SessionCompactionError"`,
 * or `"NotInitializedError"` for `E_NOT_INITIALIZED`). Narrow a caught value with
 * {@link isSessionCompactionError}.
 */
export interface SessionCompactionError extends Error {
  code: ErrorCode;
}

/**
 * Whether a caught value is an error of session-compaction: an `Error` named
 * `"SessionCompactionError"` (or `"NotInitializedError"`) with an `E_…` `code`. Narrows it to
 * {@link SessionCompactionError}. Exported by every entry; works before `init()` on the web entry.
 */
export declare function isSessionCompactionError(error: unknown): error is SessionCompactionError;

/** Type of {@link DEFAULT_COMPACTION_SETTINGS}: the three core settings are always present. */
export type DefaultCompactionSettings = Readonly<
  CompactionSettings & Required<Pick<CompactionSettings, 'enabled' | 'reserveTokens' | 'keepRecentTokens'>>
>;

/** Type of {@link DEFAULT_PRUNE_CONFIG}. */
export type DefaultPruneConfig = Readonly<Required<PruneConfig>>;

/**
 * The default compaction settings, `{enabled: true, reserveTokens: 16384, keepRecentTokens: 20000}`
 * (SPEC §5), deeply frozen; what `prepareCompaction` and `shouldCompact` use when no settings are
 * given. On the web entry the value is filled by {@link init}: before that, reading a property
 * throws an `Error` with `code === "E_NOT_INITIALIZED"`.
 */
export declare const DEFAULT_COMPACTION_SETTINGS: DefaultCompactionSettings;

/**
 * The default pruning configuration, `{protectTokens: 40000, minimumSavings: 20000,
 * protectedTools: ["skill", "read"], staleness: true}` (SPEC §7, §13.6), deeply frozen; what `pruneToolOutputs` uses when
 * no config is given. On the web entry the value is filled by {@link init}: before that, reading
 * a property throws an `Error` with `code === "E_NOT_INITIALIZED"`.
 */
export declare const DEFAULT_PRUNE_CONFIG: DefaultPruneConfig;

// `SessionTree` implements `[Symbol.dispose]()` (it calls `free()`), so `using tree = ...` frees
// its wasm memory at the end of the scope. Declares the symbol for hosts whose `lib` predates
// it (the same declaration as lib.esnext.disposable and @types/node, so they merge).
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}
