#!/usr/bin/env node
// Runs every test of the repository, in order, and prints which step failed:
//   style gates (rustfmt, clippy and rustdoc with warnings denied, native and wasm32; Biome) →
//   cargo test → build (scripts/build.mjs) → tsc (tests/js, the CLI in pkg/bin, web-demo) →
//   node --test tests/js → Deno and Bun smoke tests of the web entry → the async suite under
//   Deno (tests/deno/async.mjs: compaction with callbacks, hooks, abort, and a remote endpoint
//   served on 127.0.0.1) → browser test of the web demo (tests/browser, Chromium) → packaging
//   test (scripts/pack-test.mjs) → the runtime and bundler matrix (scripts/matrix-test.mjs: the
//   packed tarball installed and used from Node ESM/CJS, Bun, Deno, workerd, and pages built with
//   Vite, webpack, esbuild and Rollup opened in Chromium).
// A failing step does not stop the independent ones; steps that need the build are skipped
// when the build fails. Exit code 1 when any step failed.
// Usage: node scripts/test.mjs [step-name ...]   (npm test; names as in the summary, e.g. "bun")
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { npmBin, ROOT, run, UserError } from './lib.mjs';

const node = process.execPath;
/** The cargo feature of the native remote summarizer. */
const remote = 'remote-reqwest';
const denoEnv = { DENO_NO_UPDATE_CHECK: '1' };

/** @type {{ name: string, needsBuild?: boolean, run: () => void }[]} */
const STEPS = [
  {
    name: 'style',
    run: () => {
      const wasm = ['--target', 'wasm32-unknown-unknown', '-p', 'session-compaction-wasm'];
      const deny = { RUSTDOCFLAGS: '-D warnings' };
      run('cargo', ['fmt', '--all', '--check'], { label: 'cargo fmt --check' });
      run('cargo', ['fmt', '--check', '--manifest-path', 'fuzz/Cargo.toml'], { label: 'cargo fmt --check (fuzz)' });
      run('cargo', ['clippy', '--workspace', '--all-targets', '--', '-D', 'warnings'], {
        label: 'cargo clippy (native)',
      });
      run('cargo', ['clippy', ...wasm, '--', '-D', 'warnings'], { label: 'cargo clippy (wasm32)' });
      // The native remote summarizer (cargo feature, off by default): checked natively, and on
      // wasm32 the feature must add nothing.
      run(
        'cargo',
        ['clippy', '-p', 'session-compaction', '--all-targets', '--features', remote, '--', '-D', 'warnings'],
        {
          label: 'cargo clippy (native, remote-reqwest)',
        },
      );
      run('cargo', ['clippy', ...wasm, '--features', `session-compaction/${remote}`, '--', '-D', 'warnings'], {
        label: 'cargo clippy (wasm32, remote-reqwest)',
      });
      run('cargo', ['doc', '-p', 'session-compaction', '--no-deps', '--features', remote], {
        label: 'cargo doc (native, remote-reqwest)',
        env: deny,
      });
      run('cargo', ['doc', '--workspace', '--no-deps'], { label: 'cargo doc (native)', env: deny });
      run('cargo', ['doc', ...wasm, '--no-deps'], { label: 'cargo doc (wasm32)', env: deny });
      run(npmBin('biome'), ['ci', '.'], { label: 'biome ci (format + lint of the JS, TS, CSS, JSON)' });
    },
  },
  {
    name: 'cargo test',
    run: () => {
      run('cargo', ['test'], { label: 'cargo test' });
      run('cargo', ['test', '--features', remote, '--test', 'remote'], {
        label: 'cargo test (remote-reqwest: the native remote summarizer against a local server)',
      });
    },
  },
  { name: 'build', run: () => run(node, ['scripts/build.mjs'], { label: 'build' }) },
  {
    name: 'tsc',
    needsBuild: true,
    run: () => {
      run(npmBin('tsc'), ['-p', ROOT], { label: 'tsc (tests/js against pkg/*.d.ts)' });
      run(npmBin('tsc'), ['-p', join(ROOT, 'tsconfig.cli.json')], {
        label: 'tsc (the CLI and the provider adapters in pkg/)',
      });
      run(npmBin('tsc'), ['-p', join(ROOT, 'web-demo')], { label: 'tsc (the web demo, DOM lib)' });
    },
  },
  {
    name: 'node --test',
    needsBuild: true,
    run: () => {
      const dir = join(ROOT, 'tests', 'js');
      const files = readdirSync(dir)
        .filter((f) => f.endsWith('.test.mjs'))
        .sort()
        .map((f) => join('tests', 'js', f));
      if (files.length === 0) throw new UserError('no tests/js/*.test.mjs files');
      run(node, ['--test', ...files], { label: 'node --test' });
    },
  },
  {
    name: 'deno',
    needsBuild: true,
    run: () => {
      for (const mode of ['bytes', 'auto']) {
        run(npmBin('deno'), ['run', '--allow-read', 'tests/deno/smoke.mjs', mode], {
          label: `deno smoke (${mode})`,
          env: denoEnv,
        });
      }
    },
  },
  {
    name: 'deno async',
    needsBuild: true,
    run: () =>
      run(
        npmBin('deno'),
        ['run', '--allow-read', '--allow-net=127.0.0.1', '--allow-env=CONFORMANCE_DIR', 'tests/deno/async.mjs'],
        { label: 'deno async suite (web entry)', env: denoEnv },
      ),
  },
  {
    name: 'bun',
    needsBuild: true,
    run: () => {
      for (const mode of ['bytes', 'auto']) {
        run(npmBin('bun'), ['tests/bun/smoke.mjs', mode], { label: `bun smoke (${mode})` });
      }
    },
  },
  {
    name: 'browser',
    needsBuild: true,
    run: () =>
      run(node, ['--test', join('tests', 'browser', 'demo.test.mjs')], {
        label: 'browser test (web demo in Chromium)',
      }),
  },
  {
    name: 'pack',
    needsBuild: true,
    run: () => run(node, ['scripts/pack-test.mjs'], { label: 'packaging test' }),
  },
  {
    name: 'matrix',
    needsBuild: true,
    run: () =>
      run(node, ['scripts/matrix-test.mjs'], {
        label: 'runtime and bundler matrix (Node, Bun, Deno, workerd, Vite, webpack, esbuild, Rollup)',
      }),
  },
];

function main() {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !STEPS.some((s) => s.name === w));
  if (unknown.length) {
    console.error(`unknown step(s): ${unknown.join(', ')}; steps: ${STEPS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const steps = wanted.length ? STEPS.filter((s) => wanted.includes(s.name)) : STEPS;
  /** @type {{ name: string, status: 'ok' | 'FAILED' | 'skipped', detail: string }[]} */
  const results = [];
  let buildFailed = false;
  for (const step of steps) {
    if (step.needsBuild && buildFailed) {
      results.push({ name: step.name, status: 'skipped', detail: 'the build failed' });
      continue;
    }
    console.log(`\n[test] ── ${step.name} ──`);
    const started = Date.now();
    try {
      step.run();
      results.push({ name: step.name, status: 'ok', detail: seconds(started) });
    } catch (error) {
      const message = error instanceof UserError ? error.message : String(error?.stack ?? error);
      console.error(`[test] step "${step.name}" FAILED: ${message}`);
      results.push({ name: step.name, status: 'FAILED', detail: `${seconds(started)}: ${message}` });
      if (step.name === 'build') buildFailed = true;
    }
  }

  console.log('\n[test] summary:');
  for (const r of results) console.log(`  ${r.status.padEnd(7)} ${r.name.padEnd(12)} ${r.detail}`);
  const count = (status) => results.filter((r) => r.status === status).length;
  const failed = count('FAILED');
  const skipped = count('skipped');
  if (failed) {
    const names = results.filter((r) => r.status === 'FAILED').map((r) => r.name);
    console.log(`[test] failed step(s): ${names.join(', ')}`);
  }
  console.log(`steps: ${count('ok')} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed ? 1 : 0);
}

/** @param {number} started */
function seconds(started) {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}

main();
