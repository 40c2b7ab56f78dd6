// A `message` entry whose `message` is absent or `null` has no message (SPEC §2), on every path
// of the package: the pure functions over the host's objects, the handle built from them, the
// handle loaded from text (where of duplicate `message` keys the last one counts, as JSON.parse
// reads the line).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as sc from '../../pkg/index.node.mjs';

/** @type {import('../../pkg/index.node.mjs').SessionHeader} */
const header = { type: 'session', version: 3, id: 's', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/' };
/**
 * @param {string} id @param {string | null} parentId @param {object} [rest]
 * @returns {any} a session entry (possibly without a message, which the types do not allow)
 */
const entry = (id, parentId, rest = {}) => ({
  type: 'message',
  id,
  parentId,
  timestamp: '2026-01-01T00:00:00.000Z',
  ...rest,
});
/** @param {string} content */
const user = (content) => ({ role: 'user', content, timestamp: 1 });
/** @param {any[]} messages */
const contents = (messages) => messages.map((m) => m.content);

test('an entry with message null or without a message gives no message, pure and handle alike', () => {
  for (const rest of [{ message: null }, {}]) {
    const entries = [
      entry('a', null, { message: user('first') }),
      entry('b', 'a', rest),
      entry('c', 'b', { message: user('last') }),
    ];
    const pure = sc.buildSessionContext(entries);
    assert.deepEqual(contents(pure.messages), ['first', 'last'], JSON.stringify(rest));
    // The messages are the host's own objects.
    assert.equal(pure.messages[0], entries[0].message);
    const tree = sc.SessionTree.fromEntries(entries, header);
    assert.deepEqual(contents(tree.buildSessionContext().messages), ['first', 'last']);
    assert.deepEqual(contents(tree.buildLlmMessages()), ['first', 'last']);
    const fromText = sc.SessionTree.fromJsonl(tree.toJsonl());
    assert.deepEqual(contents(fromText.buildSessionContext().messages), ['first', 'last']);
    assert.deepEqual(contents(JSON.parse(fromText.buildSessionContextJson())), ['first', 'last']);
    tree.free();
    fromText.free();
  }
});

test('of duplicate message keys in a loaded line the last one counts, in every handle result', () => {
  const dup = `{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","message":${JSON.stringify(user('one'))},"message":${JSON.stringify(user('two'))}}`;
  const text = [
    JSON.stringify(header),
    JSON.stringify(entry('a', null, { message: user('first') })),
    dup,
    JSON.stringify(entry('c', 'b', { message: user('last') })),
  ].join('\n');
  const tree = sc.SessionTree.fromJsonl(`${text}\n`);
  const want = ['first', 'two', 'last'];
  assert.deepEqual(contents(tree.buildSessionContext().messages), want);
  assert.deepEqual(contents(JSON.parse(tree.buildSessionContextJson())), want);
  assert.deepEqual(contents(tree.buildLlmMessages()), want);
  // The line itself is kept as written.
  assert.ok(tree.toJsonl().includes(dup));
  // The parsed entries (JSON.parse of each line) give the same context through the pure functions.
  assert.deepEqual(contents(sc.buildSessionContext(sc.parseSession(`${text}\n`).entries).messages), want);
  tree.free();
});
