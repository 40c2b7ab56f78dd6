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
import { existsSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { PKG_DIR, ROOT, run, UserError } from './lib.mjs';
import { ensureBuild, ensureDependencies } from './setup.mjs';

const CLI = join(PKG_DIR, 'bin', 'session-compaction.mjs');
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
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
  ensureDependencies('start');
  ensureBuild('start');
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
