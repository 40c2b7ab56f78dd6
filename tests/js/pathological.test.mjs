// Pathological inputs through the wasm package: 64 MB of newlines loads (one run of opaque
// lines inside, not a structure per line) and saves back byte for byte; bad lines past the
// bound are counted in one closing error; deep nesting is a per-line error. Nothing here may
// kill the module: the last test loads a normal session after all of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as sc from '../../pkg/index.node.mjs';

const HEADER = '{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":""}';
const ENTRY = '{"type":"custom","customType":"x","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z"}';

test('64 MB of newlines loads and saves back the same bytes', () => {
  const bytes = new Uint8Array(64 * 1024 * 1024).fill(10);
  const tree = sc.SessionTree.fromBytes(bytes);
  assert.equal(tree.entryCount, 0);
  assert.deepEqual(
    tree.loadErrors.map((e) => [e.line, e.code]),
    [[1, 'E_HEADER']],
  );
  const out = tree.toJsonl();
  assert.equal(out.length, bytes.length);
  assert.equal(Buffer.compare(Buffer.from(out), Buffer.from(bytes)), 0);
  tree.free();
});

test('a header then millions of blank lines: a usable handle that saves exactly', () => {
  const text = `${HEADER}\n${'\n'.repeat(4_000_000)}`;
  const tree = sc.SessionTree.fromJsonl(text);
  assert.deepEqual(tree.loadErrors, []);
  assert.equal(tree.toJsonl(), text);
  tree.appendEntry(JSON.parse(ENTRY));
  assert.equal(tree.entryCount, 1);
  assert.equal(tree.toJsonl(), `${text}${ENTRY}\n`);
  tree.free();
});

test('bad lines past the bound are counted in one closing error', () => {
  const n = 300_000;
  const text = `${HEADER}\n${'x\n'.repeat(n)}`;
  const tree = sc.SessionTree.fromJsonl(text);
  const errors = tree.loadErrors;
  assert.equal(errors.length, 10_001);
  assert.deepEqual([errors[0].line, errors[0].code], [2, 'E_PARSE']);
  assert.match(errors[0].message, /malformed JSON/);
  const last = errors[errors.length - 1];
  assert.equal(last.line, 10_002);
  assert.match(last.message, new RegExp(`${n - 10_000} more bad lines`));
  assert.equal(tree.toJsonl(), text);
  tree.free();
  // parseSession lists every opaque line, with the same errors.
  const parsed = sc.parseSession(text);
  assert.equal(parsed.opaqueLines.length, n);
  assert.deepEqual(parsed.opaqueLines[n - 1], { line: n + 1, position: 1, text: 'x' });
  assert.deepEqual(parsed.errors, errors);
  assert.equal(sc.serializeSession(parsed), text);
});

test('deep nesting is a per-line error, or a kept record', () => {
  const open = `${HEADER}\n${'['.repeat(1_000_000)}\n${ENTRY}\n`;
  const tree = sc.SessionTree.fromJsonl(open);
  assert.deepEqual(
    tree.loadErrors.map((e) => [e.line, e.code]),
    [[2, 'E_PARSE']],
  );
  assert.equal(tree.entryCount, 1);
  assert.equal(tree.toJsonl(), open);
  tree.free();
  const deep = `{"type":"message","id":"b","parentId":null,"timestamp":"t","message":{"role":"user","content":${'['.repeat(100_000)}1${']'.repeat(100_000)},"timestamp":1}}`;
  const t2 = sc.SessionTree.fromJsonl(`${HEADER}\n${deep}\n`);
  assert.deepEqual(t2.loadErrors, []);
  assert.equal(t2.entryCount, 1);
  assert.equal(t2.toJsonl(), `${HEADER}\n${deep}\n`);
  t2.free();
});

test('the module still works after all of the above', () => {
  const tree = sc.SessionTree.fromJsonl(`${HEADER}\n${ENTRY}\n`);
  assert.equal(tree.entryCount, 1);
  assert.equal(tree.leafId, 'a');
  tree.free();
});
