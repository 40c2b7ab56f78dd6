// Runs the package's CLI (pkg/bin/session-compaction.mjs) in a child process for the CLI tests,
// without blocking the test process (its HTTP stand-ins must keep answering).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The built CLI. */
export const CLI = join(fileURLToPath(new URL('../../..', import.meta.url)), 'pkg', 'bin', 'session-compaction.mjs');

/**
 * Starts the CLI with colors off and `OPENAI_API_KEY` unset unless `env` sets it (a value of
 * `undefined` removes a variable); `done` resolves with the exit status and the output.
 * @param {string[]} args
 * @param {Record<string, string | undefined>} [env]
 */
export function startCli(args, env = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  /** @type {Promise<{ status: number | null, stdout: string, stderr: string }>} */
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  return { child, done };
}

/**
 * The environment of a CLI run: colors off, `OPENAI_API_KEY` unset, then `env` (a value of
 * `undefined` removes a variable).
 * @param {Record<string, string | undefined>} env
 */
function cliEnv(env) {
  /** @type {Record<string, string>} */
  const childEnv = {};
  for (const [k, v] of Object.entries({
    ...process.env,
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    OPENAI_API_KEY: undefined,
    ...env,
  })) {
    if (v !== undefined) childEnv[k] = v;
  }
  return childEnv;
}

/**
 * Runs the CLI to its end with its stdout on the file descriptor `stdoutFd` (a failing one such
 * as `/dev/full`, opened by the caller); resolves with the exit status and stderr.
 * @param {string[]} args
 * @param {number} stdoutFd
 * @returns {Promise<{ status: number | null, stderr: string }>}
 */
export function runCliWithStdout(args, stdoutFd) {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv({}), stdio: ['ignore', stdoutFd, 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c) => (stderr += c));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

/**
 * Runs the CLI to its end ({@link startCli}).
 * @param {string[]} args
 * @param {Record<string, string | undefined>} [env]
 */
export function runCli(args, env = {}) {
  return startCli(args, env).done;
}

/**
 * A temporary folder for a test file's inputs, removed when the file's tests end: `dir`, and
 * `file(name, data)`, which writes one file into it and returns its path.
 * @param {string} prefix
 */
export function tempFolder(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  /** @param {string} name @param {string | Uint8Array} data */
  const file = (name, data) => {
    const path = join(dir, name);
    writeFileSync(path, data);
    return path;
  };
  return { dir, file };
}

/** The header line of the small sessions the CLI tests write. */
export const HEADER = JSON.stringify({
  type: 'session',
  version: 3,
  id: 's',
  timestamp: '2025-01-01T00:00:00.000Z',
  cwd: '/x',
});

/**
 * A message entry line; `content` a text (one text block) or the blocks themselves.
 * @param {string} id @param {string | null} parentId @param {string} role @param {string | any[]} content
 */
export function messageLine(id, parentId, role, content) {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const message =
    role === 'assistant'
      ? {
          role,
          content: blocks,
          provider: 'p',
          model: 'm',
          usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
          stopReason: 'stop',
          timestamp: 1,
        }
      : { role, content: blocks, timestamp: 1 };
  return JSON.stringify({ type: 'message', id, parentId, timestamp: '2025-01-01T00:00:00.000Z', message });
}
