// The pure functions read the caller's entry objects in place: results hand back the caller's
// own message objects (identity, not copies), each entry object's metadata is read once and
// cached by object (appends, replaced objects and branch switches are seen; an object changed
// in place keeps its first metadata, as documented), and the results equal those of the JSON
// path (the same entries loaded from bytes into a SessionTree). Uses the real sessions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS = join(ROOT, 'examples', 'sessions');

/**
 * The entries of a session file (header dropped), as `JSON.parse` gives them.
 * @param {string} name
 * @returns {any[]}
 */
function entriesOf(name) {
  const lines = readFileSync(join(SESSIONS, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return lines.map((l) => JSON.parse(l)).filter((e) => e.type !== 'session');
}

/**
 * The current branch of `entries` (root first), through the handle's branch indices.
 * @param {any[]} entries
 */
function branchOf(entries) {
  const tree = sc.SessionTree.fromEntries(entries);
  try {
    return Array.from(tree.branchIndices(), (i) => entries[i]);
  } finally {
    tree.free();
  }
}

/**
 * A message entry.
 * @param {string} id
 * @param {string | null} parentId
 * @param {any} message
 * @returns {any}
 */
function msg(id, parentId, message) {
  return { type: 'message', id, parentId, timestamp: '2025-01-01T00:00:00.000Z', message };
}

/** A small session: u0 → a1 → t1 → u2 → a3 → t3 → u4, tool outputs of `size` chars. */
function small(size = 20_000) {
  /** @param {number} n @param {string} parent */
  const call = (n, parent) => [
    msg(`a${n}`, parent, {
      role: 'assistant',
      content: [{ type: 'toolCall', id: `c${n}`, name: 'read', arguments: { path: `f${n}.ts` } }],
      stopReason: 'toolUse',
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    }),
    msg(`t${n}`, `a${n}`, {
      role: 'toolResult',
      toolCallId: `c${n}`,
      toolName: 'read',
      content: [{ type: 'text', text: 'x'.repeat(size) }],
    }),
  ];
  return [
    msg('u0', null, { role: 'user', content: 'start' }),
    ...call(1, 'u0'),
    msg('u2', 't1', { role: 'user', content: 'more' }),
    ...call(3, 'u2'),
    msg('u4', 't3', { role: 'user', content: 'end' }),
  ];
}

const SETTINGS = { keepRecentTokens: 3_000, reserveTokens: 1_000 };

describe('pure functions read the entries in place', () => {
  for (const name of ['pi-session-large.jsonl', 'pi-session-with-compactions.jsonl']) {
    test(`${name}: the context and the preparation hand back the caller's message objects`, () => {
      const entries = entriesOf(name);
      const ctx = sc.buildSessionContext(entries);
      const own = new Set(entries.map((e) => e.message).filter(Boolean));
      const byEntry = ctx.messages.filter((m) => own.has(m));
      // Every message of a message entry is the entry's own object; only derived ones are new.
      for (const m of ctx.messages) {
        if (!own.has(m)) {
          assert.ok(['compactionSummary', 'branchSummary', 'custom'].includes(m.role), `copied ${m.role}`);
        }
      }
      assert.ok(byEntry.length > 100, `${byEntry.length} messages by identity`);

      const branch = branchOf(entries);
      const prep = sc.prepareCompaction(branch, { keepRecentTokens: 20_000 });
      assert.ok(prep, 'the real session can be compacted');
      const lists = [prep.messagesToSummarize, prep.turnPrefixMessages, prep.recentMessages];
      assert.ok(prep.recentMessages.length > 0);
      for (const list of lists) {
        for (const m of list) {
          if (!own.has(m)) assert.ok(['branchSummary', 'custom'].includes(m.role), `copied ${m.role}`);
        }
      }
      // The first kept message is the message of the first kept entry, as an object.
      const first = branch.find((e) => e.id === prep.firstKeptEntryId);
      assert.ok(first);
      if (first.type === 'message') assert.equal(prep.recentMessages[0], first.message);
    });

    test(`${name}: results equal the handle's (entries loaded from bytes)`, () => {
      const bytes = readFileSync(join(SESSIONS, name));
      const tree = sc.SessionTree.fromBytes(bytes);
      try {
        const entries = entriesOf(name);
        const branch = branchOf(entries);
        assert.deepEqual(sc.buildSessionContext(entries), tree.buildSessionContext());
        const settings = { keepRecentTokens: 20_000 };
        const { preview: _preview, ...fromTree } = tree.prepareCompaction(settings) ?? {};
        assert.deepEqual(sc.prepareCompaction(branch, settings), fromTree);
        assert.equal(sc.estimateContextTokens(branch), tree.estimateContextTokens());
        // A second call (every object cached) gives the same results.
        assert.deepEqual(sc.buildSessionContext(entries), tree.buildSessionContext());
        assert.deepEqual(sc.prepareCompaction(branch, settings), fromTree);
      } finally {
        tree.free();
      }
    });
  }

  test('the results of a JSON copy of the entries equal those of the entries', () => {
    const entries = entriesOf('pi-session-with-compactions.jsonl');
    const copy = structuredClone(entries);
    assert.deepEqual(sc.buildSessionContext(entries), sc.buildSessionContext(copy));
    const branch = branchOf(entries);
    assert.deepEqual(sc.prepareCompaction(branch, SETTINGS), sc.prepareCompaction(structuredClone(branch), SETTINGS));
    for (const e of entries.slice(0, 200)) {
      if (e.type === 'message')
        assert.equal(sc.estimateTokens(e.message), sc.estimateTokens(structuredClone(e.message)));
    }
  });

  test('an appended entry is seen, and the earlier objects are still returned by identity', () => {
    const entries = small();
    const before = sc.buildSessionContext(entries);
    assert.equal(before.messages.length, 7);
    const added = msg('a5', 'u4', { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(40_000) }] });
    entries.push(added);
    const after = sc.buildSessionContext(entries);
    assert.equal(after.messages.length, 8);
    assert.equal(after.messages[7], added.message);
    for (let k = 0; k < 7; k++) assert.equal(after.messages[k], entries[k].message);
    // 40,000 chars of text: 10,000 more estimated tokens on the branch.
    assert.equal(sc.estimateContextTokens(entries) - sc.estimateContextTokens(entries.slice(0, 7)), 10_000);
    const prep = sc.prepareCompaction(entries, SETTINGS);
    assert.ok(prep);
    assert.equal(prep.firstKeptEntryId, 'a5');
    assert.equal(prep.recentMessages[0], added.message);
    assert.equal(prep.messagesToSummarize[0], entries[0].message);
  });

  test('a replaced entry object is read again; an object changed in place keeps its first metadata', () => {
    const entries = small(400);
    const tokens = sc.estimateContextTokens(entries);
    // Replaced: a new object with a longer tool output counts its new length.
    const t3 = entries[5];
    entries[5] = {
      ...t3,
      message: { ...t3.message, content: [{ type: 'text', text: 'x'.repeat(40_400) }] },
    };
    assert.equal(sc.estimateContextTokens(entries), tokens + 10_000);
    assert.equal(sc.buildSessionContext(entries).messages[5], entries[5].message);
    // Changed in place: documented as not seen (the metadata was cached by object); the
    // returned message is the object as it is now.
    const replaced = sc.estimateContextTokens(entries);
    entries[5].message.content = [{ type: 'text', text: 'short' }];
    assert.equal(sc.estimateContextTokens(entries), replaced);
    const m5 = /** @type {any} */ (sc.buildSessionContext(entries).messages[5]);
    assert.equal(m5.content[0].text, 'short');
    // Putting the original object back gives the original figures.
    entries[5] = t3;
    assert.equal(sc.estimateContextTokens(entries), tokens);
  });

  test('a returned message changed by the caller does not change the next decisions', () => {
    const entries = small();
    const prep = sc.prepareCompaction(entries, SETTINGS);
    assert.ok(prep);
    for (const m of prep.messagesToSummarize) m.content = 'tampered';
    const again = sc.prepareCompaction(entries, SETTINGS);
    assert.ok(again);
    assert.equal(again.firstKeptEntryId, prep.firstKeptEntryId);
    assert.deepEqual(again.fileOps, prep.fileOps);
    assert.equal(again.messagesToSummarize.length, prep.messagesToSummarize.length);
  });

  test('branch switches: the context of each leaf, from the same cached objects', () => {
    const entries = small(100);
    // A side branch off u2: b1 → b2.
    entries.push(msg('b1', 'u2', { role: 'user', content: 'side' }));
    entries.push(msg('b2', 'b1', { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }));
    const main = sc.buildSessionContext(entries, 'u4');
    assert.deepEqual(
      main.messages.map((m) => m.role),
      ['user', 'assistant', 'toolResult', 'user', 'assistant', 'toolResult', 'user'],
    );
    const side = sc.buildSessionContext(entries, 'b2');
    assert.deepEqual(
      side.messages,
      [0, 1, 2, 3, 7, 8].map((i) => entries[i].message),
    );
    assert.equal(side.messages[5], entries[8].message);
    assert.equal(sc.buildSessionContext(entries).messages.at(-1), entries[8].message);
    assert.deepEqual(sc.buildSessionContext(entries, null).messages, []);
    // Derived messages are built: a branch summary on the side branch.
    entries.push({
      type: 'branch_summary',
      id: 'bs',
      parentId: 'b2',
      timestamp: '2025-01-01T00:00:01.000Z',
      fromId: 'u4',
      summary: 'the main line',
    });
    const last = /** @type {any} */ (sc.buildSessionContext(entries).messages.at(-1));
    assert.equal(last.role, 'branchSummary');
    assert.equal(last.summary, 'the main line');
  });

  test('entries that cannot be read are E_INVALID_ARGUMENT errors naming the entry', () => {
    const entries = small(10);
    const throwing = {
      type: 'message',
      id: 'bad',
      parentId: 'u4',
      get message() {
        throw new Error('no');
      },
    };
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const bad of [throwing, proxy]) {
      const list = [...entries, bad];
      assert.throws(
        () => sc.buildSessionContext(list),
        (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /entries\[7\]/.test(e.message),
      );
      assert.throws(
        () => sc.prepareCompaction(list, SETTINGS),
        (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /pathEntries\[7\]/.test(e.message),
      );
    }
    assert.throws(
      () => sc.findCutPoint(/** @type {any} */ ('x'), 0, 1, 10),
      (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT',
    );
    // Values that are not objects are entries of no known type: read, never an error.
    assert.equal(sc.buildSessionContext([...entries, 5, null, 'x'], 'u4').messages.length, 7);
  });

  test('convertToLlm hands back the messages it leaves as they are; converts the others as from JSON', () => {
    for (const name of ['pi-session-large.jsonl', 'pi-session-with-compactions.jsonl']) {
      const messages = /** @type {any[]} */ (sc.buildSessionContext(entriesOf(name)).messages);
      const llm = /** @type {any[]} */ (sc.convertToLlm(messages));
      // The JSON path: a message with a `toJSON` method is read through its JSON.
      const viaJson = sc.convertToLlm(/** @type {any} */ (messages.map((m) => ({ toJSON: () => m }))));
      assert.deepEqual(llm, viaJson, name);
      assert.ok(
        llm.every((m) => !viaJson.includes(m)),
        'the JSON path builds new objects',
      );
      const own = new Set(messages);
      for (const [k, m] of llm.entries()) {
        const unchanged = ['user', 'assistant', 'toolResult'].includes(m.role) && !('prunedAt' in m);
        if (unchanged && messages.includes(m)) continue;
        assert.ok(!unchanged || !own.has(m), `${name}: llm[${k}]`);
      }
      const kept = llm.filter((m) => own.has(m)).length;
      assert.ok(kept > messages.length / 2, `${name}: ${kept} of ${messages.length} handed back`);
    }
    const user = { role: 'user', content: 'hi', timestamp: 1 };
    const result = { role: 'toolResult', toolCallId: 'c', toolName: 'bash', content: [], isError: false, timestamp: 2 };
    const pruned = {
      ...result,
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      prunedAt: null,
    };
    const undefinedPrunedAt = { ...result, prunedAt: undefined };
    const withToJson = {
      role: 'user',
      content: 'x',
      toJSON: () => ({ role: 'custom', content: 'from toJSON', timestamp: 3 }),
    };
    const summary = { role: 'compactionSummary', summary: 'S', tokensBefore: 1, timestamp: 4 };
    const out = /** @type {any[]} */ (
      sc.convertToLlm(/** @type {any} */ ([user, result, pruned, undefinedPrunedAt, withToJson, summary, 5, null]))
    );
    assert.equal(out.length, 6, 'values that are not messages are left out');
    assert.equal(out[0], user);
    assert.equal(out[1], result);
    assert.notEqual(out[2], pruned);
    assert.deepEqual(out[2].content, [{ type: 'text', text: 'ab' }], 'a pruned result (prunedAt: null) is converted');
    assert.equal(out[3], undefinedPrunedAt, 'prunedAt: undefined is absent from its JSON');
    assert.deepEqual(out[4].content, [{ type: 'text', text: 'from toJSON' }], 'read through toJSON');
    assert.equal(out[5].role, 'user');
    assert.match(out[5].content[0].text, /S/);
    const throwing = {
      get role() {
        throw new Error('no');
      },
    };
    assert.throws(
      () => sc.convertToLlm(/** @type {any} */ ([user, throwing])),
      (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /messages\[1\]/.test(e.message),
    );
  });
});
