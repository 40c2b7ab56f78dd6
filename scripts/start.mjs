#!/usr/bin/env node
// npm start — the main job: runs the engine on a real pi session and prints a readable report.
//
//   1. installs what is missing: `npm ci` (or `npm install` without a lockfile) when node_modules/
//      is missing, then `npm run build` when pkg/ is missing or older than its sources;
//   2. runs the package's CLI (pkg/bin/session-compaction.mjs) on the real session bundled in the
//      repository (examples/sessions/pi-session-with-compactions.jsonl, not in the npm package):
//      `plan` (what a compaction would do now), `context` (what the model sees) and `compact`
//      (the compaction done in memory with the extractive summarizer: the context before and
//      after, and the beginning of the summary; the file is not modified).
//
// Usage: npm start                       the bundled real session
//        npm start -- path/to/file.jsonl another session file
// The report's steps are the REPORT list below: add a step there to extend it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { PKG_DIR, probe, ROOT, run, UserError } from './lib.mjs';

const CLI = join(PKG_DIR, 'bin', 'session-compaction.mjs');
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
/** What a working pkg/ must hold. */
const REQUIRED = [
  CLI,
  join(PKG_DIR, 'package.json'),
  join(PKG_DIR, 'index.node.cjs'),
  join(PKG_DIR, 'web', 'session_compaction_bg.wasm'),
];
/** Sources of pkg/: when one is newer than the last build, pkg/ is stale. */
const BUILD_INPUTS = [
  'src',
  'bindings',
  'prompts',
  'pkg-template',
  'examples/sessions/pi-session-with-compactions.jsonl',
  'Cargo.toml',
  'Cargo.lock',
  'scripts/build.mjs',
  'package-lock.json',
];
/** Written after each build this script runs (a build that changes no file leaves pkg/ dates alone). */
const BUILD_STAMP = join(ROOT, 'node_modules', '.cache', 'session-compaction', 'start-build-stamp');

/**
 * The report, in order. Each step runs the CLI with `args` (the session file is appended) under
 * a title and a short explanation of what it shows.
 * @type {{ title: string, explain: string[], args: string[] }[]}
 */
const REPORT = [
  {
    title: '1. Compaction plan — `session-compaction plan`',
    explain: [
      'What a compaction of this session would do right now, computed by the engine without calling a model:',
      'how big the context is (provider usage + estimate) and whether it crosses the threshold of a',
      '200,000-token window; where the cut falls (the first entry kept verbatim, and whether the cut splits',
      'a turn); how many messages and estimated tokens would be summarized, summarized as the turn prefix,',
      'or kept; and the files the summary would list as read and modified.',
    ],
    args: ['plan'],
  },
  {
    title: '2. Model context — `session-compaction context`',
    explain: [
      'The messages the model receives for the current leaf, after convertToLlm: the latest compaction',
      'summary first (shown as a user message), then every message kept or added since. Long texts are',
      'shortened; only the first 4 and the last 6 messages are listed (`context --full` shows everything).',
    ],
    args: ['context', '--first', '4', '--last', '6', '--max-chars', '400'],
  },
  {
    title: '3. Compaction, done — `session-compaction compact` (extractive summarizer, in memory)',
    explain: [
      'The compaction itself, run in memory (the file is not modified: `--write` would append the entry):',
      'the engine assembles the prompts and calls the summarizer — here the extractive summarizer of the',
      'package, which quotes the conversation section by section and needs no model or API key',
      '(`--endpoint URL` or `--openai BASE_URL --model NAME` use a real one) — then composes the summary,',
      'appends the `compaction` entry and rebuilds the context. Shown: the context before and after',
      '(messages the model receives, estimated tokens), the new entry, and the beginning of the summary.',
    ],
    args: ['compact', '--preview', '1500'],
  },
];

function main() {
  const file = process.argv[2] ? resolve(process.argv[2]) : null;
  if (file && !existsSync(file)) throw new UserError(`no such file: ${file}`);
  ensureDependencies();
  ensureBuild();
  printHeader(file ?? SAMPLE, file === null);
  for (const step of REPORT) {
    console.log(`\n${rule('─')}\n${step.title}\n${rule('─')}`);
    for (const line of step.explain) console.log(line);
    const args = [...step.args, ...(file ? [file] : [])];
    console.log(`\n$ session-compaction ${args.map(shellWord).join(' ')}\n`);
    run(process.execPath, [CLI, ...args], { label: `session-compaction ${step.args[0]}` });
  }
  console.log(`\n${rule('═')}`);
  console.log(
    'Try the other commands: node pkg/bin/session-compaction.mjs tree | prune | validate | navigate [file]  (--help lists them all)',
  );
}

// ── setup ───────────────────────────────────────────────────────────────────────────────────

/** `npm ci` (or `npm install`) when node_modules/ is missing: the build needs binaryen from it. */
function ensureDependencies() {
  if (existsSync(join(ROOT, 'node_modules'))) return;
  const command = existsSync(join(ROOT, 'package-lock.json')) ? 'ci' : 'install';
  console.log(`[start] node_modules/ is missing: npm ${command}`);
  // Under `npm start`, npm says where its own CLI is; elsewhere rely on PATH (npm.cmd on Windows).
  const npmCli = process.env.npm_execpath;
  if (npmCli && /\.(c|m)?js$/.test(npmCli)) {
    run(process.execPath, [npmCli, command], { label: `npm ${command}` });
  } else {
    const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', [command], {
      cwd: ROOT,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    if (result.error || result.status !== 0) {
      throw new UserError(
        `npm ${command} failed${result.error ? `: ${result.error.message}` : ` (exit code ${result.status})`}`,
      );
    }
  }
}

/** Builds pkg/ when it is missing, incomplete or older than one of its sources. */
function ensureBuild() {
  const reason = buildReason();
  if (!reason) return;
  const complete = REQUIRED.every((f) => existsSync(f));
  if (probe('cargo', ['--version']) === null) {
    if (complete) {
      console.log(`[start] warning: ${reason}, but Rust (cargo) is not installed to rebuild it: using it as it is`);
      return;
    }
    throw new UserError(
      'building pkg/ needs Rust (cargo), which is not installed: install it from https://rustup.rs, then run `npm start` again',
    );
  }
  console.log(`[start] ${reason}: building it (npm run build)`);
  run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { label: 'build' });
  mkdirSync(dirname(BUILD_STAMP), { recursive: true });
  writeFileSync(BUILD_STAMP, `${new Date().toISOString()}\n`);
}

/** Why pkg/ must be (re)built, or null when it is up to date. */
function buildReason() {
  const missing = REQUIRED.filter((f) => !existsSync(f));
  if (missing.length) return `pkg/ is missing or incomplete (no ${relative(ROOT, missing[0])})`;
  const builtAt = Math.max(newestMtime(PKG_DIR).mtime, existsSync(BUILD_STAMP) ? statSync(BUILD_STAMP).mtimeMs : 0);
  for (const input of BUILD_INPUTS) {
    const path = join(ROOT, input);
    if (!existsSync(path)) continue;
    const newest = newestMtime(path);
    if (newest.mtime > builtAt) return `pkg/ is older than ${relative(ROOT, newest.path)}`;
  }
  return null;
}

/** The newest modification time under a file or folder (iterative walk). @param {string} root */
function newestMtime(root) {
  let best = { mtime: 0, path: root };
  const stack = [root];
  while (stack.length) {
    const path = /** @type {string} */ (stack.pop());
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path)) stack.push(join(path, name));
    } else if (stat.mtimeMs > best.mtime) {
      best = { mtime: stat.mtimeMs, path };
    }
  }
  return best;
}

// ── report ──────────────────────────────────────────────────────────────────────────────────

/** @param {string} file @param {boolean} bundled */
function printHeader(file, bundled) {
  const size = statSync(file).size;
  console.log(rule('═'));
  console.log('session-compaction — main job: the compaction engine on a real pi session');
  console.log(rule('═'));
  console.log(`Session: ${relative(process.cwd(), file) || basename(file)} (${(size / 1e6).toFixed(1)} MB)`);
  if (bundled) {
    console.log("  A real coding session recorded by the pi agent (examples/sessions/, the CLI's sample in a");
    console.log('  checkout): 1,002 entries on one branch, two compactions already in it, tool calls (read, write,');
    console.log('  edit, bash), thinking blocks and model changes.');
  }
  console.log('Everything below is computed locally by the WebAssembly engine in pkg/: no model is called.');
  console.log("Token numbers are estimates (characters / 4) unless they come from the provider's recorded usage.");
}

/** @param {string} char */
function rule(char) {
  return char.repeat(Math.min(100, Math.max(40, process.stdout.columns || 100)));
}

/** @param {string} word */
function shellWord(word) {
  return /^[\w./:=@+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

try {
  main();
} catch (error) {
  console.error(
    `[start] FAILED: ${error instanceof UserError ? error.message : /** @type {any} */ (error?.stack ?? error)}`,
  );
  process.exit(1);
}
