// The demo's engine thread: a module Web Worker that owns the package (its `web` entry) and the
// loaded SessionTree. Loading, planning, preparing, pruning, building the context and compacting
// all run here, so the page's own thread only renders and never waits on the engine (issue 10).
//
// Protocol (js/engine-client.js is the other side): the page posts `{ id, op, args }`; the worker
// answers `{ id, ok: true, value }` or `{ id, ok: false, error: { code, message, name } }` (the
// engine's error code, e.g. E_ABORTED, is kept). Operations run as they arrive; an async one (a
// compaction waiting on the model) leaves the worker free for the next message, which is how
// `abort` reaches a running compaction: it aborts the AbortSignal handed to `compact()` /
// `navigateTree()`, and the engine passes that signal on to the model call.
import { extractiveSummarizer, fetchSample, loadEngine } from './engine.js';
import { CONTEXT_HEAD, CONTEXT_TAIL, describeEntry } from './format.js';
import { layoutTree, packNodes } from './tree-layout.js';

/** @type {any} */ let api = null;
/** @type {any} */ let openai = null;
/** @type {((data: Uint8Array) => string | null) | null} */ let binaryKind = null;
/** @type {any} */ let tree = null;
/** @type {AbortController | null} */ let controller = null;

/** The current tree, or an error the page shows. */
function current() {
  if (!tree) throw Object.assign(new Error('no session is loaded'), { code: 'E_NO_SESSION' });
  return tree;
}

/**
 * What the page needs after a load, a compaction or a navigation: the entries changed. The
 * nodes of getTree() go as columns (`packNodes`) with their display order (`layoutTree`).
 */
function structure() {
  const t = current();
  const nodes = t.getTree();
  return {
    entryCount: t.entryCount,
    leafId: t.leafId ?? null,
    nodes: packNodes(nodes),
    layout: layoutTree(nodes),
    loadErrors: t.loadErrors,
    header: t.header ?? null,
    sourceVersion: t.sourceVersion,
    migrated: t.migrated,
    validation: t.validate(),
  };
}

/** An error the page shows as `CODE: message`. @param {string} code @param {string} message */
function refusal(code, message) {
  return Object.assign(new Error(message), { code });
}

/**
 * Loads bytes into a new tree (the old one is freed only when the new one loaded). A file that
 * is not the text of a session is refused with one message and the current session stays:
 * binary data (the CLI's check, bin/binary.mjs: a known binary format, a NUL byte at the start),
 * or a file the engine could read no line of (no entry loaded, every line an error).
 */
function load(bytes, name) {
  const started = performance.now();
  const kept = tree ? ' The session shown is unchanged.' : '';
  const kind = binaryKind?.(bytes);
  if (kind) {
    throw refusal(
      'E_PARSE',
      `${name} is not a pi session: it holds ${kind}; a session is a text file of JSON lines.${kept}`,
    );
  }
  const next = api.SessionTree.fromBytes(bytes);
  const errors = next.loadErrors;
  if (next.entryCount === 0 && errors.length > 0) {
    const first = errors.find((e) => e.code === 'E_HEADER') ?? errors[0];
    next.free();
    throw refusal(
      first.code,
      `${name} is not a usable pi session: no entry could be read (${errors.length.toLocaleString('en-US')} ` +
        `line error${errors.length === 1 ? '' : 's'}; ${/^line \d+/.test(first.message) ? '' : `line ${first.line}: `}${first.message}).${kept}`,
    );
  }
  if (tree) tree.free();
  tree = next;
  return { name, ms: performance.now() - started, ...structure() };
}

/** The cards of the context panel: `{ index, message, tokens }` for branch messages [from, to). */
function cards(messages, from, to) {
  const out = [];
  for (let k = from; k < to; k++) {
    let tokens = 0;
    try {
      tokens = api.estimateTokens(messages[k]);
    } catch {
      tokens = 0;
    }
    out.push({ index: k, message: messages[k], tokens });
  }
  return out;
}

/**
 * The `complete` a compaction or navigation uses: the package's extractiveSummarizer, or the
 * provider adapter `session-compaction/openai` over fetch (from this worker).
 * @param {{ kind: 'extractive' } | { kind: 'openai', baseUrl: string, model: string, apiKey?: string }} spec
 */
function completeOf(spec) {
  if (spec.kind === 'openai') {
    if (!openai) throw new Error('this build of the package has no openai module: run `npm run build` again');
    return openai.openaiComplete({ baseUrl: spec.baseUrl, model: spec.model, apiKey: spec.apiKey || undefined });
  }
  const extractive = extractiveSummarizer(api);
  if (!extractive) throw new Error('this build of the package has no extractiveSummarizer: run `npm run build` again');
  return extractive;
}

/** The message count the model sees, for the before / after numbers of a compaction. */
function messageCount(t) {
  return t.buildLlmMessages().length;
}

const ops = {
  /** Loads the engine; the version, the defaults and what the build offers. */
  async init() {
    const loaded = await loadEngine();
    api = loaded.api;
    openai = loaded.openai;
    binaryKind = loaded.binaryKind;
    return {
      version: api.version(),
      compactionDefaults: { ...api.DEFAULT_COMPACTION_SETTINGS },
      pruneDefaults: { ...api.DEFAULT_PRUNE_CONFIG, protectedTools: [...api.DEFAULT_PRUNE_CONFIG.protectedTools] },
      hasExtractive: !!extractiveSummarizer(api),
      hasOpenai: !!openai,
    };
  },

  /** The bundled sample, fetched and loaded here. */
  async loadSample() {
    const { bytes, name } = await fetchSample();
    return load(bytes, name);
  },

  /** A file the page read (its bytes are transferred, not copied). */
  loadBytes({ bytes, name }) {
    return load(bytes, name);
  },

  /**
   * What the panels show for the current leaf and settings. `parts` says what changed:
   * `branch` (the leaf moved: the path and its context), `plan` (the compaction settings: plan and
   * preparation), `prune` (the prune settings). The stats numbers come every time.
   */
  view({ compaction, pruneConfig, contextWindow, parts }) {
    const t = current();
    const out = /** @type {Record<string, any>} */ ({ leafId: t.leafId ?? null });
    if (parts.branch) {
      out.branch = Int32Array.from(t.branchIndices());
      const messages = t.buildLlmMessages();
      const n = messages.length;
      const all = n <= CONTEXT_HEAD + CONTEXT_TAIL + 10;
      out.context = {
        count: n,
        head: cards(messages, 0, all ? n : CONTEXT_HEAD),
        tail: all ? [] : cards(messages, n - CONTEXT_TAIL, n),
      };
    }
    out.contextTokens = t.estimateContextTokens();
    if (parts.plan) {
      out.plan = t.planCompaction(compaction) ?? null;
      out.previous = t.previousCompaction() ?? null;
      const prep = t.prepareCompaction(compaction) ?? null;
      // The panels show the preparation's decisions and counts; its messages stay here (on a
      // big session they are most of the session, and copying them would cost the page time).
      out.prep = prep && {
        firstKeptEntryId: prep.firstKeptEntryId,
        isSplitTurn: prep.isSplitTurn,
        tokensBefore: prep.tokensBefore,
        previousSummary: prep.previousSummary,
        messageCounts: {
          messagesToSummarize: prep.messagesToSummarize.length,
          turnPrefixMessages: prep.turnPrefixMessages.length,
          recentMessages: prep.recentMessages.length,
        },
      };
      out.nothing = prep ? null : (t.nothingToCompact(compaction) ?? null);
      let fileLists = null;
      try {
        if (prep) fileLists = api.computeFileLists(prep.fileOps);
      } catch {
        fileLists = null;
      }
      out.fileLists = fileLists;
    }
    if (parts.prune) out.prune = t.planPrune(pruneConfig);
    out.threshold = api.compactionThreshold(contextWindow, compaction);
    try {
      out.triggers = api.shouldCompact(out.contextTokens, contextWindow, compaction);
    } catch {
      out.triggers = false;
    }
    return out;
  },

  /** Context cards [from, to) ("Show the messages in between"). */
  contextRange({ from, to }) {
    const messages = current().buildLlmMessages();
    return cards(messages, Math.max(0, from), Math.min(messages.length, to));
  },

  /** The [kind, text] of tree rows, by entry id (null for an entry that cannot be read). */
  describe({ ids }) {
    const t = current();
    return ids.map((id) => {
      if (!id) return null;
      try {
        return describeEntry(t.getEntry(id), api.contentText);
      } catch {
        return null;
      }
    });
  },

  /** Moves the leaf (the "Make leaf" action). */
  setLeaf({ id }) {
    current().setLeaf(id);
    return { leafId: current().leafId ?? null };
  },

  /** One compaction with the chosen summarizer; cancellable with `abort`. */
  async compact({ summarizer, settings, customInstructions }) {
    const t = current();
    const complete = completeOf(summarizer);
    const messagesBefore = messageCount(t);
    controller = new AbortController();
    const started = performance.now();
    try {
      const out = await t.compact({ complete, settings, customInstructions, signal: controller.signal });
      // The token figures are the engine's, on one basis (the built context's estimate, SPEC
      // §13.5), as the outcome preview's: a provider usage count is no "before" of an estimate.
      return {
        entryId: out.compactionEntry.id,
        result: out.result,
        before: { tokens: out.result.contextTokensBefore ?? 0, messages: messagesBefore },
        after: { tokens: out.result.contextTokensAfter ?? 0, messages: messageCount(t) },
        ms: performance.now() - started,
        ...structure(),
      };
    } finally {
      controller = null;
    }
  },

  /** navigateTree with a summary of the branch left behind; cancellable with `abort`. */
  async navigate({ id, summarizer, contextWindow, reserveTokens }) {
    const t = current();
    const complete = completeOf(summarizer);
    controller = new AbortController();
    const started = performance.now();
    try {
      const out = await t.navigateTree(id, {
        summarize: true,
        complete,
        contextWindow,
        reserveTokens,
        signal: controller.signal,
      });
      const ms = performance.now() - started;
      if (out.cancelled) return { cancelled: true, aborted: !!out.aborted, ms };
      return {
        cancelled: false,
        newLeafId: out.newLeafId,
        summaryEntry: out.summaryEntry ?? null,
        editorText: out.editorText,
        ms,
        ...structure(),
      };
    } finally {
      controller = null;
    }
  },

  /** Aborts the running compaction or navigation (true when one was running). */
  abort() {
    if (!controller) return false;
    controller.abort();
    return true;
  },

  /** The session as JSONL, UTF-8 bytes (Download; transferred, not copied). */
  toBytes() {
    return current().toBytes();
  },
};

self.addEventListener('message', async (event) => {
  const { id, op, args } = event.data ?? {};
  try {
    const run = Object.hasOwn(ops, op) ? ops[/** @type {keyof typeof ops} */ (op)] : null;
    if (!run) throw new Error(`unknown operation ${op}`);
    const value = await run(/** @type {any} */ (args ?? {}));
    const transfer =
      value instanceof Uint8Array ? [value.buffer] : value?.branch instanceof Int32Array ? [value.branch.buffer] : [];
    self.postMessage({ id, ok: true, value }, { transfer });
  } catch (error) {
    const e = /** @type {any} */ (error);
    self.postMessage({
      id,
      ok: false,
      error: { code: e?.code, name: e?.name, message: String(e?.message ?? e) },
    });
  }
});
