// Staleness-aware pruning (SPEC §13.6) and previews with the outcome through the JavaScript API
// of the built package (pkg/, Node entry): superseded outputs first and their notices, the
// `staleness: false` switch, `previewCompaction`, and the `preview` of `tree.planCompaction()` /
// `tree.prepareCompaction()` on a real session.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';

/** @typedef {import('../../pkg/index.node.mjs').SessionEntry} SessionEntry */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WITH_COMPACTIONS = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');

/**
 * A branch of tool calls: each `[tool, arguments]` becomes an assistant call and a 1 000-token
 * result (ids `a<n>` / `t<n>`), after one user message.
 * @param {[string, Record<string, unknown>][]} calls
 * @returns {SessionEntry[]}
 */
function branch(calls) {
  const ts = '2025-01-01T00:00:00.000Z';
  /** @type {any[]} */
  const out = [
    {
      type: 'message',
      id: 'u0',
      parentId: null,
      timestamp: ts,
      message: { role: 'user', content: 'go', timestamp: 1 },
    },
  ];
  calls.forEach(([tool, args], k) => {
    const n = k + 1;
    out.push({
      type: 'message',
      id: `a${n}`,
      parentId: out[out.length - 1].id,
      timestamp: ts,
      message: {
        role: 'assistant',
        content: [{ type: 'toolCall', id: `c${n}`, name: tool, arguments: args }],
        provider: 'p',
        model: 'm',
        stopReason: 'toolUse',
        timestamp: 2,
      },
    });
    out.push({
      type: 'message',
      id: `t${n}`,
      parentId: `a${n}`,
      timestamp: ts,
      message: {
        role: 'toolResult',
        toolCallId: `c${n}`,
        toolName: tool,
        content: [{ type: 'text', text: 'z'.repeat(4000) }],
        isError: false,
        timestamp: 3,
      },
    });
  });
  return out;
}

const NO_MINIMUM = { protectTokens: 40000, minimumSavings: 0, protectedTools: ['skill'] };

describe('staleness-aware pruning', () => {
  test('a file read three times: the two older outputs are pruned, the notice names the later read', () => {
    const entries = branch([
      ['read', { path: 'src/a.rs' }],
      ['read', { path: 'src/a.rs' }],
      ['read', { path: 'src/a.rs' }],
    ]);
    const r = sc.pruneToolOutputs(entries, NO_MINIMUM, 1000);
    assert.deepEqual(
      r.prunedEntries.map((e) => e.id),
      ['t2', 't1'],
    );
    for (const e of /** @type {any[]} */ (r.prunedEntries)) {
      assert.deepEqual(e.message.content, [
        {
          type: 'text',
          text: '[Output truncated - 1000 tokens; superseded by a later full read of src/a.rs (entry t3)]',
        },
      ]);
      assert.equal(e.message.prunedAt, 1000);
    }
    // Off: SPEC §7 alone, and everything is inside the protect window.
    assert.equal(sc.pruneToolOutputs(entries, { ...NO_MINIMUM, staleness: false }, 1000).prunedCount, 0);
    // The default config protects `read`.
    assert.equal(sc.pruneToolOutputs(entries, { minimumSavings: 0 }, 1000).prunedCount, 0);
  });

  test('range reads, an edit in between, identical commands; planPrune reports supersededBy', () => {
    const entries = branch([
      ['read', { path: 'src/a.rs', offset: 1, limit: 10 }],
      ['read', { path: 'src/a.rs' }],
      ['edit', { path: 'src/a.rs', oldText: 'a', newText: 'b' }],
      ['read', { path: 'src/a.rs', offset: 1, limit: 10 }],
      ['bash', { command: 'npm test' }],
      ['bash', { command: 'npm test' }],
    ]);
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      const plan = tree.planPrune(NO_MINIMUM);
      // t1 (range) is superseded by the full read t2; the range read t4 does not supersede t2;
      // the edit t3 stays; the first `npm test` is superseded by the second.
      assert.deepEqual(
        plan.candidates.map((c) => [c.id, c.supersededBy?.id, c.supersededBy?.description]),
        [
          ['t5', 't6', 'a later identical bash call'],
          ['t1', 't2', 'a later full read of src/a.rs'],
        ],
      );
      assert.equal(plan.candidates[0].supersededBy?.index, 12, 'entry index of t6');
      assert.equal(
        plan.tokensSaved,
        plan.candidates.reduce((n, c) => n + c.savings, 0),
      );
    } finally {
      tree.free();
    }
  });
});

describe('previews with the outcome', () => {
  test('previewCompaction, tree.planCompaction and tree.prepareCompaction agree on a real session', () => {
    const text = readFileSync(WITH_COMPACTIONS, 'utf8');
    const tree = sc.SessionTree.fromJsonl(text);
    try {
      const plan = tree.planCompaction();
      const preview = plan?.preview;
      assert.ok(preview?.compaction, 'the real session has something to compact');
      const c = preview.compaction;
      // The basis of compact's contextTokensBefore/After (the built context's estimate, SPEC
      // §13.5), not the provider's count of the last turn that the threshold check uses.
      assert.equal(tree.estimateContextTokens(), 180820);
      assert.deepEqual(
        [c.contextTokensBefore, c.summarizedTokens, c.summaryTokens, c.keptTokens, c.contextTokensAfter],
        [139022, 122498, 21573, 16524, 38097],
      );
      assert.equal(c.contextTokensAfter, c.contextTokensBefore - c.summarizedTokens + c.summaryTokens);
      assert.deepEqual(preview.withPrune.prunedCount, 0, 'the default prune finds nothing to prune');
      const prep = tree.prepareCompaction();
      assert.deepEqual(prep?.preview, preview);
      assert.deepEqual(sc.previewCompaction(tree.getBranch()), preview, 'the pure function');
      // A preparation with a preview is still a preparation: compact() ignores the figures.
      assert.equal(sc.prepareCompaction(tree.getBranch())?.preview, undefined);
    } finally {
      tree.free();
    }
  });

  test('the combined preview counts the prune first', () => {
    const calls = /** @type {[string, Record<string, unknown>][]} */ (
      Array.from({ length: 8 }, () => ['bash', { command: 'cargo test' }])
    );
    const entries = branch(calls);
    const p = sc.previewCompaction(entries, { keepRecentTokens: 1100, reserveTokens: 2000 }, NO_MINIMUM);
    const before = sc.estimateContextTokens(entries);
    assert.equal(p.withPrune.prunedCount, 7, 'seven runs superseded by the eighth');
    assert.equal(p.withPrune.contextTokensAfterPrune, before - p.withPrune.pruneTokensSaved);
    assert.equal(p.compaction?.contextTokensBefore, before);
    assert.equal(p.withPrune.compaction?.contextTokensBefore, p.withPrune.contextTokensAfterPrune);
    assert.equal(p.withPrune.contextTokensAfter, p.withPrune.compaction?.contextTokensAfter);
    assert.ok(p.withPrune.contextTokensAfterPrune < before / 4);
  });
});
