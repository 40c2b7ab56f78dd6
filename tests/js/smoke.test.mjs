// Smoke test of the built package (pkg/, made by `npm run build`) through its Node entries.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import * as esm from '../../pkg/index.node.mjs';
import { crateVersion, PKG_DIR } from '../../scripts/lib.mjs';

const require = createRequire(import.meta.url);
const pkgJson = JSON.parse(readFileSync(new URL('../../pkg/package.json', import.meta.url), 'utf8'));

test('ESM entry: version() is the Cargo.toml version', () => {
  assert.equal(esm.version(), crateVersion());
});

test('CommonJS entry (require of the package folder): version() works', () => {
  const cjs = require('../../pkg');
  assert.equal(cjs.version(), crateVersion());
});

test('ESM and CommonJS share one module instance', () => {
  const cjs = require('../../pkg');
  assert.equal(esm.version, cjs.version);
  assert.equal(esm.isSessionCompactionError, cjs.isSessionCompactionError);
  // require(esm): `require` gives the ES module's namespace object itself
  assert.equal(cjs, esm);
});

test('init() and initSync() are harmless no-ops on the Node entry', async () => {
  await esm.init();
  await esm.init();
  esm.initSync(new Uint8Array(0));
  assert.equal(esm.version(), crateVersion());
});

test('a Node.js without process.getBuiltinModule (before 20.16 / 22.3): E_NOT_INITIALIZED until `await init()`', () => {
  const script = `
    delete process.getBuiltinModule;
    const sc = await import(${JSON.stringify(`${PKG_DIR}/index.node.mjs`)});
    let before = null;
    try { sc.version(); } catch (error) { before = { code: error.code, message: error.message }; }
    await sc.init();
    const tree = sc.SessionTree.fromFile(${JSON.stringify(`${PKG_DIR}/../examples/sessions/pi-session-large.jsonl`)});
    console.log(JSON.stringify({ before, version: sc.version(), entries: tree.entryCount }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.before?.code, 'E_NOT_INITIALIZED');
  assert.match(out.before.message, /no process\.getBuiltinModule .*`await init\(\)`/);
  assert.equal(out.version, crateVersion());
  assert.equal(out.entries, 1018);
});

test('pkg/package.json: version from Cargo.toml, types condition first, bin present', () => {
  assert.equal(pkgJson.name, 'session-compaction');
  assert.equal(pkgJson.version, crateVersion());
  for (const [subpath, conditions] of Object.entries(pkgJson.exports)) {
    if (typeof conditions === 'object' && 'types' in conditions) {
      assert.equal(Object.keys(conditions)[0], 'types', `exports["${subpath}"]`);
    }
  }
  assert.equal(pkgJson.bin['session-compaction'], 'bin/session-compaction.mjs');
});

/**
 * Runs `body` in a fresh Node process in which every `new WebAssembly.Module` and
 * `new WebAssembly.Instance` is counted; `count()` in the body returns `[modules, instances]`.
 * Returns what the body printed last (one JSON line), parsed.
 * @param {string} body
 * @returns {any}
 */
function inFreshProcess(body) {
  const script = `
    let modules = 0;
    let instances = 0;
    const { Module, Instance } = WebAssembly;
    WebAssembly.Module = new Proxy(Module, { construct(t, a, n) { modules++; return Reflect.construct(t, a, n); } });
    WebAssembly.Instance = new Proxy(Instance, { construct(t, a, n) { instances++; return Reflect.construct(t, a, n); } });
    const count = () => [modules, instances];
    ${body}
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: PKG_DIR });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}

test('Node entries: loading compiles nothing; the first engine call instantiates the module, once', () => {
  const out = inFreshProcess(`
    const { createRequire } = await import('node:module');
    const cjs = createRequire(${JSON.stringify(`${PKG_DIR}/`)})('./index.node.cjs');
    const esm = await import(${JSON.stringify(`${PKG_DIR}/index.node.mjs`)});
    const afterLoad = count();
    const constants = [esm.DEFAULT_COMPACTION_SETTINGS, cjs.DEFAULT_PRUNE_CONFIG];
    const afterConstants = count();
    const version = esm.version();
    const afterCall = count();
    const tree = cjs.SessionTree.fromJsonl('');
    tree.free();
    console.log(JSON.stringify({ afterLoad, afterConstants, afterCall, afterMore: count(), version, constants }));
  `);
  assert.deepEqual(out.afterLoad, [0, 0]);
  assert.deepEqual(out.afterConstants, [0, 0], 'the default constants need no instance');
  assert.deepEqual(out.afterCall, [1, 1]);
  assert.deepEqual(out.afterMore, [1, 1]);
  assert.equal(out.version, crateVersion());
  assert.deepEqual(out.constants, [esm.defaultCompactionSettings(), esm.defaultPruneConfig()]);
});

test('the default constants are the module values, deeply frozen, the same object in ESM and CommonJS', () => {
  const cjs = require('../../pkg');
  assert.deepEqual(esm.DEFAULT_COMPACTION_SETTINGS, esm.defaultCompactionSettings());
  assert.deepEqual(esm.DEFAULT_PRUNE_CONFIG, esm.defaultPruneConfig());
  assert.equal(esm.DEFAULT_PRUNE_CONFIG, cjs.DEFAULT_PRUNE_CONFIG);
  assert.ok(Object.isFrozen(esm.DEFAULT_COMPACTION_SETTINGS));
  assert.ok(Object.isFrozen(esm.DEFAULT_PRUNE_CONFIG.protectedTools));
});

test('one .wasm and one glue in pkg/ (web/), used by every entry', () => {
  const wasmFiles = readdirSync(PKG_DIR, { recursive: true }).filter((f) => String(f).endsWith('.wasm'));
  assert.deepEqual(wasmFiles, [join('web', 'session_compaction_bg.wasm')]);
  // The Node entry is an ES module over the web glue (the same module instance as the web
  // entry's: a plain path, which every bundler resolves) that reads web/'s .wasm on first use;
  // the CommonJS entry is that module through require(esm).
  const nodeEntry = readFileSync(join(PKG_DIR, 'index.node.mjs'), 'utf8');
  assert.match(nodeEntry, /^import \* as raw from '\.\/web\/session_compaction\.js';$/m);
  assert.doesNotMatch(nodeEntry, /session_compaction\.js\?/);
  assert.match(nodeEntry, /new URL\('\.\/web\/session_compaction_bg\.wasm', import\.meta\.url\)/);
  assert.doesNotMatch(nodeEntry, /^import .*'node:module'|createRequire\(/m, 'the Node entry loads no CommonJS');
  assert.match(
    readFileSync(join(PKG_DIR, 'index.node.cjs'), 'utf8'),
    /module\.exports = require\('\.\/index\.node\.mjs'\);/,
  );
  assert.equal(require('../../pkg'), require(join(PKG_DIR, 'index.node.cjs')));
  assert.equal(pkgJson.sideEffects, false);
});

test('require() without require(esm) (node --no-experimental-require-module): a clear ERR_REQUIRE_ESM error', () => {
  const r = spawnSync(
    process.execPath,
    ['--no-experimental-require-module', '-e', `require(${JSON.stringify(join(PKG_DIR, 'index.node.cjs'))})`],
    { encoding: 'utf8' },
  );
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /code: 'ERR_REQUIRE_ESM'/);
  assert.match(r.stderr, /needs Node\.js \^20\.19\.0 or >=22\.12\.0/);
  assert.match(r.stderr, /`import` works on every Node\.js >= 20/);
  // `import` of the same package in such a process works.
  const esm = spawnSync(
    process.execPath,
    [
      '--no-experimental-require-module',
      '--input-type=module',
      '-e',
      `const sc = await import(${JSON.stringify(join(PKG_DIR, 'index.node.mjs'))}); console.log(sc.version());`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(esm.status, 0, esm.stderr);
  assert.equal(esm.stdout.trim(), crateVersion());
});
