// Inlined by scripts/build.mjs into both entries (index.node.mjs, index.web.mjs; a module of its
// own would be one more file to resolve and load on every import): the one copy of the
// use-after-free guard. Not shipped.
// A SessionTree used after free() throws E_FREED (async methods reject); free() twice is a no-op.
const ASYNC_METHODS = new Set(['compact', 'navigateTree', 'checkCompaction']);

function freedError(member) {
  const error = new Error(`SessionTree.${member}: this session handle was freed`);
  error.name = 'SessionCompactionError';
  error.code = 'E_FREED';
  return error;
}

/** A member called on something that is not a handle (`new SessionTree()`, `.call({})`, `.call(null)`). */
function notAHandleError(member) {
  const error = new Error(
    `SessionTree.${member}: \`this\` is not a session handle; make one with SessionTree.fromJsonl, fromBytes, fromFile or fromEntries`,
  );
  error.name = 'SessionCompactionError';
  error.code = 'E_INVALID_ARGUMENT';
  return error;
}

/** The error of calling `member` on `self`: E_FREED, E_INVALID_ARGUMENT or none (a live handle). */
function misuseError(self, member) {
  const ptr = self === null || self === undefined ? undefined : self.__wbg_ptr;
  if (ptr === 0) return freedError(member);
  if (typeof ptr !== 'number') return notAHandleError(member);
  return null;
}

function guardFreed(proto) {
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key === 'constructor' || key.startsWith('__')) continue;
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (key === 'free' && typeof d.value === 'function') {
      const free = d.value;
      d.value = function free_() {
        if (this?.__wbg_ptr === 0) return;
        const error = misuseError(this, key);
        if (error) throw error;
        free.call(this);
      };
      Object.defineProperty(d.value, 'name', { value: 'free' });
      if (typeof Symbol.dispose === 'symbol' && proto[Symbol.dispose] === free) proto[Symbol.dispose] = d.value;
    } else if (typeof d.value === 'function') {
      const method = d.value;
      const rejects = ASYNC_METHODS.has(key);
      d.value = {
        [key](...args) {
          const error = misuseError(this, key);
          if (error) {
            if (rejects) return Promise.reject(error);
            throw error;
          }
          return Reflect.apply(method, this, args);
        },
      }[key];
    } else if (typeof d.get === 'function') {
      const get = d.get;
      d.get = {
        [key]() {
          const error = misuseError(this, key);
          if (error) throw error;
          return get.call(this);
        },
      }[key];
    } else continue;
    Object.defineProperty(proto, key, d);
  }
}

// What `console.log`/`util.inspect` (Node, Bun) and Deno's inspector show for the engine's
// classes: their plain figures instead of the glue's pointer field (`{ __wbg_ptr: … }`).
const INSPECT_SYMBOLS = [Symbol.for('nodejs.util.inspect.custom'), Symbol.for('Deno.customInspect')];

/**
 * Makes `cls` instances display as `describe(instance)` under the class's name, or as
 * `Name (freed)` once freed. `describe` only reads public getters and `toJSON`.
 */
function addInspect(cls, describe) {
  const Shown = { [cls.name]: class {} }[cls.name];
  for (const symbol of INSPECT_SYMBOLS) {
    Object.defineProperty(cls.prototype, symbol, {
      configurable: true,
      writable: true,
      value: function inspect(a, options, b) {
        if (this.__wbg_ptr === 0) return `${cls.name} (freed)`;
        const shown = Object.assign(new Shown(), describe(this));
        // Node calls it with (depth, options, inspect), Deno with (inspect, options).
        const inspectFn = typeof b === 'function' ? b : typeof a === 'function' ? a : null;
        return inspectFn ? inspectFn(shown, options) : shown;
      },
    });
  }
}

/**
 * What every entry adds to the glue's exports, once per process: on its classes the E_FREED
 * guard, the inspect output, `SessionTree.fromFile` (with `nodeFs`, see from-file.js) and
 * `Symbol.dispose` where the runtime has the symbol but the generated class lacks it
 * (`using tree = SessionTree.fromJsonl(...)`); on `extractiveSummarizer` the registered symbol
 * by which the engine knows it when it is given as `complete`.
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries call it once scripts/build.mjs has inlined this file
function setUpGlue(raw, nodeFs) {
  // Both entries share the glue's classes when one process uses both: the first one sets them up.
  // (A registered symbol, since each entry has its own copy of this code.)
  const done = Symbol.for('session-compaction.classesSetUp');
  if (Object.hasOwn(raw.SessionTree.prototype, done)) return;
  Object.defineProperty(raw.SessionTree.prototype, done, { value: true });
  guardFreed(raw.SessionTree.prototype);
  addInspect(raw.SessionTree, (tree) => ({
    entryCount: tree.entryCount,
    leafId: tree.leafId,
    sourceVersion: tree.sourceVersion,
    migrated: tree.migrated,
    loadErrors: tree.loadErrors.length,
  }));
  addInspect(raw.PruneOutcome, (outcome) => outcome.toJSON());
  addFromFile(raw.SessionTree, nodeFs);
  // The package's extractiveSummarizer given as `complete` is run by the engine itself, which
  // reports it as the writer (`summarizer: "extractive"`); it knows it by this registered symbol.
  Object.defineProperty(raw.extractiveSummarizer, Symbol.for('session-compaction.extractiveSummarizer'), {
    value: true,
  });
  if (typeof Symbol.dispose === 'symbol' && typeof raw.SessionTree.prototype[Symbol.dispose] !== 'function') {
    raw.SessionTree.prototype[Symbol.dispose] = function dispose() {
      this.free();
    };
  }
}
