// Loading: SessionTree.fromFile (the file read straight into wasm memory) loads exactly what
// fromBytes loads, from every entry; its errors; and the raw scanner (the wasm build reads JSON
// strings sixteen bytes at a time with WebAssembly SIMD) measures every string as the value path
// does, whatever its length, escapes and characters.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';
import * as web from '../../pkg/index.web.mjs';
import { seededRandom } from './support/random.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS = join(ROOT, 'examples', 'sessions');
const REAL = ['pi-session-large.jsonl', 'pi-session-v1-format.jsonl', 'pi-session-with-compactions.jsonl'];

/** What a load gives, as plain values. @param {import('../../pkg/index.node.mjs').SessionTree} tree */
function snapshot(tree) {
  return {
    entryCount: tree.entryCount,
    leafId: tree.leafId,
    migrated: tree.migrated,
    sourceVersion: tree.sourceVersion,
    loadErrors: tree.loadErrors,
    jsonl: tree.toJsonl(),
    context: tree.buildSessionContextJson(),
    tokens: tree.estimateContextTokens(),
  };
}

/** @param {(dir: string) => void} f */
function withDir(f) {
  const dir = mkdtempSync(join(tmpdir(), 'load-test-'));
  try {
    f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * @param {unknown} error
 * @param {string} code
 * @returns {error is Error & { code: string, cause?: { code?: string } }}
 */
function hasCode(error, code) {
  const e = /** @type {{ code?: unknown, name?: unknown }} */ (error);
  assert.equal(e.code, code, String(error));
  assert.equal(e.name, 'SessionCompactionError');
  assert.equal(sc.isSessionCompactionError(error), true);
  return true;
}

test('fromFile loads the real sessions exactly as fromBytes does (path and file: URL)', () => {
  for (const name of REAL) {
    const path = join(SESSIONS, name);
    // A v1 file gets the same ids on each load (SPEC §13.10): everything is compared.
    const expected = snapshot(sc.SessionTree.fromBytes(readFileSync(path)));
    assert.deepEqual(snapshot(sc.SessionTree.fromFile(path)), expected, name);
    assert.deepEqual(snapshot(sc.SessionTree.fromFile(pathToFileURL(path))), expected, `${name} as a URL`);
  }
});

test('fromFile: bad lines, invalid UTF-8, CRLF, a BOM, an empty file and strict mode as fromBytes', () => {
  withDir((dir) => {
    const header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}';
    /** @type {(id: string, parentId: string | null, text: string) => string} */
    const entry = (id, parentId, text) =>
      JSON.stringify({
        type: 'message',
        id,
        parentId,
        timestamp: '2026-01-01T00:00:01.000Z',
        message: { role: 'user', content: [{ type: 'text', text }], timestamp: 1 },
      });
    const cases = {
      crlf: Buffer.from(`\uFEFF${header}\r\n${entry('a', null, 'one')}\r\n${entry('b', 'a', 'two')}\r\n`),
      bad: Buffer.from(`${header}\n{not json\n${entry('a', null, 'x')}\n\n${entry('b', 'a', 'y')}`),
      // "café" written in Latin-1 (0xE9 alone is not UTF-8): read as U+FFFD, the line kept.
      latin1: Buffer.from(`${header}\n${entry('a', null, 'caf@')}\n${entry('b', 'a', 'ok')}\n`).map((b) =>
        b === 0x40 ? 0xe9 : b,
      ),
      empty: Buffer.alloc(0),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const path = join(dir, `${name}.jsonl`);
      writeFileSync(path, bytes);
      assert.deepEqual(snapshot(sc.SessionTree.fromFile(path)), snapshot(sc.SessionTree.fromBytes(bytes)), name);
    }
    assert.equal(sc.SessionTree.fromFile(join(dir, 'latin1.jsonl')).entryCount, 2);
    assert.equal(sc.SessionTree.fromFile(join(dir, 'bad.jsonl')).loadErrors[0].line, 2);
    assert.throws(
      () => sc.SessionTree.fromFile(join(dir, 'bad.jsonl'), { strict: true }),
      (e) => hasCode(e, 'E_PARSE') && /line 2/.test(String(e)),
    );
  });
});

test('fromFile errors: E_FILE naming the path (missing, a directory), E_INVALID_ARGUMENT for a non-path', () => {
  withDir((dir) => {
    const missing = join(dir, 'nope.jsonl');
    assert.throws(
      () => sc.SessionTree.fromFile(missing),
      (e) => hasCode(e, 'E_FILE') && e.message.includes(missing) && e.cause?.code === 'ENOENT',
    );
    assert.throws(
      () => sc.SessionTree.fromFile(dir),
      (e) => hasCode(e, 'E_FILE') && /not a regular file/.test(e.message),
    );
    for (const bad of [42, null, undefined, { path: missing }]) {
      assert.throws(
        () => sc.SessionTree.fromFile(/** @type {any} */ (bad)),
        (e) => hasCode(e, 'E_INVALID_ARGUMENT'),
      );
    }
    // A failed fromFile leaves nothing behind: the next load works.
    const path = join(SESSIONS, 'pi-session-large.jsonl');
    assert.equal(sc.SessionTree.fromFile(path).entryCount, 1018);
  });
});

test('fromFile from the CommonJS entry and from the web entry in Node (process.getBuiltinModule)', async () => {
  const path = join(SESSIONS, 'pi-session-with-compactions.jsonl');
  const expected = snapshot(sc.SessionTree.fromBytes(readFileSync(path)));
  const cjs = createRequire(import.meta.url)('../../pkg/index.node.cjs');
  assert.deepEqual(snapshot(cjs.SessionTree.fromFile(path)), expected);
  await web.init(readFileSync(join(ROOT, 'pkg', 'web', 'session_compaction_bg.wasm')));
  assert.deepEqual(snapshot(web.SessionTree.fromFile(path)), expected);
});

test('the raw scanner measures strings of every length, escape and character as the value path does', () => {
  const next = seededRandom(10);
  // Pieces around the 16-byte chunk edges: ASCII, 2-, 3- and 4-byte UTF-8, escapes, quotes.
  const pieces = [
    'a',
    'Z',
    ' ',
    '/',
    'é',
    '設',
    '😀',
    '\n',
    '"',
    '\\',
    '\t',
    '\u0001',
    '\u007f',
    '\u2028',
    'abcdefghijklmnop',
  ];
  const lines = ['{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'];
  const messages = [];
  let parentId = null;
  for (let k = 0; k < 400; k++) {
    let text = '';
    const n = Math.floor(next() * 40);
    for (let i = 0; i < n; i++) text += pieces[Math.floor(next() * pieces.length)];
    const message =
      k % 2 === 0
        ? { role: 'user', content: [{ type: 'text', text }], timestamp: k }
        : {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: text.slice(0, 7) },
              { type: 'text', text },
              { type: 'toolCall', id: `t${k}`, name: 'read', arguments: { path: `/p/${text.slice(0, 5)}`, q: text } },
            ],
            provider: 'p',
            model: 'm',
            stopReason: 'toolUse',
            timestamp: k,
          };
    const id = `e${k}`;
    // Some lines written with \u escapes for everything non-ASCII (JSON.stringify does not).
    let line = JSON.stringify({ type: 'message', id, parentId, timestamp: '2026-01-01T00:00:01.000Z', message });
    if (k % 3 === 0) line = line.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    lines.push(line);
    messages.push(message);
    parentId = id;
  }
  const text = `${lines.join('\n')}\n`;
  const tree = sc.SessionTree.fromBytes(new TextEncoder().encode(text));
  assert.deepEqual(tree.loadErrors, []);
  assert.equal(tree.entryCount, 400);
  // Each message's estimate from its raw line (the scanner) against the same entry built from a
  // value (fromEntries: serde's reading of the parsed entry).
  let total = 0;
  for (let k = 0; k < messages.length; k++) {
    const line = lines[k + 1].replace(/"parentId":"e\d+"/, '"parentId":null');
    const raw = sc.SessionTree.fromJsonl(`${lines[0]}\n${line}\n`).estimateContextTokens();
    const value = sc.SessionTree.fromEntries([JSON.parse(line)]).estimateContextTokens();
    assert.equal(raw, value, `entry ${k}: ${line}`);
    total += raw;
  }
  assert.equal(total > 400, true);
  const entries = lines.slice(1).map((l) => JSON.parse(l));
  assert.equal(tree.estimateContextTokens(), sc.SessionTree.fromEntries(entries).estimateContextTokens());
  assert.equal(tree.toJsonl(), `${text}`);
});

test('fromBytes reads a Uint8Array by its own bytes: an own or inherited `length` property, a detached buffer', () => {
  // The copy read the array's `length` property: a smaller or throwing one threw a RangeError (or
  // the getter's error) through the glue, a detached buffer a TypeError; none had a `code`.
  const text = new TextEncoder().encode(
    '{"type":"session","id":"s1","timestamp":"t","version":3}\n' +
      '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\n',
  );
  const loads = (/** @type {any} */ bytes) => {
    const tree = sc.SessionTree.fromBytes(bytes);
    const got = [tree.header?.id, tree.entryCount, tree.toJsonl()];
    tree.free();
    return got;
  };
  const expected = ['s1', 1, new TextDecoder().decode(text)];
  for (const length of [3, 1000, 'abc']) {
    const u = new Uint8Array(text);
    Object.defineProperty(u, 'length', { value: length });
    assert.deepEqual(loads(u), expected, `length ${length}`);
  }
  const throwing = new Uint8Array(text);
  Object.defineProperty(throwing, 'length', {
    get() {
      throw new Error('length getter');
    },
  });
  assert.deepEqual(loads(throwing), expected);
  class Short extends Uint8Array {
    get length() {
      return 5;
    }
  }
  assert.deepEqual(loads(new Short(text)), expected);
  const padded = new Uint8Array(text.length + 10);
  padded.set(text, 10);
  assert.deepEqual(loads(padded.subarray(10)), expected);
  // A detached buffer holds no bytes: an empty session, as for `new Uint8Array(0)`.
  const buffer = new ArrayBuffer(8);
  const view = new Uint8Array(buffer);
  structuredClone(buffer, { transfer: [buffer] });
  assert.deepEqual(loads(buffer).slice(0, 2), [undefined, 0]);
  assert.deepEqual(loads(view).slice(0, 2), [undefined, 0]);
  assert.deepEqual(loads(text), expected, 'the module still works');
});
