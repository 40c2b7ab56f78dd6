// The web demo of session-compaction: loads a session into the WebAssembly engine (the package's
// `web` entry) and shows its decisions. Plain ES modules, no framework.
import { BranchBar, REGION, REGION_NAMES } from './branch-bar.js';
import { extractiveSummarizer, fetchSample, loadEngine } from './engine.js';
import { describeEntry, el, num, short } from './format.js';
import { renderContext, renderPreparation, renderPrune, renderResult, renderValidation } from './panels.js';
import { TreeView } from './tree-view.js';

const $ = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));
const button = (selector) => /** @type {HTMLButtonElement} */ (document.querySelector(selector));

const COMPACTION_CONTROLS = ['keepRecentTokens', 'reserveTokens'];
const PRUNE_CONTROLS = ['protectTokens', 'minimumSavings', 'protectedTools'];
const DEFAULT_CONTEXT_WINDOW = 200000;
const PREP_DELAY_MS = 120;

const state = {
  api: /** @type {any} */ (null),
  openai: /** @type {any} */ (null),
  extractive: /** @type {((request: any) => Promise<string>) | null} */ (null),
  tree: /** @type {any} */ (null),
  fileName: '',
  nodes: /** @type {any[]} */ ([]),
  byId: new Map(),
  branch: new Int32Array(0),
  branchPos: new Int32Array(0),
  region: new Uint8Array(0),
  regionOfNode: new Int8Array(0),
  prunedPos: new Uint8Array(0),
  prunedNodes: new Set(),
  issueNodes: new Set(),
  plan: /** @type {any} */ (undefined),
  prep: /** @type {any} */ (undefined),
  prepPending: false,
  prune: /** @type {any} */ (null),
  validation: /** @type {any} */ (null),
  contextTokens: 0,
  contextMessages: 0,
  cut: /** @type {{pos: number, id: string} | null} */ (null),
  turn: /** @type {{pos: number, id: string} | null} */ (null),
  prevKept: /** @type {any} */ (null),
  boundaryStart: 0,
  sums: [0, 0, 0, 0, 0],
  counts: [0, 0, 0, 0, 0],
  settings: /** @type {Record<string, any>} */ ({}),
  defaults: /** @type {Record<string, any>} */ ({}),
  busy: false,
  describeCache: new Map(),
  lastAction: /** @type {any} */ (null),
  scale: 'branch',
};

let treeView;
let bar;

// ── startup ──────────────────────────────────────────────────────────────────────────────────

async function main() {
  treeView = new TreeView($('#tree'), {
    describe,
    onLeaf: (i) => setLeaf(i),
    onNavigate: (i) => navigateWithSummary(i),
    onActiveChange: (i) => showSelection(i),
  });
  bar = new BranchBar($('.bar-section'), {
    onPick: (i) => {
      treeView.reveal(i);
      showSelection(i);
    },
    describe: describeBranchPos,
  });
  bindUi();
  renderEmptyTree('Loading the WebAssembly engine…');
  try {
    const { api, openai } = await loadEngine();
    state.api = api;
    state.openai = openai;
  } catch (error) {
    setStatus(`Could not load the engine: ${error.message}`, true);
    renderEmptyTree('The engine could not be loaded.');
    $('#app').dataset.state = 'error';
    return;
  }
  const api = state.api;
  state.extractive = extractiveSummarizer(api);
  state.defaults = {
    keepRecentTokens: api.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens,
    reserveTokens: api.DEFAULT_COMPACTION_SETTINGS.reserveTokens,
    contextWindow: DEFAULT_CONTEXT_WINDOW,
    protectTokens: api.DEFAULT_PRUNE_CONFIG.protectTokens,
    minimumSavings: api.DEFAULT_PRUNE_CONFIG.minimumSavings,
    protectedTools: [...api.DEFAULT_PRUNE_CONFIG.protectedTools],
  };
  applySettings(state.defaults);
  $('#engine-version').textContent = `engine ${api.version()} · WebAssembly, runs in this tab`;
  updateSummarizerNote();
  button('[data-action="load-sample"]').disabled = false;
  renderEmptyTree('Load a session: the bundled real session, a .jsonl file, or drop one here.');
  $('#app').dataset.state = 'empty';
  renderResult($('#panel-result'), null, jumpTo);
  if (new URLSearchParams(location.search).has('sample')) loadSample();
}

function bindUi() {
  document.querySelector('[data-action="load-sample"]').addEventListener('click', () => loadSample());
  const fileInput = /** @type {HTMLInputElement} */ ($('#file-input'));
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) loadFile(file);
    fileInput.value = '';
  });
  document.querySelector('[data-action="download"]').addEventListener('click', download);
  document.querySelector('[data-action="compact"]').addEventListener('click', compact);
  document.querySelector('[data-action="abort"]').addEventListener('click', () => state.tree?.abortCompaction());
  document.querySelector('[data-action="reset-settings"]').addEventListener('click', () => {
    applySettings(state.defaults);
    invalidate({ plan: true, prune: true });
  });
  document.querySelector('[data-action="jump-leaf"]').addEventListener('click', () => {
    const leaf = state.tree?.leafId;
    if (leaf && state.byId.has(leaf)) treeView.reveal(state.byId.get(leaf));
  });
  document.querySelector('[data-action="set-leaf"]').addEventListener('click', () => {
    const i = treeView.activeNode();
    if (i >= 0) setLeaf(i);
  });
  document.querySelector('.tree-footer [data-action="navigate-summary"]').addEventListener('click', () => {
    const i = treeView.activeNode();
    if (i >= 0) navigateWithSummary(i);
  });
  $('#endpoint-fields').addEventListener('submit', (event) => event.preventDefault());
  $('#collapse-runs').addEventListener('change', (e) =>
    treeView.setCollapse(/** @type {HTMLInputElement} */ (e.target).checked),
  );
  for (const radio of document.querySelectorAll('input[name="summarizer"]')) {
    radio.addEventListener('change', () => {
      $('#endpoint-fields').hidden = summarizerKind() !== 'openai';
      updateSummarizerNote();
    });
  }
  for (const radio of document.querySelectorAll('input[name="bar-scale"]')) {
    radio.addEventListener('change', () => {
      state.scale = /** @type {HTMLInputElement} */ (document.querySelector('input[name="bar-scale"]:checked')).value;
      renderBar();
    });
  }
  // Controls: a slider and a number field per setting, kept in step.
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (
    document.querySelectorAll('[data-control], [data-control-number]')
  )) {
    const name = input.dataset.control ?? input.dataset.controlNumber;
    input.addEventListener('input', () => onControl(name, input));
  }
  bindTabs();
  bindDrop();
}

function onControl(name, input) {
  if (name === 'protectedTools') {
    state.settings.protectedTools = input.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  } else {
    const value = Number(input.value);
    if (!Number.isFinite(value) || value < 0) return;
    state.settings[name] = Math.round(value);
    const other = /** @type {HTMLInputElement | null} */ (
      input.dataset.control
        ? document.querySelector(`[data-control-number="${name}"]`)
        : document.querySelector(`[data-control="${name}"]`)
    );
    if (other) other.value = String(state.settings[name]);
  }
  if (COMPACTION_CONTROLS.includes(name)) invalidate({ plan: true });
  else if (PRUNE_CONTROLS.includes(name)) invalidate({ prune: true });
  else invalidate({ stats: true });
}

function applySettings(values) {
  state.settings = { ...values, protectedTools: [...values.protectedTools] };
  for (const [name, value] of Object.entries(state.settings)) {
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (
      document.querySelectorAll(`[data-control="${name}"], [data-control-number="${name}"]`)
    )) {
      input.value = Array.isArray(value) ? value.join(', ') : String(value);
    }
  }
}

const compactionSettings = () => ({
  enabled: true,
  keepRecentTokens: state.settings.keepRecentTokens,
  reserveTokens: state.settings.reserveTokens,
});
const pruneConfig = () => ({
  protectTokens: state.settings.protectTokens,
  minimumSavings: state.settings.minimumSavings,
  protectedTools: state.settings.protectedTools,
});

// ── loading ──────────────────────────────────────────────────────────────────────────────────

async function loadSample() {
  if (state.busy) return;
  setStatus('Loading the sample session…');
  try {
    const { bytes, name } = await fetchSample();
    loadBytes(bytes, name);
  } catch (error) {
    setStatus(String(error.message ?? error), true);
  }
}

async function loadFile(file) {
  if (state.busy) return;
  setStatus(`Reading ${file.name}…`);
  try {
    loadBytes(new Uint8Array(await file.arrayBuffer()), file.name);
  } catch (error) {
    setStatus(`${file.name}: ${error.message ?? error}`, true);
  }
}

function loadBytes(bytes, name) {
  const started = performance.now();
  let tree;
  try {
    tree = state.api.SessionTree.fromBytes(bytes);
  } catch (error) {
    setStatus(`${name} could not be loaded: ${error.code ? `${error.code}: ` : ''}${error.message}`, true);
    return;
  }
  if (state.tree) state.tree.free();
  state.tree = tree;
  state.fileName = name;
  state.lastAction = null;
  renderResult($('#panel-result'), null, jumpTo);
  $('#act-result').textContent = '';
  renderLoadErrors(tree.loadErrors);
  reloadStructure();
  const leaf = state.tree.leafId;
  if (leaf && state.byId.has(leaf)) treeView.reveal(state.byId.get(leaf), { align: 'center' });
  const errors = tree.loadErrors.length;
  setStatus(
    `Loaded ${name}: ${num(tree.entryCount)} entries in ${num(performance.now() - started)} ms` +
      (errors
        ? ` — ${num(errors)} line${errors === 1 ? '' : 's'} could not be read (listed above${tree.entryCount ? '; the good lines loaded' : ''})`
        : ''),
    errors > 0,
  );
  $('#app').dataset.state = 'ready';
  button('[data-action="download"]').disabled = false;
}

function renderLoadErrors(errors) {
  const box = $('#load-errors-box');
  const list = $('[data-role="load-errors"]');
  list.dataset.errorCount = String(errors.length);
  const shown = errors.slice(0, 500);
  list.replaceChildren(
    ...shown.map((e) =>
      el(
        'li',
        { 'data-line': e.line, 'data-code': e.code },
        el('span', { class: 'line-no', text: `line ${e.line}` }),
        el('code', { text: e.code }),
        e.message,
      ),
    ),
    ...(errors.length > shown.length
      ? [el('li', { class: 'muted', text: `… and ${num(errors.length - shown.length)} more` })]
      : []),
  );
  $('#load-errors-summary').textContent = errors.length
    ? `(${num(errors.length)} in ${state.fileName}; the other lines loaded)`
    : '';
  box.hidden = errors.length === 0;
}

// ── state updates ────────────────────────────────────────────────────────────────────────────

/** After a load, a compaction or a navigation: the entries changed. */
function reloadStructure() {
  const tree = state.tree;
  const nodes = tree.getTree();
  state.nodes = nodes;
  state.byId = new Map();
  nodes.forEach((n, i) => {
    if (n.id !== null && n.id !== undefined) state.byId.set(n.id, i);
  });
  state.describeCache.clear();
  treeView.setNodes(nodes, state.byId);
  const root = $('#tree');
  root.dataset.entryCount = String(tree.entryCount);
  $('#tree-caption').textContent = `· ${num(tree.entryCount)} entries`;
  state.validation = tree.validate();
  state.issueNodes = new Set(
    state.validation.issues.map((issue) => state.byId.get(issue.id)).filter((i) => i !== undefined),
  );
  renderValidation($('#panel-validation'), state.validation, jumpTo);
  setTabCount('validation', state.validation.issues.length);
  renderSessionInfo();
  invalidate({ leaf: true }, true);
}

let dirty = { leaf: false, plan: false, prune: false, stats: false };
let frame = 0;

/** Marks what changed and updates on the next frame (or now with `sync`). */
function invalidate(what, sync = false) {
  Object.assign(dirty, what);
  if (sync) {
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    flush();
  } else if (!frame) {
    frame = requestAnimationFrame(() => {
      frame = 0;
      flush();
    });
  }
}

function flush() {
  const d = dirty;
  dirty = { leaf: false, plan: false, prune: false, stats: false };
  if (!state.tree) return;
  if (d.leaf) {
    computeBranch();
    d.plan = true;
    d.prune = true;
  }
  if (d.plan) computePlan();
  if (d.prune) computePrune();
  renderDecor();
  if (!state.nodes.length) renderEmptyTree('This file holds no entries that could be read.');
  $('#tree').dataset.leafId = state.tree.leafId ?? '';
  renderStats();
  if (d.leaf) renderContextSoon();
  if (d.plan) schedulePreparation();
  if (d.prune) renderPrune($('#panel-prune'), state.prune, state.settings, jumpTo);
  updateButtons();
}

/** The bar and the tree's decorations (regions, leaf, cut, turn start, prunable, issues). */
function renderDecor() {
  renderBar();
  const at = (pos) => (pos >= 0 && pos < state.branch.length ? state.branch[pos] : -1);
  treeView.setDecor({
    region: state.regionOfNode,
    leaf: state.byId.get(state.tree.leafId) ?? -1,
    cut: state.cut ? at(state.cut.pos) : -1,
    turn: state.turn ? at(state.turn.pos) : -1,
    boundary: state.boundaryStart > 0 ? at(state.boundaryStart) : -1,
    pruned: state.prunedNodes,
    issues: state.issueNodes,
  });
  treeView.refresh();
}

/** The root→leaf path: the engine's branchIndices() (entry indices = positions in getTree()). */
function computeBranch() {
  const { nodes } = state;
  state.branch = Int32Array.from(state.tree.branchIndices());
  state.branchPos = new Int32Array(nodes.length).fill(-1);
  for (const [p, i] of state.branch.entries()) state.branchPos[i] = p;
  state.contextTokens = state.tree.estimateContextTokens();
}

/** planCompaction → regions, cut point, turn start, previous compaction's kept region. */
function computePlan() {
  const { nodes, branch } = state;
  const n = branch.length;
  const plan = state.tree.planCompaction(compactionSettings());
  state.plan = plan;
  // The latest compaction's kept region (branch positions), the engine's rule (SPEC §12.1).
  const prev = state.tree.previousCompaction();
  state.prevKept = prev ? { start: prev.keptStart, end: prev.branchPosition, id: prev.entryId ?? '' } : null;
  let boundaryStart = 0;
  let firstKept = n;
  let turnStart = -1;
  if (plan) {
    boundaryStart = plan.boundaryStart;
    firstKept = plan.cutPoint.firstKeptEntryIndex;
    turnStart = plan.cutPoint.isSplitTurn ? plan.cutPoint.turnStartIndex : -1;
  } else {
    // Nothing to compact (the branch ends in a compaction, or is empty): what the last
    // compaction summarized and kept.
    boundaryStart = prev ? Math.min(prev.keptStart, n) : 0;
    firstKept = boundaryStart;
  }
  assignRegions(boundaryStart, firstKept, turnStart);
  state.cut = plan && firstKept < n ? { pos: firstKept, id: nodes[branch[firstKept]].id ?? '' } : null;
  state.turn =
    plan && turnStart >= 0 && turnStart < n ? { pos: turnStart, id: nodes[branch[turnStart]].id ?? '' } : null;
  state.prepPending = true;
}

/** Region of every branch entry, and the tokens and entries per region. */
function assignRegions(boundaryStart, firstKept, turnStart) {
  const { nodes, branch } = state;
  const n = branch.length;
  const region = new Uint8Array(n);
  const sums = [0, 0, 0, 0, 0];
  const counts = [0, 0, 0, 0, 0];
  for (let p = 0; p < n; p++) {
    const node = nodes[branch[p]];
    let r;
    if (node.tokens <= 0 && node.type !== 'message') r = REGION.META;
    else if (p < boundaryStart) r = REGION.SUMMARIZED;
    else if (p >= firstKept) r = REGION.KEPT;
    else if (turnStart >= 0 && p >= turnStart) r = REGION.PREFIX;
    else r = REGION.SUMMARIZE;
    region[p] = r;
    sums[r] += node.tokens;
    counts[r]++;
  }
  state.region = region;
  state.regionOfNode = new Int8Array(nodes.length).fill(-1);
  for (let p = 0; p < n; p++) state.regionOfNode[branch[p]] = region[p];
  state.sums = sums;
  state.counts = counts;
  state.boundaryStart = boundaryStart;
}

function computePrune() {
  const prune = state.tree.planPrune(pruneConfig());
  state.prune = prune;
  state.prunedNodes = new Set();
  state.prunedPos = new Uint8Array(state.branch.length);
  // Each candidate names its entry index (a node of getTree()) and its branch position.
  const positions = [];
  for (const c of prune.candidates) {
    state.prunedNodes.add(c.entryIndex);
    if (c.branchPosition !== undefined) {
      state.prunedPos[c.branchPosition] = 1;
      positions.push(c.branchPosition);
    }
  }
  $('.bar-section').dataset.prunedPositions = positions.sort((a, b) => a - b).join(',');
  setTabCount('prune', prune.candidates.length);
}

let prepTimer = 0;

/** prepareCompaction materializes the messages (slower on big sessions): debounced. */
function schedulePreparation() {
  clearTimeout(prepTimer);
  // Big branches take a few hundred ms to materialize: wait until the slider rests.
  prepTimer = setTimeout(computePreparation, state.branch.length > 5000 ? 300 : PREP_DELAY_MS);
}

function computePreparation() {
  if (!state.tree) return;
  // An update is queued for the next frame (the settings may have moved): wait for it.
  if (frame) {
    schedulePreparation();
    return;
  }
  const prep = state.tree.prepareCompaction(compactionSettings());
  state.prep = prep;
  state.prepPending = false;
  // The engine's preparation is the authority on the cut point.
  if (!prep) {
    if (state.plan) {
      // The plan found a cut, but there is nothing to summarize before it: nothing to compact,
      // so everything since the boundary stays as it is.
      assignRegions(state.boundaryStart, state.boundaryStart, -1);
    }
    state.cut = null;
    state.turn = null;
    renderDecor();
  } else if (state.cut?.id !== prep.firstKeptEntryId) {
    console.warn(`plan and preparation disagree on the cut: ${state.cut?.id} vs ${prep.firstKeptEntryId}`);
    const i = state.byId.get(prep.firstKeptEntryId);
    state.cut = { pos: i === undefined ? -1 : state.branchPos[i], id: prep.firstKeptEntryId };
    renderDecor();
  }
  let fileLists = null;
  try {
    if (prep) fileLists = state.api.computeFileLists(prep.fileOps);
  } catch {
    fileLists = null;
  }
  renderPreparation($('#panel-prep'), {
    prep,
    plan: state.plan,
    sums: state.sums,
    counts: state.counts,
    fileLists,
    settings: state.settings,
    cutId: state.cut?.id ?? '',
    turnId: state.turn?.id ?? '',
    nothing: prep ? undefined : state.tree.nothingToCompact(compactionSettings()),
    onJump: jumpTo,
  });
  renderStats();
  updateButtons();
}

let contextTimer = 0;

/** The context panel (after convertToLlm), after the current frame has painted. */
function renderContextSoon() {
  clearTimeout(contextTimer);
  contextTimer = setTimeout(() => {
    if (!state.tree) return;
    const messages = state.tree.buildLlmMessages();
    state.contextMessages = messages.length;
    renderContext($('#panel-context'), messages, (m) => state.api.estimateTokens(m), state.contextTokens);
    setTabCount('context', messages.length);
    renderStats();
  }, 0);
}

function renderBar() {
  if (!state.tree) return;
  bar.update({
    nodes: state.nodes,
    branch: state.branch,
    region: state.region,
    pruned: state.prunedPos,
    cut: state.cut,
    turn: state.turn,
    prevKept: state.prevKept,
    boundaryStart: state.boundaryStart,
    scale: state.scale,
    sums: state.sums,
    counts: state.counts,
    prunedTokens: state.prune?.tokensSaved ?? 0,
    prunedCount: state.prune?.candidates.length ?? 0,
  });
}

// ── rendering helpers ────────────────────────────────────────────────────────────────────────

function describe(i) {
  let d = state.describeCache.get(i);
  if (d) return d;
  const node = state.nodes[i];
  let entry = null;
  try {
    entry = node.id ? state.tree.getEntry(node.id) : null;
  } catch {
    entry = null;
  }
  d = entry ? describeEntry(entry, state.api.contentText) : [node.role ?? node.type, ''];
  state.describeCache.set(i, d);
  return d;
}

function describeBranchPos(p) {
  const i = state.branch[p];
  const node = state.nodes[i];
  const [kind, text] = describe(i);
  const flags = state.prunedPos[p] ? ' · prunable' : '';
  return `#${p} ${node.id ?? ''} · ${kind} · ${num(node.tokens)} tok · ${REGION_NAMES[state.region[p]]}${flags} — ${text.slice(0, 80)}`;
}

function renderStats() {
  const s = state.settings;
  const api = state.api;
  const box = $('#stats');
  if (!state.tree) {
    box.replaceChildren();
    return;
  }
  const ctx = state.contextTokens;
  const window = s.contextWindow;
  const threshold = api.compactionThreshold(window, compactionSettings());
  let triggers = false;
  try {
    triggers = api.shouldCompact(ctx, window, compactionSettings());
  } catch {
    triggers = false;
  }
  const summarize = state.sums[REGION.SUMMARIZE] + state.sums[REGION.PREFIX];
  // The engine's outcome preview: the summary budgeted at its maxTokens, and prune first.
  const preview = state.plan?.preview;
  const outcome = preview?.compaction;
  const nothing = !state.plan || !outcome || (!state.prepPending && !state.prep);
  const nothingWhy = nothing ? state.tree.nothingToCompact(compactionSettings())?.message : undefined;
  const tile = (key, value, sub, extra = {}) =>
    el(
      'div',
      { class: `stat${extra.wide ? ' wide' : ''}`, 'data-stat': extra.name },
      el('div', { class: 'k' }, extra.swatch ?? null, key),
      el('div', { class: 'v' }, value),
      el('div', { class: 's', text: sub }),
    );
  const swatch = (v) => {
    const sw = el('span', { class: 'swatch', 'aria-hidden': 'true' });
    sw.style.background = `var(${v})`;
    return sw;
  };
  const pct = window > 0 ? Math.round((ctx / window) * 100) : 0;
  const keptEntries = state.counts[REGION.KEPT];
  const summarizedEntries = state.counts[REGION.SUMMARIZE] + state.counts[REGION.PREFIX];
  const provider = state.prep?.tokensBefore ?? state.plan?.promptTokens;
  const last = state.lastAction?.kind === 'compaction' ? state.lastAction : null;
  box.replaceChildren(
    tile(
      'Before: context now (est.)',
      `${num(ctx)} tok`,
      `${pct}% of a ${short(window)} window · ${num(state.contextMessages)} messages · provider usage ${provider === undefined ? '–' : num(provider)}`,
      { name: 'before' },
    ),
    tile(
      'Automatic compaction',
      el('span', { class: triggers ? 'yes' : 'no', text: triggers ? 'would trigger' : 'not yet' }),
      `threshold ${num(threshold)} = contextWindow − reserveTokens`,
      { name: 'threshold' },
    ),
    tile(
      'After (est.)',
      nothing || !outcome ? '–' : `${num(outcome.contextTokensAfter)} tok`,
      nothing || !outcome || !preview
        ? `nothing to compact: ${nothingWhy ?? 'see the preparation tab'}`
        : `kept ${short(outcome.keptTokens)} (${num(keptEntries)} entries from ${state.cut?.id ?? '?'}) + summary ≤ ${short(outcome.summaryTokens)} · prune first: ${short(preview.withPrune.contextTokensAfterPrune)} → ${short(preview.withPrune.contextTokensAfter)}`,
      { name: 'after', swatch: swatch('--r-kept') },
    ),
    tile(
      'Saved (est.)',
      nothing || !outcome ? '–' : `${short(Math.max(0, outcome.contextTokensBefore - outcome.contextTokensAfter))} tok`,
      nothing
        ? ''
        : `summarized: ${num(summarizedEntries)} entries, ${short(summarize)} tok${state.counts[REGION.PREFIX] ? ` (${num(state.counts[REGION.PREFIX])} in the turn prefix)` : ''}`,
      { name: 'saved', swatch: swatch('--r-summarize') },
    ),
    tile(
      'Prunable now',
      state.prune?.candidates.length ? `${num(state.prune.tokensSaved)} tok` : 'nothing',
      state.prune
        ? `${num(state.prune.candidates.length)} of ${num(state.prune.considered)} old tool outputs · potential ${short(state.prune.potentialSavings)}`
        : '',
      { name: 'prune' },
    ),
    tile(
      'Last compaction (measured)',
      last ? `${short(last.before.tokens)} → ${short(last.after.tokens)}` : '–',
      last
        ? `saved ${num(last.before.tokens - last.after.tokens)} tok · ${num(last.before.messages)} → ${num(last.after.messages)} messages`
        : 'press Compact to measure before / after',
      { name: 'last' },
    ),
  );
}

function renderSessionInfo() {
  const t = state.tree;
  const header = t.header;
  const info = $('#session-info');
  // The file's format version as the engine read it (before a v1/v2 → v3 migration).
  const version = t.sourceVersion === undefined ? '' : `v${t.sourceVersion}${t.migrated ? ' (migrated to v3)' : ''}`;
  info.replaceChildren(
    el('strong', { text: state.fileName }),
    ` · ${num(t.entryCount)} entries`,
    header ? ` · ${version}${header.cwd ? ` · ${header.cwd}` : ''}` : ' · no header',
    ...(t.loadErrors.length ? [el('span', { class: 'bad', text: ` · ${num(t.loadErrors.length)} bad lines` })] : []),
  );
}

function renderEmptyTree(message) {
  const rows = $('#tree-rows');
  const button = state.api
    ? el('button', { type: 'button', class: 'primary', text: 'Load sample session', onclick: () => loadSample() })
    : null;
  rows.replaceChildren(el('div', { class: 'tree-empty' }, el('p', { text: message }), button));
  $('#tree-spacer').style.height = '';
  rows.style.transform = '';
}

function showSelection(i) {
  const label = $('#tree-selection');
  const canAct = i >= 0 && !!state.nodes[i]?.id && !state.busy;
  button('[data-action="set-leaf"]').disabled = !canAct;
  button('.tree-footer [data-action="navigate-summary"]').disabled = !canAct;
  if (i < 0) {
    label.textContent = 'Click an entry to make it the leaf.';
    return;
  }
  const node = state.nodes[i];
  const [kind] = describe(i);
  const p = state.branchPos[i];
  label.textContent = `Selected ${node.id ?? '(no id)'} · ${kind} · line ${node.line || '–'} · ${num(node.tokens)} tok · ${p >= 0 ? REGION_NAMES[state.region[p]] : 'not on the current branch'}`;
}

function updateButtons() {
  const busy = state.busy;
  const loaded = !!state.tree;
  button('[data-action="compact"]').disabled = busy || !loaded || !state.plan || (!state.prepPending && !state.prep);
  button('[data-action="download"]').disabled = busy || !loaded;
  button('[data-action="load-sample"]').disabled = busy || !state.api;
  button('[data-action="abort"]').hidden = !busy;
  showSelection(treeView.activeNode());
}

function setTabCount(name, count) {
  const tab = $(`#tab-${name}`);
  let badge = tab.querySelector('.count');
  if (!badge) {
    badge = el('span', { class: 'count' });
    tab.append(badge);
  }
  badge.textContent = String(count);
}

function setStatus(message, isError = false) {
  const status = $('#status');
  status.textContent = message;
  status.classList.toggle('error', isError);
}

function jumpTo(id) {
  const i = state.byId.get(id);
  if (i === undefined) return;
  treeView.reveal(i);
  showSelection(i);
}

// ── actions ──────────────────────────────────────────────────────────────────────────────────

function setLeaf(i) {
  if (state.busy) return;
  const node = state.nodes[i];
  if (!node?.id) return;
  if (node.id === state.tree.leafId) return;
  state.tree.setLeaf(node.id);
  invalidate({ leaf: true }, true);
  setStatus(`Leaf moved to ${node.id}: the plan, the context and the prune preview follow it.`);
}

function summarizerKind() {
  return /** @type {HTMLInputElement} */ (document.querySelector('input[name="summarizer"]:checked')).value;
}

function updateSummarizerNote() {
  const note = $('#summarizer-note');
  if (summarizerKind() === 'openai') {
    note.textContent = 'Summaries are written by your model.';
    note.classList.remove('warn');
  } else if (!state.extractive) {
    note.textContent =
      'This build of the package has no extractiveSummarizer: run `npm run build` (and `npm run demo`) again, or use an endpoint.';
    note.classList.add('warn');
  } else {
    note.textContent =
      'extractiveSummarizer from the package: deterministic quotes of the conversation, no model, no network.';
    note.classList.remove('warn');
  }
}

/** The `complete` to use and its name, or throws with a message for the user. */
function currentSummarizer() {
  if (summarizerKind() === 'openai') {
    const base = /** @type {HTMLInputElement} */ ($('#ep-base')).value.trim();
    const model = /** @type {HTMLInputElement} */ ($('#ep-model')).value.trim();
    const key = /** @type {HTMLInputElement} */ ($('#ep-key')).value;
    if (!/^https?:\/\//.test(base))
      throw new Error('Enter the base URL of the OpenAI-compatible endpoint (http:// or https://).');
    if (!model) throw new Error('Enter the model name.');
    if (!state.openai) throw new Error('This build of the package has no openai module: run `npm run build` again.');
    const complete = state.openai.openaiComplete({ baseUrl: base, model, apiKey: key || undefined });
    return { complete, name: `${model} at ${base}` };
  }
  if (!state.extractive)
    throw new Error(
      'This build of the package has no extractiveSummarizer: rebuild it (npm run build) or use an endpoint.',
    );
  return { complete: state.extractive, name: 'extractive summarizer' };
}

function setBusy(busy, message = '') {
  state.busy = busy;
  $('#app').dataset.state = busy ? 'busy' : state.tree ? 'ready' : 'empty';
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (
    document.querySelectorAll('#controls input, #act input')
  ))
    input.disabled = busy;
  if (message) setStatus(message);
  updateButtons();
}

async function compact() {
  if (state.busy || !state.tree) return;
  let summarizer;
  try {
    summarizer = currentSummarizer();
  } catch (error) {
    showActError(error.message);
    return;
  }
  const before = { tokens: state.tree.estimateContextTokens(), messages: state.tree.buildLlmMessages().length };
  const customInstructions = /** @type {HTMLInputElement} */ ($('#custom-instructions')).value.trim() || undefined;
  setBusy(true, `Compacting with the ${summarizer.name}…`);
  const started = performance.now();
  try {
    const out = await state.tree.compact({
      complete: summarizer.complete,
      settings: compactionSettings(),
      customInstructions,
    });
    const ms = performance.now() - started;
    reloadStructure();
    const after = { tokens: state.tree.estimateContextTokens(), messages: state.tree.buildLlmMessages().length };
    const entryId = out.compactionEntry.id;
    state.lastAction = {
      kind: 'compaction',
      entryId,
      result: out.result,
      before,
      after,
      ms,
      summarizer: summarizer.name,
    };
    renderResult($('#panel-result'), state.lastAction, jumpTo);
    const i = state.byId.get(entryId);
    if (i !== undefined) treeView.reveal(i);
    const act = $('#act-result');
    act.classList.remove('error');
    act.replaceChildren(
      'Compaction ',
      el('strong', { text: entryId }),
      ` added: context ${num(before.tokens)} → ${num(after.tokens)} tokens (saved ${num(before.tokens - after.tokens)}), ${num(before.messages)} → ${num(after.messages)} messages.`,
    );
    setStatus(`Compacted in ${num(ms)} ms: the new compaction entry is the leaf; see “Last action” for its summary.`);
  } catch (error) {
    showActError(`Compaction failed: ${error.code ? `${error.code}: ` : ''}${error.message ?? error}`);
  } finally {
    setBusy(false);
  }
}

async function navigateWithSummary(i) {
  if (state.busy || !state.tree) return;
  const node = state.nodes[i];
  if (!node?.id) return;
  let summarizer;
  try {
    summarizer = currentSummarizer();
  } catch (error) {
    showActError(error.message);
    return;
  }
  setBusy(true, `Navigating to ${node.id} and summarizing the branch left behind (${summarizer.name})…`);
  const started = performance.now();
  try {
    const out = await state.tree.navigateTree(node.id, {
      summarize: true,
      complete: summarizer.complete,
      contextWindow: state.settings.contextWindow,
      reserveTokens: state.settings.reserveTokens,
    });
    const ms = performance.now() - started;
    if (out.cancelled) {
      setStatus(`Navigation to ${node.id} was cancelled${out.aborted ? ' (aborted)' : ''}.`);
      return;
    }
    reloadStructure();
    state.lastAction = {
      kind: 'navigation',
      targetId: node.id,
      newLeafId: out.newLeafId,
      summaryEntry: out.summaryEntry,
      editorText: out.editorText,
      ms,
      summarizer: summarizer.name,
    };
    renderResult($('#panel-result'), state.lastAction, jumpTo);
    const leaf = out.summaryEntry?.id ?? out.newLeafId;
    if (leaf && state.byId.has(leaf)) treeView.reveal(state.byId.get(leaf));
    setStatus(
      out.summaryEntry
        ? `Navigated to ${node.id}: branch summary ${out.summaryEntry.id} added as the new leaf.`
        : `Navigated to ${node.id} (nothing to summarize).`,
    );
  } catch (error) {
    showActError(`Navigation failed: ${error.code ? `${error.code}: ` : ''}${error.message ?? error}`);
  } finally {
    setBusy(false);
  }
}

function showActError(message) {
  const act = $('#act-result');
  act.textContent = message;
  act.classList.add('error');
  setStatus(message, true);
}

function download() {
  if (!state.tree) return;
  const blob = new Blob([state.tree.toJsonl()], { type: 'application/x-ndjson' });
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: state.fileName || 'session.jsonl' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// ── tabs, drag and drop ──────────────────────────────────────────────────────────────────────

function bindTabs() {
  const tabs = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[role="tab"]'))];
  const select = (tab, focus = false) => {
    for (const t of tabs) {
      const selected = t === tab;
      t.setAttribute('aria-selected', String(selected));
      t.tabIndex = selected ? 0 : -1;
      $(`#${t.getAttribute('aria-controls')}`).hidden = !selected;
    }
    if (focus) tab.focus();
  };
  tabs.forEach((tab, k) => {
    tab.addEventListener('click', () => select(tab));
    tab.addEventListener('keydown', (/** @type {KeyboardEvent} */ event) => {
      let next = -1;
      if (event.key === 'ArrowRight') next = (k + 1) % tabs.length;
      else if (event.key === 'ArrowLeft') next = (k - 1 + tabs.length) % tabs.length;
      else if (event.key === 'Home') next = 0;
      else if (event.key === 'End') next = tabs.length - 1;
      if (next >= 0) {
        event.preventDefault();
        select(tabs[next], true);
      }
    });
  });
}

function bindDrop() {
  const overlay = $('#drop-overlay');
  let depth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes('Files');
  window.addEventListener('dragenter', (event) => {
    if (!hasFiles(event)) return;
    depth++;
    overlay.hidden = false;
  });
  window.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) overlay.hidden = true;
  });
  window.addEventListener('dragover', (event) => {
    if (hasFiles(event)) event.preventDefault();
  });
  window.addEventListener('drop', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth = 0;
    overlay.hidden = true;
    const file = event.dataTransfer.files[0];
    if (file) loadFile(file);
  });
}

main();
