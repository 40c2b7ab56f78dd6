// The README's examples run (issue 8): every fenced code block of README.md has a language, and
// every JavaScript block runs against the built package (pkg/, `npm run build` first) on the real
// sample session (examples/sessions/pi-session-with-compactions.jsonl):
//   - ```js blocks: in Node, as an ES module in a fresh folder where `session-compaction` resolves
//     to pkg/ and `session.jsonl` is the sample;
//   - ```js browser blocks: in Debian's Chromium (playwright-core), as a module of a page served on
//     127.0.0.1 with an import map `session-compaction` → pkg/index.web.mjs and the sample at
//     /session.jsonl. Without /usr/bin/chromium they are skipped with a message, except in CI
//     (CI=true), where that fails.
// Each block must finish without an error, print something, never print `undefined`, and print
// the cut point the engine computes for the sample when it plans a compaction. The README's Rust
// block runs as a doctest (`cargo test --doc`: README.md is the crate documentation).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SessionTree } from '../../pkg/index.node.mjs';
import { PKG_DIR, ROOT } from '../../scripts/lib.mjs';

const README = join(ROOT, 'README.md');
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
const CHROMIUM = '/usr/bin/chromium';
/** The static server of the web demo (scripts/demo.mjs) and the browser driver. */
const DEMO_SCRIPT = new URL('../../scripts/demo.mjs', import.meta.url).href;
const PLAYWRIGHT = 'playwright-core';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--no-first-run',
];
/** What the page logs (with `console.info`) once the example has finished: then `ok` or the error. */
const DONE = 'readme-example-finished:';
const IN_CI = ['true', '1'].includes(String(process.env.CI ?? '').toLowerCase());

/**
 * The fenced code blocks of a Markdown text (fences of three backticks at the start of a line).
 * @param {string} text
 * @returns {{ info: string, code: string, line: number }[]}
 */
function codeBlocks(text) {
  const lines = text.split('\n');
  /** @type {{ info: string, code: string, line: number }[]} */
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    assert.ok(i < lines.length, `README.md line ${start + 1}: the code block is never closed`);
    blocks.push({ info: open[1].trim(), code: `${body.join('\n')}\n`, line: start + 1 });
  }
  return blocks;
}

const blocks = codeBlocks(readFileSync(README, 'utf8'));
const words = (/** @type {string} */ info) => info.split(/[\s,]+/).filter(Boolean);
const jsBlocks = blocks.filter((b) => ['js', 'javascript', 'mjs'].includes(words(b.info)[0]));
const nodeBlocks = jsBlocks.filter((b) => !words(b.info).includes('browser'));
const browserBlocks = jsBlocks.filter((b) => words(b.info).includes('browser'));

/** The cut point the engine computes for the sample with the default settings. */
const expectedCut = (() => {
  const tree = SessionTree.fromBytes(readFileSync(SAMPLE));
  try {
    const id = tree.prepareCompaction()?.firstKeptEntryId;
    assert.equal(typeof id, 'string');
    return /** @type {string} */ (id);
  } finally {
    tree.free();
  }
})();

/**
 * What every block's output must satisfy.
 * @param {{ code: string, line: number }} block
 * @param {string[][]} printed the values of each console.log call, as text (`undefined` for undefined)
 */
function checkOutput(block, printed) {
  const where = `README.md line ${block.line}`;
  const shown = printed.map((values) => values.join(' ').slice(0, 200)).join('\n');
  assert.ok(printed.length > 0, `${where}: the example printed nothing`);
  for (const values of printed) {
    assert.ok(!values.includes('undefined'), `${where}: the example printed undefined:\n${shown}`);
  }
  if (block.code.includes('prepareCompaction(')) {
    assert.ok(
      printed.some((values) => values.some((v) => v.includes(expectedCut))),
      `${where}: the sample's cut point ${expectedCut} is not in:\n${shown}`,
    );
  }
}

/** @type {string[]} */
const temporary = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder holding session.jsonl (the sample) and `extra` files. @param {Record<string, string>} extra */
function exampleFolder(extra) {
  const dir = mkdtempSync(join(tmpdir(), 'readme-example-'));
  temporary.push(dir);
  copyFileSync(SAMPLE, join(dir, 'session.jsonl'));
  for (const [name, content] of Object.entries(extra)) writeFileSync(join(dir, name), content);
  return dir;
}

test('every fenced block of README.md names its language', () => {
  assert.ok(blocks.length >= 5, `only ${blocks.length} code blocks found`);
  for (const block of blocks) {
    assert.notEqual(block.info, '', `README.md line ${block.line}: a bare fence (rustdoc would compile it as Rust)`);
  }
  assert.ok(nodeBlocks.length >= 1, 'no ```js block');
  assert.ok(browserBlocks.length >= 1, 'no ```js browser block');
});

test("the first block gives npm start, npm test, npm run demo and npm run examples; the docs name the examples' variables", () => {
  const first = blocks[0];
  assert.equal(first.info, 'sh');
  const commands = first.code
    .split('\n')
    .map((line) => line.split('#')[0].trim())
    .filter(Boolean);
  assert.deepEqual(commands, ['npm start', 'npm test', 'npm run demo', 'npm run examples']);
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
  assert.equal(scripts.examples, 'node scripts/examples.mjs');
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, /`examples\/openai\.mjs` reads\s+`OPENAI_API_KEY` and `OPENAI_BASE_URL`/);
  assert.match(readme, /`examples\/anthropic\.mjs` `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`/);
  assert.match(readme, /`examples\/ai-sdk\.mjs` `AI_GATEWAY_API_KEY` and `AI_GATEWAY_BASE_URL`/);
  assert.match(readme, /it does not read\s+`OPENAI_BASE_URL`/);
  const header = readFileSync(join(ROOT, 'examples', 'openai.mjs'), 'utf8').split('\nimport ')[0];
  assert.ok(
    header.includes(
      '// Env: OPENAI_API_KEY, OPENAI_BASE_URL (any OpenAI-compatible server; default https://api.openai.com/v1).',
    ),
    header,
  );
});

for (const block of nodeBlocks) {
  test(`README.md line ${block.line}: the JavaScript example runs in Node on the sample session`, () => {
    const dir = exampleFolder({ 'example.mjs': block.code });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(PKG_DIR, join(dir, 'node_modules', 'session-compaction'), 'dir');
    const result = spawnSync(process.execPath, ['example.mjs'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    assert.equal(result.error, undefined);
    assert.equal(result.status, 0, `exit ${result.status}\n${result.stderr}`);
    assert.equal(result.stderr, '');
    const lines = result.stdout.split('\n').filter((l) => l !== '');
    checkOutput(
      block,
      lines.map((l) => l.split(' ')),
    );
  });
}

const chromiumMissing = !existsSync(CHROMIUM) && !IN_CI;
for (const block of browserBlocks) {
  test(`README.md line ${block.line}: the browser example runs in Chromium on the sample session`, {
    skip: chromiumMissing && `${CHROMIUM} is missing: install Debian's chromium to run the browser examples`,
  }, async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing and CI=true: .ci/run installs the chromium package`);
    const page = `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "session-compaction": "/pkg/index.web.mjs" } }</script>
<script type="module">
import('/example.mjs').then(
  () => console.info('${DONE}', 'ok'),
  (error) => console.info('${DONE}', String(error?.stack ?? error)),
);
</script>
`;
    const dir = exampleFolder({ 'example.mjs': block.code, 'index.html': page });
    symlinkSync(PKG_DIR, join(dir, 'pkg'), 'dir');
    // Loaded through non-literal specifiers: tsc (tests/js is type-checked without the DOM library)
    // does not follow them into playwright-core's DOM-typed declarations and the untyped script.
    const { startServer } = await import(DEMO_SCRIPT);
    const server = await startServer({ root: dir });
    const { chromium } = await import(PLAYWRIGHT);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      /** @type {string[]} */
      const errors = [];
      /** @type {Promise<string[]>[]} */
      const logged = [];
      /** @type {(status: string) => void} */
      let finish = () => {};
      /** @type {Promise<string>} */
      const finished = new Promise((resolve) => {
        finish = resolve;
      });
      tab.on('pageerror', (/** @type {Error} */ error) => errors.push(error.message));
      tab.on('console', (/** @type {any} */ message) => {
        const type = message.type();
        // Console events arrive in order: the sentinel comes after everything the example logged.
        if (type === 'info' && message.text().startsWith(DONE)) finish(message.text().slice(DONE.length + 1));
        else if (type === 'error') errors.push(message.text());
        else if (type === 'log') {
          logged.push(
            Promise.all(message.args().map((/** @type {any} */ arg) => arg.jsonValue())).then((values) =>
              values.map((v) => (v === undefined ? 'undefined' : typeof v === 'string' ? v : JSON.stringify(v))),
            ),
          );
        }
      });
      await tab.goto(server.url);
      assert.equal(await finished, 'ok');
      const printed = await Promise.all(logged);
      assert.deepEqual(errors, []);
      checkOutput(block, printed);
    } finally {
      await browser.close();
      await server.close();
    }
  });
}
