// Shared helpers of the JS conformance suites (tests/js/conformance.test.mjs and the
// summarization vectors in tests/js/async.test.mjs): vector files, entry sources and the
// comparison rules of tests/conformance/README.md.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** @typedef {Record<string, any>} Json */

// ---------------------------------------------------------------------------------------------
// Vectors and entry sources

/** @param {string} dir @returns {string[]} every .json file below `dir`, sorted */
export function collect(dir) {
  /** @type {string[]} */
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.json')) out.push(path);
  }
  return out;
}

/**
 * Entry sources of the vectors under `dir` (README "Entry sources"), with a cache of the
 * session files they name.
 * @param {string} dir
 */
export function entrySource(dir) {
  /** @type {Map<string, any[]>} */
  const fileCache = new Map();
  /** @param {string} rel @returns {any[]} every line of a session file (header included), parsed */
  function fileLines(rel) {
    let lines = fileCache.get(rel);
    if (!lines) {
      lines = readFileSync(join(dir, rel), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
      fileCache.set(rel, lines);
    }
    return lines;
  }

  /**
   * Resolves `input.entries`: an inline array, `{file}` (every line but the header) or
   * `{file, ids}` (those entries in that order). Returns fresh copies: nothing is shared between
   * vectors, so a mutation by the engine could not leak from one vector into another.
   * @param {any} spec
   * @returns {any[]}
   */
  function resolveEntries(spec) {
    if (Array.isArray(spec)) return structuredClone(spec);
    const entries = fileLines(spec.file).slice(1);
    if (!Array.isArray(spec.ids)) return structuredClone(entries);
    const byId = new Map(entries.map((e) => [e.id, e]));
    return spec.ids.map((/** @type {string} */ id) => {
      const entry = byId.get(id);
      if (!entry) throw new Error(`${spec.file}: no entry with id ${id}`);
      return structuredClone(entry);
    });
  }
  return { fileLines, resolveEntries };
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** @param {unknown} v */
export function show(v) {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

/** @param {unknown} v @returns {v is Json} */
export const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Deep comparison of `expected` (vector JSON) with `actual` (API output); returns the first
 * difference as `path: detail`, or null.
 * @param {any} exp
 * @param {any} act
 * @param {any[] | null} entries the resolved file entries (for `$entryMessage`)
 * @param {string} path
 * @returns {string | null}
 */
export function diff(exp, act, entries, path) {
  if (isObject(exp) && '$entryMessage' in exp) {
    const entry = entries?.[exp.$entryMessage];
    if (!entry) return `${path}: $entryMessage ${exp.$entryMessage} without file entries`;
    return diff(entry.message, act, entries, path);
  }
  if (isObject(exp) && '$digest' in exp) {
    if (typeof act !== 'string') return `${path}: expected the digest of a string, got ${show(act)}`;
    const hash = createHash('sha256').update(act, 'utf8').digest('hex');
    if (hash === exp.sha256) return null;
    return `${path}: digest mismatch (length ${act.length} vs ${exp.utf16Length}); head ${show(act.slice(0, 200))} vs ${show(String(exp.head).slice(0, 200))}`;
  }
  if (typeof exp === 'number' && typeof act === 'number') {
    return exp === act || (Number.isNaN(exp) && Number.isNaN(act)) ? null : `${path}: expected ${exp}, got ${act}`;
  }
  // NaN is written as null in the vectors.
  if (exp === null && typeof act === 'number' && Number.isNaN(act)) return null;
  if (Array.isArray(exp)) {
    if (!Array.isArray(act)) return `${path}: expected an array, got ${show(act)}`;
    if (exp.length !== act.length) {
      return `${path}: expected ${exp.length} items, got ${act.length}: expected ${show(exp)} got ${show(act)}`;
    }
    for (let i = 0; i < exp.length; i++) {
      const d = diff(exp[i], act[i], entries, `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (isObject(exp)) {
    if (!isObject(act)) return `${path}: expected an object, got ${show(act)}`;
    for (const [k, v] of Object.entries(exp)) {
      if (!(k in act) || act[k] === undefined) return `${path}: missing key ${k} (expected ${show(v)})`;
      const d = diff(v, act[k], entries, `${path}.${k}`);
      if (d) return d;
    }
    for (const k of Object.keys(act)) {
      // JSON semantics: a key whose value is undefined is an absent key.
      if (!(k in exp) && act[k] !== undefined) return `${path}: unexpected key ${k} = ${show(act[k])}`;
    }
    return null;
  }
  return Object.is(exp, act) || exp === act ? null : `${path}: expected ${show(exp)}, got ${show(act)}`;
}

// ---------------------------------------------------------------------------------------------
// Known deviations (deviations.json, SPEC §12 last paragraph; format in tests/runner/deviations.rs)

/**
 * The known deviations of the vectors under `dir`, by vector name (empty without the file).
 * @param {string} dir
 * @returns {Map<string, { item: string, why?: string, changes: { pointer: string, old?: unknown, new: unknown }[] }>}
 */
export function loadDeviations(dir) {
  const path = join(dir, 'deviations.json');
  /** @type {any} */
  let doc;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return new Map();
    throw error;
  }
  const out = new Map();
  for (const d of doc.deviations) {
    if (out.has(d.name)) throw new Error(`deviations.json: ${d.name} listed twice`);
    out.set(d.name, d);
  }
  return out;
}

/** @param {string} token */
const unescapePointer = (token) => token.replaceAll('~1', '/').replaceAll('~0', '~');

/** @param {unknown} v @param {boolean} present */
const showShort = (v, present) => {
  if (!present) return '(absent)';
  const s = JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
};

/**
 * Applies a deviation's changes to (a copy of) a vector's `expected`. Throws when a pointer does
 * not resolve or the vector does not hold the recorded old value (a stale deviation).
 * @param {any} expected
 * @param {{ changes: { pointer: string, old?: unknown, new: unknown }[] }} deviation
 * @returns {{ expected: any, shown: string[] }} the changed value and one `pointer: old → new` line per change
 */
export function applyDeviation(expected, deviation) {
  const out = structuredClone(expected);
  /** @type {string[]} */
  const shown = [];
  for (const change of deviation.changes) {
    const tokens = change.pointer.split('/').map(unescapePointer);
    if (tokens.shift() !== '') throw new Error(`pointer ${change.pointer} does not start with /`);
    const last = /** @type {string} */ (tokens.pop());
    let parent = out;
    for (const t of tokens) parent = parent?.[t];
    if (parent === null || typeof parent !== 'object') throw new Error(`${change.pointer}: no object or array there`);
    if (Array.isArray(parent) && !(Number(last) < parent.length)) throw new Error(`${change.pointer}: no such item`);
    const present = Object.hasOwn(parent, last);
    const hasOld = Object.hasOwn(change, 'old');
    const same = present === hasOld && (!present || diff(change.old, parent[last], null, '') === null);
    if (!same) {
      throw new Error(
        `stale deviation at ${change.pointer}: the vector holds ${showShort(parent[last], present)}, deviations.json records ${showShort(change.old, hasOld)} as old`,
      );
    }
    shown.push(`${change.pointer}: ${showShort(change.old, hasOld)} → ${showShort(change.new, true)}`);
    parent[last] = structuredClone(change.new);
  }
  return { expected: out, shown };
}
