// Smoke test of the built package (pkg/, made by `npm run build`) through its Node entries.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import * as esm from '../../pkg/index.node.mjs';
import { crateVersion } from '../../scripts/lib.mjs';

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
});

test('init() and initSync() are harmless no-ops on the Node entry', async () => {
  await esm.init();
  await esm.init();
  esm.initSync(new Uint8Array(0));
  assert.equal(esm.version(), crateVersion());
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
