// Inlined by scripts/build.mjs into both entries (after from-file.js), like freed-guard.js: the
// one copy of how an entry gets the .wasm from what init() is given, and of the E_WASM_NOT_FOUND
// error. Not shipped. The default location (`new URL('./web/session_compaction_bg.wasm',
// import.meta.url)`) stays written out in each entry: bundlers recognise that exact expression.

/**
 * The error of a .wasm the package could not get (or that is not the module): what happened
 * (`what`), and how to pass the file instead, per runtime and bundler.
 */
function wasmNotFound(what, cause) {
  const error = new Error(
    `session-compaction: could not load the WebAssembly file: ${what}. Pass it before the first call: ` +
      '`await init(urlOrBytesOrModule)` or `initSync(bytesOrModule)`, e.g. what your bundler gives for ' +
      "`import wasm from 'session-compaction/session_compaction_bg.wasm'` (esbuild: `loader: { '.wasm': 'file' }` " +
      "in a page, `loader: { '.wasm': 'binary' }` and `target: 'node20'` in a Node.js bundle); Rollup: add " +
      '@web/rollup-plugin-import-meta-assets; ' +
      'a Node.js bundle can also keep the file beside it as web/session_compaction_bg.wasm; Cloudflare Workers: ' +
      '`initSync(wasmModule)` with that import; Deno without --allow-read: pass the bytes. ' +
      'See "Runtimes and bundlers" in the README of session-compaction.',
    cause === undefined ? undefined : { cause },
  );
  error.name = 'SessionCompactionError';
  error.code = 'E_WASM_NOT_FOUND';
  return error;
}

/**
 * Instantiates the glue `raw` from `source` (`sync`: with initSync, else awaited); what the
 * WebAssembly API refuses to compile or link (not the module, or another version of it) is
 * E_WASM_NOT_FOUND with the API's error as its cause.
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries call it once scripts/build.mjs has inlined this file
function instantiate(raw, source, sync) {
  const refused = (cause) =>
    cause instanceof WebAssembly.CompileError || cause instanceof WebAssembly.LinkError
      ? wasmNotFound(`what was given is not this package's WebAssembly module (${cause.name}: ${cause.message})`, cause)
      : cause;
  if (sync) {
    try {
      return raw.initSync({ module: source });
    } catch (cause) {
      throw refused(cause);
    }
  }
  return raw.default({ module_or_path: source }).catch((cause) => {
    throw refused(cause);
  });
}

/** Fetches the .wasm; a failed request, an HTTP error or an HTML page is E_WASM_NOT_FOUND. */
async function fetchWasm(request, href) {
  let response;
  try {
    response = await fetch(request);
  } catch (cause) {
    throw wasmNotFound(`could not fetch ${href} (${cause?.message ?? cause})`, cause);
  }
  if (!response.ok) throw wasmNotFound(`${href} answered HTTP ${response.status}`);
  if (/\btext\/html\b/i.test(response.headers.get('content-type') ?? '')) {
    throw wasmNotFound(`${href} is an HTML page, not the .wasm file`);
  }
  return response;
}

/**
 * init()'s argument when it is a location (string, URL, Request), loaded as the default file is
 * (`load`); anything else (bytes, a WebAssembly.Module, a Response) as it is. A string is
 * relative to the page in a browser (as `fetch` reads it), else to `base` (the entry's URL).
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries call it once scripts/build.mjs has inlined this file
function loadIfLocation(given, base) {
  if (typeof given === 'string') {
    let url;
    try {
      url = new URL(given, globalThis.location?.href ?? base);
    } catch (cause) {
      throw wasmNotFound(`${JSON.stringify(given)} is not a URL this runtime can resolve`, cause);
    }
    return load(url);
  }
  if (given instanceof URL) return load(given);
  if (typeof Request === 'function' && given instanceof Request) return fetchWasm(given, given.url);
  return given;
}

/** Reads a `file:` URL from disk (Deno, Node, Bun); fetches anything else. */
async function load(url) {
  if (url.protocol !== 'file:') return fetchWasm(url, url.href);
  try {
    if (typeof globalThis.Deno?.readFile === 'function') return await globalThis.Deno.readFile(url);
    // Node and Bun. The specifier is a variable so that bundlers targeting browsers (where this
    // branch never runs) do not try to resolve it.
    const fsPromises = ['node:fs', 'promises'].join('/');
    const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsPromises);
    return await readFile(url);
  } catch (cause) {
    throw wasmNotFound(`could not read ${url.href} (${cause?.name ?? 'Error'}: ${cause?.message ?? cause})`, cause);
  }
}

/**
 * An entry's `init(input)`: `start(input)` of the first call, shared by every later and
 * concurrent call (their arguments are ignored), and forgotten when it fails so that a later
 * call can retry.
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries call it once scripts/build.mjs has inlined this file
function initOnce(start) {
  let pending = null;
  return (input) => {
    if (pending === null) {
      pending = start(input);
      pending.catch(() => {
        pending = null;
      });
    }
    return pending;
  };
}
