// Shared parts of the CLI's commands (bin/commands/*.mjs): the types of a run, opening the
// session (lenient load, --leaf), load warnings, integer options and the pieces of every
// readable report. The rules themselves (branch walk, token counts, …) come from the engine.
import { resolve } from 'node:path';
import * as engine from '../index.node.mjs';
import { binaryKind, bytes, CliError, makeStyle, num, plural, readSessionFile, SAMPLE_FILE } from './support.mjs';

/** The program name, first word of every report and error. */
export const NAME = 'session-compaction';
/** `--context-window` when not given (tokens). */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
/** `--max-chars` of `context` when not given. */
export const DEFAULT_MAX_CHARS = 600;
/** `--max-errors` when not given: at most this many unreadable lines or findings are listed. */
export const DEFAULT_MAX_ERRORS = 20;

/**
 * @typedef {Record<string, string | boolean | undefined>} Opts the parsed options
 * @typedef {{ out: (line?: string) => void, warn: (line: string) => void, style: ReturnType<typeof makeStyle>,
 *   errStyle: ReturnType<typeof makeStyle>, wrote: (what: string) => void }} Io
 *   `wrote`: a --write command calls it as soon as the session file is written, with what was
 *   written (`s.jsonl: compaction entry 1a2b appended; original kept as s.jsonl.bak`), so that an
 *   output that fails afterwards still says the file was written.
 * @typedef {{ tree: engine.SessionTree, path: string, display: string, sample: boolean, loadErrors: engine.LineError[],
 *   size: number, mtimeMs: number, maxErrors: number }} Session
 *   `maxErrors`: `--max-errors` (0 = no limit)
 * @typedef {{ summary: string, usage: string, options: string[], target?: boolean, notes?: string[],
 *   optionHelp?: Record<string, string>,
 *   run: (s: Session, o: Opts, io: Io, target?: string) => number | Promise<number> }} Command
 *   `target`: the command takes `[file] <targetId>` instead of `[file]`. `notes`: extra help
 *   paragraphs. `optionHelp`: a command's own wording of a shared option.
 */

/**
 * Reads and parses the session (lenient unless --strict), applies --leaf. Malformed lines become
 * warnings (not for `validate`, which reports them); an invalid header ends the run (exit 2).
 * @param {string | undefined} file @param {Opts} opts
 * @returns {Session}
 */
export function openSession(file, opts) {
  const sample = file === undefined;
  const path = sample ? SAMPLE_FILE : resolve(file);
  const display = sample ? SAMPLE_FILE : file;
  const maxErrors = intOption(opts, 'max-errors') ?? DEFAULT_MAX_ERRORS;
  const read = readSessionFile(path, { progress: opts.progress ? 'always' : 'auto', display });
  const binary = binaryKind(read.data);
  if (binary) {
    read.bar?.done();
    throw new CliError(
      `${display} is not a pi session: it holds ${binary}; a session is a text file of JSON lines`,
      'E_PARSE',
    );
  }
  read.bar?.status(`parsing ${bytes(read.size)} …`);
  let tree;
  try {
    tree = engine.SessionTree.fromBytes(read.data, { strict: Boolean(opts.strict) });
  } catch (error) {
    throw new CliError(`${display}: ${engineMessage(error)}`, engineCode(error));
  } finally {
    read.bar?.done();
  }
  const loadErrors = tree.loadErrors;
  const header = loadErrors.find((e) => e.code === 'E_HEADER');
  if (header) {
    // Not a session (another JSON or text file) or a damaged header: the engine's reason first,
    // then at most --max-errors of the lines, and how many more there are.
    const shown = capped(loadErrors, maxErrors);
    const details = shown.items.map((e) => `  ${display}: ${lineMessage(e)}`);
    if (shown.more)
      details.push(`  … ${plural(shown.more, 'more error')} not shown (--max-errors ${maxErrors}; 0 = all)`);
    throw new CliError(
      `${display} is not a usable pi session (${lineMessage(header)}); ` +
        `${plural(loadErrors.length, 'line error')} in all (E_HEADER):\n${details.join('\n')}`,
      'E_HEADER',
    );
  }
  if (opts.leaf !== undefined) {
    try {
      tree.setLeaf(String(opts.leaf));
    } catch (error) {
      throw new CliError(`${display}: --leaf ${opts.leaf}: ${engineMessage(error)}`, engineCode(error));
    }
  }
  return { tree, path, display, sample, loadErrors, size: read.size, mtimeMs: read.mtimeMs, maxErrors };
}

/**
 * The first `max` items (all of them when `max` is 0) and how many are left out.
 * @template T
 * @param {T[]} items @param {number} max
 * @returns {{ items: T[], more: number }}
 */
export function capped(items, max) {
  if (max <= 0 || items.length <= max) return { items, more: 0 };
  return { items: items.slice(0, max), more: items.length - max };
}

/** Prints the load errors of a lenient load as warnings (every command but validate), at most `--max-errors`. */
export function warnLoadErrors(/** @type {Session} */ session, /** @type {Io} */ io) {
  const { loadErrors, display, maxErrors } = session;
  const shown = capped(loadErrors, maxErrors);
  for (const e of shown.items) {
    io.warn(`${display}: ${lineMessage(e)}${e.code === 'E_PARSE' ? ' (line skipped)' : ''}`);
  }
  if (shown.more) {
    io.warn(
      `${display}: ${plural(shown.more, 'more load error')} not listed (${byCode(loadErrors.slice(maxErrors))}; --max-errors ${maxErrors}; 0 = all; see \`validate\`)`,
    );
  }
}

/** The issue codes of `validate()` that are a broken tree: the branch walk stops or goes astray there. */
export const TREE_CODES = new Set(['E_MISSING_PARENT', 'E_CYCLE', 'E_DUPLICATE_ID']);

/**
 * Warns (one line on stderr) when the engine's validation finds the tree broken (a parentId
 * that points nowhere, a parent cycle, a duplicate id): the branch the command works on may be
 * cut short. Returns what `--json` reports as `treeProblems` (null when the tree is sound).
 * @param {Session} session @param {Io} io
 * @returns {{ count: number, codes: Record<string, number>, first: string, message: string } | null}
 */
export function warnTreeProblems(session, io) {
  const issues = session.tree.validate().issues.filter((/** @type {any} */ i) => TREE_CODES.has(i.code));
  if (!issues.length) return null;
  /** @type {Record<string, number>} */
  const codes = {};
  for (const i of issues) codes[i.code] = (codes[i.code] ?? 0) + 1;
  const first = `${issues[0].line ? `line ${issues[0].line}: ` : ''}${issues[0].message}`;
  const counts = Object.entries(codes)
    .map(([code, n]) => `${num(n)} ${code}`)
    .join(', ');
  const file = session.sample ? '' : ` ${session.display}`;
  const message =
    `the session tree is broken (${counts}; first: ${first}): the branch may be cut short; ` +
    `run \`${NAME} validate${file}\` for every problem`;
  io.warn(`${session.display}: ${message}`);
  return { count: issues.length, codes, first, message };
}

/**
 * Load errors counted by code, for a summary that names what it counts:
 * `2 E_PARSE (lines skipped), 1 E_UNSUPPORTED_VERSION`.
 * @param {{ code: string }[]} errors
 */
export function byCode(errors) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const e of errors) counts.set(e.code, (counts.get(e.code) ?? 0) + 1);
  return [...counts].map(([code, n]) => `${num(n)} ${code}${code === 'E_PARSE' ? ' (lines skipped)' : ''}`).join(', ');
}

/** A load error as `line N: message` (the engine's messages usually start that way already). */
export function lineMessage(/** @type {engine.LineError} */ e) {
  return /^line \d+/.test(e.message) ? e.message : `line ${e.line}: ${e.message}`;
}

/** The engine's code of an error (`E_INTERNAL` for one without). */
export function engineCode(/** @type {any} */ error) {
  return typeof error?.code === 'string' && error.code.startsWith('E_') ? error.code : 'E_INTERNAL';
}

/** An engine error as `message (CODE)`. */
export function engineMessage(/** @type {any} */ error) {
  return error?.code ? `${error.message} (${error.code})` : String(error?.message ?? error);
}

/** The tree nodes of the current branch, root → leaf (the engine's `branchIndices()`). */
export function branchNodes(/** @type {engine.SessionTree} */ tree, /** @type {engine.TreeNode[]} */ nodes) {
  return Array.from(tree.branchIndices(), (i) => nodes[i]);
}

/**
 * Integer option: digits, optional `_`/`,` separators and `k` suffix (`20k`, `200_000`), at least
 * `min`. Anything else (a negative number, a fraction, a word) is a usage error that names the
 * option, the value given and what is accepted (E_INVALID_ARGUMENT, exit 2).
 */
export function intOption(/** @type {Opts} */ opts, /** @type {string} */ name, min = 0) {
  const raw = opts[name];
  if (raw === undefined) return undefined;
  const m = /^(\d[\d_,]*)(k)?$/i.exec(String(raw).trim());
  const n = m ? Number(m[1].replace(/[_,]/g, '')) * (m[2] ? 1000 : 1) : NaN;
  if (m && !Number.isSafeInteger(n)) {
    throw new CliError(
      `--${name} ${JSON.stringify(String(raw))} is not accepted: too large, at most ${num(Number.MAX_SAFE_INTEGER)}`,
    );
  }
  if (!Number.isSafeInteger(n) || n < min) {
    throw new CliError(
      `--${name} ${JSON.stringify(String(raw))} is not accepted: expected a whole number >= ${min} ` +
        `(digits, optionally with _ or , separators or a k suffix: 20000, 20_000, 20k)`,
    );
  }
  return n;
}

/** Estimated tokens of messages (the sum of the engine's per-message estimates). */
export function sumTokens(/** @type {unknown[]} */ messages) {
  let total = 0;
  for (const m of messages) total += engine.estimateTokens(/** @type {engine.AgentMessage} */ (m));
  return total;
}

/** Header lines of every readable report. */
export function reportHeader(/** @type {string} */ title, /** @type {Session} */ session, /** @type {Io} */ io) {
  const { style } = io;
  io.out(`${NAME} ${engine.version()}`);
  const where = session.sample ? `${session.display} ${style.dim('(bundled sample session)')}` : session.display;
  io.out(`${style.bold(title)} · ${where}`);
}

/** `entry abc123 (index 5, line 7)` */
export function entryRef(/** @type {engine.TreeNode | undefined} */ node, /** @type {number} */ index) {
  if (!node) return `index ${num(index)}`;
  const line = node.line ? `, line ${num(node.line)}` : '';
  return `entry ${node.id} (index ${num(index)}${line})`;
}

/** The role of a message entry, else its type. */
export function kindOf(/** @type {engine.TreeNode | undefined} */ node) {
  return node?.role ?? node?.type ?? '?';
}

/** Prints a value as indented JSON. */
export function printJson(/** @type {Io} */ io, /** @type {unknown} */ value) {
  io.out(JSON.stringify(value, null, 2));
}
