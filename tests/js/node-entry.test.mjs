// The Node entry and the web entry in one process share the glue's module instance (one
// WebAssembly instance, one SessionTree class, one per-turn state), in either order of use; the
// Node entry's init()/initSync() instantiate the module from what they are given (a bundle that
// does not keep the .wasm beside it), and a missing file is E_WASM_NOT_FOUND naming the fix.
// Each case runs in a fresh process, since what is tested is what happens before and at
// instantiation.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg', import.meta.url));
const NODE = pathToFileURL(join(PKG, 'index.node.mjs')).href;
const WEB = pathToFileURL(join(PKG, 'index.web.mjs')).href;
const WASM = join(PKG, 'web', 'session_compaction_bg.wasm');
const SESSION = fileURLToPath(new URL('../../examples/sessions/pi-session-with-compactions.jsonl', import.meta.url));

/**
 * Runs `source` as an ES module in a fresh Node process; its last stdout line as JSON.
 * @param {string} source
 */
function run(source) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}

/** What a real session gives: entry count, cut point and context size (the same in every case). */
const SUMMARY = `
const summary = (sc) => {
  const tree = sc.SessionTree.fromBytes(readFileSync(${JSON.stringify(SESSION)}));
  const out = [tree.entryCount, tree.prepareCompaction()?.firstKeptEntryId, tree.buildSessionContext().messages.length];
  tree.free();
  return out;
};`;

test('Node entry first, then the web entry: one instance; the web entry still needs its init()', () => {
  const out = run(`
import { readFileSync } from 'node:fs';
${SUMMARY}
const node = await import(${JSON.stringify(NODE)});
const tree = node.SessionTree.fromJsonl('');
const descriptor = () => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(tree), 'buildSessionContext').value;
const guardOfNode = descriptor();
const web = await import(${JSON.stringify(WEB)});
let beforeInit = null;
try { web.version(); } catch (e) { beforeInit = e.code; }
await web.init();
const treeOfWeb = web.SessionTree.fromJsonl('');
console.log(JSON.stringify({
  beforeInit,
  sameClass: tree instanceof web.SessionTree && treeOfWeb instanceof node.SessionTree,
  guardOnce: descriptor() === guardOfNode,
  node: summary(node),
  web: summary(web),
}));`);
  assert.equal(out.beforeInit, 'E_NOT_INITIALIZED');
  assert.equal(out.sameClass, true);
  assert.equal(out.guardOnce, true, 'the E_FREED guard is installed once on the shared class');
  assert.deepEqual(out.web, out.node);
  assert.equal(out.node[0], 1002);
});

test('web entry first (init with the bytes), then the Node entry: the same instance, no second read', () => {
  const out = run(`
import { readFileSync } from 'node:fs';
${SUMMARY}
const web = await import(${JSON.stringify(WEB)});
await web.init(readFileSync(${JSON.stringify(WASM)}));
const node = await import(${JSON.stringify(NODE)});
console.log(JSON.stringify({ web: summary(web), node: summary(node), same: node.SessionTree.fromJsonl('') instanceof web.SessionTree }));`);
  assert.deepEqual(out.node, out.web);
  assert.equal(out.same, true);
});

test('per-turn calls interleaved through both entries give what each gives alone (one per-turn state)', () => {
  const large = fileURLToPath(new URL('../../examples/sessions/pi-session-large.jsonl', import.meta.url));
  const out = run(`
import { readFileSync } from 'node:fs';
const node = await import(${JSON.stringify(NODE)});
const web = await import(${JSON.stringify(WEB)});
await web.init();
const entriesOf = (file) => readFileSync(file, 'utf8').split('\\n').filter(Boolean).map((l) => JSON.parse(l)).slice(1, 700);
const a = entriesOf(${JSON.stringify(SESSION)});
const b = entriesOf(${JSON.stringify(large)});
const result = (sc, list) => [sc.buildSessionContext(list).messages.length, sc.prepareCompaction(list, { keepRecentTokens: 2000 })?.firstKeptEntryId ?? null];
const seen = [];
for (const [sc, list] of [[node, a], [web, b], [node, a], [web, b], [web, a], [node, b]]) seen.push(result(sc, list));
const alone = [a, b].map((list) => result(node, structuredClone(list)));
console.log(JSON.stringify({ seen, alone }));`);
  const [a, b] = out.alone;
  assert.notDeepEqual(a, b);
  assert.deepEqual(out.seen, [a, b, a, b, a, b]);
});

test('Node entry initSync(bytes) and init(bytes | path | URL | file URL string) instantiate from what they are given', () => {
  // A copy of the package without its .wasm: only what is passed can instantiate the module.
  const dir = mkdtempSync(join(tmpdir(), 'sc-node-entry-'));
  try {
    cpSync(PKG, dir, { recursive: true, filter: (src) => !src.endsWith('.wasm') });
    const entry = JSON.stringify(pathToFileURL(join(dir, 'index.node.mjs')).href);
    const wasm = JSON.stringify(WASM);
    const given = {
      initSync: `sc.initSync(readFileSync(${wasm}))`,
      bytes: `await sc.init(readFileSync(${wasm}))`,
      module: `await sc.init(new WebAssembly.Module(readFileSync(${wasm})))`,
      path: `await sc.init(${wasm})`,
      url: `await sc.init(new URL(${JSON.stringify(pathToFileURL(WASM).href)}))`,
      promise: `await sc.init(Promise.resolve(readFileSync(${wasm})))`,
    };
    for (const [name, line] of Object.entries(given)) {
      const out = run(`
import { readFileSync } from 'node:fs';
${SUMMARY}
const sc = await import(${entry});
${line};
console.log(JSON.stringify(summary(sc)));`);
      assert.equal(out[0], 1002, name);
    }
    // Nothing passed: the first call is E_WASM_NOT_FOUND, naming the missing file and the fix.
    const missing = run(`
const sc = await import(${entry});
await sc.init();
let error = null;
try { sc.version(); } catch (e) { error = { code: e.code, name: e.name, message: e.message }; }
let retried = null;
try { await sc.init('./nowhere/x.wasm'); } catch (e) { retried = e.code; }
let notModule = null;
try { sc.initSync(new Uint8Array([0, 97, 115, 109, 9, 9])); } catch (e) { notModule = { code: e.code, cause: e.cause?.name }; }
let notModuleAsync = null;
try { await sc.init(new Uint8Array([1, 2, 3])); } catch (e) { notModuleAsync = e.code; }
sc.initSync(new Uint8Array((await import('node:fs')).readFileSync(${wasm})));
console.log(JSON.stringify({ error, retried, notModule, notModuleAsync, version: sc.version() }));`);
    assert.equal(missing.error.code, 'E_WASM_NOT_FOUND');
    assert.equal(missing.error.name, 'SessionCompactionError');
    assert.ok(missing.error.message.includes(join(dir, 'web', 'session_compaction_bg.wasm')), missing.error.message);
    assert.match(missing.error.message, /initSync\(bytesOrModule\)/);
    assert.match(missing.error.message, /loader: \{ '\.wasm': 'binary' \}/);
    assert.equal(missing.retried, 'E_WASM_NOT_FOUND');
    // Bytes that are not the module: the same code, the WebAssembly API's error as the cause.
    assert.deepEqual(missing.notModule, { code: 'E_WASM_NOT_FOUND', cause: 'CompileError' });
    assert.equal(missing.notModuleAsync, 'E_WASM_NOT_FOUND');
    assert.match(missing.version, /^\d+\.\d+\.\d+/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
