#!/usr/bin/env node
// Benchmark of the engine on real and generated sessions (npm run bench). Not a timed test.
//
// For each file in examples/sessions/ and a generated, seeded session of 50,000 entries
// (target/bench/session-50000-seed42.jsonl, made with the generate_session example if missing),
// in one run, under Node and (when node_modules/.bin/bun exists) Bun:
//   (a) JSON.parse of every line in plain JS (the reference's loading; the floor any JS pays);
//   (b) SessionTree.fromJsonl + prepareCompaction + buildSessionContext (and fromBytes);
//   (c) the pure functions with JS arrays: JSON.parse of every line → the branch →
//       prepareCompaction(branch) → buildSessionContext(entries);
//   (d) native Rust, release mode (the bench_native example: the same steps, best of N);
//   (e) on the 50,000-entry session: appendEntry of one entry then planCompaction (the
//       re-plan), averaged over many appends;
//   (f) cold start, in fresh processes (--cold-runs of them): the time to import the package's
//       Node entry, the first SessionTree.fromBytes of the process (it instantiates the module
//       and grows wasm memory) and a later, warm one (wall and CPU time: CPU time is steadier on
//       a busy machine);
//   (g) parseSession (the pure load: every entry as a JS object), beside SessionTree.fromJsonl
//       of the same text in the same run (parseSession must stay linear: within 2× of it);
// each measured in its own child process, which reports its peak resident memory (VmHWM).
// Prints a table and writes everything to target/bench-results.json.
//
// Usage: node scripts/bench.mjs [options]
//   --runtimes node,bun   runtimes to measure (default: node, and bun when installed)
//   --files a.jsonl,...   files instead of examples/sessions/*.jsonl + the generated session
//   --entries N           entries of the generated session (default 50000)
//   --reps N              timed repetitions per measurement, best and median reported
//                         (default 5 for files under 20 MB, 3 above)
//   --appends N           appends for (e) (default 2000)
//   --cold-runs N         fresh processes for (f) (default 3)
//   --pkg DIR             the built package to measure (default pkg/, built when stale)
//   --native-bin PATH     a prebuilt bench_native binary (default: cargo builds it)
//   --no-native           skip (d)
//   --out FILE            results file (default target/bench-results.json)
//   --label TEXT          a label stored in the results (e.g. "before")
//   --report FILE         only print the table of a results file written before
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = resolve(SCRIPT, '..', '..');
const BIG = 20 * 1024 * 1024;
const SEED = 42;

// ---------------------------------------------------------------------------------------------
// Child side: one measurement, printed as one JSON line.

/** Peak resident set of this process in bytes (Linux VmHWM; else resourceUsage). */
function peakRss() {
  try {
    const m = readFileSync('/proc/self/status', 'utf8').match(/^VmHWM:\s+(\d+)\s+kB/m);
    if (m) return Number(m[1]) * 1024;
  } catch {}
  try {
    return process.resourceUsage().maxRSS * 1024;
  } catch {
    return 0;
  }
}

const now = () => performance.now();

/**
 * Runs `fn` `warmup + reps` times; returns per-phase {min, median} over the timed runs, and
 * `first`: the very first (cold) run, before the JS and wasm engines optimized anything, which
 * is what a host that loads one session once pays.
 */
function measure(warmup, reps, fn) {
  const runs = [];
  let first = null;
  for (let i = 0; i < warmup + reps; i++) {
    const phases = fn();
    if (i === 0) first = phases;
    if (i >= warmup) runs.push(phases);
    globalThis.gc?.();
  }
  const out = {};
  for (const key of Object.keys(runs[0])) {
    const xs = runs.map((r) => r[key]).sort((a, b) => a - b);
    out[key] = { min: xs[0], median: xs[Math.floor(xs.length / 2)], first: first[key] };
  }
  return out;
}

/** Every non-blank line parsed, as the reference loads a session. */
function parseLines(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch {}
  }
  return out;
}

/** Root-first branch ending at the last entry (the reference's getBranch of the leaf). */
function branchOf(entries) {
  const byId = new Map();
  for (const e of entries) if (typeof e.id === 'string') byId.set(e.id, e);
  const path = [];
  const seen = new Set();
  let cur = entries[entries.length - 1];
  while (cur && !seen.has(cur)) {
    seen.add(cur);
    path.push(cur);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
  }
  return path.reverse();
}

/** (f): import, then the first and the later fromBytes of one fresh process (wall and CPU ms). */
async function coldChild(file, pkgDir, reps) {
  const bytes = new Uint8Array(readFileSync(file));
  const cpuMs = (start) => {
    const d = process.cpuUsage(start);
    return (d.user + d.system) / 1000;
  };
  const t0 = now();
  const api = await import(pathToFileURL(join(pkgDir, 'index.node.mjs')).href);
  const importMs = now() - t0;
  const load = () => {
    const cpu = process.cpuUsage();
    const t = now();
    const tree = api.SessionTree.fromBytes(bytes);
    const out = { wall: now() - t, cpu: cpuMs(cpu) };
    if (tree.entryCount === 0) throw new Error('bad result');
    tree.free();
    return out;
  };
  const first = load();
  const warm = [];
  for (let i = 0; i < Math.max(reps, 2); i++) warm.push(load());
  const best = (key) => Math.min(...warm.map((w) => w[key]));
  return {
    import: importMs,
    first: first.wall,
    warm: best('wall'),
    firstCpu: first.cpu,
    warmCpu: best('cpu'),
  };
}

async function child(kind, file, pkgDir, reps, appends) {
  if (kind === 'cold') {
    const ms = await coldChild(file, pkgDir, reps);
    process.stdout.write(`${JSON.stringify({ kind, file, ms, peakRssBytes: peakRss() })}\n`);
    return;
  }
  const text = readFileSync(file, 'utf8');
  const big = text.length > BIG;
  const warmup = big ? 1 : 3;
  let result;
  const extra = {};
  if (kind === 'json-parse') {
    result = measure(warmup, reps, () => {
      const t0 = now();
      const n = parseLines(text).length;
      if (n === 0) throw new Error('no lines');
      return { total: now() - t0 };
    });
  } else {
    const api = await import(pathToFileURL(join(pkgDir, 'index.node.mjs')).href);
    const { SessionTree } = api;
    if (kind === 'handle' || kind === 'handle-bytes') {
      const bytes = kind === 'handle-bytes' ? new Uint8Array(readFileSync(file)) : null;
      result = measure(warmup, reps, () => {
        const t0 = now();
        const tree = bytes ? SessionTree.fromBytes(bytes) : SessionTree.fromJsonl(text);
        const t1 = now();
        const prep = tree.prepareCompaction();
        const t2 = now();
        const ctx = tree.buildSessionContext();
        const t3 = now();
        const json = tree.buildSessionContextJson();
        const t4 = now();
        if (!ctx || typeof json !== 'string' || prep === null) throw new Error('bad result');
        tree.free();
        return { total: t3 - t0, load: t1 - t0, prepare: t2 - t1, context: t3 - t2, contextJson: t4 - t3 };
      });
    } else if (kind === 'parse-session') {
      result = measure(warmup, reps, () => {
        const t0 = now();
        const parsed = api.parseSession(text);
        const t1 = now();
        const tree = SessionTree.fromJsonl(text);
        const t2 = now();
        if (parsed.entries.length !== tree.entryCount) throw new Error('parseSession and fromJsonl disagree');
        tree.free();
        return { total: t1 - t0, fromJsonl: t2 - t1 };
      });
    } else if (kind === 'pure') {
      result = measure(warmup, reps, () => {
        const t0 = now();
        const all = parseLines(text);
        const entries = all[0] && all[0].type === 'session' ? all.slice(1) : all;
        const t1 = now();
        const branch = branchOf(entries);
        const t2 = now();
        api.prepareCompaction(branch);
        const t3 = now();
        const ctx = api.buildSessionContext(entries);
        const t4 = now();
        if (!ctx) throw new Error('bad result');
        return { total: t4 - t0, parse: t1 - t0, branch: t2 - t1, prepare: t3 - t2, context: t4 - t3 };
      });
    } else if (kind === 'append') {
      const tree = SessionTree.fromJsonl(text);
      const plan =
        typeof tree.planCompaction === 'function' ? () => tree.planCompaction() : () => tree.prepareCompaction();
      const entry = (k) => ({
        type: 'message',
        id: `bench-append-${k}`,
        timestamp: new Date(1767225600000 + k * 1000).toISOString(),
        message:
          k % 2 === 0
            ? { role: 'user', content: [{ type: 'text', text: `next step ${k}` }], timestamp: k }
            : {
                role: 'assistant',
                content: [{ type: 'text', text: 'done' }],
                provider: 'anthropic',
                model: 'claude-sonnet-4-5',
                usage: { input: 1000 + k, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 1020 + k },
                stopReason: 'stop',
                timestamp: k,
              },
      });
      for (let k = 0; k < 50; k++) {
        tree.appendEntry(entry(-1 - k));
        plan();
      }
      const times = [];
      const t0 = now();
      for (let k = 0; k < appends; k++) {
        const s = now();
        tree.appendEntry(entry(k));
        plan();
        times.push(now() - s);
      }
      const total = now() - t0;
      times.sort((a, b) => a - b);
      result = {
        total: { min: times[0], median: times[Math.floor(times.length / 2)] },
        average: { min: total / appends, median: total / appends },
        p99: { min: times[Math.floor(times.length * 0.99)], median: times[Math.floor(times.length * 0.99)] },
      };
      extra.planFunction = typeof tree.planCompaction === 'function' ? 'planCompaction' : 'prepareCompaction';
      tree.free();
    } else {
      throw new Error(`unknown measurement ${kind}`);
    }
  }
  process.stdout.write(`${JSON.stringify({ kind, file, ms: result, ...extra, peakRssBytes: peakRss() })}\n`);
}

// ---------------------------------------------------------------------------------------------
// Parent side.

function parseArgs(argv) {
  const opts = {
    runtimes: null,
    files: null,
    entries: 50000,
    reps: null,
    appends: 2000,
    coldRuns: 3,
    pkg: null,
    nativeBin: null,
    native: true,
    out: join(ROOT, 'target', 'bench-results.json'),
    label: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--runtimes') opts.runtimes = next().split(',').filter(Boolean);
    else if (a === '--files')
      opts.files = next()
        .split(',')
        .filter(Boolean)
        .map((f) => resolve(f));
    else if (a === '--entries') opts.entries = Number(next());
    else if (a === '--reps') opts.reps = Number(next());
    else if (a === '--appends') opts.appends = Number(next());
    else if (a === '--cold-runs') opts.coldRuns = Math.max(1, Number(next()));
    else if (a === '--pkg') opts.pkg = resolve(next());
    else if (a === '--native-bin') opts.nativeBin = resolve(next());
    else if (a === '--no-native') opts.native = false;
    else if (a === '--out') opts.out = resolve(next());
    else if (a === '--label') opts.label = next();
    else if (a === '--report') opts.report = resolve(next());
    else if (a === '--help' || a === '-h') {
      console.log(
        readFileSync(SCRIPT, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('//'))
          .map((l) => l.slice(3))
          .join('\n'),
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a} (see --help)`);
  }
  return opts;
}

function sh(cmd, args, { capture = false, env = {} } = {}) {
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20 * 60 * 1000,
  });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `\`${cmd} ${args.join(' ')}\` exited with ${r.status ?? r.signal}${capture ? `\n${r.stderr}` : ''}`,
    );
  return r.stdout;
}

/** Newest modification time under `path` (files only). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = 0;
  for (const name of readdirSync(path)) m = Math.max(m, newest(join(path, name)));
  return m;
}

function ensureBuilt() {
  const wasm = join(ROOT, 'pkg', 'node', 'session_compaction_bg.wasm');
  const sources = Math.max(
    newest(join(ROOT, 'src')),
    newest(join(ROOT, 'bindings')),
    newest(join(ROOT, 'Cargo.toml')),
    newest(join(ROOT, 'pkg-template')),
    newest(join(ROOT, 'prompts')),
  );
  if (existsSync(wasm) && statSync(wasm).mtimeMs >= sources) return;
  console.log('[bench] pkg/ is missing or older than the sources: npm run build');
  sh(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
}

function targetDir() {
  const meta = JSON.parse(
    sh('cargo', ['metadata', '--format-version', '1', '--no-deps', '--offline'], { capture: true }),
  );
  return meta.target_directory;
}

function ensureGenerated(entries) {
  const file = join(ROOT, 'target', 'bench', `session-${entries}-seed${SEED}.jsonl`);
  if (existsSync(file)) return file;
  mkdirSync(join(ROOT, 'target', 'bench'), { recursive: true });
  console.log(`[bench] generating ${relative(ROOT, file)} (${entries} entries, seed ${SEED})`);
  sh('cargo', [
    'run',
    '--quiet',
    '--release',
    '--example',
    'generate_session',
    '--',
    String(entries),
    file,
    String(SEED),
  ]);
  return file;
}

function nativeBinary(opts) {
  if (opts.nativeBin) return opts.nativeBin;
  console.log('[bench] cargo build --release --example bench_native');
  sh('cargo', ['build', '--quiet', '--release', '--example', 'bench_native']);
  return join(targetDir(), 'release', 'examples', process.platform === 'win32' ? 'bench_native.exe' : 'bench_native');
}

function runtimeVersion(cmd) {
  const r = spawnSync(cmd, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function runChild(runtime, kind, file, opts, reps) {
  const args = [];
  if (runtime.name === 'node') args.push('--max-old-space-size=16384', '--expose-gc');
  args.push(SCRIPT, '--child', kind, file, opts.pkg, String(reps), String(opts.appends));
  const r = spawnSync(runtime.cmd, args, {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 30 * 60 * 1000,
  });
  if (r.status !== 0) {
    return {
      error: `${runtime.name} ${kind}: exit ${r.status ?? r.signal}: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ')}`,
    };
  }
  const line = r.stdout.trim().split('\n').pop();
  return JSON.parse(line);
}

/** (f): `--cold-runs` fresh processes; best and median of each figure. */
function coldStart(runtime, file, opts, reps) {
  const runs = [];
  for (let i = 0; i < opts.coldRuns; i++) {
    const r = runChild(runtime, 'cold', file, opts, reps);
    if (r.error) return r;
    runs.push(r);
  }
  const ms = {};
  for (const key of Object.keys(runs[0].ms)) {
    const xs = runs.map((r) => r.ms[key]).sort((a, b) => a - b);
    ms[key] = { min: xs[0], median: xs[Math.floor(xs.length / 2)] };
  }
  return { kind: 'cold', ms, peakRssBytes: Math.max(...runs.map((r) => r.peakRssBytes)) };
}

const fmtMs = (x) =>
  x === undefined || x === null ? '-' : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(3);
const fmtMb = (b) => (b ? `${(b / 1048576).toFixed(0)} MB` : '-');

/** Prints the table of a results file. */
function report(file) {
  const results = JSON.parse(readFileSync(file, 'utf8'));
  const runtimes = Object.keys(results.runtimes).map((name) => ({ name }));
  console.log(
    `[bench] ${relative(ROOT, file)}${results.label ? ` (${results.label})` : ''}, ${results.date}, pkg ${results.pkg}`,
  );
  printTable(results.files.flatMap((entry) => tableRows(entry, runtimes, results.appends ?? 2000)));
}

async function parent(opts) {
  if (opts.report) return report(opts.report);
  const pkgGiven = Boolean(opts.pkg);
  if (!pkgGiven) {
    ensureBuilt();
    opts.pkg = join(ROOT, 'pkg');
  }
  const generated = ensureGenerated(opts.entries);
  const files = opts.files ?? [
    ...readdirSync(join(ROOT, 'examples', 'sessions'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((f) => join(ROOT, 'examples', 'sessions', f)),
    generated,
  ];
  const bun = join(ROOT, 'node_modules', '.bin', 'bun');
  const runtimes = (opts.runtimes ?? ['node', ...(existsSync(bun) ? ['bun'] : [])]).map((name) => ({
    name,
    cmd: name === 'node' ? process.execPath : name === 'bun' ? bun : name,
  }));
  for (const rt of runtimes) rt.version = runtimeVersion(rt.cmd);
  const native = opts.native ? nativeBinary(opts) : null;

  const results = {
    label: opts.label,
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryBytes: totalmem(),
      platform: `${process.platform}-${process.arch}`,
    },
    runtimes: Object.fromEntries(runtimes.map((r) => [r.name, r.version])),
    pkg: relative(ROOT, opts.pkg) || '.',
    appends: opts.appends,
    files: [],
  };
  const rows = [];
  for (const file of files) {
    const bytes = statSync(file).size;
    const reps = opts.reps ?? (bytes > BIG ? 3 : 5);
    const name = relative(ROOT, file);
    console.log(`[bench] ${name} (${(bytes / 1048576).toFixed(1)} MB), ${reps} reps`);
    const entry = { file: name, bytes, reps, runtimes: {}, native: null };
    for (const rt of runtimes) {
      const kinds = ['json-parse', 'handle', 'handle-bytes', 'pure', 'parse-session'];
      if (file === generated) kinds.push('append');
      const r = {};
      for (const kind of kinds) {
        process.stdout.write(`[bench]   ${rt.name} ${kind} …`);
        r[kind] = runChild(rt, kind, file, opts, reps);
        process.stdout.write(r[kind].error ? ` failed: ${r[kind].error}\n` : ` ${fmtMs(r[kind].ms.total?.min)} ms\n`);
      }
      process.stdout.write(`[bench]   ${rt.name} cold start (${opts.coldRuns} processes) …`);
      r.cold = coldStart(rt, file, opts, reps);
      process.stdout.write(r.cold.error ? ` failed: ${r.cold.error}\n` : ` first ${fmtMs(r.cold.ms.first.min)} ms\n`);
      entry.runtimes[rt.name] = r;
    }
    if (native) {
      // One process per measurement, for its peak memory.
      entry.native = {};
      for (const what of ['handle', 'pure', 'append']) {
        process.stdout.write(`[bench]   native ${what} …`);
        const out = sh(native, [file, String(reps), String(opts.appends), what], { capture: true });
        entry.native[what] = JSON.parse(out.trim().split('\n').pop());
        process.stdout.write(' done\n');
      }
    }
    results.files.push(entry);
    rows.push(...tableRows(entry, runtimes, opts.appends));
  }
  printTable(rows);
  mkdirSync(resolve(opts.out, '..'), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`[bench] results written to ${relative(ROOT, opts.out)}`);
}

function tableRows(entry, runtimes, appends) {
  const rows = [];
  const file = `${basename(entry.file)} (${(entry.bytes / 1048576).toFixed(1)} MB)`;
  for (const rt of runtimes) {
    const r = entry.runtimes[rt.name];
    const base = r['json-parse']?.ms?.total?.min;
    const add = (label, m, detail = '') => {
      if (!m) return;
      if (m.error) return rows.push([file, rt.name, label, 'error', '', '', '', '', m.error]);
      const t = m.ms.total.min;
      rows.push([
        file,
        rt.name,
        label,
        fmtMs(t),
        fmtMs(m.ms.total.median),
        fmtMs(m.ms.total.first),
        base ? (t / base).toFixed(2) : '-',
        fmtMb(m.peakRssBytes),
        detail(m.ms),
      ]);
    };
    add('(a) JSON.parse lines', r['json-parse'], () => '');
    const handle = (ms) =>
      `load ${fmtMs(ms.load.min)} + prepare ${fmtMs(ms.prepare.min)} + context ${fmtMs(ms.context.min)}; contextJson ${fmtMs(ms.contextJson.min)}`;
    add('(b) fromJsonl+prep+ctx', r.handle, handle);
    add('(b) fromBytes+prep+ctx', r['handle-bytes'], handle);
    add(
      '(c) pure (JSON.parse)',
      r.pure,
      (ms) =>
        `parse ${fmtMs(ms.parse.min)} + branch ${fmtMs(ms.branch.min)} + prepare ${fmtMs(ms.prepare.min)} + context ${fmtMs(ms.context.min)}`,
    );
    add(
      '(g) parseSession',
      r['parse-session'],
      (ms) => `fromJsonl ${fmtMs(ms.fromJsonl.min)} in the same runs: ${(ms.total.min / ms.fromJsonl.min).toFixed(2)}×`,
    );
    if (r.cold) {
      const c = r.cold;
      if (c.error) rows.push([file, rt.name, '(f) cold: 1st fromBytes', 'error', '', '', '', '', c.error]);
      else
        rows.push([
          file,
          rt.name,
          '(f) cold: 1st fromBytes',
          fmtMs(c.ms.first.min),
          fmtMs(c.ms.first.median),
          '',
          base ? (c.ms.first.min / base).toFixed(2) : '-',
          fmtMb(c.peakRssBytes),
          `import ${fmtMs(c.ms.import.min)} (median ${fmtMs(c.ms.import.median)}); 1st/warm fromBytes ` +
            `${(c.ms.first.median / c.ms.warm.median).toFixed(2)}× (warm ${fmtMs(c.ms.warm.median)}); ` +
            `CPU ${fmtMs(c.ms.firstCpu.median)} / ${fmtMs(c.ms.warmCpu.median)} = ${(c.ms.firstCpu.median / c.ms.warmCpu.median).toFixed(2)}×`,
        ]);
    }
    if (r.append) {
      const a = r.append;
      if (a.error) rows.push([file, rt.name, '(e) append+replan', 'error', '', '', '', '', a.error]);
      else
        rows.push([
          file,
          rt.name,
          '(e) append+replan',
          fmtMs(a.ms.average.min),
          fmtMs(a.ms.total.median),
          '',
          '-',
          fmtMb(a.peakRssBytes),
          `average of ${appends} (median shown beside it); p99 ${fmtMs(a.ms.p99.min)} ms (${a.planFunction})`,
        ]);
    }
  }
  const n = entry.native;
  if (n) {
    // Results of the per-measurement processes (older files: one process for all).
    const [h, p, a] = n.handle ? [n.handle, n.pure, n.append] : [n, n, n];
    const ms = { ...a.ms, ...p.ms, ...h.ms, appendReplan: a.ms.appendReplan };
    const jsBase = entry.runtimes.node?.['json-parse']?.ms?.total?.min;
    const ratio = (t) => (jsBase ? `${(t / jsBase).toFixed(2)}n` : '-');
    rows.push([
      file,
      'native',
      '(d) load+prep+ctx',
      fmtMs(ms.handleTotal),
      '',
      '',
      ratio(ms.handleTotal),
      fmtMb(h.peakRssBytes),
      `load ${fmtMs(ms.loadBytes)} (index ${fmtMs(ms.index)}) + prepare ${fmtMs(ms.prepare)} + context ${fmtMs(ms.context)}; contextJson ${fmtMs(ms.contextJson)}`,
    ]);
    rows.push([
      file,
      'native',
      '(d) pure',
      fmtMs(ms.pureTotal),
      '',
      '',
      ratio(ms.pureTotal),
      fmtMb(p === h ? 0 : p.peakRssBytes),
      `parse ${fmtMs(ms.pureParse)} + prepare/context ${fmtMs(ms.pureRest)}`,
    ]);
    rows.push([
      file,
      'native',
      '(e) append+replan',
      fmtMs(ms.appendReplan),
      '',
      '',
      '-',
      fmtMb(a === h ? 0 : a.peakRssBytes),
      `average of ${appends}; plan alone ${fmtMs(ms.plan)}`,
    ]);
  }
  return rows;
}

function printTable(rows) {
  const head = ['file', 'runtime', 'measurement', 'ms best', 'median', 'first', '×(a)', 'peak RSS', 'detail (best ms)'];
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => String(r[i] ?? '').length)));
  const right = new Set([3, 4, 5, 6, 7]);
  const fmt = (r) =>
    r
      .map((c, i) => (right.has(i) ? String(c ?? '').padStart(widths[i]) : String(c ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  console.log(`\n${fmt(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  let last = null;
  for (const r of rows) {
    const shown = r[0] === last ? ['', ...r.slice(1)] : r;
    last = r[0];
    console.log(fmt(shown));
  }
  console.log(
    'ms best / median: over the timed runs after warm-up; first: the first (cold) run, engines not yet optimized.\n' +
      '×(a): relative to (a) in the same runtime (native rows: "n" = relative to (a) under Node).\n' +
      '(e): "ms best" is the average over all appends, "median" the median single append+plan.\n' +
      '(f): fresh processes; "ms best"/"median": the first fromBytes of a process (module instantiation included).\n',
  );
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  const [, kind, file, pkgDir, reps, appends] = argv;
  child(kind, file, pkgDir, Number(reps), Number(appends)).catch((e) => {
    console.error(e?.stack || String(e));
    process.exit(1);
  });
} else {
  try {
    await parent(parseArgs(argv));
  } catch (e) {
    console.error(`[bench] ${e?.message || e}`);
    process.exit(1);
  }
}
