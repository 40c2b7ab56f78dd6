// The web entry (index.web.mjs) under Node: the E_NOT_INITIALIZED guard, then init() without an
// argument (reads the .wasm next to the entry), idempotence. Runs in its own process (node --test
// isolates files), so nothing has initialized the module before the first test.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as web from '../../pkg/index.web.mjs';
import { crateVersion } from '../../scripts/lib.mjs';

test('before init(): every engine export throws E_NOT_INITIALIZED', () => {
  const engineExports = Object.entries(web).filter(
    ([name, value]) =>
      typeof value === 'function' && name !== 'init' && name !== 'initSync' && name !== 'isSessionCompactionError',
  );
  assert.ok(engineExports.length > 0);
  for (const [name, fn] of engineExports) {
    assert.throws(
      () => /** @type {() => unknown} */ (fn)(),
      (error) =>
        error instanceof Error &&
        /** @type {Error & { code?: string }} */ (error).code === 'E_NOT_INITIALIZED' &&
        error.message.includes(name),
      name,
    );
  }
});

test('before init(): isSessionCompactionError works and recognizes E_NOT_INITIALIZED', () => {
  let caught;
  try {
    web.version();
  } catch (error) {
    caught = error;
  }
  assert.equal(web.isSessionCompactionError(caught), true);
  assert.equal(/** @type {any} */ (caught).code, 'E_NOT_INITIALIZED');
  assert.equal(web.isSessionCompactionError(new Error('x')), false);
});

test('before init(): exported classes refuse `new` and their static methods', () => {
  // wasm-bindgen classes carry a `free` method; none may be constructed before init().
  const classes = Object.entries(web).filter(
    ([, value]) => typeof value === 'function' && typeof value.prototype?.free === 'function',
  );
  const isNotInitialized = (/** @type {unknown} */ error) =>
    error instanceof Error && /** @type {Error & { code?: string }} */ (error).code === 'E_NOT_INITIALIZED';
  for (const [name, cls] of classes) {
    const Class = /** @type {new () => unknown} */ (/** @type {unknown} */ (cls));
    assert.throws(() => new Class(), isNotInitialized, `new ${name}()`);
    for (const key of Object.getOwnPropertyNames(cls)) {
      const member = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (cls))[key];
      if (typeof member === 'function' && !key.startsWith('__')) {
        assert.throws(() => /** @type {() => unknown} */ (member)(), isNotInitialized, `${name}.${key}()`);
      }
    }
  }
});

test('initSync() without the module is a TypeError, not a silent no-op', () => {
  // @ts-expect-error: the argument is missing on purpose
  assert.throws(() => web.initSync(), TypeError);
});

test('init() without its .wasm rejects with E_WASM_NOT_FOUND naming where it looked and the fix; a retry works', async () => {
  const missing = new URL('./no-such-dir/session_compaction_bg.wasm', import.meta.url);
  const notFound = (/** @type {RegExp} */ where) => (/** @type {any} */ error) =>
    error?.code === 'E_WASM_NOT_FOUND' &&
    error.name === 'SessionCompactionError' &&
    where.test(error.message) &&
    error.message.includes('initSync(bytesOrModule)') &&
    error.message.includes("loader: { '.wasm': 'file' }");
  await assert.rejects(web.init(missing), notFound(/could not read file:.*no-such-dir.*ENOENT/));
  await assert.rejects(web.init(missing.href), notFound(/could not read file:.*no-such-dir/));
  await assert.rejects(web.init('http://127.0.0.1:9/session_compaction_bg.wasm'), notFound(/could not fetch http:/));
  assert.throws(
    () => web.version(),
    (/** @type {any} */ error) => error?.code === 'E_NOT_INITIALIZED',
  );
});

test('init() is idempotent: concurrent calls share one promise, later calls resolve', async () => {
  const first = web.init();
  const second = web.init();
  assert.equal(first, second);
  await first;
  await web.init();
  assert.equal(web.version(), crateVersion());
});

test("the entry's extractiveSummarizer (a guarded wrapper) is named as the writer of a compaction it writes", async () => {
  await web.init();
  const file = new URL('../../examples/sessions/pi-session-with-compactions.jsonl', import.meta.url);
  const tree = web.SessionTree.fromBytes(readFileSync(file));
  const done = await tree.compact({ complete: web.extractiveSummarizer });
  assert.equal(done.result.summarizer, 'extractive');
  tree.free();
});
