// Types of every entry of session-compaction (the build copies this file to index.d.cts and points
// index.*.d.mts/.d.cts at it): the engine's API is generated from the Rust crate by wasm-bindgen;
// init/initSync are the package's own.
export * from './node/session_compaction.js';

/**
 * `WebAssembly.Module` where the environment's types declare it (the DOM lib, Deno, Bun);
 * `never` with Node-only types (@types/node has no `WebAssembly`), so this file needs no lib.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } }
  ? M
  : never;

/** What {@link init} can load the WebAssembly module from. */
export type InitInput = string | URL | Request | Response | ArrayBuffer | ArrayBufferView | WasmModule;

/**
 * Instantiates the WebAssembly module. On the web entry (browsers, bundlers, Deno, and
 * `session-compaction/web` anywhere) it must be awaited before any other call: until then every
 * engine function throws an `Error` with `code === "E_NOT_INITIALIZED"`. Idempotent: later and
 * concurrent calls return the same promise. Without an argument the `.wasm` file shipped next to
 * the entry is read from disk (`file:` URLs: Node, Deno, Bun) or fetched (browsers).
 * On the Node entry (Node.js and Bun by default) it is a no-op that resolves at once.
 */
export declare function init(input?: InitInput | Promise<InitInput>): Promise<void>;

/**
 * Synchronous {@link init} from the `.wasm` bytes or a compiled `WebAssembly.Module`
 * (a no-op on the Node entry and once initialized).
 */
export declare function initSync(module: ArrayBuffer | ArrayBufferView | WasmModule): void;

/** Code of the error thrown by the web entry when it is used before {@link init} finished. */
export type NotInitializedCode = 'E_NOT_INITIALIZED';
