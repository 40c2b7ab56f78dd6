// The handle builds each message object once: prepareCompaction and buildSessionContext hand
// back the same objects call after call (and to each other), an entry appended from JS keeps the
// caller's message object, and what pruning or a rollback changes is built again from the
// stored entries. The results are those of the pure functions over the same entries.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import * as sc from '../../pkg/index.node.mjs';

const SAMPLE = new URL('../../examples/sessions/pi-session-with-compactions.jsonl', import.meta.url);

/** The sample session: a handle and the parsed entries of its current branch. */
function load() {
  const tree = sc.SessionTree.fromBytes(readFileSync(SAMPLE));
  return { tree, branch: tree.getBranch() };
}

describe('the handle hands back the message objects it built', () => {
  test('prepareCompaction and buildSessionContext return the same objects on every call', () => {
    const { tree, branch } = load();
    const settings = { keepRecentTokens: 2000 };
    const first = tree.prepareCompaction(settings);
    const context = tree.buildSessionContext();
    assert.ok(first && first.messagesToSummarize.length > 0 && context.messages.length > 0);
    const again = tree.prepareCompaction(settings);
    assert.ok(again);
    for (const key of /** @type {const} */ (['messagesToSummarize', 'turnPrefixMessages', 'recentMessages'])) {
      assert.equal(again[key].length, first[key].length);
      for (const [k, m] of again[key].entries()) assert.equal(m, first[key][k], `${key}[${k}] is the same object`);
    }
    const later = tree.buildSessionContext();
    for (const [k, m] of later.messages.entries())
      assert.equal(m, context.messages[k], `messages[${k}] is the same object`);
    // The kept messages of the preparation are the context's own objects.
    const last = first.recentMessages.at(-1);
    assert.equal(context.messages.at(-1), last);
    // Equal to the pure functions over the same entries (deep equality, not identity).
    const pure = sc.prepareCompaction(branch, settings);
    assert.ok(pure);
    assert.deepEqual(first.messagesToSummarize, pure.messagesToSummarize);
    assert.deepEqual(first.recentMessages, pure.recentMessages);
    assert.equal(first.firstKeptEntryId, pure.firstKeptEntryId);
    assert.deepEqual(context.messages, sc.buildSessionContext(branch).messages);
    tree.free();
  });

  test('an appended entry keeps the caller’s message object; appendMessage too', () => {
    const { tree } = load();
    const before = tree.buildSessionContext().messages;
    /** @type {import('../../pkg/index.node.mjs').AgentMessage} */
    const message = { role: 'user', content: 'one more thing', timestamp: 1 };
    tree.appendEntry({ type: 'message', id: 'appended-1', timestamp: '2026-01-01T00:00:00.000Z', message });
    const after = tree.buildSessionContext().messages;
    assert.equal(after.length, before.length + 1);
    assert.equal(after.at(-1), message, 'the caller’s own object');
    for (const [k, m] of before.entries()) assert.equal(after[k], m, `messages[${k}] unchanged`);
    /** @type {import('../../pkg/index.node.mjs').AgentMessage} */
    const reply = {
      role: 'assistant',
      content: [{ type: 'text', text: 'done' }],
      provider: 'p',
      model: 'm',
      timestamp: 2,
      stopReason: 'stop',
    };
    const entry = tree.appendMessage(reply);
    assert.equal(entry.message, reply, 'the returned entry holds the caller’s message');
    assert.equal(tree.buildSessionContext().messages.at(-1), reply);
    assert.deepEqual(tree.getEntry(entry.id)?.message, reply, 'stored as given');
    tree.free();
  });

  test('a handle built fromEntries hands back the entries’ own message objects', () => {
    const { branch } = load();
    const tree = sc.SessionTree.fromEntries(branch);
    const context = tree.buildSessionContext().messages;
    const own = new Set(branch.map((e) => (e.type === 'message' ? e.message : undefined)));
    const derived = context.filter((m) => !own.has(m));
    assert.ok(context.length > derived.length, 'most messages are the entries’ own');
    for (const m of derived) assert.ok(['compactionSummary', 'branchSummary', 'custom'].includes(m.role), m.role);
    tree.free();
  });

  test('a message entry without a message gives nothing to summarize (handle and pure alike)', () => {
    const at = (/** @type {number} */ n) => `2026-01-01T00:00:0${n}.000Z`;
    const entries = /** @type {import('../../pkg/index.node.mjs').SessionEntry[]} */ (
      /** @type {unknown} */ ([
        { type: 'message', id: 'a', parentId: null, timestamp: at(1) },
        {
          type: 'message',
          id: 'b',
          parentId: 'a',
          timestamp: at(2),
          message: { role: 'user', content: 'q'.repeat(400), timestamp: 2 },
        },
        {
          type: 'message',
          id: 'c',
          parentId: 'b',
          timestamp: at(3),
          message: {
            role: 'assistant',
            content: [{ type: 'text', text: 'a'.repeat(400) }],
            provider: 'p',
            model: 'm',
            stopReason: 'stop',
            timestamp: 3,
          },
        },
      ])
    );
    const settings = { keepRecentTokens: 150 };
    const tree = sc.SessionTree.fromEntries(entries);
    assert.equal(tree.nothingToCompact(settings)?.reason, 'nothingToSummarize');
    assert.equal(tree.prepareCompaction(settings), undefined, 'the handle');
    assert.equal(sc.prepareCompaction(entries, settings), undefined, 'the pure function');
    tree.free();
  });

  test('pruned entries are built again from their new text; the others stay', () => {
    const { tree } = load();
    const context = tree.buildSessionContext().messages;
    const outcome = tree.pruneToolOutputs({ protectTokens: 0, minimumSavings: 0 });
    assert.ok(outcome.prunedCount > 0, 'the sample has old tool outputs');
    const after = tree.buildSessionContext().messages;
    assert.equal(after.length, context.length);
    // Pruning sets `prunedAt` on the messages it rewrites; the context keeps its order.
    const changed = after.map((m, k) => m.prunedAt !== undefined && context[k].prunedAt === undefined);
    assert.equal(changed.filter(Boolean).length, outcome.prunedCount, 'the context shows every pruned output');
    for (const [k, m] of after.entries()) {
      if (changed[k]) assert.notEqual(m, context[k], `messages[${k}] was pruned: a new object`);
      else assert.equal(m, context[k], `messages[${k}] was not changed: the same object`);
    }
    assert.deepEqual(after, sc.buildSessionContext(tree.getBranch()).messages, 'what the stored entries say');
    tree.free();
  });

  test('moving the leaf and back gives the same objects; a message without `message` is left out', () => {
    const { tree } = load();
    const context = tree.buildSessionContext().messages;
    const leaf = tree.leafId;
    const branch = tree.getBranch();
    tree.setLeaf(branch[Math.floor(branch.length / 2)].id);
    const half = tree.buildSessionContext().messages;
    assert.ok(half.length < context.length);
    tree.setLeaf(leaf ?? null);
    for (const [k, m] of tree.buildSessionContext().messages.entries()) assert.equal(m, context[k]);
    const bare = { type: 'message', id: 'no-message', timestamp: '2026-01-01T00:00:00.000Z' };
    tree.appendEntry(/** @type {import('../../pkg/index.node.mjs').SessionEntry} */ (/** @type {unknown} */ (bare)));
    assert.equal(tree.buildSessionContext().messages.length, context.length, 'nothing to show for it');
    tree.free();
  });
});
