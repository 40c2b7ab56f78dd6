// Small helpers shared by the scripts in this folder (no dependencies beyond Node itself).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (the folder holding Cargo.toml and package.json). */
export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** Where the built npm package is assembled. */
export const PKG_DIR = join(ROOT, 'pkg');

/** An error whose message is already a complete explanation for the user (no stack needed). */
export class UserError extends Error {}

/**
 * The environment for child processes: PATH gains Cargo's bin folder (where `cargo install`
 * puts wasm-bindgen) and the repository's node_modules/.bin.
 * @param {Record<string, string>} [extra] variables to add or override
 */
export function childEnv(extra = {}) {
  const cargoBin = join(process.env.CARGO_HOME || join(homedir(), '.cargo'), 'bin');
  const path = [join(ROOT, 'node_modules', '.bin'), cargoBin, process.env.PATH || ''].join(delimiter);
  return { ...process.env, PATH: path, ...extra };
}

/**
 * Runs a command with inherited stdio; throws a UserError naming it when it fails.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, env?: Record<string, string>, label?: string }} [options]
 */
export function run(cmd, args, { cwd = ROOT, env = {}, label } = {}) {
  const result = spawnSync(cmd, args, { cwd, env: childEnv(env), stdio: 'inherit' });
  if (result.error) {
    throw new UserError(`${label || cmd}: could not start \`${cmd}\`: ${result.error.message}`);
  }
  if (result.status !== 0) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.status}`;
    throw new UserError(`${label || cmd}: \`${[cmd, ...args].join(' ')}\` ${how}`);
  }
}

/**
 * Runs a command and returns its trimmed stdout, or `null` when the command does not exist
 * or fails (used for probing: `wasm-bindgen --version`, `rustup target list`, ...).
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string }} [options]
 * @returns {string | null}
 */
export function probe(cmd, args, { cwd = ROOT } = {}) {
  const result = spawnSync(cmd, args, { cwd, env: childEnv(), encoding: 'utf8' });
  if (result.error || result.status !== 0) return null;
  return result.stdout.trim();
}

/**
 * Runs a command, returns its stdout; throws a UserError with its stderr when it fails.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, env?: Record<string, string> }} [options]
 * @returns {string}
 */
export function capture(cmd, args, { cwd = ROOT, env = {} } = {}) {
  const result = spawnSync(cmd, args, {
    cwd,
    env: childEnv(env),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new UserError(`could not start \`${cmd}\`: ${result.error.message}`);
  if (result.status !== 0) {
    throw new UserError(`\`${[cmd, ...args].join(' ')}\` exited with code ${result.status}\n${result.stderr}`);
  }
  return result.stdout;
}

/**
 * Path of a tool installed by `npm install` (devDependencies); explains how to get it.
 * @param {string} name
 */
export function npmBin(name) {
  const path = join(ROOT, 'node_modules', '.bin', name);
  if (!existsSync(path)) {
    throw new UserError(`${path} is missing: run \`npm ci\` (or \`npm install\`) in ${ROOT} first`);
  }
  return path;
}

/**
 * The `version` of the `[workspace.package]` table of Cargo.toml (the single source of the
 * version: both crates inherit it).
 */
export function crateVersion() {
  const toml = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8');
  const table = toml.match(/^\[workspace\.package\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m);
  const version = table?.[1].match(/^version\s*=\s*"([^"]+)"/m);
  if (!version) throw new UserError('Cargo.toml: no `version` in the [workspace.package] table');
  return version[1];
}

/**
 * Formats a byte count as `12,345 B (12.1 KiB)`.
 * @param {number} n
 */
export function formatBytes(n) {
  return `${n.toLocaleString('en-US')} B (${(n / 1024).toFixed(1)} KiB)`;
}
