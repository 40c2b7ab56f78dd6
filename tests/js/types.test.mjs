// The TypeScript declarations of the built package (pkg/):
//   - the public .d.ts files (those reachable from package.json's `types`) contain no `any`
//     except in the fields the session format leaves open (`details`, `data`);
//   - every runtime export of each entry has a declaration, and every declared value exists;
//   - the ErrorCode union lists every code the Rust crate can throw;
//   - `tsc --noEmit -p tsconfig.json` type-checks tests/js (JS with checkJs, and the typed
//     example tests/js/typed-usage.ts, whose `@ts-expect-error` lines fail if types degrade);
//   - and a wrong use is really rejected (a throwaway project with a deliberate type error).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = join(ROOT, 'pkg');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
/** Fields whose type may be `any`/`unknown`: the format leaves them open. */
const OPEN_FIELDS = new Set(['details', 'data']);

/** @param {string} path */
const read = (path) => readFileSync(path, 'utf8');

/** The declaration file TypeScript reads for a relative module specifier in `fromFile`. */
function declarationOf(/** @type {string} */ fromFile, /** @type {string} */ specifier) {
  const target = resolve(dirname(fromFile), specifier);
  const candidates = [
    target.replace(/\.js$/, '.d.ts'),
    target.replace(/\.mjs$/, '.d.mts'),
    target.replace(/\.cjs$/, '.d.cts'),
    `${target}.d.ts`,
    target,
  ];
  const found = candidates.find((c) => /\.d\.[cm]?ts$/.test(c) && existsSync(c));
  assert.ok(found, `${relative(PKG, fromFile)}: cannot resolve the declarations of '${specifier}'`);
  return found;
}

/** Every `types` path of package.json (top level and in `exports`), then what they import. */
function publicDeclarationFiles() {
  const pkg = JSON.parse(read(join(PKG, 'package.json')));
  /** @type {string[]} */
  const roots = [pkg.types];
  const walk = (/** @type {unknown} */ node, /** @type {boolean} */ underTypes) => {
    if (typeof node === 'string') {
      if (underTypes) roots.push(node);
    } else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) walk(value, underTypes || key === 'types');
    }
  };
  walk(pkg.exports, false);
  const seen = new Set();
  const queue = roots.map((r) => join(PKG, r));
  while (queue.length) {
    const file = /** @type {string} */ (queue.pop());
    if (seen.has(file)) continue;
    assert.ok(existsSync(file), `declared types file ${relative(PKG, file)} exists`);
    seen.add(file);
    for (const m of read(file).matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g)) queue.push(declarationOf(file, m[1]));
  }
  return [...seen].sort();
}

/** The text without comments (strings in declarations never contain comment markers here). */
const stripComments = (/** @type {string} */ text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');

/**
 * Every word-boundary `any` in the declarations, with the name of the field or parameter it
 * types (the nearest `name:` / `name?:` before it on its line), or null when there is none.
 * @param {string} text
 */
function anyUses(text) {
  const code = stripComments(text);
  /** @type {{ line: number, field: string | null, source: string }[]} */
  const uses = [];
  code.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\bany\b/g)) {
      const before = line.slice(0, m.index);
      const fields = [...before.matchAll(/(\w+)\??\s*:/g)];
      uses.push({ line: i + 1, field: fields.at(-1)?.[1] ?? null, source: line.trim() });
    }
  });
  return uses;
}

/** Names exported by a set of declaration files, split into values and types. */
function declaredExports(/** @type {string[]} */ files) {
  const values = new Set();
  const types = new Set();
  for (const file of files) {
    const code = stripComments(read(file));
    for (const m of code.matchAll(
      /^export\s+(?:declare\s+)?(function|const|let|var|class|type|interface|enum)\s+(\w+)/gm,
    )) {
      (m[1] === 'type' || m[1] === 'interface' ? types : values).add(m[2]);
    }
    for (const m of code.matchAll(/^export\s+(type\s+)?\{([^}]*)\}/gm)) {
      for (const item of m[2]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const name =
          item
            .split(/\s+as\s+/)
            .at(-1)
            ?.replace(/^type\s+/, '') ?? item;
        (m[1] || item.startsWith('type ') ? types : values).add(name);
      }
    }
  }
  return { values, types };
}

test('the public declarations are reachable from package.json and include the wasm API', () => {
  const files = publicDeclarationFiles().map((f) => relative(PKG, f));
  for (const expected of ['index.d.ts', 'index.d.cts', 'node/session_compaction.d.ts']) {
    assert.ok(files.includes(expected), `${expected} in ${files.join(', ')}`);
  }
});

test('no `any` in the public .d.ts except in `details` / `data` fields', () => {
  /** @type {string[]} */
  const stray = [];
  let checked = 0;
  for (const file of publicDeclarationFiles()) {
    for (const use of anyUses(read(file))) {
      checked++;
      if (!use.field || !OPEN_FIELDS.has(use.field)) stray.push(`${relative(PKG, file)}:${use.line}: ${use.source}`);
    }
  }
  assert.deepEqual(stray, [], `stray \`any\` in the declarations (${checked} uses found)`);
});

test('the package ships one engine .d.ts (node/); the web glue points at none', () => {
  // scripts/build.mjs ships the web build's declarations up to their loader section (index.d.ts
  // declares the entries' own init/initSync) in node/, a CommonJS folder, so that index.d.ts and
  // index.d.cts can both re-export them under every `module` setting.
  assert.equal(existsSync(join(PKG, 'web', 'session_compaction.d.ts')), false);
  assert.equal(existsSync(join(PKG, 'web', 'session_compaction_bg.wasm.d.ts')), false);
  assert.doesNotMatch(read(join(PKG, 'web', 'session_compaction.js')), /@ts-self-types/);
  assert.doesNotMatch(read(join(PKG, 'node', 'session_compaction.d.ts')), /InitInput|InitOutput|export default/);
  assert.equal(JSON.parse(read(join(PKG, 'node', 'package.json'))).type, 'commonjs');
  // node/session_compaction.js (what index.d.ts names) holds no glue: its pointer is for Deno.
  assert.doesNotMatch(read(join(PKG, 'index.node.mjs')), /@ts-self-types/);
  assert.match(read(join(PKG, 'node', 'session_compaction.js')), /@ts-self-types="\.\/session_compaction\.d\.ts"/);
  assert.match(read(join(PKG, 'index.d.ts')), /export \* from '\.\/node\/session_compaction\.js';/);
});

test('the any-detector finds what it should (self-test)', () => {
  const sample = [
    '/** any words in comments are fine */',
    'export interface A { details?: any; data: any; name: any }',
    'export function f(x: any): void;',
    'export type Company = { anything: string; many: number };',
  ].join('\n');
  const uses = anyUses(sample);
  assert.deepEqual(
    uses.map((u) => u.field),
    ['details', 'data', 'name', 'x'],
  );
});

test('every runtime export has a declaration, and every declared value exists', async () => {
  // The engine entries; the provider adapters (modules of their own) are checked below.
  const ADAPTERS = ['openai', 'anthropic', 'ai-sdk'];
  const adapterDts = ADAPTERS.map((name) => join(PKG, `${name}.d.mts`));
  const { values, types } = declaredExports(publicDeclarationFiles().filter((f) => !adapterDts.includes(f)));
  assert.ok(types.has('ErrorCode') && types.has('SessionEntry') && types.has('SessionCompactionError'));
  const require = createRequire(import.meta.url);
  const entries = {
    'index.node.cjs': require(join(PKG, 'index.node.cjs')),
    'index.node.mjs': await import(join(PKG, 'index.node.mjs')),
    'index.web.mjs': await import(join(PKG, 'index.web.mjs')),
  };
  for (const [entry, module] of Object.entries(entries)) {
    const names = Object.keys(module).filter((n) => n !== 'default' && n !== '__esModule');
    const undeclared = names.filter((n) => !values.has(n));
    assert.deepEqual(undeclared, [], `${entry}: exports without a declaration`);
    const missing = [...values].filter((n) => !(n in module));
    assert.deepEqual(missing, [], `${entry}: declared but not exported`);
  }
  for (const name of ['DEFAULT_COMPACTION_SETTINGS', 'DEFAULT_PRUNE_CONFIG', 'SessionTree', 'init', 'initSync']) {
    assert.ok(values.has(name), name);
  }
  for (const name of ADAPTERS) {
    const declared = declaredExports([join(PKG, `${name}.d.mts`)]);
    const module = await import(join(PKG, `${name}.mjs`));
    assert.deepEqual([...declared.values].sort(), Object.keys(module).sort(), `${name}.mjs: exports = declarations`);
  }
});

test('the ErrorCode union lists every code the crate throws', () => {
  const dts = read(join(PKG, 'node', 'session_compaction.d.ts'));
  const union = dts.match(/export type ErrorCode\s*=([^;]*);/);
  assert.ok(union);
  const declared = new Set([...union[1].matchAll(/"([A-Z_]+)"/g)].map((m) => m[1]));
  const errorRs = read(join(ROOT, 'src', 'error.rs'));
  const codes = errorRs.match(/pub const CODES[^=]*=\s*&\[([\s\S]*?)\];/);
  assert.ok(codes, 'src/error.rs has Error::CODES');
  const thrown = new Set([...codes[1].matchAll(/"(E_[A-Z_]+)"/g)].map((m) => m[1]));
  // the package entries' own codes: the web entry before `init()`, a SessionTree after `free()`,
  // the web entry's init() without its .wasm file, SessionTree.fromFile without its file
  const entryCodes = ['E_NOT_INITIALIZED', 'E_FREED', 'E_WASM_NOT_FOUND', 'E_FILE'];
  for (const code of entryCodes) thrown.add(code);
  // the binding layer makes no code of its own: every error it throws is a core `Error`
  const bindingDir = join(ROOT, 'bindings', 'wasm', 'src');
  for (const file of readdirSync(bindingDir).filter((f) => f.endsWith('.rs'))) {
    const own = [...read(join(bindingDir, file)).matchAll(/"(E_[A-Z_]+)"/g)].map((m) => m[1]);
    assert.deepEqual(
      own.filter((c) => !entryCodes.includes(c)),
      [],
      `bindings/wasm/src/${file} spells error codes`,
    );
  }
  const missing = [...thrown].filter((c) => !declared.has(c));
  assert.deepEqual(missing, [], 'codes thrown but not in the ErrorCode union');
  const unknown = [...declared].filter((c) => !thrown.has(c));
  assert.deepEqual(unknown, [], 'codes in the union that nothing throws');
});

/** @param {string[]} args @param {string} cwd */
function tsc(args, cwd) {
  assert.ok(existsSync(TSC), `${TSC} is missing: run npm ci`);
  const r = spawnSync(TSC, args, { cwd, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

test('tsc --noEmit -p tsconfig.json type-checks tests/js and the typed example', () => {
  const tsconfig = read(join(ROOT, 'tsconfig.json'));
  assert.match(tsconfig, /tests\/js\/\*\*\/\*\.ts/, 'tsconfig.json includes tests/js/**/*.ts');
  assert.ok(existsSync(join(ROOT, 'tests', 'js', 'typed-usage.ts')));
  const r = tsc(['--noEmit', '-p', 'tsconfig.json'], ROOT);
  assert.equal(r.status, 0, r.output);
});

test('a wrong use of the API is a type error (the checks are not vacuous)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sc-types-'));
  try {
    const entry = join(PKG, 'index.node.mjs');
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['good.ts', 'bad.ts'],
      }),
    );
    const header = `import { estimateTokens, findCutPoint, type SessionEntry } from ${JSON.stringify(entry)};\n`;
    writeFileSync(
      join(dir, 'good.ts'),
      `${header}const n: number = estimateTokens({ role: 'user', content: 'hi', timestamp: 1 });\nexport const k: boolean = findCutPoint([] as SessionEntry[], 0, 0, 1).isSplitTurn && n > 0;\n`,
    );
    writeFileSync(
      join(dir, 'bad.ts'),
      `${header}export const s: string = estimateTokens({ role: 'user', content: 'hi', timestamp: 1 });\nexport const t: string = findCutPoint([] as SessionEntry[], 0, 0, 1).turnStartIndex;\n`,
    );
    const r = tsc(['-p', 'tsconfig.json'], dir);
    assert.notEqual(r.status, 0, 'tsc accepted a wrong use');
    const errors = r.output.split('\n').filter((l) => /error TS\d+/.test(l));
    assert.ok(errors.length >= 2, r.output);
    assert.ok(
      errors.every((l) => l.startsWith('bad.ts')),
      `only bad.ts has errors:\n${r.output}`,
    );
    assert.ok(
      errors.every((l) => /TS2322/.test(l)),
      r.output,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
