#!/usr/bin/env node
// Stub of the session-compaction CLI, to be replaced by the real one. It proves the packaging
// path only: loads the engine, prints its version and counts the lines of the session file.
// It does NOT plan compactions or build contexts yet, and says so.
import { readFileSync } from 'node:fs';
import { version } from '../index.node.mjs';

const COMMANDS = ['plan', 'context'];
const [command, file] = process.argv.slice(2);

if (!COMMANDS.includes(command) || !file) {
  console.error(`usage: session-compaction <${COMMANDS.join('|')}> <session.jsonl>`);
  process.exit(2);
}

let text;
try {
  text = readFileSync(file, 'utf8');
} catch (error) {
  console.error(`session-compaction: cannot read ${file}: ${error.message}`);
  process.exit(1);
}
const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

console.log(`session-compaction ${version()}`);
console.log(`${file}: ${lines} lines`);
console.log(`(stub CLI: \`${command}\` is not implemented yet)`);
