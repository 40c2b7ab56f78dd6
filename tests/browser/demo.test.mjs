// Browser test of the web demo (web-demo/, issue 5): Debian's Chromium driven by playwright-core.
// It serves web-demo/ the way `npm run demo` does (scripts/demo.mjs copies pkg/ and the sample
// session into it, then a static server on 127.0.0.1), and checks the page against the engine's
// own results computed here in Node with the built package:
//   load the bundled session → tree entry count, leaf, context size and cut point as the engine
//   says; keepRecentTokens moves the cut and the reason shown for the cut is the engine's plan
//   (adaptive ratio, turn start); clicking a node selects it without moving the leaf, "Make leaf"
//   (and Enter) moves it; an
//   extractive compaction adds a compaction node (with the engine's own extractive summary);
//   "Navigate with summary" adds a branch summary; "Compact" through an OpenAI-compatible
//   endpoint (a local stand-in server) sends the expected request; Cancel during a compaction
//   aborts the model call and leaves the session unchanged; on a branched session the
//   prune preview marks the engine's candidates at their branch positions; a malformed file lists its
//   bad lines; a binary file or one without a readable line is refused with one message (the
//   session shown stays); every number field refuses -5, 2.5, 999999999 and an empty value with
//   a message at the field and in the status line, a value the engine refuses is shown the same
//   way, and "Reset to defaults" clears them; while a compaction runs the file picker is
//   disabled and a dropped file is refused out loud; Cancel of a navigation sets the act result's
//   outcome; a header of version 99 is named by the engine's code (and "1 entry"); a
//   50,000-entry session stays virtualized, the page stays responsive (a timer
//   heartbeat keeps ticking) while the engine worker loads and compacts it, and the panels are
//   marked stale while a new plan is computed. Saves web-demo/screenshot.png
//   (gitignored) right after the sample is loaded.
// Needs `npm run build` first (npm test runs it as the "browser" step after the build).
// Without /usr/bin/chromium the test is skipped with a message, except in CI (CI=true): there it
// fails, since .ci/run installs Chromium.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEMO_DIR, prepareDemo, SAMPLE_SOURCE, startServer } from '../../scripts/demo.mjs';

const CHROMIUM = '/usr/bin/chromium';
/** The flags of ../shared/TOOLCHAIN.md: no sandbox (root in containers), no network of its own. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const IN_CI = ['true', '1'].includes(String(process.env.CI ?? '').toLowerCase());
const SCREENSHOT = join(DEMO_DIR, 'screenshot.png');
/** The longest the page may stop responding while the engine worker loads or compacts (ms). */
const MAX_PAGE_GAP_MS = 800;

if (!existsSync(CHROMIUM) && !IN_CI) {
  test('web demo in Chromium', {
    skip: `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser test`,
  }, () => {});
} else {
  defineTests();
}

function defineTests() {
  /** @type {any} */ let engine;
  /** @type {any} */ let browser;
  /** @type {any} */ let page;
  /** @type {{ url: string, close: () => Promise<void> } | null} */ let server = null;
  const pageErrors = [];
  const foreignRequests = [];
  const sampleBytes = readFileSync(SAMPLE_SOURCE);

  before(async () => {
    if (!existsSync(CHROMIUM)) {
      assert.fail(
        `${CHROMIUM} is missing and CI=true: the browser test must run in CI (.ci/run installs the chromium package)`,
      );
    }
    engine = await import('../../pkg/index.node.mjs');
    await engine.init();
    prepareDemo({ build: false, log: () => {} });
    server = await startServer();
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, colorScheme: 'light' });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`console.error: ${message.text()}`);
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!['127.0.0.1', ''].includes(url.hostname) && !['data:', 'blob:'].includes(url.protocol))
        foreignRequests.push(request.url());
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A fresh engine session on the sample, for expected values. */
  const sampleTree = () => engine.SessionTree.fromBytes(sampleBytes);
  const settingsOnPage = async () => ({
    keepRecentTokens: Number(await page.inputValue('[data-control="keepRecentTokens"]')),
    reserveTokens: Number(await page.inputValue('[data-control="reserveTokens"]')),
  });
  const cutOnPage = () => page.getAttribute('[data-cut-entry-id]', 'data-cut-entry-id');
  const waitForAttr = (selector, name, value) =>
    page.waitForFunction(([s, n, v]) => document.querySelector(s)?.getAttribute(n) === v, [selector, name, value], {
      timeout: 15000,
    });
  const setRange = (name, value) =>
    page.$eval(
      `[data-control="${name}"]`,
      (input, v) => {
        input.value = String(v);
        input.dispatchEvent(new Event('input', { bubbles: true }));
      },
      value,
    );
  /** After a failed check mid-action: Cancel it, so that the next tests find the page usable. */
  const stopIfBusy = async () => {
    if ((await page.getAttribute('#app', 'data-state')) !== 'busy') return;
    await page.click('[data-action="abort"]');
    await page.waitForSelector('#app:not([data-state="busy"])', { timeout: 15000 });
  };
  /**
   * Loads the bundled session and points the page's summarizer at `held` (an OpenAI stand-in
   * that never answers); returns the session's entry count.
   * @param {{ url: string }} held
   */
  const sampleWithHeldModel = async (held) => {
    const entries = sampleTree().entryCount;
    await page.click('[data-action="load-sample"]');
    await page.waitForSelector(`#tree[data-entry-count="${entries}"]`);
    await page.waitForSelector('[data-action="compact"]:not([disabled])');
    await page.check('input[name="summarizer"][value="openai"]');
    await page.fill('#ep-base', `${held.url}v1`);
    await page.fill('#ep-model', 'slow-model');
    return entries;
  };
  /** After a test with a held model: nothing left running, the extractive summarizer back, the stand-in closed. @param {{ close(): Promise<void> }} held */
  const releaseHeldModel = async (held) => {
    await stopIfBusy();
    await page.check('input[name="summarizer"][value="extractive"]');
    await held.close();
  };
  let originalLeaf = '';
  /** Starts (or restarts) a 25 ms timer heartbeat on the page, recording the longest gap. */
  const startHeartbeat = () =>
    page.evaluate(() => {
      const w = /** @type {any} */ (window);
      clearInterval(w.__beat);
      w.__beatMax = 0;
      w.__beatTicks = 0;
      w.__beatLast = performance.now();
      w.__beat = setInterval(() => {
        const now = performance.now();
        w.__beatMax = Math.max(w.__beatMax, now - w.__beatLast);
        w.__beatLast = now;
        w.__beatTicks++;
      }, 25);
    });
  /** The longest gap so far (including the one still open) and the number of ticks. */
  const readHeartbeat = () =>
    page.evaluate(() => {
      const w = /** @type {any} */ (window);
      return { maxGap: Math.max(w.__beatMax, performance.now() - w.__beatLast), ticks: w.__beatTicks };
    });

  test('loads the bundled session: entry count, leaf, context and cut point are the engine’s', async () => {
    await page.goto(server.url);
    await page.waitForSelector('[data-action="load-sample"]:not([disabled])');
    await page.click('[data-action="load-sample"]');

    const expected = sampleTree();
    const nodes = expected.getTree();
    assert.equal(nodes.length, expected.entryCount);
    await page.waitForSelector(`#tree[data-entry-count="${expected.entryCount}"]`);
    originalLeaf = expected.leafId;

    // The leaf, and the rendered rows are entries of the session.
    assert.equal(await page.getAttribute('[data-leaf="true"]', 'data-entry-id'), expected.leafId);
    const ids = new Set(nodes.map((n) => n.id));
    const rendered = await page.$$eval('#tree [data-entry-id]', (rows) =>
      rows.map((r) => r.getAttribute('data-entry-id')),
    );
    assert.ok(rendered.length > 10, `only ${rendered.length} rows rendered`);
    for (const id of rendered) assert.ok(ids.has(id), `row ${id} is not an entry of the session`);

    // Every entry is a node: with folding off, the tree has exactly one row per entry.
    await page.uncheck('#collapse-runs');
    assert.equal(Number(await page.getAttribute('#tree', 'data-visible-rows')), nodes.length);
    await page.check('#collapse-runs');
    assert.ok(Number(await page.getAttribute('#tree', 'data-visible-rows')) < nodes.length, 'long linear runs fold');

    // The cut point is the engine's prepareCompaction() result for the page's settings.
    const settings = await settingsOnPage();
    assert.equal(settings.keepRecentTokens, engine.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens);
    const prep = expected.prepareCompaction(settings);
    assert.ok(prep, 'the sample has something to compact');
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', prep.firstKeptEntryId);
    await waitForAttr('[data-role="preparation"]', 'data-first-kept-entry-id', prep.firstKeptEntryId);

    // The context panel holds the messages after convertToLlm.
    await waitForAttr('[data-role="context"]', 'data-message-count', String(expected.buildLlmMessages().length));
    // The validation and prune panels agree with the engine.
    assert.equal(
      Number(await page.getAttribute('[data-role="validation"]', 'data-issue-count')),
      expected.validate().issues.length,
    );
    const prune = expected.planPrune({ ...engine.DEFAULT_PRUNE_CONFIG });
    assert.equal(
      Number(await page.getAttribute('[data-role="prune"]', 'data-candidate-count')),
      prune.candidates.length,
    );
    assert.equal(await page.getAttribute('[data-role="load-errors"]', 'data-error-count'), '0');

    await page.waitForTimeout(200);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expected.free();
  });

  test('moving keepRecentTokens moves the cut point (slider and keyboard)', async () => {
    const before = await cutOnPage();
    const expected = sampleTree();
    const { reserveTokens } = await settingsOnPage();
    const prep = expected.prepareCompaction({ keepRecentTokens: 50000, reserveTokens });
    assert.notEqual(prep.firstKeptEntryId, before, 'the sample must have a different cut at 50,000 tokens');
    await setRange('keepRecentTokens', 50000);
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', prep.firstKeptEntryId);
    assert.equal(await page.inputValue('[data-control-number="keepRecentTokens"]'), '50000');
    // The "After" tile shows the engine's outcome preview for these settings.
    const outcome = expected.planCompaction({ keepRecentTokens: 50000, reserveTokens })?.preview?.compaction;
    assert.ok(outcome, 'the sample has something to compact at 50,000 tokens');
    await page.waitForFunction(
      (want) => document.querySelector('[data-stat="after"] .v')?.textContent === want,
      `${Math.round(outcome.contextTokensAfter).toLocaleString('en-US')} tok`,
    );
    // The reason for the cut, next to the branch bar: the engine's plan (this session's last
    // provider usage is above the estimate, so the adaptive ratio shrinks the budget; the cut
    // splits a turn).
    const plan = expected.planCompaction({ keepRecentTokens: 50000, reserveTokens });
    assert.ok(plan.effectiveKeepRecentTokens < 50000 && plan.cutPoint.isSplitTurn, 'the sample is adaptive, split');
    await waitForAttr('#cut-reason', 'data-effective-keep-recent-tokens', String(plan.effectiveKeepRecentTokens));
    assert.equal(await page.getAttribute('#cut-reason', 'data-reason'), 'adaptive-ratio');
    assert.equal(await page.getAttribute('#cut-reason', 'data-split-turn'), 'true');
    const reason = await page.textContent('#cut-reason');
    const branchIds = expected.getBranch().map((/** @type {any} */ e) => e.id);
    for (const part of [
      prep.firstKeptEntryId,
      branchIds[plan.cutPoint.turnStartIndex],
      plan.effectiveKeepRecentTokens.toLocaleString('en-US'),
      Math.round(plan.promptTokens).toLocaleString('en-US'),
      plan.estimatedTokens.toLocaleString('en-US'),
    ])
      assert.ok(reason.includes(part), `the cut reason names ${part}: ${reason}`);

    // Keyboard: the slider moves by one step with an arrow key, and the number field follows.
    await page.focus('[data-control="keepRecentTokens"]');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.inputValue('[data-control-number="keepRecentTokens"]'), '50500');
    const prep2 = expected.prepareCompaction({ keepRecentTokens: 50500, reserveTokens });
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', prep2.firstKeptEntryId);
    expected.free();
  });

  test('every number field refuses -5, 2.5, 999999999 and an empty value the same way: a message at the field and in the status line; the plan keeps its value', async () => {
    const cut = await cutOnPage();
    const bounds = {
      keepRecentTokens: [0, 2000000],
      reserveTokens: [0, 2000000],
      contextWindow: [1000, 10000000],
      protectTokens: [0, 2000000],
      minimumSavings: [0, 2000000],
    };
    for (const [name, [min, max]] of Object.entries(bounds)) {
      const field = `[data-control-number="${name}"]`;
      const slider = `[data-control="${name}"]`;
      const box = `.control[data-for="${name}"] [data-role="control-error"]`;
      const kept = await page.inputValue(slider);
      assert.equal(await page.inputValue(field), kept);
      for (const value of ['-5', '2.5', '999999999', '']) {
        await page.fill(field, value);
        await page.waitForSelector(`${box}[data-value="${value}"]`);
        const message =
          `${value === '' ? 'An empty value' : `"${value}"`} is not accepted: ${name} takes a whole number ` +
          `from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}; ` +
          `the plan still uses ${Number(kept).toLocaleString('en-US')}.`;
        assert.equal(await page.textContent(box), message, `${name} = ${JSON.stringify(value)}`);
        assert.equal(await page.isVisible(box), true);
        // The status line says the same (as it does for a value the engine refuses).
        assert.equal(await page.textContent('#status'), message);
        assert.equal(await page.getAttribute('#status', 'class'), 'status error');
        assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
        assert.equal(await page.inputValue(slider), kept, `the ${name} slider did not move`);
        assert.equal(await cutOnPage(), cut, 'the plan did not change');
      }
      // A valid value clears the message, at the field and in the status line.
      await page.fill(field, kept);
      await page.waitForSelector(box, { state: 'detached' });
      assert.equal(await page.getAttribute(field, 'aria-invalid'), null);
      assert.equal(await page.textContent('#status'), '');
      assert.equal(await page.getAttribute('#status', 'class'), 'status');
    }
    assert.equal(await cutOnPage(), cut);
  });

  test('a value the engine refuses (contextWindow 1000 with reserveTokens 16,384) is shown at its field too; “Reset to defaults” clears every refusal', async () => {
    const { reserveTokens } = await settingsOnPage();
    const cut = await cutOnPage();
    let refusal;
    try {
      engine.compactionThreshold(1000, { ...engine.DEFAULT_COMPACTION_SETTINGS, reserveTokens });
    } catch (error) {
      refusal = error;
    }
    assert.equal(refusal?.code, 'E_INVALID_ARGUMENT', 'the engine refuses a reserve that leaves no room');
    const field = '[data-control-number="contextWindow"]';
    const box = '.control[data-for="contextWindow"] [data-role="control-error"]';
    await page.fill(field, '1000');
    await page.waitForSelector(`${box}[data-source="engine"]`);
    const message =
      `"1000" is not accepted by the engine for contextWindow: E_INVALID_ARGUMENT: ${refusal.message}; ` +
      'the plan still uses 200,000.';
    assert.equal(await page.textContent(box), message);
    assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
    assert.equal(await page.textContent('#status'), message);
    assert.equal(await page.getAttribute('#status', 'class'), 'status error');
    assert.equal(await cutOnPage(), cut, 'the plan shown is the one before');
    // And one the page refuses, at another field.
    await page.fill('[data-control-number="keepRecentTokens"]', '-5');
    await page.waitForSelector('.control[data-for="keepRecentTokens"] [data-role="control-error"]');
    assert.match(await page.textContent('#status'), /^"-5" is not accepted: keepRecentTokens/);

    // Reset to defaults: the plan is computed again and no refusal is left, nor its status line.
    await page.click('[data-action="reset-settings"]');
    await page.waitForSelector('[data-role="control-error"]', { state: 'detached' });
    await page.waitForFunction(() => document.querySelectorAll('.stale, [data-stale]').length === 0);
    assert.equal(await page.inputValue(field), '200000');
    assert.equal(await page.getAttribute(field, 'aria-invalid'), null);
    assert.equal(await page.textContent('#status'), '');
    assert.equal(await page.getAttribute('#status', 'class'), 'status');
    const defaults = sampleTree();
    const prep = defaults.prepareCompaction({ ...engine.DEFAULT_COMPACTION_SETTINGS });
    defaults.free();
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', prep.firstKeptEntryId);

    // A value the engine refuses, then fixed at the field: the refusal goes as the plan comes.
    await page.fill(field, '1000');
    await page.waitForSelector(`${box}[data-source="engine"]`);
    await page.fill(field, '200000');
    await page.waitForSelector(box, { state: 'detached' });
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === '');
    assert.equal(await page.getAttribute('#status', 'class'), 'status');
  });

  test('clicking a node selects it and leaves the leaf; “Make leaf” moves it; Enter on the last row restores it', async () => {
    // A user message row inside the visible part of the tree (rows above and below are rendered
    // too, for smooth scrolling).
    const target = await page.$eval('#tree', (tree) => {
      const box = tree.getBoundingClientRect();
      const rows = [...tree.querySelectorAll('.row[data-role-name="user"]:not([data-leaf])')];
      const visible = rows.find((row) => {
        const r = row.getBoundingClientRect();
        return r.top >= box.top && r.bottom <= box.bottom;
      });
      return visible?.getAttribute('data-entry-id') ?? null;
    });
    assert.ok(target, 'a user message is visible in the tree');
    await page.click(`#tree .row[data-entry-id="${target}"] .text`);
    await page.waitForSelector(`#tree .row.active[data-entry-id="${target}"]`);
    assert.match(await page.textContent('#tree-selection'), new RegExp(`Selected ${target}\\b`));
    // Selecting is not moving: the leaf stays, nothing is recomputed.
    await page.waitForTimeout(300);
    assert.equal(await page.getAttribute('#tree', 'data-leaf-id'), originalLeaf);
    assert.equal(await page.getAttribute('[data-leaf="true"]', 'data-entry-id'), originalLeaf);
    assert.equal(await page.locator('.stale').count(), 0);

    await page.click('[data-action="set-leaf"]');
    await page.waitForSelector(`#tree .row[data-leaf="true"][data-entry-id="${target}"]`);
    await waitForAttr('#tree', 'data-leaf-id', target);

    const expected = sampleTree();
    expected.setLeaf(target);
    const settings = await settingsOnPage();
    await waitForAttr('[data-role="context"]', 'data-message-count', String(expected.buildLlmMessages().length));
    await waitForAttr(
      '[data-cut-entry-id]',
      'data-cut-entry-id',
      expected.prepareCompaction(settings)?.firstKeptEntryId ?? '',
    );
    expected.free();

    // Keyboard: End selects the last row, Enter makes it the leaf.
    await page.focus('#tree');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await waitForAttr('#tree', 'data-leaf-id', originalLeaf);
    assert.equal(await page.getAttribute('[data-leaf="true"]', 'data-entry-id'), originalLeaf);
  });

  test('an extractive compaction adds a compaction node and shrinks the context', async () => {
    const count = Number(await page.getAttribute('#tree', 'data-entry-count'));
    const messagesBefore = Number(await page.getAttribute('[data-role="context"]', 'data-message-count'));
    const expected = sampleTree();
    const prep = expected.prepareCompaction(await settingsOnPage());
    expected.free();
    // The default summarizer is the package's extractiveSummarizer.
    assert.equal(typeof engine.extractiveSummarizer, 'function', 'the package exports extractiveSummarizer');
    assert.equal(await page.isChecked('input[name="summarizer"][value="extractive"]'), true);
    assert.match(await page.textContent('#summarizer-note'), /extractiveSummarizer from the package/);

    await page.click('[data-action="compact"]');
    await page.waitForSelector(`#tree[data-entry-count="${count + 1}"]`, { timeout: 30000 });
    const leaf = page.locator('#tree .row[data-leaf="true"]');
    assert.equal(await leaf.getAttribute('data-entry-type'), 'compaction');
    const leafId = await leaf.getAttribute('data-entry-id');
    // The page renders a new structure in two tasks (the rows, then the view with the tree's
    // leaf attribute): wait for the second.
    await waitForAttr('#tree', 'data-leaf-id', leafId ?? '');
    // The branch now ends in a compaction: nothing left to compact (the engine's reason), and the
    // bar outlines the region the new compaction kept (the engine's previousCompaction()).
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', '');
    await waitForAttr('[data-role="preparation"]', 'data-nothing-to-compact', 'alreadyCompacted');
    await waitForAttr('[data-role="prev-kept"]', 'data-compaction-id', leafId);
    await page.waitForFunction(
      (before) => Number(document.querySelector('[data-role="context"]').getAttribute('data-message-count')) < before,
      messagesBefore,
    );
    const result = await page.textContent('[data-role="result"]');
    assert.ok(result.includes(leafId), 'the last action panel names the compaction entry');
    assert.ok(result.includes(prep.firstKeptEntryId), 'the compaction keeps from the cut point shown before');
    // Its summary is the extractive one (no model): the same text as the engine's in Node.
    const reference = sampleTree();
    const expectedSummary = (
      await reference.compact({ complete: engine.extractiveSummarizer, settings: await settingsOnPage() })
    ).result.summary;
    reference.free();
    await page.click('#tab-result');
    const showAll = page.locator('[data-role="result"] .more');
    if (await showAll.count()) await showAll.click();
    assert.equal(await page.textContent('[data-role="result"] pre.text'), expectedSummary);
    await page.click('#tab-prep');
  });

  test('“Navigate with summary” from the keyboard adds a branch summary as a new leaf', async () => {
    const count = Number(await page.getAttribute('#tree', 'data-entry-count'));
    await page.focus('#tree');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    const target = await page.$eval('#tree .row.active', (row) => row.getAttribute('data-entry-id'));
    assert.ok(target, 'the second row is an entry');
    await page.keyboard.press('s');
    await page.waitForSelector(`#tree[data-entry-count="${count + 1}"]`, { timeout: 30000 });
    const leaf = page.locator('#tree .row[data-leaf="true"]');
    assert.equal(await leaf.getAttribute('data-entry-type'), 'branch_summary');
    assert.match(await page.textContent('[data-role="result"]'), new RegExp(`Navigation to ${target}`));
  });

  test('Compact with an OpenAI-compatible endpoint: the page calls it, the key stays in memory', async () => {
    const calls = [];
    const mock = await startMockOpenAi(calls);
    try {
      await page.click('[data-action="load-sample"]');
      await page.waitForSelector(`#tree[data-entry-count="${sampleTree().entryCount}"]`);
      await page.waitForSelector('[data-action="compact"]:not([disabled])');
      await page.check('input[name="summarizer"][value="openai"]');
      await page.fill('#ep-base', `${mock.url}v1`);
      await page.fill('#ep-model', 'mock-model');
      await page.fill('#ep-key', 'sk-test-key-123');
      const count = Number(await page.getAttribute('#tree', 'data-entry-count'));
      await page.click('[data-action="compact"]');
      await page.waitForSelector(`#tree[data-entry-count="${count + 1}"]`, { timeout: 30000 });
      assert.equal(await page.getAttribute('#tree .row[data-leaf="true"]', 'data-entry-type'), 'compaction');
      assert.ok(calls.length >= 1, 'the endpoint was called');
      for (const call of calls) {
        assert.equal(call.path, '/v1/chat/completions');
        assert.equal(call.authorization, 'Bearer sk-test-key-123');
        assert.equal(call.body.model, 'mock-model');
        assert.deepEqual(
          call.body.messages.map((m) => m.role),
          ['system', 'user'],
        );
        assert.ok(call.body.messages.every((m) => typeof m.content === 'string' && m.content.length > 0));
        assert.equal(typeof call.body.max_completion_tokens, 'number');
      }
      assert.match(await page.textContent('[data-role="result"]'), /Summary written by mock-model/);
      const stored = await page.evaluate(
        () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
      );
      assert.ok(!stored.includes('sk-test-key-123'), 'the API key is not stored');
    } finally {
      await page.check('input[name="summarizer"][value="extractive"]');
      await mock.close();
    }
  });

  test('Cancel during a compaction: the model call is aborted, the session is unchanged, the page stays usable', async () => {
    const held = await startHeldOpenAi();
    try {
      const entries = await sampleWithHeldModel(held);
      const leaf = await page.getAttribute('#tree', 'data-leaf-id');
      await page.fill('#ep-key', '');
      await page.click('[data-action="compact"]');
      // The engine worker is waiting on the model (the stand-in never answers).
      await until(() => held.requests.length >= 1, 'the endpoint was called');
      await page.waitForTimeout(100);
      const calls = held.requests.length;
      assert.equal(await page.getAttribute('#app', 'data-state'), 'busy');
      assert.equal(await page.isVisible('[data-action="abort"]'), true);
      await page.click('[data-action="abort"]');
      await page.waitForSelector('#act-result[data-outcome="cancelled"]', { timeout: 15000 });
      assert.match(await page.textContent('#act-result'), /cancelled: the session is unchanged/);
      // The abort reached the model call: the request was dropped by the page.
      await until(() => held.aborted === calls, 'every model request was aborted');
      assert.equal(await page.getAttribute('#app', 'data-state'), 'ready');
      assert.equal(await page.isVisible('[data-action="abort"]'), false);
      assert.equal(await page.getAttribute('#tree', 'data-entry-count'), String(entries));
      assert.equal(await page.getAttribute('#tree', 'data-leaf-id'), leaf);
      // Usable: a compaction right after runs to its end.
      await page.check('input[name="summarizer"][value="extractive"]');
      await page.click('[data-action="compact"]');
      await page.waitForSelector(`#tree[data-entry-count="${entries + 1}"]`, { timeout: 30000 });
      assert.equal(await page.getAttribute('#tree .row[data-leaf="true"]', 'data-entry-type'), 'compaction');
      assert.equal(held.requests.length, calls, 'the extractive compaction did not call the endpoint');
    } finally {
      await releaseHeldModel(held);
    }
  });

  test('while a compaction runs the file picker is disabled, and a file dropped meanwhile is refused with a message', async () => {
    const held = await startHeldOpenAi();
    try {
      const entries = await sampleWithHeldModel(held);
      assert.equal(await page.isEnabled('#file-input'), true);
      await page.click('[data-action="compact"]');
      await until(() => held.requests.length >= 1, 'the endpoint was called');
      assert.equal(await page.getAttribute('#app', 'data-state'), 'busy');
      assert.equal(await page.isDisabled('#file-input'), true, 'the picker is disabled while busy');
      assert.equal(await page.getAttribute('.file-button', 'aria-disabled'), 'true');
      // A file dropped on the page now: refused out loud, the compaction goes on.
      await page.evaluate(() => {
        const data = new DataTransfer();
        data.items.add(new File(['{"type":"session","version":3,"id":"late"}\n'], 'late.jsonl'));
        window.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
      });
      assert.equal(
        await page.textContent('#status'),
        'late.jsonl was not loaded: a compaction is running. Load it again when it has finished (or press Cancel).',
      );
      assert.equal(await page.getAttribute('#app', 'data-state'), 'busy');
      await page.click('[data-action="abort"]');
      await page.waitForSelector('#act-result[data-outcome="cancelled"]', { timeout: 15000 });
      assert.equal(await page.isEnabled('#file-input'), true, 'the picker is enabled again');
      assert.equal(await page.getAttribute('.file-button', 'aria-disabled'), 'false');
      assert.equal(await page.getAttribute('#tree', 'data-entry-count'), String(entries));
    } finally {
      await releaseHeldModel(held);
    }
  });

  test('Cancel during a navigation: #act-result says cancelled (data-outcome) like a compaction’s, the session is unchanged', async () => {
    const held = await startHeldOpenAi();
    try {
      const entries = await sampleWithHeldModel(held);
      const leaf = await page.getAttribute('#tree', 'data-leaf-id');
      await page.focus('#tree');
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowDown');
      const target = await page.$eval('#tree .row.active', (row) => row.getAttribute('data-entry-id'));
      assert.ok(target, 'the second row is an entry');
      await page.click('.tree-footer [data-action="navigate-summary"]');
      // The branch left behind is being summarized by the (held) model.
      await until(() => held.requests.length >= 1, 'the endpoint was called');
      assert.equal(await page.getAttribute('#app', 'data-state'), 'busy');
      await page.click('[data-action="abort"]');
      await page.waitForSelector('#act-result[data-outcome="cancelled"]', { timeout: 15000 });
      assert.equal(
        await page.textContent('#act-result'),
        `Navigation to ${target} cancelled: the session is unchanged.`,
      );
      await until(() => held.aborted === held.requests.length, 'every model request was aborted');
      await page.waitForSelector('#app[data-state="ready"]');
      assert.equal(await page.getAttribute('#tree', 'data-entry-count'), String(entries));
      assert.equal(await page.getAttribute('#tree', 'data-leaf-id'), leaf);
    } finally {
      await releaseHeldModel(held);
    }
  });

  test('a header of version 99 is named with the engine’s code and message, not counted as an unreadable line; 1 entry is “1 entry”', async () => {
    const bytes = Buffer.from(
      [
        JSON.stringify({
          type: 'session',
          version: 99,
          id: 'future',
          timestamp: '2025-01-01T00:00:00.000Z',
          cwd: '/tmp',
        }),
        JSON.stringify({
          type: 'message',
          id: 'a1',
          parentId: null,
          timestamp: '2025-01-01T00:00:01.000Z',
          message: { role: 'user', content: 'hello', timestamp: 1 },
        }),
        '',
      ].join('\n'),
    );
    const expected = engine.SessionTree.fromBytes(bytes);
    assert.equal(expected.entryCount, 1);
    const [error] = expected.loadErrors;
    assert.equal(error.code, 'E_UNSUPPORTED_VERSION');
    expected.free();
    await page.setInputFiles('#file-input', { name: 'future.jsonl', mimeType: 'application/x-ndjson', buffer: bytes });
    await page.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('Loaded future.jsonl'));
    // The tests' hook names the new leaf as soon as the load is told (it was the previous
    // session's until the view's second task).
    assert.equal(await page.getAttribute('#tree', 'data-leaf-id'), 'a1');
    const status = await page.textContent('#status');
    assert.match(status, /^Loaded future\.jsonl: 1 entry in /);
    assert.ok(
      status.endsWith(` — the session header: E_UNSUPPORTED_VERSION: ${error.message}`),
      `the status names the engine's error: ${status}`,
    );
    assert.ok(!status.includes('could not be read'), status);
    assert.match(await page.textContent('#tree-caption'), /^· 1 entry$/);
    assert.match(await page.textContent('#session-info'), / · 1 entry · v99 · \/tmp · header: E_UNSUPPORTED_VERSION$/);
    assert.match(
      await page.textContent('#load-errors-title'),
      /^The session header, as the engine reads it \(the header in future\.jsonl; the entries loaded\)$/,
    );
  });

  test('a branched session: the prune preview marks the candidates (entry index vs branch position)', async () => {
    // A side branch first, so that entry indices (file order) and branch positions differ.
    const at = (/** @type {number} */ n) => `2025-01-01T00:00:${String(n).padStart(2, '0')}.000Z`;
    const message = (/** @type {string} */ id, /** @type {string | null} */ parentId, /** @type {any} */ m, n) =>
      JSON.stringify({ type: 'message', id, parentId, timestamp: at(n), message: { ...m, timestamp: n } });
    const lines = [
      JSON.stringify({ type: 'session', version: 3, id: 'branched', timestamp: at(0), cwd: '/tmp' }),
      message('u0', null, { role: 'user', content: 'start' }, 1),
      message('s1', 'u0', { role: 'user', content: 'a side question' }, 2),
      message('s2', 's1', { role: 'assistant', content: [{ type: 'text', text: 'a side answer' }] }, 3),
    ];
    let parent = 'u0';
    for (let k = 1; k <= 6; k++) {
      lines.push(
        message(
          `a${k}`,
          parent,
          {
            role: 'assistant',
            content: [{ type: 'toolCall', id: `c${k}`, name: 'bash', arguments: { command: `step ${k}` } }],
            stopReason: 'toolUse',
          },
          2 * k + 2,
        ),
        message(
          `t${k}`,
          `a${k}`,
          {
            role: 'toolResult',
            toolCallId: `c${k}`,
            toolName: 'bash',
            content: [{ type: 'text', text: `output ${k} `.repeat(800) }],
            isError: false,
          },
          2 * k + 3,
        ),
      );
      parent = `t${k}`;
    }
    lines.push(message('u9', parent, { role: 'user', content: 'done' }, 30), '');
    const bytes = Buffer.from(lines.join('\n'));
    const expected = engine.SessionTree.fromBytes(bytes);
    assert.equal(expected.loadErrors.length, 0);
    const config = { protectTokens: 1000, minimumSavings: 0, protectedTools: ['skill', 'read'] };
    const plan = expected.planPrune(config);
    assert.ok(plan.candidates.length >= 3, 'the session has prunable outputs');
    const branchIds = expected.getBranch().map((e) => /** @type {any} */ (e).id);
    const positions = plan.candidates.map((c) => branchIds.indexOf(c.id)).sort((a, b) => a - b);
    assert.ok(
      plan.candidates.every((c) => c.entryIndex !== c.branchPosition),
      'entry index and branch position differ',
    );

    await page.setInputFiles('#file-input', {
      name: 'branched.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: bytes,
    });
    await page.waitForSelector(`#tree[data-entry-count="${expected.entryCount}"]`);
    await page.uncheck('#collapse-runs');
    try {
      for (const [name, value] of [
        ['protectTokens', config.protectTokens],
        ['minimumSavings', config.minimumSavings],
      ]) {
        await page.$eval(
          `[data-control-number="${name}"]`,
          (input, v) => {
            input.value = String(v);
            input.dispatchEvent(new Event('input', { bubbles: true }));
          },
          value,
        );
      }
      await waitForAttr('[data-role="prune"]', 'data-candidate-count', String(plan.candidates.length));
      await waitForAttr('.bar-section', 'data-pruned-positions', positions.join(','));
      // The tree marks the same entries as prunable.
      const marked = await page.$$eval('#tree .row', (rows) =>
        rows.filter((r) => r.querySelector('.badge.prune')).map((r) => r.getAttribute('data-entry-id')),
      );
      assert.deepEqual([...marked].sort(), plan.candidates.map((c) => c.id).sort());
    } finally {
      await page.check('#collapse-runs');
      await page.click('[data-action="reset-settings"]');
      expected.free();
    }
  });

  test('a malformed file: its bad lines are listed with their numbers, the good lines load', async () => {
    const text = [
      JSON.stringify({
        type: 'session',
        version: 3,
        id: 'broken-session',
        timestamp: '2025-01-01T00:00:00.000Z',
        cwd: '/tmp',
      }),
      JSON.stringify({
        type: 'message',
        id: 'a1',
        parentId: null,
        timestamp: '2025-01-01T00:00:01.000Z',
        message: { role: 'user', content: 'hello', timestamp: 1 },
      }),
      '{"type": "message", this is not JSON',
      JSON.stringify({
        type: 'message',
        id: 'b2',
        parentId: 'a1',
        timestamp: '2025-01-01T00:00:02.000Z',
        message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }], timestamp: 2 },
      }),
      '',
    ].join('\n');
    const bytes = Buffer.from(text);
    const expected = engine.SessionTree.fromBytes(bytes);
    const errors = expected.loadErrors;
    assert.deepEqual(
      errors.map((e) => e.line),
      [3],
    );

    await page.setInputFiles('#file-input', { name: 'broken.jsonl', mimeType: 'application/x-ndjson', buffer: bytes });
    await page.waitForSelector(`#tree[data-entry-count="${expected.entryCount}"]`);
    const list = page.locator('[data-role="load-errors"]');
    assert.equal(await list.isVisible(), true);
    assert.equal(await list.getAttribute('data-error-count'), String(errors.length));
    for (const e of errors) {
      const item = page.locator(`[data-role="load-errors"] li[data-line="${e.line}"]`);
      assert.equal(await item.isVisible(), true);
      const itemText = await item.textContent();
      assert.match(itemText, new RegExp(`line ${e.line}\\b`));
      assert.ok(itemText.includes(e.code));
    }
    assert.equal(await page.getAttribute('[data-leaf="true"]', 'data-entry-id'), expected.leafId);
    expected.free();
    // Download gives the file back byte for byte, its bad line in its place.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-action="download"]')]);
    assert.equal(download.suggestedFilename(), 'broken.jsonl');
    assert.deepEqual(readFileSync(await download.path()), bytes);
  });

  test('a binary file or a file with no readable line is refused with one message; the session shown stays', async () => {
    const count = await page.getAttribute('#tree', 'data-entry-count');
    const leaf = await page.getAttribute('[data-leaf="true"]', 'data-entry-id');
    const binary = Buffer.concat([Buffer.from('{"type":"session"\u0000'), Buffer.alloc(2000, 0x41)]);
    await page.setInputFiles('#file-input', { name: 'blob.jsonl', mimeType: 'application/x-ndjson', buffer: binary });
    // The outcome, not the "Reading blob.jsonl…" shown while the worker reads it.
    await page.waitForFunction(() =>
      document.querySelector('#status')?.textContent?.includes('blob.jsonl could not be loaded'),
    );
    assert.equal(
      await page.textContent('#status'),
      'blob.jsonl could not be loaded: E_PARSE: blob.jsonl is not a pi session: it holds binary data (a NUL byte at ' +
        'offset 17); a session is a text file of JSON lines. The session shown is unchanged.',
    );
    assert.equal(await page.getAttribute('#status', 'class'), 'status error');

    const notes = Buffer.from('just some notes\nno JSON here\n');
    const expected = engine.SessionTree.fromBytes(notes);
    assert.equal(expected.entryCount, 0);
    const errors = expected.loadErrors;
    expected.free();
    await page.setInputFiles('#file-input', { name: 'notes.jsonl', mimeType: 'text/plain', buffer: notes });
    // The outcome, not the "Reading notes.jsonl…" shown while the worker reads it.
    await page.waitForFunction(() =>
      document.querySelector('#status')?.textContent?.includes('notes.jsonl could not be loaded'),
    );
    const header = errors.find((/** @type {any} */ e) => e.code === 'E_HEADER');
    assert.equal(
      await page.textContent('#status'),
      `notes.jsonl could not be loaded: E_HEADER: notes.jsonl is not a usable pi session: no entry could be read ` +
        `(${errors.length} line errors; ${header.message}). The session shown is unchanged.`,
    );
    assert.equal(await page.getAttribute('#tree', 'data-entry-count'), count);
    assert.equal(await page.getAttribute('[data-leaf="true"]', 'data-entry-id'), leaf);
  });

  test('a 50,000-entry session: the page stays responsive while the worker loads, plans and compacts it', async (t) => {
    const bytes = Buffer.from(syntheticSession(50000));
    const expected = engine.SessionTree.fromBytes(bytes);
    assert.equal(expected.entryCount, 50000);
    // A heartbeat on the page's thread: a timer every 25 ms; the longest gap between two ticks is
    // how long the page could not respond. The engine runs in a worker, so the gap stays far
    // below the seconds the worker takes. MAX_PAGE_GAP_MS leaves room for a loaded 2-core
    // machine: with 8 parallel builds (load average 15) gaps of 100–490 ms were measured while
    // the worker took 4 s to load and 11 s to compact; the engine on the page's thread froze it
    // for the whole load (0.8 s unloaded) and compaction (2 s unloaded).
    // From a file on disk: a `buffer` would be copied into the page by Playwright itself, which
    // blocks the page's thread for seconds and would be measured as the demo's.
    const dir = mkdtempSync(join(tmpdir(), 'demo-50k-'));
    const file = join(dir, 'synthetic-50k.jsonl');
    writeFileSync(file, bytes);
    await startHeartbeat();
    let started = Date.now();
    await page.setInputFiles('#file-input', file);
    await page.waitForSelector('#tree[data-entry-count="50000"]', { timeout: 60000 });
    const { reserveTokens } = await settingsOnPage();
    const prep0 = expected.prepareCompaction({
      keepRecentTokens: Number(await page.inputValue('[data-control="keepRecentTokens"]')),
      reserveTokens,
    });
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', prep0.firstKeptEntryId);
    const loadMs = Date.now() - started;
    const loadBeat = await readHeartbeat();
    assert.ok(loadBeat.maxGap < MAX_PAGE_GAP_MS, `the page froze for ${Math.round(loadBeat.maxGap)} ms while loading`);
    assert.equal(await page.getAttribute('[data-leaf="true"]', 'data-entry-id'), expected.leafId);
    // The reason for this cut: the budget (the usage of this session is below the estimate).
    await waitForAttr('#cut-reason', 'data-reason', 'budget');

    // Only the rows in view (plus a margin) are in the DOM, also with folding off.
    await page.uncheck('#collapse-runs');
    assert.equal(await page.getAttribute('#tree', 'data-visible-rows'), '50000');
    assert.ok((await page.locator('#tree .row').count()) < 200, 'the tree is virtualized');
    await page.$eval('#tree', (tree) => (tree.scrollTop = tree.scrollHeight / 2));
    await page.waitForFunction(
      () => document.querySelectorAll('#tree .row').length > 0 && document.querySelectorAll('#tree .row').length < 200,
    );
    await page.check('#collapse-runs');

    // A new plan: the panels it replaces are marked stale at once, and unmarked when it arrives.
    const prep = expected.prepareCompaction({ keepRecentTokens: 30000, reserveTokens });
    assert.ok(prep);
    started = Date.now();
    const marked = await page.$eval('[data-control="keepRecentTokens"]', (input) => {
      input.value = '30000';
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const stale = (/** @type {string} */ s) => document.querySelector(s)?.classList.contains('stale');
      return {
        prep: stale('#panel-prep'),
        stats: stale('#stats'),
        bar: stale('.bar-section'),
        attr: document.querySelector('#panel-prep')?.getAttribute('data-stale'),
        label: getComputedStyle(document.querySelector('#panel-prep'), '::after').content,
      };
    });
    assert.deepEqual(marked, { prep: true, stats: true, bar: true, attr: 'true', label: '"updating…"' });
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', prep.firstKeptEntryId);
    await page.waitForFunction(() => document.querySelectorAll('.stale, [data-stale]').length === 0);
    const sliderMs = Date.now() - started;

    // Compaction in the worker: the page keeps ticking.
    await startHeartbeat();
    started = Date.now();
    await page.click('[data-action="compact"]');
    await page.waitForSelector('#tree[data-entry-count="50001"]', { timeout: 120000 });
    await waitForAttr('[data-cut-entry-id]', 'data-cut-entry-id', '');
    const compactMs = Date.now() - started;
    const compactBeat = await readHeartbeat();
    assert.ok(
      compactBeat.maxGap < MAX_PAGE_GAP_MS,
      `the page froze for ${Math.round(compactBeat.maxGap)} ms while compacting`,
    );
    assert.equal(await page.getAttribute('#tree .row[data-leaf="true"]', 'data-entry-type'), 'compaction');
    expected.free();
    rmSync(dir, { recursive: true, force: true });
    t.diagnostic(
      `50,000 entries: loaded and planned in ${loadMs} ms (longest page gap ${Math.round(loadBeat.maxGap)} ms, ` +
        `${loadBeat.ticks} ticks); cut updated ${sliderMs} ms after the slider moved; compacted in ${compactMs} ms ` +
        `(longest page gap ${Math.round(compactBeat.maxGap)} ms, ${compactBeat.ticks} ticks)`,
    );
  });

  test('no page errors and no request left 127.0.0.1', () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(foreignRequests, []);
  });
}

/**
 * A stand-in for an OpenAI-compatible server on 127.0.0.1 (with CORS, as a browser needs):
 * records each `POST …/chat/completions` and answers with a fixed summary.
 * @param {{ path: string, authorization: string | undefined, body: any }[]} calls
 */
function startMockOpenAi(calls) {
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': 'content-type, authorization',
    'access-control-allow-methods': 'POST, OPTIONS',
  };
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors);
      res.end();
      return;
    }
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text);
      calls.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const content = `## Goal\nSummary written by ${body.model} (call ${calls.length}).`;
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] }));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = /** @type {import('node:net').AddressInfo} */ (server.address());
      resolve({
        url: `http://127.0.0.1:${address.port}/`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done(undefined));
          }),
      });
    });
  });
}

/**
 * A linear session of `count` entries (after the header): turns of a user message, an assistant
 * tool call, its result and an assistant answer, with a usage on every assistant message.
 * @param {number} count
 */
function syntheticSession(count) {
  const lines = [
    JSON.stringify({
      type: 'session',
      version: 3,
      id: 'synthetic-50k',
      timestamp: '2025-01-01T00:00:00.000Z',
      cwd: '/tmp/synthetic',
    }),
  ];
  let parent = null;
  const usage = (n) => ({ input: 1000 + n, output: 200, cacheRead: 0, cacheWrite: 0, totalTokens: 1200 + n });
  for (let i = 0; i < count; i++) {
    const id = `e${i.toString(16).padStart(7, '0')}`;
    const turn = Math.floor(i / 4);
    const ts = 1735689600000 + i * 1000;
    let message;
    switch (i % 4) {
      case 0:
        message = {
          role: 'user',
          content: `Turn ${turn}: please look at file ${turn % 97}.rs and fix the failing test.`,
          timestamp: ts,
        };
        break;
      case 1:
        message = {
          role: 'assistant',
          content: [
            { type: 'toolCall', id: `call_${turn}`, name: 'read', arguments: { path: `src/file${turn % 97}.rs` } },
          ],
          usage: usage(turn),
          stopReason: 'toolUse',
          timestamp: ts,
        };
        break;
      case 2:
        message = {
          role: 'toolResult',
          toolCallId: `call_${turn}`,
          toolName: 'read',
          content: [{ type: 'text', text: `fn f${turn}() {}\n`.repeat(20) }],
          isError: false,
          timestamp: ts,
        };
        break;
      default:
        message = {
          role: 'assistant',
          content: [{ type: 'text', text: `Fixed the test of turn ${turn}.` }],
          usage: usage(turn),
          stopReason: 'stop',
          timestamp: ts,
        };
    }
    lines.push(
      JSON.stringify({ type: 'message', id, parentId: parent, timestamp: new Date(ts).toISOString(), message }),
    );
    parent = id;
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Polls `check` in Node (every 25 ms, up to 15 s).
 * @param {() => boolean} check
 * @param {string} what
 */
async function until(check, what) {
  const deadline = Date.now() + 15000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A stand-in OpenAI-compatible server on 127.0.0.1 (with CORS) that never answers a completion:
 * it records each request and counts those the client dropped before an answer (`aborted`).
 */
function startHeldOpenAi() {
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': 'content-type, authorization',
    'access-control-allow-methods': 'POST, OPTIONS',
  };
  const state = { requests: /** @type {string[]} */ ([]), aborted: 0, url: '', close: async () => {} };
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors);
      res.end();
      return;
    }
    state.requests.push(req.url ?? '');
    req.resume();
    res.on('close', () => {
      if (!res.writableEnded) state.aborted++;
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = /** @type {import('node:net').AddressInfo} */ (server.address());
      state.url = `http://127.0.0.1:${address.port}/`;
      state.close = () =>
        new Promise((done) => {
          server.closeAllConnections();
          server.close(() => done(undefined));
        });
      resolve(state);
    });
  });
}
