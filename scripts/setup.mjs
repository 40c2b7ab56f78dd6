// Setting up a checkout for the scripts that run the built package (`npm start`,
// `npm run examples`): the npm packages when node_modules/ is missing, and the build when pkg/ is
// missing, incomplete or older than its sources.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { PKG_DIR, probe, ROOT, run, UserError } from './lib.mjs';

/** What a working pkg/ must hold. */
const REQUIRED = [
  join(PKG_DIR, 'bin', 'session-compaction.mjs'),
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
/** Written after each build these scripts run (a build that changes no file leaves pkg/ dates alone). */
const BUILD_STAMP = join(ROOT, 'node_modules', '.cache', 'session-compaction', 'start-build-stamp');

/**
 * `npm ci` (or `npm install`) when node_modules/ is missing: the build needs binaryen from it.
 * @param {string} label the log prefix (`start`, `examples`, `demo`)
 * @param {(line: string) => void} [log] where its line goes (default: stdout)
 */
export function ensureDependencies(label, log = (line) => console.log(line)) {
  if (existsSync(join(ROOT, 'node_modules'))) return;
  const command = existsSync(join(ROOT, 'package-lock.json')) ? 'ci' : 'install';
  log(`[${label}] node_modules/ is missing: npm ${command}`);
  // Under npm (`npm start`, `npm run …`), npm says where its own CLI is; elsewhere rely on PATH (npm.cmd on Windows).
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

/**
 * Builds pkg/ when it is missing, incomplete or older than one of its sources.
 * @param {string} label the log prefix (`start`, `examples`)
 */
export function ensureBuild(label) {
  const reason = buildReason();
  if (!reason) return;
  const complete = REQUIRED.every((f) => existsSync(f));
  if (probe('cargo', ['--version']) === null) {
    if (complete) {
      console.log(`[${label}] warning: ${reason}, but Rust (cargo) is not installed to rebuild it: using it as it is`);
      return;
    }
    throw new UserError(
      'building pkg/ needs Rust (cargo), which is not installed: install it from https://rustup.rs, then run the command again',
    );
  }
  console.log(`[${label}] ${reason}: building it (npm run build)`);
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
