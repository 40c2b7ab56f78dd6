// The web demo of session-compaction: loads a session into the WebAssembly engine and shows its
// decisions. Plain ES modules, no framework. The engine (the package's `web` entry) runs in a
// module Web Worker (js/engine-worker.js): loading, planning, preparing, pruning, the context and
// compaction happen there, and this thread only renders what the worker hands back, so the page
// stays responsive on big sessions and Cancel can stop a running compaction. While a new plan is
// computed, the panels it will replace are marked stale (class `stale`, `data-stale`, a label).
import { BranchBar, REGION, REGION_NAMES } from './branch-bar.js';
import { EngineClient } from './engine-client.js';
import { el, num, plural, short } from './format.js';
import { renderContext, renderPreparation, renderPrune, renderResult, renderValidation } from './panels.js';
import { unpackNodes } from './tree-layout.js';
import { TreeView } from './tree-view.js';

const $ = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));
const button = (selector) => /** @type {HTMLButtonElement} */ (document.querySelector(selector));

const COMPACTION_CONTROLS = ['keepRecentTokens', 'reserveTokens'];
const PRUNE_CONTROLS = ['protectTokens', 'minimumSavings', 'protectedTools'];
const DEFAULT_CONTEXT_WINDOW = 200000;

/** What each kind of change makes stale (the selectors of the panels it replaces). */
const STALE_TARGETS = {
  branch: ['.bar-section', '#stats', '#panel-prep', '#panel-context', '#panel-prune'],
  plan: ['.bar-section', '#stats', '#panel-prep'],
  prune: ['.bar-section', '#stats', '#panel-prune'],
  stats: ['#stats'],
};

const state = {
  /** @type {EngineClient | null} */ client: null,
  /** @type {any} */ info: null,
  loaded: false,
  loading: false,
  fileName: '',
  structureGen: 0,
  entryCount: 0,
  leafId: /** @type {string | null} */ (null),
  loadErrors: /** @type {any[]} */ ([]),
  header: /** @type {any} */ (null),
  sourceVersion: /** @type {number | undefined} */ (undefined),
  migrated: false,
  nodes: /** @type {any[]} */ ([]),
  byId: new Map(),
  branch: new Int32Array(0),
  branchPos: new Int32Array(0),
  region: new Uint8Array(0),
  regionOfNode: new Int8Array(0),
  prunedPos: new Uint8Array(0),
  prunedNodes: new Set(),
  issueNodes: new Set(),
  plan: /** @type {any} */ (null),
  prep: /** @type {any} */ (null),
  nothing: /** @type {any} */ (null),
  fileLists: /** @type {any} */ (null),
  prune: /** @type {any} */ (null),
  validation: /** @type {any} */ (null),
  contextTokens: 0,
  contextMessages: 0,
  threshold: 0,
  triggers: false,
  cut: /** @type {{pos: number, id: string} | null} */ (null),
  turn: /** @type {{pos: number, id: string} | null} */ (null),
  prevKept: /** @type {any} */ (null),
  boundaryStart: 0,
  sums: [0, 0, 0, 0, 0],
  counts: [0, 0, 0, 0, 0],
  settings: /** @type {Record<string, any>} */ ({}),
  /** The settings of the plan shown (the last view the engine computed). */
  applied: /** @type {Record<string, any>} */ ({}),
  /** The number setting changed last: the one an engine refusal of the next view is shown at. */
  lastChanged: '',
  defaults: /** @type {Record<string, any>} */ ({}),
  busy: false,
  /** What is running while busy ("a compaction", "a navigation"), for a file that comes meanwhile. */
  busyWhat: '',
  describeCache: new Map(),
  describeAsked: new Set(),
  lastAction: /** @type {any} */ (null),
  scale: 'branch',
};

let treeView;
let bar;

/** One operation of the engine worker. */
const engine = (op, args = {}, transfer = []) => {
  if (!state.client) return Promise.reject(new Error('the engine is not loaded'));
  return state.client.call(op, args, transfer);
};
/** Lets the page paint and handle input between two parts of a big update (a new task). */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
const errorText = (error) => `${error?.code ? `${error.code}: ` : ''}${error?.message ?? error}`;

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
    state.client = new EngineClient({
      onCrash: (message) => {
        setStatus(message, true);
        $('#app').dataset.state = 'error';
      },
    });
    state.info = await engine('init');
  } catch (error) {
    setStatus(`Could not load the engine: ${error.message}`, true);
    renderEmptyTree('The engine could not be loaded.');
    $('#app').dataset.state = 'error';
    return;
  }
  const { compactionDefaults, pruneDefaults } = state.info;
  state.defaults = {
    keepRecentTokens: compactionDefaults.keepRecentTokens,
    reserveTokens: compactionDefaults.reserveTokens,
    contextWindow: DEFAULT_CONTEXT_WINDOW,
    protectTokens: pruneDefaults.protectTokens,
    minimumSavings: pruneDefaults.minimumSavings,
    protectedTools: [...pruneDefaults.protectedTools],
  };
  applySettings(state.defaults);
  $('#engine-version').textContent = `engine ${state.info.version} · WebAssembly, in a worker of this tab`;
  updateSummarizerNote();
  state.applied = { ...state.settings };
  button('[data-action="load-sample"]').disabled = false;
  updateButtons();
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
    fileInput.value = '';
    if (file) loadFile(file);
  });
  document.querySelector('[data-action="download"]').addEventListener('click', download);
  document.querySelector('[data-action="compact"]').addEventListener('click', compact);
  document.querySelector('[data-action="abort"]').addEventListener('click', cancel);
  document.querySelector('[data-action="reset-settings"]').addEventListener('click', () => {
    applySettings(state.defaults);
    // The defaults are valid: a refusal shown for an earlier value no longer holds.
    showRefusalStatus();
    invalidate({ plan: true, prune: true, stats: true });
  });
  document.querySelector('[data-action="jump-leaf"]').addEventListener('click', () => {
    const leaf = state.leafId;
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
    // The number field takes what the engine takes (a whole number of tokens) within the
    // field's own min and max; anything else is refused with a message next to it, and the
    // plan keeps the value in effect (the slider clamps by itself).
    const min = Number(input.min || 0);
    const max = input.max === '' ? Number.MAX_SAFE_INTEGER : Number(input.max);
    const valid = input.value.trim() !== '' && Number.isInteger(value) && value >= min && value <= max;
    showControlError(name, input, valid ? null : { given: input.value, min, max });
    showRefusalStatus(valid ? undefined : name);
    if (!valid) return;
    state.settings[name] = value;
    state.lastChanged = name;
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

/**
 * The message under a setting whose number field holds a value that is refused (`null`: none):
 * by the page (outside the field's bounds, not a whole number: `min`, `max`) or by the engine
 * (the next plan failed, `engine` is its error). Either way the status line repeats it (see
 * showRefusalStatus), and the plan shown keeps the value it was computed with.
 * @param {string} name @param {HTMLInputElement} input
 * @param {{ given: string, min: number, max: number } | { given: string, engine: string } | null} refused
 */
function showControlError(name, input, refused) {
  const control = input.closest('.control');
  if (!control) return;
  let box = /** @type {HTMLElement | null} */ (control.querySelector('[data-role="control-error"]'));
  if (!refused) {
    for (const field of control.querySelectorAll('input')) {
      field.removeAttribute('aria-invalid');
      field.removeAttribute('aria-describedby');
    }
    box?.remove();
    return;
  }
  if (!box) {
    box = el('p', { class: 'control-error', role: 'alert' });
    box.dataset.role = 'control-error';
    box.id = `control-error-${name}`;
    control.append(box);
  }
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', box.id);
  box.dataset.value = refused.given;
  const given = refused.given === '' ? 'An empty value' : `"${refused.given}"`;
  if ('engine' in refused) {
    box.dataset.source = 'engine';
    box.textContent =
      `${given} is not accepted by the engine for ${name}: ${refused.engine}; ` +
      `the plan still uses ${num(state.applied[name])}.`;
  } else {
    box.dataset.source = 'page';
    box.textContent =
      `${given} is not accepted: ${name} takes a whole number from ${num(refused.min)} to ${num(refused.max)}; ` +
      `the plan still uses ${num(state.settings[name])}.`;
  }
}

/**
 * The status line follows the refusals under the settings: it repeats the one of `name` (just
 * refused), else the first one still shown; when none is left, a refusal it showed is cleared.
 * @param {string} [name]
 */
function showRefusalStatus(name) {
  const boxes = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-role="control-error"]'))];
  const box = boxes.find((b) => b.id === `control-error-${name}`) ?? boxes[0];
  if (box) setStatus(box.textContent ?? '', true, 'refusal');
  else if ($('#status').dataset.kind === 'refusal') setStatus('');
}

/** The engine refused the settings of a view: shown at the number setting changed last. */
function showEngineRefusal(error) {
  const name = state.lastChanged;
  const field = /** @type {HTMLInputElement | null} */ (
    name ? document.querySelector(`[data-control-number="${name}"]`) : null
  );
  if (!field) {
    setStatus(`The engine could not update the plan: ${errorText(error)}`, true, 'refusal');
    return;
  }
  showControlError(name, field, { given: field.value, engine: errorText(error) });
  showRefusalStatus(name);
}

/** A view succeeded: its settings are the plan's, and the engine's refusals no longer hold. */
function clearEngineRefusals(sent) {
  state.applied = { ...state.applied, ...sent };
  for (const box of /** @type {NodeListOf<HTMLElement>} */ (
    document.querySelectorAll('[data-role="control-error"][data-source="engine"]')
  )) {
    const name = box.id.replace(/^control-error-/, '');
    const field = /** @type {HTMLInputElement | null} */ (document.querySelector(`[data-control-number="${name}"]`));
    if (field) showControlError(name, field, null);
  }
  showRefusalStatus();
}

function applySettings(values) {
  state.settings = { ...values, protectedTools: [...values.protectedTools] };
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (
    document.querySelectorAll('[data-control-number]')
  )) {
    showControlError(input.dataset.controlNumber, input, null);
  }
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

function loadSample() {
  return runLoad('the sample session', 'Loading the sample session…', () => engine('loadSample'));
}

function loadFile(file) {
  return runLoad(file.name, `Reading ${file.name}…`, async () => {
    const bytes = new Uint8Array(await file.arrayBuffer());
    // The bytes move to the worker (transferred, not copied).
    return engine('loadBytes', { bytes, name: file.name }, [bytes.buffer]);
  });
}

/** Loads in the worker; the page keeps rendering meanwhile. */
async function runLoad(name, message, start) {
  if (state.busy || state.loading) {
    // The picker is disabled meanwhile; a file dropped (or chosen) now is refused out loud.
    const running = state.busy ? state.busyWhat || 'an action' : 'another load';
    const tell = `${name} was not loaded: ${running} is running. Load it again when it has finished${state.busy ? ' (or press Cancel)' : ''}.`;
    setStatus(tell, true);
    return;
  }
  state.loading = true;
  $('#app').dataset.state = 'loading';
  setStatus(message);
  updateButtons();
  try {
    await applyLoad(await start());
  } catch (error) {
    setStatus(`${name} could not be loaded: ${errorText(error)}`, true);
  } finally {
    state.loading = false;
    $('#app').dataset.state = state.busy ? 'busy' : state.loaded ? 'ready' : 'empty';
    updateButtons();
  }
}

async function applyLoad(loaded) {
  state.fileName = loaded.name;
  state.lastAction = null;
  renderResult($('#panel-result'), null, jumpTo);
  $('#act-result').textContent = '';
  delete $('#act-result').dataset.outcome;
  await applyStructure(loaded);
  renderLoadErrors(loaded.loadErrors);
  const leaf = state.leafId;
  if (leaf && state.byId.has(leaf)) treeView.reveal(state.byId.get(leaf), { align: 'center' });
  const { header, lines } = splitLoadErrors(loaded.loadErrors);
  setStatus(
    `Loaded ${loaded.name}: ${plural(loaded.entryCount, 'entry', 'entries')} in ${num(loaded.ms)} ms (in the engine worker)` +
      header.map((e) => ` — the session header: ${e.code}: ${e.message}`).join('') +
      (lines.length
        ? ` — ${plural(lines.length, 'line')} could not be read (listed above${loaded.entryCount ? '; the good lines loaded' : ''})`
        : ''),
    header.length + lines.length > 0,
  );
}

/**
 * The load errors about the session header (the engine reports them on the header's line, and
 * its validation names that line as the header's: an issue without an entry index) and the
 * others, the lines that could not be read.
 * @param {any[]} errors
 */
function splitLoadErrors(errors) {
  const headerLines = new Set(
    (state.validation?.issues ?? [])
      .filter((issue) => issue.index === undefined && issue.line !== undefined)
      .map((issue) => issue.line),
  );
  const isHeader = (e) => e.code === 'E_HEADER' || headerLines.has(e.line);
  return { header: errors.filter(isHeader), lines: errors.filter((e) => !isHeader(e)) };
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
  const { header, lines } = splitLoadErrors(errors);
  $('#load-errors-title-text').textContent = lines.length
    ? 'Lines that could not be read'
    : 'The session header, as the engine reads it';
  $('#load-errors-summary').textContent = errors.length
    ? `(${[header.length ? 'the header' : '', lines.length ? plural(lines.length, 'line') : ''].filter(Boolean).join(' and ')} in ${state.fileName}; ${lines.length ? 'the other lines loaded' : 'the entries loaded'})`
    : '';
  box.hidden = errors.length === 0;
}

// ── state updates ────────────────────────────────────────────────────────────────────────────

/**
 * After a load, a compaction or a navigation: the entries changed (the worker's snapshot). In
 * two tasks (the tree first, then the rest), so that a big session never holds the page in one.
 */
async function applyStructure(s) {
  const gen = ++state.structureGen;
  state.loaded = true;
  state.entryCount = s.entryCount;
  state.leafId = s.leafId;
  // The tests' hook names the new leaf at once (the view's tasks set it again later).
  $('#tree').dataset.leafId = state.leafId ?? '';
  state.loadErrors = s.loadErrors;
  state.header = s.header;
  state.sourceVersion = s.sourceVersion;
  state.migrated = s.migrated;
  const nodes = unpackNodes(s.nodes);
  state.nodes = nodes;
  state.byId = new Map();
  nodes.forEach((n, i) => {
    if (n.id !== null && n.id !== undefined) state.byId.set(n.id, i);
  });
  state.describeCache.clear();
  state.describeAsked.clear();
  // The branch of the new structure comes with the next view: until then, no regions.
  state.branch = new Int32Array(0);
  state.branchPos = new Int32Array(nodes.length).fill(-1);
  state.region = new Uint8Array(0);
  state.regionOfNode = new Int8Array(nodes.length).fill(-1);
  state.prunedPos = new Uint8Array(0);
  state.prunedNodes = new Set();
  state.cut = null;
  state.turn = null;
  // The old decorations name indices of the old nodes: none until the new view arrives.
  treeView.setDecor(null);
  treeView.setNodes(nodes, s.layout);
  const root = $('#tree');
  root.dataset.entryCount = String(s.entryCount);
  $('#tree-caption').textContent = `· ${plural(s.entryCount, 'entry', 'entries')}`;
  await nextTask();
  if (gen !== state.structureGen) return;
  state.validation = s.validation;
  state.issueNodes = new Set(
    state.validation.issues.map((issue) => state.byId.get(issue.id)).filter((i) => i !== undefined),
  );
  renderValidation($('#panel-validation'), state.validation, jumpTo);
  setTabCount('validation', state.validation.issues.length);
  renderSessionInfo();
  if (!nodes.length) renderEmptyTree('This file holds no entries that could be read.');
  renderDecor();
  invalidate({ branch: true });
}

let dirty = { branch: false, plan: false, prune: false, stats: false };
let viewScheduled = false;
let viewInFlight = false;

/**
 * Marks what changed (its panels turn stale at once) and asks the worker for a new view; while
 * one is being computed, changes collect and the next request carries all of them (the latest
 * settings win, and the worker never queues a backlog while a slider moves).
 */
function invalidate(what) {
  Object.assign(dirty, what);
  markStale(what);
  if (!viewScheduled && !viewInFlight) {
    viewScheduled = true;
    setTimeout(requestView, 0);
  }
}

function markStale(what) {
  if (!state.loaded) return;
  for (const [kind, selectors] of Object.entries(STALE_TARGETS)) {
    if (!what[kind]) continue;
    for (const selector of selectors) {
      const node = $(selector);
      node.classList.add('stale');
      node.dataset.stale = 'true';
      node.setAttribute('aria-busy', 'true');
    }
  }
}

function clearStale() {
  for (const node of document.querySelectorAll('.stale')) {
    node.classList.remove('stale');
    delete (/** @type {HTMLElement} */ (node).dataset.stale);
    node.removeAttribute('aria-busy');
  }
}

async function requestView() {
  viewScheduled = false;
  if (viewInFlight || !state.loaded) return;
  const parts = dirty;
  dirty = { branch: false, plan: false, prune: false, stats: false };
  if (parts.branch) {
    parts.plan = true;
    parts.prune = true;
  }
  if (!parts.branch && !parts.plan && !parts.prune && !parts.stats) return;
  viewInFlight = true;
  const gen = state.structureGen;
  let view = null;
  const sent = { ...state.settings, protectedTools: [...state.settings.protectedTools] };
  try {
    view = await engine('view', {
      compaction: compactionSettings(),
      pruneConfig: pruneConfig(),
      contextWindow: state.settings.contextWindow,
      parts,
    });
  } catch (error) {
    showEngineRefusal(error);
  }
  if (view) clearEngineRefusals(sent);
  viewInFlight = false;
  // A view of an older structure (a compaction or load landed meanwhile) is dropped: the new
  // structure asked for its own.
  if (view && gen === state.structureGen) await applyView(view, parts, gen);
  if (dirty.branch || dirty.plan || dirty.prune || dirty.stats) requestView();
  else clearStale();
}

/** A view from the worker, in two tasks: the numbers and panels, then the bar and the tree. */
async function applyView(v, parts, gen) {
  state.leafId = v.leafId;
  state.contextTokens = v.contextTokens;
  state.threshold = v.threshold;
  state.triggers = v.triggers;
  if (parts.branch) {
    state.branch = v.branch;
    state.branchPos = new Int32Array(state.nodes.length).fill(-1);
    for (const [p, i] of state.branch.entries()) state.branchPos[i] = p;
    state.contextMessages = v.context.count;
    renderContext($('#panel-context'), v.context, state.contextTokens, (from, to) =>
      engine('contextRange', { from, to }),
    );
    setTabCount('context', v.context.count);
  }
  if (parts.plan) applyPlan(v);
  if (parts.prune) applyPrune(v.prune);
  await nextTask();
  if (gen !== state.structureGen) return;
  renderDecor();
  $('#tree').dataset.leafId = state.leafId ?? '';
  renderStats();
  if (parts.prune) renderPrune($('#panel-prune'), state.prune, state.settings, jumpTo);
  updateButtons();
}

/** The bar and the tree's decorations (regions, leaf, cut, turn start, prunable, issues). */
function renderDecor() {
  renderBar();
  renderCutReason();
  const at = (pos) => (pos >= 0 && pos < state.branch.length ? state.branch[pos] : -1);
  treeView.setDecor({
    region: state.regionOfNode,
    leaf: state.byId.get(state.leafId) ?? -1,
    cut: state.cut ? at(state.cut.pos) : -1,
    turn: state.turn ? at(state.turn.pos) : -1,
    boundary: state.boundaryStart > 0 ? at(state.boundaryStart) : -1,
    pruned: state.prunedNodes,
    issues: state.issueNodes,
  });
  treeView.refresh();
}

/** planCompaction + prepareCompaction → regions, cut point, turn start, previous kept region. */
function applyPlan(v) {
  const { nodes, branch } = state;
  const n = branch.length;
  const plan = v.plan;
  state.plan = plan;
  state.prep = v.prep;
  state.nothing = v.nothing;
  state.fileLists = v.fileLists;
  // The latest compaction's kept region (branch positions), the engine's rule (SPEC §12.1).
  const prev = v.previous;
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
  // The engine's preparation is the authority on the cut point.
  const prep = state.prep;
  if (!prep) {
    if (plan) {
      // The plan found a cut, but there is nothing to summarize before it: nothing to compact,
      // so everything since the boundary stays as it is.
      assignRegions(state.boundaryStart, state.boundaryStart, -1);
    }
    state.cut = null;
    state.turn = null;
  } else if (state.cut?.id !== prep.firstKeptEntryId) {
    console.warn(`plan and preparation disagree on the cut: ${state.cut?.id} vs ${prep.firstKeptEntryId}`);
    const i = state.byId.get(prep.firstKeptEntryId);
    state.cut = { pos: i === undefined ? -1 : state.branchPos[i], id: prep.firstKeptEntryId };
  }
  renderPreparation($('#panel-prep'), {
    prep,
    plan,
    sums: state.sums,
    counts: state.counts,
    fileLists: state.fileLists,
    settings: state.settings,
    cutId: state.cut?.id ?? '',
    turnId: state.turn?.id ?? '',
    nothing: prep ? undefined : state.nothing,
    onJump: jumpTo,
  });
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

function applyPrune(prune) {
  state.prune = prune;
  state.prunedNodes = new Set();
  state.prunedPos = new Uint8Array(state.branch.length);
  // Each candidate names its entry index (a node of getTree()) and its branch position.
  const positions = [];
  for (const c of prune.candidates) {
    state.prunedNodes.add(c.entryIndex);
    if (c.branchPosition !== undefined && c.branchPosition < state.branch.length) {
      state.prunedPos[c.branchPosition] = 1;
      positions.push(c.branchPosition);
    }
  }
  $('.bar-section').dataset.prunedPositions = positions.sort((a, b) => a - b).join(',');
  setTabCount('prune', prune.candidates.length);
}

function renderBar() {
  if (!state.loaded) return;
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

/**
 * Why the cut falls where it does, next to the branch bar, from the engine's plan: the
 * keepRecentTokens budget (`effectiveKeepRecentTokens`, after the adaptive ratio when the last
 * provider usage is above the estimate) and whether the cut splits a turn (its start).
 * `data-reason` is `budget`, `adaptive-ratio` or `none`.
 */
function renderCutReason() {
  const box = $('#cut-reason');
  const plan = state.plan;
  if (!state.loaded || !state.branch.length) {
    box.dataset.reason = '';
    box.replaceChildren();
    return;
  }
  if (!plan || !state.prep || !state.cut) {
    box.dataset.reason = 'none';
    delete box.dataset.effectiveKeepRecentTokens;
    delete box.dataset.splitTurn;
    box.replaceChildren(
      el('strong', { text: 'No cut: ' }),
      `nothing to compact (${state.nothing?.message ?? 'see the preparation tab'}).`,
    );
    return;
  }
  const asked = state.settings.keepRecentTokens;
  const used = plan.effectiveKeepRecentTokens;
  const adaptive = used !== asked;
  const split = plan.cutPoint.isSplitTurn;
  box.dataset.reason = adaptive ? 'adaptive-ratio' : 'budget';
  box.dataset.effectiveKeepRecentTokens = String(used);
  box.dataset.splitTurn = String(split);
  const id = (value) => el('button', { type: 'button', class: 'id-link', text: value, onclick: () => jumpTo(value) });
  box.replaceChildren(
    el('strong', { text: '✂ Why the cut is at ' }),
    id(state.cut.id),
    ': ',
    adaptive
      ? el(
          'span',
          { 'data-part': 'adaptive' },
          `keeps the newest ≈${num(used)} estimated tokens — keepRecentTokens ${num(asked)} scaled down by the adaptive ratio (the last provider usage, ${num(plan.promptTokens)} prompt tokens, is above the estimate of ${num(plan.estimatedTokens)} tokens)`,
        )
      : el(
          'span',
          { 'data-part': 'budget' },
          `keeps the newest ≈${num(used)} estimated tokens (the keepRecentTokens budget; the last provider usage, ${num(plan.promptTokens)} prompt tokens, is not above the estimate of ${num(plan.estimatedTokens)})`,
        ),
    split && state.turn
      ? el(
          'span',
          { 'data-part': 'turn-start' },
          '; the cut splits a turn: from its start ',
          id(state.turn.id),
          ' up to the cut is summarized as the turn prefix.',
        )
      : el('span', { 'data-part': 'turn-boundary' }, '; the kept part starts at a turn boundary (no split turn).'),
  );
}

// ── rendering helpers ────────────────────────────────────────────────────────────────────────

let describeTimer = 0;

/**
 * A tree row's [kind, text]: from the worker (the entry itself stays there), asked for in
 * batches; until the answer arrives the row shows its type, then it is redrawn.
 */
function describe(i) {
  const d = state.describeCache.get(i);
  if (d) return d;
  const node = state.nodes[i];
  if (node?.id && !state.describeAsked.has(i)) {
    state.describeAsked.add(i);
    if (!describeTimer) describeTimer = setTimeout(fetchDescriptions, 0);
  }
  return [node?.role ?? node?.type ?? '?', ''];
}

async function fetchDescriptions() {
  describeTimer = 0;
  const gen = state.structureGen;
  const wanted = [...state.describeAsked].filter((i) => !state.describeCache.has(i));
  if (!wanted.length) return;
  let answers;
  try {
    answers = await engine('describe', { ids: wanted.map((i) => state.nodes[i].id) });
  } catch {
    return;
  }
  if (gen !== state.structureGen) return;
  wanted.forEach((i, k) => {
    const node = state.nodes[i];
    state.describeCache.set(i, answers[k] ?? [node.role ?? node.type, '']);
  });
  treeView.redraw();
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
  const box = $('#stats');
  if (!state.loaded) {
    box.replaceChildren();
    return;
  }
  const ctx = state.contextTokens;
  const window = s.contextWindow;
  const threshold = state.threshold;
  const triggers = state.triggers;
  const summarize = state.sums[REGION.SUMMARIZE] + state.sums[REGION.PREFIX];
  // The engine's outcome preview: the summary budgeted at its maxTokens, and prune first.
  const preview = state.plan?.preview;
  const outcome = preview?.compaction;
  const nothing = !state.plan || !outcome || !state.prep;
  const nothingWhy = nothing ? state.nothing?.message : undefined;
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
      'Context now (est.)',
      `${num(ctx)} tok`,
      `what the threshold compares: the last provider usage + estimates after it · ${pct}% of a ${short(window)} window · ${num(state.contextMessages)} messages · provider usage ${provider === undefined ? '–' : num(provider)}`,
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
        : `from ${short(outcome.contextTokensBefore)} (the built context, as Compact reports it) · kept ${short(outcome.keptTokens)} (${num(keptEntries)} entries from ${state.cut?.id ?? '?'}) + summary ≤ ${short(outcome.summaryTokens)} · prune first: ${short(preview.withPrune.contextTokensAfterPrune)} → ${short(preview.withPrune.contextTokensAfter)}`,
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
  const header = state.header;
  const info = $('#session-info');
  // The file's format version as the engine read it (before a v1/v2 → v3 migration).
  const version =
    state.sourceVersion === undefined ? '' : `v${state.sourceVersion}${state.migrated ? ' (migrated to v3)' : ''}`;
  const errors = splitLoadErrors(state.loadErrors);
  info.replaceChildren(
    el('strong', { text: state.fileName }),
    ` · ${plural(state.entryCount, 'entry', 'entries')}`,
    header ? ` · ${version}${header.cwd ? ` · ${header.cwd}` : ''}` : ' · no header',
    ...errors.header.map((e) => el('span', { class: 'bad', text: ` · header: ${e.code}` })),
    ...(errors.lines.length
      ? [el('span', { class: 'bad', text: ` · ${plural(errors.lines.length, 'bad line')}` })]
      : []),
  );
}

function renderEmptyTree(message) {
  const rows = $('#tree-rows');
  const button = state.info
    ? el('button', { type: 'button', class: 'primary', text: 'Load sample session', onclick: () => loadSample() })
    : null;
  rows.replaceChildren(el('div', { class: 'tree-empty' }, el('p', { text: message }), button));
  $('#tree-spacer').style.height = '';
  rows.style.transform = '';
}

function showSelection(i) {
  const label = $('#tree-selection');
  const node = i >= 0 ? state.nodes[i] : null;
  const canAct = !!node?.id && !state.busy && !state.loading;
  button('[data-action="set-leaf"]').disabled = !canAct || node.id === state.leafId;
  button('.tree-footer [data-action="navigate-summary"]').disabled = !canAct;
  if (!node) {
    label.textContent = 'Click an entry to select it; “Make leaf” moves the leaf there.';
    return;
  }
  const [kind] = describe(i);
  const p = state.branchPos[i];
  label.textContent = `Selected ${node.id ?? '(no id)'} · ${kind} · line ${node.line || '–'} · ${num(node.tokens)} tok · ${p >= 0 ? REGION_NAMES[state.region[p]] : 'not on the current branch'}${node.id === state.leafId ? ' · the leaf' : ''}`;
}

function updateButtons() {
  const busy = state.busy || state.loading;
  const loaded = state.loaded;
  button('[data-action="compact"]').disabled = busy || !loaded || !state.plan || !state.prep;
  button('[data-action="download"]').disabled = busy || !loaded;
  button('[data-action="load-sample"]').disabled = busy || !state.info;
  // The file picker too: a file chosen while busy would have to wait or be dropped.
  const fileInput = /** @type {HTMLInputElement} */ ($('#file-input'));
  fileInput.disabled = busy || !state.info;
  const picker = /** @type {HTMLElement} */ (fileInput.closest('label'));
  picker.classList.toggle('disabled', fileInput.disabled);
  picker.setAttribute('aria-disabled', String(fileInput.disabled));
  picker.title = fileInput.disabled
    ? busy
      ? `Busy: ${state.busy ? state.busyWhat || 'an action' : 'a load'} is running`
      : 'The engine is loading'
    : '';
  button('[data-action="abort"]').hidden = !state.busy;
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

/** The status line; `kind` `refusal`: it repeats a refused setting (cleared when none is left). */
function setStatus(message, isError = false, kind = '') {
  const status = $('#status');
  status.textContent = message;
  status.classList.toggle('error', isError);
  if (kind) status.dataset.kind = kind;
  else delete status.dataset.kind;
}

function jumpTo(id) {
  const i = state.byId.get(id);
  if (i === undefined) return;
  treeView.reveal(i);
  showSelection(i);
}

// ── actions ──────────────────────────────────────────────────────────────────────────────────

/** "Make leaf" (or Enter in the tree): selecting a row alone never moves the leaf. */
async function setLeaf(i) {
  if (state.busy || state.loading) return;
  const node = state.nodes[i];
  if (!node?.id || node.id === state.leafId) return;
  const gen = state.structureGen;
  try {
    const out = await engine('setLeaf', { id: node.id });
    if (gen !== state.structureGen) return;
    state.leafId = out.leafId;
  } catch (error) {
    setStatus(`The leaf could not move to ${node.id}: ${errorText(error)}`, true);
    return;
  }
  $('#tree').dataset.leafId = state.leafId ?? '';
  invalidate({ branch: true });
  renderDecor();
  updateButtons();
  setStatus(`Leaf moved to ${node.id}: the plan, the context and the prune preview follow it.`);
}

function summarizerKind() {
  return /** @type {HTMLInputElement} */ (document.querySelector('input[name="summarizer"]:checked')).value;
}

function updateSummarizerNote() {
  const note = $('#summarizer-note');
  if (summarizerKind() === 'openai') {
    note.textContent =
      'Summaries are written by your model (session-compaction/openai, called from the engine worker).';
    note.classList.remove('warn');
  } else if (state.info && !state.info.hasExtractive) {
    note.textContent =
      'This build of the package has no extractiveSummarizer: run `npm run build` (and `npm run demo`) again, or use an endpoint.';
    note.classList.add('warn');
  } else {
    note.textContent =
      'extractiveSummarizer from the package: deterministic quotes of the conversation, no model, no network.';
    note.classList.remove('warn');
  }
}

/** What the worker builds its `complete` from, and its name; throws with a message for the user. */
function currentSummarizer() {
  if (summarizerKind() === 'openai') {
    const baseUrl = /** @type {HTMLInputElement} */ ($('#ep-base')).value.trim();
    const model = /** @type {HTMLInputElement} */ ($('#ep-model')).value.trim();
    const apiKey = /** @type {HTMLInputElement} */ ($('#ep-key')).value;
    if (!/^https?:\/\//.test(baseUrl))
      throw new Error('Enter the base URL of the OpenAI-compatible endpoint (http:// or https://).');
    if (!model) throw new Error('Enter the model name.');
    if (!state.info?.hasOpenai)
      throw new Error('This build of the package has no openai module: run `npm run build` again.');
    return { spec: { kind: 'openai', baseUrl, model, apiKey }, name: `${model} at ${baseUrl}` };
  }
  if (!state.info?.hasExtractive)
    throw new Error(
      'This build of the package has no extractiveSummarizer: rebuild it (npm run build) or use an endpoint.',
    );
  return { spec: { kind: 'extractive' }, name: 'extractive summarizer' };
}

function setBusy(busy, message = '', what = '') {
  state.busy = busy;
  state.busyWhat = busy ? what : '';
  $('#app').dataset.state = busy ? 'busy' : state.loaded ? 'ready' : 'empty';
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (
    document.querySelectorAll('#controls input, #act input')
  ))
    input.disabled = busy;
  const abort = button('[data-action="abort"]');
  abort.disabled = false;
  abort.textContent = 'Cancel';
  if (message) setStatus(message);
  updateButtons();
}

/** Cancel: aborts the running compaction or navigation in the worker (and its model call). */
async function cancel() {
  if (!state.busy) return;
  const abort = button('[data-action="abort"]');
  abort.disabled = true;
  abort.textContent = 'Cancelling…';
  setStatus('Cancelling…');
  try {
    await engine('abort');
  } catch (error) {
    setStatus(`Could not cancel: ${errorText(error)}`, true);
  }
}

const wasAborted = (error) => error?.code === 'E_ABORTED' || error?.name === 'AbortError';

async function compact() {
  if (state.busy || state.loading || !state.loaded) return;
  let summarizer;
  try {
    summarizer = currentSummarizer();
  } catch (error) {
    showActError(error.message);
    return;
  }
  const customInstructions = /** @type {HTMLInputElement} */ ($('#custom-instructions')).value.trim() || undefined;
  setBusy(true, `Compacting with the ${summarizer.name}… (Cancel stops it)`, 'a compaction');
  try {
    const out = await engine('compact', {
      summarizer: summarizer.spec,
      settings: compactionSettings(),
      customInstructions,
    });
    await applyStructure(out);
    const { entryId, before, after, ms } = out;
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
    act.dataset.outcome = 'compacted';
    act.replaceChildren(
      'Compaction ',
      el('strong', { text: entryId }),
      ` added: context ${num(before.tokens)} → ${num(after.tokens)} tokens (saved ${num(before.tokens - after.tokens)}), ${num(before.messages)} → ${num(after.messages)} messages.`,
    );
    setStatus(`Compacted in ${num(ms)} ms: the new compaction entry is the leaf; see “Last action” for its summary.`);
  } catch (error) {
    if (wasAborted(error)) showActError('Compaction cancelled: the session is unchanged.', 'cancelled');
    else showActError(`Compaction failed: ${errorText(error)}`);
  } finally {
    setBusy(false);
  }
}

async function navigateWithSummary(i) {
  if (state.busy || state.loading || !state.loaded) return;
  const node = state.nodes[i];
  if (!node?.id) return;
  let summarizer;
  try {
    summarizer = currentSummarizer();
  } catch (error) {
    showActError(error.message);
    return;
  }
  setBusy(
    true,
    `Navigating to ${node.id} and summarizing the branch left behind (${summarizer.name})…`,
    'a navigation',
  );
  try {
    const out = await engine('navigate', {
      id: node.id,
      summarizer: summarizer.spec,
      contextWindow: state.settings.contextWindow,
      reserveTokens: state.settings.reserveTokens,
    });
    if (out.cancelled) {
      // The same outcome as a cancelled compaction (and as the E_ABORTED path below).
      showActError(`Navigation to ${node.id} cancelled: the session is unchanged.`, 'cancelled');
      return;
    }
    await applyStructure(out);
    state.lastAction = {
      kind: 'navigation',
      targetId: node.id,
      newLeafId: out.newLeafId,
      summaryEntry: out.summaryEntry,
      editorText: out.editorText,
      ms: out.ms,
      summarizer: summarizer.name,
    };
    renderResult($('#panel-result'), state.lastAction, jumpTo);
    const leaf = out.summaryEntry?.id ?? out.newLeafId;
    if (leaf && state.byId.has(leaf)) treeView.reveal(state.byId.get(leaf));
    const act = $('#act-result');
    act.classList.remove('error');
    act.dataset.outcome = 'navigated';
    act.textContent = out.summaryEntry
      ? `Navigated to ${node.id}: branch summary ${out.summaryEntry.id} added as the new leaf.`
      : `Navigated to ${node.id} (nothing to summarize).`;
    setStatus(act.textContent);
  } catch (error) {
    if (wasAborted(error)) showActError(`Navigation to ${node.id} cancelled: the session is unchanged.`, 'cancelled');
    else showActError(`Navigation failed: ${errorText(error)}`);
  } finally {
    setBusy(false);
  }
}

function showActError(message, kind = 'error') {
  const act = $('#act-result');
  act.textContent = message;
  act.classList.add('error');
  act.dataset.outcome = kind;
  setStatus(message, true);
}

async function download() {
  if (!state.loaded) return;
  let bytes;
  try {
    bytes = await engine('toBytes');
  } catch (error) {
    setStatus(`Download failed: ${errorText(error)}`, true);
    return;
  }
  const blob = new Blob([bytes], { type: 'application/x-ndjson' });
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
