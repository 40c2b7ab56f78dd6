// Issue 9 through the JavaScript API of the built package (pkg/, Node entry): provider-valid
// outputs and their repair reports (SPEC §13.1), compactions bound to their branch (§13.2),
// hook-supplied cuts that are refused, labels on unknown targets.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';

/** @typedef {import('../../pkg/index.node.mjs').SessionEntry} SessionEntry */
/** @typedef {import('../../pkg/index.node.mjs').AgentMessage} AgentMessage */
/** @typedef {import('../../pkg/index.node.mjs').ContextRepair} ContextRepair */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS = join(ROOT, 'examples', 'sessions');
const REAL = ['pi-session-with-compactions.jsonl', 'pi-session-large.jsonl', 'pi-session-v1-format.jsonl'];
const TS = '2025-01-01T00:00:00.000Z';
const MISSING = 'No result was recorded for this tool call';

/**
 * @param {string} id @param {string | null} parentId @param {Record<string, unknown>} message
 * @returns {SessionEntry}
 */
const entry = (id, parentId, message) =>
  /** @type {SessionEntry} */ ({ type: 'message', id, parentId, timestamp: TS, message: { timestamp: 1, ...message } });
/** @param {string} id @param {string | null} parentId @param {string} text */
const user = (id, parentId, text) => entry(id, parentId, { role: 'user', content: text });
/** @param {string} id @param {string | null} parentId @param {string[]} calls */
const assistant = (id, parentId, calls) =>
  entry(id, parentId, {
    role: 'assistant',
    content: calls.map((c) => ({ type: 'toolCall', id: c, name: 'bash', arguments: { command: 'ls' } })),
    stopReason: 'toolUse',
  });
/** @param {string} id @param {string | null} parentId @param {string} call @param {number} size */
const result = (id, parentId, call, size = 10) =>
  entry(id, parentId, {
    role: 'toolResult',
    toolCallId: call,
    toolName: 'bash',
    content: [{ type: 'text', text: 'o'.repeat(size) }],
    isError: false,
  });

/**
 * SPEC §13.1 on a message list: results right after their assistant, each call answered once
 * before the next non-result message. Returns the first violation or null.
 * @param {any[]} messages
 * @returns {string | null}
 */
function violation(messages) {
  /** @type {string[]} */
  let pending = [];
  /** @type {string[]} */
  let answered = [];
  let inResults = false;
  for (const [i, m] of messages.entries()) {
    if (m.role === 'toolResult') {
      if (!inResults) return `message ${i}: result ${m.toolCallId} does not follow an assistant`;
      const k = pending.indexOf(m.toolCallId);
      if (k < 0)
        return `message ${i}: result ${m.toolCallId} answers ${answered.includes(m.toolCallId) ? 'again' : 'nothing'}`;
      answered.push(...pending.splice(k, 1));
      continue;
    }
    if (pending.length > 0) return `message ${i}: call ${pending[0]} unanswered`;
    answered = [];
    inResults = m.role === 'assistant';
    pending = inResults
      ? (Array.isArray(m.content) ? m.content : [])
          .filter((/** @type {any} */ b) => b?.type === 'toolCall')
          .map((/** @type {any} */ b) => b.id)
      : [];
  }
  return pending.length > 0 ? `end: call ${pending[0]} unanswered` : null;
}

/** @param {ContextRepair[]} repairs */
const kinds = (repairs) => repairs.map((r) => [r.kind, r.entryId, r.toolCallId]);

describe('provider-valid outputs (SPEC §13.1)', () => {
  test('an interrupted turn gets a synthetic error result in buildSessionContextJson and buildLlmMessages', () => {
    const tree = sc.SessionTree.fromEntries([
      user('u0', null, 'go'),
      assistant('a1', 'u0', ['c1', 'c2']),
      result('t2', 'a1', 'c1'),
      user('u3', 't2', 'never mind'),
    ]);
    const ctx = tree.buildSessionContext();
    assert.equal(ctx.messages.length, 4, 'buildSessionContext stays as stored');
    assert.deepEqual(kinds(ctx.repairs), [['missingToolResult', 'a1', 'c2']]);
    assert.deepEqual(ctx.repairs[0], { kind: 'missingToolResult', entryId: 'a1', toolCallId: 'c2', messageIndex: 1 });
    const json = JSON.parse(tree.buildSessionContextJson());
    assert.equal(violation(json), null);
    assert.equal(json.length, 5);
    assert.deepEqual(json[3], {
      role: 'toolResult',
      toolCallId: 'c2',
      toolName: 'bash',
      content: [{ type: 'text', text: MISSING }],
      isError: true,
      timestamp: 1,
    });
    const llm = tree.buildLlmMessages();
    assert.equal(violation(llm), null);
    assert.deepEqual(tree.contextRepairs(), ctx.repairs);
    assert.deepEqual(tree.validate().repairs, ctx.repairs);
    assert.ok(!tree.toJsonl().includes(MISSING), 'never stored');
    tree.free();
  });

  test('repeated and empty tool call ids are sent with ids of their own, and so are their results', async () => {
    const { toAnthropicMessages } = await import('../../pkg/anthropic.mjs');
    const entries = [
      user('u', null, 'q'),
      assistant('a1', 'u', ['d', 'd', '']),
      result('r1', 'a1', 'd'),
      result('r2', 'r1', ''),
      assistant('a2', 'r2', ['d']),
      result('r3', 'a2', 'd'),
    ];
    const tree = sc.SessionTree.fromEntries(entries);
    const kinds = tree.contextRepairs().map((r) => [r.kind, r.toolCallId, r.messageIndex]);
    assert.deepEqual(kinds, [
      ['renamedToolCallId', 'd', 1],
      ['renamedToolCallId', '', 1],
      ['missingToolResult', 'd', 1],
      ['renamedToolCallId', 'd', 4],
    ]);
    /** @param {any[]} messages */
    const ids = (messages) =>
      messages.map((m) =>
        m.role === 'toolResult'
          ? m.toolCallId
          : (Array.isArray(m.content) ? m.content : [])
              .filter((/** @type {any} */ b) => b.type === 'toolCall')
              .map((/** @type {any} */ b) => b.id),
      );
    const want = [[], ['d', 'd_2', 'call_1'], 'd', 'call_1', 'd_2', ['d_3'], 'd_3'];
    assert.deepEqual(ids(tree.buildLlmMessages()), want);
    assert.deepEqual(ids(JSON.parse(tree.buildSessionContextJson())), want);
    const { messages } = sc.convertToLlm(tree.buildSessionContext().messages, { repair: true });
    assert.deepEqual(ids(messages), want);
    // What Anthropic is sent: every tool_use id once, every tool_result answering one.
    const blocks = toAnthropicMessages(tree.buildLlmMessages()).flatMap((m) =>
      Array.isArray(m.content) ? m.content : [],
    );
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
    assert.equal(new Set(uses).size, uses.length);
    assert.ok(
      uses.every((id) => /^[a-zA-Z0-9_-]+$/.test(id)),
      uses.join(),
    );
    assert.deepEqual(
      blocks
        .filter((b) => b.type === 'tool_result')
        .map((b) => b.tool_use_id)
        .sort(),
      [...uses].sort(),
    );
    // The session itself is unchanged.
    assert.equal(/** @type {any} */ (tree.getEntry('a1')).message.content[1].id, 'd');
    tree.free();
  });

  test('a steering message typed while tools ran is placed after the results', () => {
    const tree = sc.SessionTree.fromEntries([
      user('u0', null, 'go'),
      assistant('a1', 'u0', ['c1']),
      user('u2', 'a1', 'also the tests'),
      result('t3', 'u2', 'c1'),
    ]);
    const json = JSON.parse(tree.buildSessionContextJson());
    assert.deepEqual(
      json.map((/** @type {any} */ m) => m.role),
      ['user', 'assistant', 'toolResult', 'user'],
    );
    assert.deepEqual(kinds(tree.contextRepairs()), [['movedAfterToolResults', 'u2', 'c1']]);
    tree.free();
  });

  test('convertToLlm(messages, {repair: true}) returns {messages, repairs}; without it, the array as before', () => {
    /** @type {AgentMessage[]} */
    const messages = [
      /** @type {AgentMessage} */ ({
        role: 'toolResult',
        toolCallId: 'c0',
        toolName: 'bash',
        content: [],
        isError: false,
        timestamp: 1,
      }),
      /** @type {AgentMessage} */ (assistant('a', null, ['c1']).message),
      /** @type {AgentMessage} */ ({
        role: 'bashExecution',
        command: 'ls',
        output: 'x',
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: 2,
      }),
    ];
    const frozen = structuredClone(messages);
    const repaired = sc.convertToLlm(messages, { repair: true });
    assert.deepEqual(messages, frozen, 'the argument is not mutated');
    assert.equal(violation(repaired.messages), null);
    assert.deepEqual(
      repaired.repairs.map((r) => [r.kind, r.toolCallId, r.messageIndex, r.entryId]),
      [
        ['orphanToolResult', 'c0', 0, undefined],
        ['missingToolResult', 'c1', 1, undefined],
      ],
    );
    assert.deepEqual(
      repaired.messages.map((m) => m.role),
      ['assistant', 'toolResult', 'user'],
    );
    const plain = sc.convertToLlm(messages);
    assert.ok(Array.isArray(plain));
    assert.equal(plain.length, 3, 'unchanged without the option');
    assert.deepEqual(sc.convertToLlm(messages, { repair: false }), plain);
  });

  test('buildSessionContext (pure) carries the same report and stays faithful', () => {
    const entries = [user('u0', null, 'go'), assistant('a1', 'u0', ['c1'])];
    const ctx = sc.buildSessionContext(entries);
    assert.equal(ctx.messages.length, 2);
    assert.deepEqual(kinds(ctx.repairs), [['missingToolResult', 'a1', 'c1']]);
    assert.deepEqual(sc.validateSession(entries).repairs, ctx.repairs);
  });

  test('navigating to an assistant whose calls were answered on another branch: valid, and validate() reports it', () => {
    const tree = sc.SessionTree.fromEntries([
      user('u0', null, 'go'),
      assistant('a1', 'u0', ['c1']),
      result('t2', 'a1', 'c1'),
    ]);
    assert.deepEqual(tree.validate(), { issues: [], repairs: [] });
    tree.setLeaf('a1');
    assert.equal(violation(JSON.parse(tree.buildSessionContextJson())), null);
    const report = tree.validate();
    assert.deepEqual(kinds(report.repairs), [['missingToolResult', 'a1', 'c1']]);
    assert.deepEqual(
      report.issues.map((i) => [i.code, i.id, i.relatedId]),
      [['E_UNANSWERED_TOOL_CALL', 'a1', 'c1']],
    );
    tree.free();
  });

  for (const name of REAL) {
    test(`the real session ${name} gives provider-valid contexts (current leaf and navigated leaves)`, () => {
      const tree = sc.SessionTree.fromBytes(readFileSync(join(SESSIONS, name)));
      const stored = tree.buildSessionContext();
      assert.ok(stored.repairs.length > 0, 'the real sessions hold interrupted turns');
      assert.equal(violation(JSON.parse(tree.buildSessionContextJson())), null);
      assert.equal(violation(tree.buildLlmMessages()), null);
      const ids = tree
        .getTree()
        .filter((_, i) => i % 50 === 0)
        .map((n) => n.id)
        .filter((id) => id !== null);
      for (const id of ids) {
        tree.setLeaf(id);
        assert.equal(violation(JSON.parse(tree.buildSessionContextJson())), null, `leaf ${id}`);
        assert.equal(violation(tree.buildLlmMessages()), null, `leaf ${id} (LLM)`);
      }
      tree.free();
    });
  }
});

/** A branch worth compacting (u0 … a6) and a sibling branch b7. */
function compactable() {
  const tree = sc.SessionTree.fromEntries([
    user('u0', null, 'x'.repeat(8000)),
    assistant('a1', 'u0', ['c1']),
    result('t2', 'a1', 'c1', 4000),
    user('u3', 't2', 'y'.repeat(400)),
    assistant('a4', 'u3', ['c4']),
    result('t5', 'a4', 'c4', 400),
    entry('a6', 't5', { role: 'assistant', content: [{ type: 'text', text: 'done' }], stopReason: 'stop' }),
    user('b7', 'u0', 'the other branch'),
  ]);
  tree.setLeaf('a6');
  return tree;
}
const SETTINGS = { keepRecentTokens: 300 };
const complete = async () => 'SUMMARY';

describe('branch-bound compaction (SPEC §13.2)', () => {
  test('setLeaf during a compaction: the compaction goes under the prepared leaf, the leaf stays', async () => {
    const tree = compactable();
    const done = await tree.compact({
      complete,
      settings: SETTINGS,
      hooks: { 'session.compacting': () => tree.setLeaf('b7') },
    });
    assert.equal(done.compactionEntry.parentId, 'a6');
    assert.equal(tree.leafId, 'b7');
    assert.equal(tree.buildSessionContext().messages.length, 2, 'the other branch is untouched');
    tree.free();
  });

  test("the host's next turn appended during a compaction: the compaction goes under it and is the leaf", async () => {
    const tree = compactable();
    const done = await tree.compact({
      complete,
      settings: SETTINGS,
      hooks: {
        'session.compacting': () => {
          const { parentId: _none, ...next } = /** @type {any} */ (user('h1', null, 'and now?'));
          tree.appendEntry(next);
        },
      },
    });
    assert.equal(done.compactionEntry.parentId, 'h1');
    assert.equal(tree.leafId, done.compactionEntry.id);
    // Under a6 it was a sibling of h1, and the check of h1's branch said it made no progress.
    assert.equal(done.result.noProgress, undefined);
    assert.ok(Number(done.result.contextTokensAfter) < Number(done.result.contextTokensBefore));
    assert.deepEqual(tree.buildSessionContext().messages.at(-1), { timestamp: 1, role: 'user', content: 'and now?' });
    tree.free();
  });

  test('navigateTree during a compaction is E_BUSY', async () => {
    const tree = compactable();
    /** @type {() => void} */
    let release = () => {};
    const gate = new Promise((resolve) => {
      release = () => resolve(undefined);
    });
    /** @type {() => void} */
    let entered = () => {};
    const inHook = new Promise((resolve) => {
      entered = () => resolve(undefined);
    });
    const running = tree.compact({
      complete,
      settings: SETTINGS,
      hooks: {
        'session.compacting': () => {
          entered();
          return gate;
        },
      },
    });
    await inHook;
    assert.equal(tree.isCompacting, true);
    await assert.rejects(tree.navigateTree('b7', {}), (/** @type {any} */ e) => e.code === 'E_BUSY');
    release();
    await running;
    tree.free();
  });

  test('a failing session_compact hook removes only the compaction, not what the host appended', async () => {
    const tree = compactable();
    await assert.rejects(
      tree.compact({
        complete,
        settings: SETTINGS,
        hooks: {
          session_compact: () => {
            const { parentId: _none, ...next } = /** @type {any} */ (user('h1', null, 'next question'));
            tree.appendEntry(next);
            throw new Error('after-hook broke');
          },
        },
      }),
      (/** @type {any} */ e) => e.code === 'E_HOOK',
    );
    assert.equal(tree.entryCount, 9);
    assert.equal(tree.getEntry('h1')?.parentId, 'a6');
    assert.equal(tree.leafId, 'h1');
    assert.ok(tree.getTree().every((n) => n.type !== 'compaction'));
    tree.free();
  });

  for (const [id, why] of /** @type {[string, RegExp][]} */ ([
    ['nope', /names no entry/],
    ['b7', /not on the branch/],
    ['t5', /not a valid cut point/],
  ])) {
    test(`a hook compaction keeping from ${id} is refused with E_HOOK naming it`, async () => {
      const tree = compactable();
      await assert.rejects(
        tree.compact({
          complete,
          settings: SETTINGS,
          hooks: {
            session_before_compact: () => ({ compaction: { summary: 's', firstKeptEntryId: id, tokensBefore: 1 } }),
          },
        }),
        (/** @type {any} */ e) => e.code === 'E_HOOK' && e.message.includes(id) && why.test(e.message),
      );
      assert.equal(tree.entryCount, 8);
      tree.free();
    });
  }
});

describe('labels on unknown targets', () => {
  test('appendEntry of a label on an unknown target is E_NOT_FOUND; validate() reports one in a loaded file', () => {
    const tree = sc.SessionTree.fromEntries([user('u0', null, 'hi')]);
    assert.throws(
      () =>
        tree.appendEntry(
          /** @type {SessionEntry} */ ({ type: 'label', id: 'l1', timestamp: TS, targetId: 'ghost', label: 'x' }),
        ),
      (/** @type {any} */ e) => e.code === 'E_NOT_FOUND' && /ghost/.test(e.message),
    );
    assert.equal(tree.entryCount, 1);
    tree.free();
    const text = [
      JSON.stringify({ type: 'session', version: 3, id: 's', timestamp: TS, cwd: '/' }),
      JSON.stringify(user('u0', null, 'hi')),
      JSON.stringify({ type: 'label', id: 'l1', parentId: 'u0', timestamp: TS, targetId: 'ghost', label: 'x' }),
    ].join('\n');
    const loaded = sc.SessionTree.fromJsonl(text);
    assert.deepEqual(
      loaded.validate().issues.map((i) => [i.code, i.id, i.relatedId, i.line]),
      [['E_NOT_FOUND', 'l1', 'ghost', 3]],
    );
    loaded.free();
  });
});
