#!/usr/bin/env node
// The per-turn rows of issue 10 (what a host calls after every turn), as a function the main
// benchmark (scripts/bench.mjs) calls in its child processes, and as a script of its own:
//
//   pure, first call     prepareCompaction(branch) + buildSessionContext(entries) on entries
//                        just parsed (objects never seen by the engine)
//   pure, after append   the same after pushing one new entry (every other object seen before)
//   handle, first        SessionTree.fromBytes, then the first prepareCompaction +
//                        buildSessionContext (load not counted)
//   handle, after append appendEntry(one entry), then prepareCompaction + buildSessionContext
//
// Each is a median over `reps` repetitions, reported in ms and as a ratio to JSON.parse of the
// same lines in the same process and run (the baseline every host pays). Not a timed test.
//
// Usage: node scripts/bench-per-turn.mjs [--reps N] [--pkg DIR] file.jsonl ...
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const now = () => performance.now();

/** The median of a list of numbers. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** A new entry under `parentId` (a short user message), the `k`-th of a run. */
function nextEntry(parentId, k) {
  return {
    type: 'message',
    id: `per-turn-${k}`,
    parentId,
    timestamp: new Date(1767225600000 + k * 1000).toISOString(),
    message: { role: 'user', content: [{ type: 'text', text: `next step ${k}` }], timestamp: k },
  };
}

/**
 * Measures the per-turn rows on one session file's text with the package `api` (the module of
 * the package's Node entry). Returns `{entries, jsonParseMs, rows}`; each row is
 * `{name, ms, ratio}` (ratio = ms / jsonParseMs).
 * @param {any} api
 * @param {string} text
 * @param {{reps?: number}} [options]
 */
export function measurePerTurn(api, text, { reps = 5 } = {}) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const parse = () => {
    const all = lines.map((l) => JSON.parse(l));
    return all[0] && all[0].type === 'session' ? all.slice(1) : all;
  };
  const bytes = new TextEncoder().encode(text);
  const times = { parse: [], pureFirst: [], pureAppend: [], handleFirst: [], handleAppend: [] };
  let count = 0;
  for (let r = 0; r < reps; r++) {
    let t0 = now();
    const entries = parse();
    times.parse.push(now() - t0);
    count = entries.length;
    // The branch of the last entry, from the handle's indices (not timed).
    const loaded = api.SessionTree.fromBytes(bytes);
    const branch = Array.from(loaded.branchIndices(), (i) => entries[i]);
    t0 = now();
    api.prepareCompaction(branch);
    api.buildSessionContext(entries);
    times.pureFirst.push(now() - t0);
    const added = nextEntry(entries.at(-1)?.id ?? null, r);
    entries.push(added);
    branch.push(added);
    t0 = now();
    api.prepareCompaction(branch);
    api.buildSessionContext(entries);
    times.pureAppend.push(now() - t0);
    // The handle: first calls after the load, then after one appendEntry.
    t0 = now();
    loaded.prepareCompaction();
    loaded.buildSessionContext();
    times.handleFirst.push(now() - t0);
    const appended = nextEntry(loaded.leafId ?? null, 1000 + r);
    t0 = now();
    loaded.appendEntry(appended);
    loaded.prepareCompaction();
    loaded.buildSessionContext();
    times.handleAppend.push(now() - t0);
    loaded.free();
  }
  const jsonParseMs = median(times.parse);
  const row = (name, xs) => ({ name, ms: median(xs), ratio: median(xs) / jsonParseMs });
  return {
    entries: count,
    jsonParseMs,
    rows: [
      row('pure prepare+context, first call', times.pureFirst),
      row('pure prepare+context, after one append', times.pureAppend),
      row('handle first prepare+context after load', times.handleFirst),
      row('handle appendEntry + prepare+context', times.handleAppend),
    ],
  };
}

async function main(argv) {
  let reps = 5;
  let pkg = join(fileURLToPath(new URL('..', import.meta.url)), 'pkg');
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--reps') reps = Number(argv[++i]);
    else if (argv[i] === '--pkg') pkg = resolve(argv[++i]);
    else files.push(argv[i]);
  }
  if (files.length === 0)
    throw new Error('usage: node scripts/bench-per-turn.mjs [--reps N] [--pkg DIR] file.jsonl ...');
  const api = await import(pathToFileURL(join(pkg, 'index.node.mjs')).href);
  for (const file of files) {
    const r = measurePerTurn(api, readFileSync(file, 'utf8'), { reps });
    console.log(`${file}: ${r.entries} entries, JSON.parse ${r.jsonParseMs.toFixed(2)} ms`);
    for (const row of r.rows) {
      console.log(`  ${row.name.padEnd(44)} ${row.ms.toFixed(2).padStart(9)} ms  ${row.ratio.toFixed(4)}×`);
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2));
}
