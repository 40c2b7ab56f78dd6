// console.log / util.inspect of the engine's classes shows their figures, not the glue's pointer
// field, in the Node entry and in the web entry (the same inlined helper, shared/freed-guard.js).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { inspect } from 'node:util';
import * as sc from '../../pkg/index.node.mjs';
import * as web from '../../pkg/index.web.mjs';

const SAMPLE = new URL('../../examples/sessions/pi-session-with-compactions.jsonl', import.meta.url);

test('a SessionTree shows its entry count, leaf and load facts; a freed one says so', () => {
  const tree = sc.SessionTree.fromBytes(readFileSync(SAMPLE));
  const shown = inspect(tree);
  assert.match(shown, /^SessionTree \{/);
  assert.ok(shown.includes(`entryCount: ${tree.entryCount}`), shown);
  assert.ok(shown.includes(`leafId: '${tree.leafId}'`), shown);
  assert.ok(shown.includes('sourceVersion: 3') && shown.includes('loadErrors: 0'), shown);
  assert.ok(!shown.includes('__wbg_ptr'), shown);
  // Inside other values too (console.log of an array or an object).
  assert.ok(inspect({ tree }).includes(`entryCount: ${tree.entryCount}`));
  tree.free();
  assert.equal(inspect(tree), 'SessionTree (freed)');
});

test('a PruneOutcome shows what toJSON() returns', () => {
  const tree = sc.SessionTree.fromBytes(readFileSync(SAMPLE));
  const outcome = tree.pruneToolOutputs({ protectTokens: 2000, minimumSavings: 0 });
  const summary = outcome.toJSON();
  assert.ok(summary.prunedCount > 0, 'the sample has outputs to prune');
  const shown = inspect(outcome, { depth: 0 });
  assert.match(shown, /^PruneOutcome \{/);
  assert.ok(
    shown.includes(`prunedCount: ${summary.prunedCount}`) && shown.includes(`tokensSaved: ${summary.tokensSaved}`),
  );
  assert.ok(!shown.includes('__wbg_ptr'), shown);
  outcome.free();
  assert.equal(inspect(outcome), 'PruneOutcome (freed)');
  tree.free();
});

test('the web entry shows the same', async () => {
  await web.init();
  const tree = web.SessionTree.fromBytes(readFileSync(SAMPLE));
  assert.ok(inspect(tree).startsWith(`SessionTree {\n  entryCount: ${tree.entryCount},`), inspect(tree));
  tree.free();
  assert.equal(inspect(tree), 'SessionTree (freed)');
});
