// Inlined by scripts/build.mjs into both entries (after errors.js), like freed-guard.js: the one
// copy of SessionTree.fromFile. Not shipped. Host file I/O only: the engine loads the bytes.

/** The E_FILE error of fromFile: the path, and what the runtime said. */
function fileError(path, why, cause) {
  const error = new Error(
    `SessionTree.fromFile: cannot read ${JSON.stringify(String(path))}: ${why}`,
    cause === undefined ? undefined : { cause },
  );
  error.name = 'SessionCompactionError';
  error.code = 'E_FILE';
  return error;
}

/**
 * The runtime's synchronous file reading as `{open(path) → file, isFile(file), size(file),
 * read(file, view) → bytes read (0 at the end), close(file)}`: Deno's own API, else Node's `fs`
 * as `nodeFs()` returns it (Node and Bun); `null` where there is neither (browsers, Workers).
 */
function hostFiles(nodeFs) {
  const deno = globalThis.Deno;
  if (deno && typeof deno.openSync === 'function') {
    return {
      open: (path) => deno.openSync(path, { read: true }),
      isFile: (file) => file.statSync().isFile,
      size: (file) => file.statSync().size,
      read: (file, view) => file.readSync(view) ?? 0,
      close: (file) => file.close(),
    };
  }
  let fs = null;
  try {
    fs = nodeFs();
  } catch {
    fs = null;
  }
  if (!fs || typeof fs.openSync !== 'function') return null;
  return {
    open: (path) => fs.openSync(path, 'r'),
    isFile: (fd) => fs.fstatSync(fd).isFile(),
    size: (fd) => fs.fstatSync(fd).size,
    read: (fd, view) => fs.readSync(fd, view, 0, view.length, null),
    close: (fd) => fs.closeSync(fd),
  };
}

/**
 * Adds `SessionTree.fromFile(path, options?)`: reads the file straight into WebAssembly memory
 * (the engine allocates exactly the file's size and the runtime reads into a view of it) and
 * loads it like `fromBytes`, so the host never holds a copy of the file. `nodeFs()`: Node's `fs`
 * module where the entry can get it (the Node entry's import of `node:fs`, `process.getBuiltinModule`). Errors: `E_FILE` (no
 * file system, a missing or unreadable path, a directory) with the runtime's error as `cause`;
 * otherwise those of `fromBytes`.
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries call it once scripts/build.mjs has inlined this file
function addFromFile(SessionTree, nodeFs) {
  SessionTree.fromFile = function fromFile(path, options) {
    if (typeof path !== 'string' && !(path instanceof URL)) {
      const error = new Error(`SessionTree.fromFile: path: expected a string or a file: URL, got ${typeof path}`);
      error.name = 'SessionCompactionError';
      error.code = 'E_INVALID_ARGUMENT';
      throw error;
    }
    const files = hostFiles(nodeFs);
    if (!files) {
      throw fileError(path, 'this runtime has no file system (read the file yourself and call SessionTree.fromBytes)');
    }
    let file;
    try {
      file = files.open(path);
    } catch (e) {
      throw fileError(path, e?.message ?? String(e), e);
    }
    let filled = 0;
    try {
      let size;
      try {
        if (!files.isFile(file)) throw new Error('not a regular file');
        size = files.size(file);
      } catch (e) {
        throw fileError(path, e?.message ?? String(e), e);
      }
      // No engine call between here and __fromFileBuffer: the view stays valid while it is filled.
      const view = SessionTree.__fileBuffer(size);
      try {
        while (filled < size) {
          const n = files.read(file, view.subarray(filled));
          if (!n) break;
          filled += n;
        }
      } catch (e) {
        SessionTree.__fileBuffer(0);
        throw fileError(path, e?.message ?? String(e), e);
      }
    } finally {
      files.close(file);
    }
    return SessionTree.__fromFileBuffer(filled, options);
  };
}
