#!/usr/bin/env node
// npm start: builds pkg/ if it is missing, then runs the package's CLI (`plan`, then `context`)
// on a session file: the bundled sample examples/sessions/pi-session-with-compactions.jsonl,
// or the file given as argument (`npm start -- path/to/session.jsonl`).
// Run `npm run build` to refresh an existing pkg/ after changing the Rust code.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PKG_DIR, ROOT, UserError, run } from './lib.mjs';

const CLI = join(PKG_DIR, 'bin', 'session-compaction.mjs');
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
const REQUIRED = [
  CLI,
  join(PKG_DIR, 'package.json'),
  join(PKG_DIR, 'node', 'session_compaction_bg.wasm'),
  join(PKG_DIR, 'web', 'session_compaction_bg.wasm'),
];

try {
  const file = process.argv[2] ? resolve(process.argv[2]) : SAMPLE;
  if (!REQUIRED.every(existsSync)) {
    console.log('[start] pkg/ is missing or incomplete: building it first');
    run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { label: 'build' });
  }
  for (const command of ['plan', 'context']) {
    console.log(`\n$ session-compaction ${command} ${file}`);
    run(process.execPath, [CLI, command, file], { label: `session-compaction ${command}` });
  }
} catch (error) {
  console.error(`[start] FAILED: ${error instanceof UserError ? error.message : error}`);
  process.exit(1);
}
