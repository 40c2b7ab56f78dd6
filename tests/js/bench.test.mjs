// The benchmark script (scripts/bench.mjs) still runs: a tiny run on the two real sessions of
// --quick (one repetition, two appends), then --report --markdown of its results. Checks that
// every measurement produced a figure and that each of issue 10's rows is in the table; no
// timing is asserted (the figures themselves belong to `npm run bench`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'bench.mjs');

/** @param {string[]} args */
function bench(args) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `bench.mjs ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

test('bench.mjs --quick on the real sessions: every measurement has a figure; --report prints every row', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  try {
    const out = join(dir, 'results.json');
    const files = ['pi-session-large.jsonl', 'pi-session-v1-format.jsonl'].map((f) => join('examples', 'sessions', f));
    bench([
      '--quick',
      '--pkg',
      join(ROOT, 'pkg'),
      '--files',
      files.join(','),
      '--runtimes',
      'node',
      '--reps',
      '1',
      '--appends',
      '2',
      '--budget-ms',
      '1',
      '--out',
      out,
    ]);
    const results = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(results.mode, 'quick');
    assert.deepEqual(Object.keys(results.runtimes), ['node']);
    assert.equal(results.machine.cores > 0, true);
    const [large, v1] = results.sessions;
    assert.deepEqual(
      [large.name, large.entries, large.v1, v1.name, v1.entries, v1.v1],
      ['pi-session-large', 1018, false, 'pi-session-v1-format', 1002, true],
    );
    const node = large.runtimes.node;
    assert.deepEqual(Object.keys(node), [
      'json-parse',
      'pure-first',
      'pure-append',
      'handle-first',
      'handle-append',
      'load',
      'rss',
      'rss-file',
    ]);
    for (const [kind, m] of Object.entries(node)) {
      assert.equal(m.error, undefined, `${kind}: ${m.error}`);
      assert.equal(m.ms.total.median > 0, true, `${kind}: a positive median`);
      assert.equal(m.peakRssBytes > large.bytes, true, `${kind}: peak RSS above the file size`);
    }
    assert.equal(node['json-parse'].lines, 1019);
    // The rss child reports the leaf's context: 914 messages, 905,139 bytes of JSON.
    assert.deepEqual([node.rss.contextMessages, node.rss.contextBytes], [914, 905139]);
    // fromFile is timed beside fromBytes in the load rows.
    assert.equal(node.load.ms.fromFile.median > 0, true);
    // The handle's first call: the JSON.parse of its context messages alone, timed beside it.
    assert.equal(node['handle-first'].ms.messagesParse.median > 0, true);
    // --appends 2 caps the timed appends; --budget-ms 1 stops after the first that overruns it.
    const appended = node['pure-append'].ms.runs;
    assert.equal(appended === 1 || appended === 2, true, `pure-append ran ${appended} times`);
    assert.deepEqual(Object.keys(v1.runtimes.node), ['v1-load']);
    assert.equal(v1.runtimes.node['v1-load'].ms.v3.median > 0, true);
    assert.equal(results.sizes.wasm.length >= 1, true);
    assert.equal(results.sizes.packed.packedBytes > 0, true);

    const md = bench(['--report', out, '--markdown']);
    // Table rows as trimmed cells: [measure, session, runtime, ours, JSON.parse, ratio, target, met, detail].
    const rows = md
      .split('\n')
      .filter((l) => l.startsWith('| '))
      .slice(2)
      .map((l) =>
        l
          .slice(1, -1)
          .split(' | ')
          .map((c) => c.trim()),
      );
    const labels = new Set(rows.map((r) => r[0]));
    for (const label of [
      'pure prepare+context, first call',
      'pure prepare+context after 1 append',
      'handle first prepare+context',
      'handle appendEntry+prepare+context',
      'load+prepare+context from bytes',
      'peak RSS, handle path (× file)',
      'peak RSS, fromBytes path (× file)',
      'v1 load / same session in v3',
      'wasm gzip',
      'package packed',
    ])
      assert.equal(labels.has(label), true, `row "${label}" in:\n${md}`);
    const row = (/** @type {string} */ label) => rows.find((r) => r[0] === label) ?? [];
    // Rows with a target carry a mark; the 1,018-entry session has the ≤ 1× handle target and
    // no target for the append rows (those are set at 50k).
    const handleFirst = row('handle first prepare+context');
    assert.deepEqual(
      [handleFirst[1], handleFirst[2], handleFirst[6]],
      ['pi-session-large (1,018, 1.0 MB)', 'node', '≤ 1×'],
    );
    assert.match(handleFirst[7], /^(met|NOT MET)$/);
    assert.match(handleFirst[5], /^[\d.]+×$/);
    // Every ratio row names the size of the context it measures.
    assert.match(handleFirst[8], /; JSON\.parse of its messages alone [\d.]+; context 914 msgs, 905 kB$/);
    assert.match(row('pure prepare+context, first call')[8], /; context 914 msgs, 905 kB$/);
    assert.deepEqual(row('pure prepare+context after 1 append').slice(6, 8), ['', '']);
    assert.deepEqual(row('v1 load / same session in v3').slice(1, 3), ['pi-session-v1-format (1,002, 2.3 MB)', 'node']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
