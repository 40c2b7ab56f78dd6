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

  test('buildLlmMessages: new objects on every call, equal to convertToLlm of the provider-valid context', () => {
    const sessions = ['pi-session-with-compactions.jsonl', 'pi-session-large.jsonl', 'pi-session-v1-format.jsonl'];
    for (const name of sessions) {
      const tree = sc.SessionTree.fromBytes(readFileSync(new URL(`../../examples/sessions/${name}`, import.meta.url)));
      // Every message converted for the model, as convertToLlm of the provider-valid context.
      const expected = sc.convertToLlm(JSON.parse(tree.buildSessionContextJson()));
      const llm = tree.buildLlmMessages();
      assert.deepEqual(llm, expected, name);
      // New objects: none is the context's, and a change to one reaches no later call.
      const context = new Set(tree.buildSessionContext().messages);
      assert.ok(
        llm.every((m) => !context.has(m)),
        `${name}: no object of buildSessionContext()`,
      );
      const again = tree.buildLlmMessages();
      assert.ok(
        again.every((m, k) => m !== llm[k]),
        `${name}: no object of the previous call`,
      );
      /** @type {any} */ (llm[0]).cache_control = { type: 'ephemeral' };
      assert.deepEqual(tree.buildLlmMessages(), again, 'the same on a later call, without the change');
      tree.free();
    }
    // Converted: a summary, custom and execution messages, a pruned result with two blocks,
    // an excluded execution (left out) and a tool call without a result (a synthetic one).
    const at = (/** @type {number} */ k) => new Date(Date.UTC(2026, 0, 1, 0, 0, k)).toISOString();
    /** @type {any[]} */
    const entries = [
      {
        type: 'message',
        id: 'u1',
        parentId: null,
        timestamp: at(1),
        message: { role: 'user', content: 'hi', timestamp: 1 },
      },
      {
        type: 'message',
        id: 'a1',
        parentId: 'u1',
        timestamp: at(2),
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: 'ls' } }],
          stopReason: 'toolUse',
          timestamp: 2,
        },
      },
      {
        type: 'message',
        id: 't1',
        parentId: 'a1',
        timestamp: at(3),
        message: {
          role: 'toolResult',
          toolCallId: 'c1',
          toolName: 'bash',
          content: [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'two' },
          ],
          isError: false,
          prunedAt: 5,
          timestamp: 3,
        },
      },
      { type: 'branch_summary', id: 'b1', parentId: 't1', timestamp: at(4), fromId: 'x', summary: 'left behind' },
      {
        type: 'custom_message',
        id: 'm1',
        parentId: 'b1',
        timestamp: at(5),
        customType: 'note',
        content: 'a note',
        display: true,
      },
      {
        type: 'message',
        id: 'x1',
        parentId: 'm1',
        timestamp: at(6),
        message: {
          role: 'bashExecution',
          command: 'pwd',
          output: '/',
          exitCode: 0,
          excludeFromContext: true,
          timestamp: 6,
        },
      },
      {
        type: 'message',
        id: 'x2',
        parentId: 'x1',
        timestamp: at(7),
        message: { role: 'bashExecution', command: 'ls', output: 'a', exitCode: 0, timestamp: 7 },
      },
      {
        type: 'message',
        id: 'a2',
        parentId: 'x2',
        timestamp: at(8),
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'c2', name: 'read', arguments: { path: 'a' } }],
          stopReason: 'toolUse',
          timestamp: 8,
        },
      },
    ];
    const tree = sc.SessionTree.fromEntries(entries);
    const llm = tree.buildLlmMessages();
    assert.deepEqual(llm, sc.convertToLlm(JSON.parse(tree.buildSessionContextJson())));
    assert.deepEqual(
      llm.map((m) => m.role),
      ['user', 'assistant', 'toolResult', 'user', 'user', 'user', 'assistant', 'toolResult'],
    );
    assert.deepEqual(
      /** @type {any} */ (llm[2]).content,
      [{ type: 'text', text: 'onetwo' }],
      'the pruned result: its text blocks joined',
    );
    assert.equal(/** @type {any} */ (llm[7]).toolCallId, 'c2', 'the synthetic result of the unanswered call');
    // What the session saves: a message changed by its caller after it was appended is sent as saved.
    assert.notEqual(llm[0], entries[0].message);
    const typed = { role: 'user', content: 'as typed', timestamp: 9 };
    tree.appendMessage(/** @type {any} */ (typed));
    typed.content = 'changed after';
    assert.equal(/** @type {any} */ (tree.buildLlmMessages().at(-1)).content, 'as typed');
    assert.match(tree.toJsonl(), /"as typed"/);
    tree.free();
  });
});
