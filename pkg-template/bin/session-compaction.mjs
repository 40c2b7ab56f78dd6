#!/usr/bin/env node
// session-compaction: runs the compaction engine on a pi session file (JSONL) and shows what it
// would do. Commands: plan, context, prune [--write], tree, validate, and the two that write
// summaries: compact [--write] and navigate [--summarize] [--write] (see `--help`).
// Exit codes: 0 ok · 1 `validate` found errors · 2 bad usage, unreadable or unusable input ·
// 3 the summarizer (remote endpoint or model) failed · 130 interrupted before anything was written.
// Node >= 20, no dependencies beyond Node's built-ins and this package.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as engine from '../index.node.mjs';
import {
  appendLineAtomic,
  bytes,
  CliError,
  clip,
  colorEnabled,
  EXIT_FINDINGS,
  EXIT_INPUT,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_SUMMARIZER,
  headerVersion,
  makeStyle,
  num,
  oneLine,
  openaiComplete,
  plural,
  readSessionFile,
  SAMPLE_FILE,
  table,
  writeFileAtomic,
} from './support.mjs';

const NAME = 'session-compaction';
const DEFAULT_CONTEXT_WINDOW = 200_000;
const DEFAULT_MAX_CHARS = 600;
/** Issue codes of `validate` that are warnings; every other issue and every load error is an error. */
const WARNING_CODES = new Set(['E_UNANSWERED_TOOL_CALL']);
/** At most this many load warnings are printed one by one. */
const MAX_LOAD_WARNINGS = 20;
/** Error codes of a failed summarizer (exit code 3). */
const SUMMARIZER_CODES = new Set(['E_MODEL', 'E_REMOTE', 'E_SUMMARIZATION']);

// ── options and commands ────────────────────────────────────────────────────────────────────

/** Every option of every command (parseArgs specs + help). */
const OPTIONS = {
  json: { type: 'boolean', help: 'print JSON instead of the readable report' },
  leaf: { type: 'string', arg: 'id', help: 'use the branch ending at this entry (default: the session leaf)' },
  'keep-recent-tokens': { type: 'string', arg: 'n', help: 'tokens to keep verbatim (default 20,000)' },
  'reserve-tokens': { type: 'string', arg: 'n', help: 'tokens reserved for the reply (default 16,384)' },
  'context-window': {
    type: 'string',
    arg: 'n',
    help: `the model's context window (default ${num(DEFAULT_CONTEXT_WINDOW)})`,
  },
  'protect-tokens': { type: 'string', arg: 'n', help: 'newest tool-output tokens never pruned (default 40,000)' },
  'minimum-savings': { type: 'string', arg: 'n', help: 'prune only when it saves at least this much (default 20,000)' },
  'protected-tools': { type: 'string', arg: 'a,b', help: 'tools whose outputs are never pruned (default skill,read)' },
  write: { type: 'boolean', help: 'apply the pruning: rewrite the file atomically, keep <file>.bak' },
  'max-chars': {
    type: 'string',
    arg: 'n',
    help: `characters shown per message (default ${DEFAULT_MAX_CHARS}; 0 = all)`,
  },
  first: { type: 'string', arg: 'n', help: 'show the first n messages (with --last: both ends)' },
  last: { type: 'string', arg: 'n', help: 'show the last n messages (with --first: both ends)' },
  full: { type: 'boolean', help: 'show everything: no truncation (context), no collapsed runs (tree)' },
  strict: { type: 'boolean', help: 'refuse files with malformed lines (default: skip them with a warning)' },
  progress: { type: 'boolean', help: 'show the loading progress bar even when stderr is not a terminal' },
  endpoint: {
    type: 'string',
    arg: 'url',
    help: 'summarize with a remote endpoint: POST {systemPrompt, prompt} as JSON, reply {summary}',
  },
  openai: {
    type: 'string',
    arg: 'base-url',
    help: 'summarize with an OpenAI-compatible API: POST <base-url>/chat/completions, key from $OPENAI_API_KEY',
  },
  model: { type: 'string', arg: 'name', help: 'the model of --openai (e.g. gpt-4o-mini)' },
  instructions: { type: 'string', arg: 'text', help: 'extra focus for the summary (added as "Additional focus: …")' },
  timeout: {
    type: 'string',
    arg: 'seconds',
    help: 'give up when the summarizer has not answered after this long (default 600; 0 = never)',
  },
  summarize: { type: 'boolean', help: 'summarize the branch being left into a branch_summary entry' },
  preview: { type: 'string', arg: 'n', help: 'show only the first n characters of the summary (default: all of it)' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
  version: { type: 'boolean', short: 'V', help: 'print the version' },
};
const COMMON = ['strict', 'progress', 'help'];

/** Options choosing and steering the summarizer (compact, navigate). */
const MODEL_OPTIONS = ['endpoint', 'openai', 'model', 'instructions', 'timeout'];

/**
 * `target`: the command takes `[file] <targetId>` instead of `[file]`. `notes`: extra help
 * paragraphs. `optionHelp`: a command's own wording of a shared option.
 * @type {Record<string, {summary: string, usage: string, options: string[], target?: boolean, notes?: string[],
 *   optionHelp?: Record<string, string>, run: (s: Session, o: Opts, io: Io, target?: string) => number | Promise<number>}>}
 */
const COMMANDS = {
  plan: {
    summary: 'what a compaction would summarize and keep (cut point, tokens, files)',
    usage: 'plan [file] [--json] [--leaf id] [--keep-recent-tokens n] [--reserve-tokens n] [--context-window n]',
    options: ['json', 'leaf', 'keep-recent-tokens', 'reserve-tokens', 'context-window'],
    run: cmdPlan,
  },
  context: {
    summary: 'the messages the model sees (after convertToLlm)',
    usage: 'context [file] [--json] [--leaf id] [--max-chars n] [--first n] [--last n] [--full]',
    options: ['json', 'leaf', 'max-chars', 'first', 'last', 'full'],
    run: cmdContext,
  },
  prune: {
    summary: 'old tool outputs that pruning would replace, and the tokens saved',
    usage:
      'prune [file] [--write] [--json] [--leaf id] [--protect-tokens n] [--minimum-savings n] [--protected-tools a,b]',
    options: ['json', 'leaf', 'protect-tokens', 'minimum-savings', 'protected-tools', 'write'],
    run: cmdPrune,
  },
  tree: {
    summary: 'the entry tree: ids, roles, previews, labels, the leaf (*)',
    usage: 'tree [file] [--json] [--leaf id] [--full]',
    options: ['json', 'leaf', 'full'],
    run: cmdTree,
  },
  validate: {
    summary: 'structural problems and unreadable lines (exit code 1 on errors)',
    usage: 'validate [file] [--json]',
    options: ['json'],
    run: cmdValidate,
  },
  compact: {
    summary: 'summarize the history now: the compaction entry, the context before and after',
    usage:
      'compact [file] [--endpoint url | --openai base-url --model name] [--instructions text] ' +
      '[--keep-recent-tokens n] [--reserve-tokens n] [--write] [--json] [--leaf id] [--preview n]',
    options: ['json', 'leaf', 'keep-recent-tokens', 'reserve-tokens', ...MODEL_OPTIONS, 'write', 'preview'],
    notes: [
      'The summarizer: without --endpoint or --openai, the extractive summarizer of the package, which',
      'quotes the conversation section by section and needs no model and no API key. --endpoint URL',
      'POSTs {systemPrompt, prompt, purpose, maxTokens} as JSON and reads {summary} from the reply.',
      '--openai BASE_URL --model NAME calls POST BASE_URL/chat/completions with the key of the',
      'environment variable OPENAI_API_KEY as a Bearer token (the key is never printed).',
      'Without --write nothing is written: the compaction happens in memory and is shown.',
    ],
    optionHelp: { write: 'append the compaction entry to the file (atomically), keep <file>.bak' },
    run: cmdCompact,
  },
  navigate: {
    summary: 'move the leaf to an entry, optionally summarizing the branch being left',
    usage:
      'navigate [file] <targetId> [--summarize] [--endpoint url | --openai base-url --model name] ' +
      '[--instructions text] [--write] [--json] [--leaf id] [--preview n]',
    options: ['json', 'leaf', 'summarize', ...MODEL_OPTIONS, 'write', 'preview'],
    target: true,
    notes: [
      'A user message (or custom message) as the target goes back to the editor: its text is printed',
      'and its parent becomes the new leaf; any other entry becomes the leaf itself. --leaf sets the',
      'leaf navigated away from (default: the session leaf).',
      'With --summarize the branch being left is summarized (the summarizers of `compact`; default:',
      'extractive) and attached as a branch_summary entry under the new leaf.',
      'The leaf itself is not stored in the JSONL file (a loaded session continues at its last entry).',
      'With --write the appended branch_summary entry is what persists: it needs --summarize, and the',
      'file then reopens at that entry, i.e. on the branch of the new leaf.',
    ],
    optionHelp: { write: 'append the branch_summary entry to the file (atomically), keep <file>.bak' },
    run: cmdNavigate,
  },
};

/**
 * @typedef {Record<string, string | boolean | undefined>} Opts
 * @typedef {{ out: (line?: string) => void, warn: (line: string) => void, style: ReturnType<typeof makeStyle>, errStyle: ReturnType<typeof makeStyle> }} Io
 * @typedef {{ tree: any, path: string, display: string, sample: boolean, loadErrors: any[],
 *   size: number, mtimeMs: number, formatVersion: number | null }} Session
 */

// ── main ────────────────────────────────────────────────────────────────────────────────────

/** @param {string[]} argv @returns {Promise<number>} the exit code */
async function main(argv) {
  const style = makeStyle(colorEnabled(process.stdout));
  const errStyle = makeStyle(colorEnabled(process.stderr));
  /** @type {string[]} */
  const lines = [];
  /** @type {Io} */
  const io = {
    out: (line = '') => lines.push(line),
    warn: (line) => process.stderr.write(`${errStyle.yellow('warning:')} ${line}\n`),
    style,
    errStyle,
  };
  const flush = () => {
    if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    lines.length = 0;
  };
  try {
    const code = await run(argv, io);
    flush();
    return code;
  } catch (error) {
    flush();
    if (error instanceof CliError) {
      process.stderr.write(`${errStyle.red(`${NAME}: error:`)} ${error.message}\n`);
      return error.exitCode;
    }
    const code = /** @type {any} */ (error)?.code;
    if (code === 'E_ABORTED') {
      process.stderr.write(
        `${errStyle.red(`${NAME}: interrupted:`)} ${/** @type {Error} */ (error).message}; nothing was written\n`,
      );
      return EXIT_INTERRUPTED;
    }
    if (typeof code === 'string' && SUMMARIZER_CODES.has(code)) {
      // The message is the summarizer's (the HTTP status and the reply's error text; never a key).
      process.stderr.write(
        `${errStyle.red(`${NAME}: error: the summarizer failed:`)} ${/** @type {Error} */ (error).message} (${code}); nothing was written\n`,
      );
      return EXIT_SUMMARIZER;
    }
    if (typeof code === 'string' && code.startsWith('E_') && code !== 'E_INTERNAL') {
      // The engine refused the input (its message names the entry or line).
      process.stderr.write(`${errStyle.red(`${NAME}: error:`)} ${/** @type {Error} */ (error).message} (${code})\n`);
      return EXIT_INPUT;
    }
    process.stderr.write(
      `${errStyle.red(`${NAME}: internal error${code ? ` (${code})` : ''}:`)} ` +
        `${/** @type {any} */ (error)?.stack ?? error}\n`,
    );
    return EXIT_INPUT;
  }
}

/** @param {string[]} argv @param {Io} io @returns {number | Promise<number>} */
function run(argv, io) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: /** @type {import('node:util').ParseArgsConfig['options']} */ (
        Object.fromEntries(
          Object.entries(OPTIONS).map(([name, o]) => {
            const spec = /** @type {{ type: 'string' | 'boolean', short?: string }} */ (o);
            return [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }];
          }),
        )
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new CliError(`${/** @type {Error} */ (error).message.split('. To specify')[0]}\n${hint()}`);
  }
  const opts = /** @type {Opts} */ ({ ...parsed.values });
  const [command, ...rest] = parsed.positionals;

  if (opts.version) {
    io.out(`${NAME} ${engine.version()}`);
    return EXIT_OK;
  }
  if (command === undefined && !opts.help) {
    // Usage error: the help goes to stderr.
    process.stderr.write(`${helpText()}\n`);
    return EXIT_INPUT;
  }
  if (command === undefined || command === 'help') {
    io.out(helpText(rest[0]));
    return EXIT_OK;
  }
  const spec = COMMANDS[command];
  if (!spec) throw new CliError(`unknown command "${command}"\n${hint()}`);
  if (opts.help) {
    io.out(helpText(command));
    return EXIT_OK;
  }
  const allowed = new Set([...spec.options, ...COMMON]);
  for (const name of Object.keys(opts)) {
    if (!allowed.has(name)) throw new CliError(`option --${name} does not apply to \`${command}\`\n${hint(command)}`);
  }
  let file = rest[0];
  /** @type {string | undefined} */
  let target;
  if (spec.target) {
    if (rest.length === 0 || (rest.length === 1 && /[/\\]|\.jsonl$/i.test(rest[0]) && existsSync(rest[0]))) {
      const got = rest.length ? ` (${rest[0]} is a file: pass the entry id after it)` : '';
      throw new CliError(`\`${command}\` needs the id of the entry to go to${got}\n${hint(command)}`);
    }
    if (rest.length > 2)
      throw new CliError(
        `\`${command}\` takes a file and an entry id, got ${rest.length} arguments: ${rest.join(' ')}\n${hint(command)}`,
      );
    target = rest[rest.length - 1];
    file = rest.length === 2 ? rest[0] : undefined;
  } else if (rest.length > 1) {
    throw new CliError(`\`${command}\` takes one file, got ${rest.length}: ${rest.join(' ')}\n${hint(command)}`);
  }
  const session = openSession(file, opts, io);
  return spec.run(session, opts, io, target);
}

/** @param {string} [command] */
function hint(command) {
  return `Run \`${NAME} ${command ? `${command} --help` : '--help'}\` for usage.`;
}

/** @param {string} [command] */
function helpText(command) {
  const optionLines = (/** @type {string[]} */ names, /** @type {Record<string, string>} */ own = {}) =>
    table(
      names.map((name) => {
        const o = /** @type {any} */ (OPTIONS)[name];
        const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.arg ? ` <${o.arg}>` : ''}`;
        return [flag, own[name] ?? o.help];
      }),
    );
  if (command && COMMANDS[command]) {
    const spec = COMMANDS[command];
    return [
      `${NAME} ${spec.usage}`,
      '',
      `  ${spec.summary}.`,
      '  Without a file, the sample session shipped in the package is used.',
      ...(spec.notes ? ['', ...spec.notes.map((line) => `  ${line}`)] : []),
      '',
      'Options:',
      ...optionLines([...spec.options, ...COMMON], spec.optionHelp),
    ].join('\n');
  }
  return [
    `${NAME} ${engine.version()}: the compaction engine of pi sessions, on a session file`,
    '',
    `Usage: ${NAME} <command> [file] [options]`,
    '',
    'Commands:',
    ...table(Object.entries(COMMANDS).map(([name, spec]) => [name, spec.summary])),
    '',
    'Without a file, a real pi session shipped in the package is used:',
    `  ${SAMPLE_FILE}`,
    '',
    'Common options:',
    ...optionLines([...COMMON, 'version']),
    '',
    `Run \`${NAME} <command> --help\` for the options of a command.`,
    'Exit codes: 0 ok, 1 validate found errors, 2 bad usage or unreadable input,',
    '3 the summarizer (endpoint or model) failed, 130 interrupted (nothing written).',
  ].join('\n');
}

// ── loading ─────────────────────────────────────────────────────────────────────────────────

/**
 * Reads and parses the session (lenient unless --strict), applies --leaf. Malformed lines become
 * warnings (not for `validate`, which reports them); an invalid header ends the run (exit 2).
 * @param {string | undefined} file @param {Opts} opts @param {Io} io
 * @returns {Session}
 */
function openSession(file, opts, _io) {
  const sample = file === undefined;
  const path = sample ? SAMPLE_FILE : resolve(file);
  const display = sample ? SAMPLE_FILE : file;
  const read = readSessionFile(path, { progress: opts.progress ? 'always' : 'auto', display });
  read.bar?.status(`parsing ${bytes(read.size)} …`);
  let tree;
  try {
    tree = engine.SessionTree.fromBytes(read.data, { strict: Boolean(opts.strict) });
  } catch (error) {
    throw new CliError(`${display}: ${engineMessage(error)}`);
  } finally {
    read.bar?.done();
  }
  const loadErrors = tree.loadErrors;
  if (loadErrors.some((/** @type {any} */ e) => e.code === 'E_HEADER')) {
    const details = loadErrors.map((/** @type {any} */ e) => `  ${display}: ${lineMessage(e)}`);
    throw new CliError(`${display} is not a usable pi session:\n${details.join('\n')}`);
  }
  if (opts.leaf !== undefined) {
    try {
      tree.setLeaf(String(opts.leaf));
    } catch (error) {
      throw new CliError(`${display}: --leaf ${opts.leaf}: ${engineMessage(error)}`);
    }
  }
  /** @type {Session} */
  const session = {
    tree,
    path,
    display,
    sample,
    loadErrors,
    size: read.size,
    mtimeMs: read.mtimeMs,
    formatVersion: headerVersion(read.data),
  };
  return session;
}

/** Prints the load errors of a lenient load as warnings (every command but validate). */
function warnLoadErrors(/** @type {Session} */ session, /** @type {Io} */ io) {
  const { loadErrors, display } = session;
  for (const e of loadErrors.slice(0, MAX_LOAD_WARNINGS)) {
    io.warn(`${display}: ${lineMessage(e)} (line skipped)`);
  }
  if (loadErrors.length > MAX_LOAD_WARNINGS) {
    io.warn(
      `${display}: ${num(loadErrors.length - MAX_LOAD_WARNINGS)} more malformed lines skipped (see \`validate\`)`,
    );
  }
}

/** A load error as `line N: message` (the engine's messages usually start that way already). */
function lineMessage(/** @type {any} */ e) {
  return /^line \d+/.test(e.message) ? e.message : `line ${e.line}: ${e.message}`;
}

function engineMessage(/** @type {any} */ error) {
  return error?.code ? `${error.message} (${error.code})` : String(error?.message ?? error);
}

/** The current branch as tree nodes, root → leaf, found without recursion. */
function branchNodes(/** @type {any[]} */ nodes, /** @type {string | undefined | null} */ leafId) {
  if (leafId === undefined || leafId === null) return [];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const path = [];
  const seen = new Set();
  for (let node = byId.get(leafId); node && !seen.has(node.id); node = byId.get(node.parentId)) {
    seen.add(node.id);
    path.push(node);
  }
  return path.reverse();
}

/** Integer option: digits, optional `_`/`,` separators and `k` suffix (`20k`, `200_000`). */
function intOption(/** @type {Opts} */ opts, /** @type {string} */ name, min = 0) {
  const raw = opts[name];
  if (raw === undefined) return undefined;
  const m = /^(\d[\d_,]*)(k)?$/i.exec(String(raw).trim());
  const n = m ? Number(m[1].replace(/[_,]/g, '')) * (m[2] ? 1000 : 1) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new CliError(`--${name}: expected a whole number${min > 0 ? ` >= ${min}` : ''}, got "${raw}"`);
  }
  return n;
}

function sumTokens(/** @type {any[]} */ messages) {
  let total = 0;
  for (const m of messages) total += engine.estimateTokens(m);
  return total;
}

/** Header lines of every readable report. */
function reportHeader(/** @type {string} */ title, /** @type {Session} */ session, /** @type {Io} */ io) {
  const { style } = io;
  io.out(`${NAME} ${engine.version()}`);
  const where = session.sample ? `${session.display} ${style.dim('(bundled sample session)')}` : session.display;
  io.out(`${style.bold(title)} · ${where}`);
}

/** `entry abc123 (index 5, line 7)` */
function entryRef(/** @type {any} */ node, /** @type {number} */ index) {
  if (!node) return `index ${num(index)}`;
  const line = node.line ? `, line ${num(node.line)}` : '';
  return `entry ${node.id} (index ${num(index)}${line})`;
}

function kindOf(/** @type {any} */ node) {
  return node?.role ?? node?.type ?? '?';
}

function printJson(/** @type {Io} */ io, /** @type {unknown} */ value) {
  io.out(JSON.stringify(value, null, 2));
}

// ── plan ────────────────────────────────────────────────────────────────────────────────────

function cmdPlan(/** @type {Session} */ session, /** @type {Opts} */ opts, /** @type {Io} */ io) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
  /** @type {Record<string, number>} */
  const given = {};
  const keep = intOption(opts, 'keep-recent-tokens');
  const reserve = intOption(opts, 'reserve-tokens');
  if (keep !== undefined) given.keepRecentTokens = keep;
  if (reserve !== undefined) given.reserveTokens = reserve;
  const settings = /** @type {Required<Omit<import('../index.node.mjs').CompactionSettings, 'remoteEndpoint'>>} */ ({
    ...engine.defaultCompactionSettings(),
    ...given,
  });
  const contextWindow = intOption(opts, 'context-window', 1) ?? DEFAULT_CONTEXT_WINDOW;

  const nodes = tree.getTree();
  const path = branchNodes(nodes, tree.leafId);
  const plan = tree.planCompaction(settings);
  const prep = tree.prepareCompaction(settings);
  const contextTokens = tree.estimateContextTokens();
  const threshold = contextWindow - settings.reserveTokens;
  const compactNow = engine.shouldCompact(contextTokens, contextWindow, settings);
  const usage = plan && plan.usageIndex >= 0 ? usageOf(tree, path[plan.usageIndex], plan.usageIndex) : null;
  const cut = plan?.cutPoint;
  const cutNode = cut ? path[cut.firstKeptEntryIndex] : undefined;
  const turnNode = cut && cut.turnStartIndex >= 0 ? path[cut.turnStartIndex] : undefined;
  const prevNode = plan && plan.prevCompactionIndex >= 0 ? path[plan.prevCompactionIndex] : undefined;
  const groups = prep
    ? {
        toSummarize: { messages: prep.messagesToSummarize.length, tokens: sumTokens(prep.messagesToSummarize) },
        turnPrefix: { messages: prep.turnPrefixMessages.length, tokens: sumTokens(prep.turnPrefixMessages) },
        kept: { messages: prep.recentMessages.length, tokens: sumTokens(prep.recentMessages) },
      }
    : null;
  const files = prep ? fileLists(prep.fileOps) : { readFiles: [], modifiedFiles: [] };
  const why = !plan
    ? path.length === 0
      ? 'the branch is empty'
      : 'the branch ends in a compaction: it is already compacted'
    : !prep
      ? 'nothing before the cut point to summarize (SPEC §12.2)'
      : null;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      entryCount: tree.entryCount,
      branchLength: path.length,
      leafId: tree.leafId ?? null,
      contextTokens,
      contextWindow,
      reserveTokens: settings.reserveTokens,
      keepRecentTokens: settings.keepRecentTokens,
      compactionThreshold: threshold,
      shouldCompact: compactNow,
      lastUsage: usage,
      plan: plan ?? null,
      cutPoint: cut
        ? {
            entryId: cutNode?.id ?? null,
            role: kindOf(cutNode),
            index: cut.firstKeptEntryIndex,
            line: cutNode?.line ?? null,
            isSplitTurn: cut.isSplitTurn,
            turnStart: turnNode
              ? { entryId: turnNode.id, role: kindOf(turnNode), index: cut.turnStartIndex, line: turnNode.line }
              : null,
          }
        : null,
      previousCompaction: prevNode
        ? { entryId: prevNode.id, index: plan.prevCompactionIndex, line: prevNode.line }
        : null,
      counts: groups,
      readFiles: files.readFiles,
      modifiedFiles: files.modifiedFiles,
      nothingToCompact: why,
      preparation: prep ?? null,
      loadErrors: session.loadErrors,
    });
    return EXIT_OK;
  }

  reportHeader('compaction plan', session, io);
  const section = (/** @type {string} */ title) => {
    io.out('');
    io.out(style.bold(title));
  };
  section('Session');
  const leafNode = path[path.length - 1];
  const sessionRows = [
    [
      'entries',
      num(tree.entryCount),
      session.loadErrors.length ? style.yellow(`${plural(session.loadErrors.length, 'malformed line')} skipped`) : '',
    ],
    [
      'branch length',
      num(path.length),
      leafNode ? `leaf ${leafNode.id} (${kindOf(leafNode)}, line ${num(leafNode.line)})` : 'no leaf',
    ],
    [
      'context tokens',
      num(contextTokens),
      usage ? 'estimated: last fresh usage + the messages after it' : 'estimated from the messages (no fresh usage)',
    ],
    usage
      ? [
          'last fresh usage',
          num(usage.contextTokens),
          `${entryRef(path[usage.index], usage.index)}: input ${num(usage.input)}, output ${num(usage.output)}, cache read ${num(usage.cacheRead)}, cache write ${num(usage.cacheWrite)}`,
        ]
      : ['last fresh usage', '-', 'none after the latest compaction'],
    [
      'context window',
      num(contextWindow),
      `reserve ${num(settings.reserveTokens)} → compaction threshold ${num(threshold)}`,
    ],
    [
      'should compact',
      compactNow ? style.yellow('yes') : style.green('no'),
      `${num(contextTokens)} ${compactNow ? '>' : '≤'} ${num(threshold)}${settings.enabled ? '' : ' (compaction disabled)'}`,
    ],
  ];
  io.out(table(sessionRows, { align: 'lrl' }).join('\n'));

  if (!plan) {
    section('Nothing to compact');
    io.out(`  ${why}.`);
    return EXIT_OK;
  }
  section('Cut point');
  const ratio = plan.estimatedTokens > 0 ? plan.promptTokens / plan.estimatedTokens : 0;
  const keepNote =
    plan.effectiveKeepRecentTokens !== settings.keepRecentTokens
      ? `adapted from ${num(settings.keepRecentTokens)}: provider prompt ${num(plan.promptTokens)} / estimate ${num(plan.estimatedTokens)} = ×${ratio.toFixed(2)}`
      : `as configured${plan.promptTokens ? ` (provider/estimate ratio ×${ratio.toFixed(2)} ≤ 1: not adapted)` : ''}`;
  const cutRows = [
    ['previous compaction', prevNode ? entryRef(prevNode, plan.prevCompactionIndex) : 'none on this branch'],
    [
      'boundary',
      `index ${num(plan.boundaryStart)} … ${num(Math.max(plan.boundaryStart, plan.boundaryEnd - 1))} ` +
        `(${plural(plan.boundaryEnd - plan.boundaryStart, 'entry')}, ${num(plan.estimatedTokens)} estimated tokens in messages)`,
    ],
    ['keep recent tokens', `${num(plan.effectiveKeepRecentTokens)}  ${style.dim(keepNote)}`],
    [
      'cut point',
      `${style.bold(cutNode?.id ?? '?')}  ${kindOf(cutNode)}  index ${num(cut.firstKeptEntryIndex)}${cutNode?.line ? `, line ${num(cutNode.line)}` : ''}`,
    ],
    [
      'split turn',
      cut.isSplitTurn
        ? `yes: the turn starts at ${turnNode?.id ?? '?'}  ${kindOf(turnNode)}  index ${num(cut.turnStartIndex)}${turnNode?.line ? `, line ${num(turnNode.line)}` : ''}`
        : 'no',
    ],
  ];
  io.out(table(cutRows).join('\n'));

  if (!prep || !groups) {
    section('Nothing to compact');
    io.out(`  ${why}.`);
    return EXIT_OK;
  }
  section('Messages');
  io.out(
    table(
      [
        [style.dim('group'), style.dim('messages'), style.dim('est. tokens')],
        ['to summarize', num(groups.toSummarize.messages), num(groups.toSummarize.tokens)],
        ['turn prefix', num(groups.turnPrefix.messages), num(groups.turnPrefix.tokens)],
        ['kept', num(groups.kept.messages), num(groups.kept.tokens)],
      ],
      { align: 'lrr' },
    ).join('\n'),
  );
  io.out(
    `  previous summary: ${prep.previousSummary !== undefined ? `yes (${num(prep.previousSummary.length)} characters)` : 'none'}` +
      ` · tokens before: ${num(prep.tokensBefore)}`,
  );

  section(`Files (${num(files.readFiles.length)} read, ${num(files.modifiedFiles.length)} modified)`);
  for (const [label, list] of /** @type {[string, string[]][]} */ ([
    ['readFiles', files.readFiles],
    ['modifiedFiles', files.modifiedFiles],
  ])) {
    io.out(`  ${label}:${list.length ? '' : ' none'}`);
    for (const f of list) io.out(`    ${f}`);
  }
  return EXIT_OK;
}

/** The usage numbers of the assistant message at `node` (SPEC §5 context tokens). */
function usageOf(/** @type {any} */ tree, /** @type {any} */ node, /** @type {number} */ index) {
  const u = node ? tree.getEntry(node.id)?.message?.usage : undefined;
  if (!u) return null;
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  const cacheRead = u.cacheRead ?? 0;
  const cacheWrite = u.cacheWrite ?? 0;
  const contextTokens = u.totalTokens ? u.totalTokens : input + output + cacheRead + cacheWrite;
  return {
    index,
    entryId: node.id,
    contextTokens,
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: u.totalTokens ?? null,
  };
}

/** SPEC §8: modified = written ∪ edited; read = read − modified; both sorted. */
function fileLists(/** @type {{read: string[], written: string[], edited: string[]}} */ ops) {
  const modified = new Set([...ops.written, ...ops.edited]);
  const read = new Set(ops.read.filter((f) => !modified.has(f)));
  return { readFiles: [...read].sort(), modifiedFiles: [...modified].sort() };
}

// ── context ─────────────────────────────────────────────────────────────────────────────────

function cmdContext(/** @type {Session} */ session, /** @type {Opts} */ opts, /** @type {Io} */ io) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
  const ctx = tree.buildSessionContext();
  const contextTokens = tree.estimateContextTokens();
  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      leafId: tree.leafId ?? null,
      estimatedTokens: contextTokens,
      thinkingLevel: ctx.thinkingLevel,
      models: ctx.models,
      mode: ctx.mode,
      ...(ctx.modeData !== undefined ? { modeData: ctx.modeData } : {}),
      injectedTtsrRules: ctx.injectedTtsrRules,
      messages: tree.buildLlmMessages(),
      loadErrors: session.loadErrors,
    });
    return EXIT_OK;
  }
  const maxChars = opts.full ? 0 : (intOption(opts, 'max-chars') ?? DEFAULT_MAX_CHARS);
  const maxLines = maxChars === 0 ? 0 : Math.max(3, Math.round(maxChars / 60));
  const first = intOption(opts, 'first');
  const last = intOption(opts, 'last');

  // Convert message by message to know where each LLM message comes from (e.g. a user message
  // that is really the compaction summary); the concatenation is buildLlmMessages().
  /** @type {{ origin: string, message: any }[]} */
  const shown = [];
  for (const message of ctx.messages) {
    for (const converted of engine.convertToLlm([message])) shown.push({ origin: message.role, message: converted });
  }
  /** @type {Record<string, number>} */
  const roles = {};
  for (const { message } of shown) roles[message.role] = (roles[message.role] ?? 0) + 1;

  reportHeader('model context', session, io);
  const models = Object.entries(ctx.models).map(([role, model]) => (role === 'default' ? model : `${role}: ${model}`));
  io.out(
    table([
      ['leaf', tree.leafId ?? '(none)'],
      [
        'messages',
        `${num(shown.length)} (${
          Object.entries(roles)
            .map(([r, n]) => `${r} ${num(n)}`)
            .join(', ') || 'none'
        })`,
      ],
      ['context tokens', `${num(contextTokens)} (estimated)`],
      ['model', `${models.join(', ') || '-'} · thinking ${ctx.thinkingLevel} · mode ${ctx.mode}`],
      ...(ctx.injectedTtsrRules.length ? [['injected rules', ctx.injectedTtsrRules.join(', ')]] : []),
    ]).join('\n'),
  );
  if (maxChars > 0)
    io.out(
      style.dim(
        `  (each message shortened to ${num(maxChars)} characters / ${maxLines} lines; --full shows everything)`,
      ),
    );

  // Which messages to show: all, or the first and/or last ones.
  const headEnd = first === undefined && last === undefined ? shown.length : Math.min(first ?? 0, shown.length);
  const tailStart = last === undefined ? shown.length : Math.max(headEnd, shown.length - last);
  for (let i = 0; i < shown.length; i++) {
    if (i === headEnd && tailStart > headEnd) {
      io.out('');
      io.out(
        style.dim(
          `… ${plural(tailStart - headEnd, 'message')} not shown (${[first !== undefined ? `--first ${num(first)}` : '', last !== undefined ? `--last ${num(last)}` : ''].filter(Boolean).join(' ')}) …`,
        ),
      );
      i = tailStart - 1;
      continue;
    }
    const { origin, message } = shown[i];
    io.out('');
    renderMessage(io, i + 1, origin, message, { maxChars, maxLines });
  }
  return EXIT_OK;
}

/**
 * @param {Io} io @param {number} n @param {string} origin @param {any} message
 * @param {{ maxChars: number, maxLines: number }} limits
 */
function renderMessage(io, n, origin, message, limits) {
  const { style } = io;
  const tokens = engine.estimateTokens(message);
  const role = message.role;
  const bits = [style.bold(`#${n} ${role}`)];
  if (origin !== role) bits.push(style.magenta(`(${describeOrigin(origin)})`));
  if (role === 'toolResult') {
    bits.push(style.cyan(message.toolName ?? '?'));
    if (message.isError) bits.push(style.red('error'));
    if (message.prunedAt !== undefined) bits.push(style.dim('pruned'));
  }
  if (role === 'assistant' && message.stopReason && message.stopReason !== 'stop' && message.stopReason !== 'toolUse') {
    bits.push(style.yellow(`stop: ${message.stopReason}`));
  }
  bits.push(style.dim(plural(tokens, 'token')));
  io.out(bits.join('  '));

  const body = (/** @type {string} */ text, /** @type {string} */ prefix = '', dim = false) => {
    const c = clip(text, limits);
    const lines = c.text.split('\n');
    for (const [i, line] of lines.entries()) {
      io.out(`    ${i === 0 ? prefix : ''}${dim && line ? style.dim(line) : line}`.trimEnd());
    }
    if (c.cutChars > 0) {
      io.out(
        style.dim(
          `    … ${plural(c.cutChars, 'more character')}${c.cutLines > 0 ? `, ${plural(c.cutLines, 'line')}` : ''} not shown`,
        ),
      );
    }
  };
  const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  if (!Array.isArray(content)) {
    if (role === 'assistant' && message.errorMessage) body(message.errorMessage, style.red('error: '));
    return;
  }
  // Text of consecutive text blocks is shown together, so the limit applies to the whole.
  /** @type {string[]} */
  let text = [];
  const flushText = () => {
    if (text.length) body(text.join('\n'));
    text = [];
  };
  for (const block of content) {
    switch (block?.type) {
      case 'text':
        text.push(block.text ?? '');
        break;
      case 'thinking':
        flushText();
        body(block.thinking ?? '', style.dim('[thinking] '), true);
        break;
      case 'toolCall':
        flushText();
        io.out(`    ${style.cyan('→')} ${toolCallText(block)}`);
        break;
      case 'image':
        flushText();
        io.out(
          `    ${style.dim(`[image ${block.mimeType ?? ''}${typeof block.data === 'string' ? `, ${bytes(Math.floor((block.data.length * 3) / 4))}` : ''}]`)}`,
        );
        break;
      default:
        flushText();
        io.out(`    ${style.dim(`[${block?.type ?? 'unknown'} block]`)}`);
    }
  }
  flushText();
  if (role === 'assistant' && message.errorMessage) body(message.errorMessage, style.red('error: '));
}

function describeOrigin(/** @type {string} */ origin) {
  switch (origin) {
    case 'compactionSummary':
      return 'compaction summary';
    case 'branchSummary':
      return 'branch summary';
    case 'bashExecution':
      return 'shell command';
    case 'custom':
    case 'hookMessage':
      return 'extension message';
    default:
      return `from ${origin}`;
  }
}

/** `read(path: "/a/b.ts")`, long values shortened. */
function toolCallText(/** @type {any} */ call) {
  const args = call.arguments && typeof call.arguments === 'object' ? call.arguments : {};
  const entries = Object.entries(args);
  const room = entries.length === 1 ? 140 : 80;
  const parts = entries.map(([k, v]) => {
    const json = JSON.stringify(v) ?? String(v);
    return `${k}: ${json.length > room ? `${oneLine(json, room - 20)} (${num(json.length)} chars)` : oneLine(json, room)}`;
  });
  return `${call.name ?? '?'}(${parts.join(', ')})`;
}

// ── prune ───────────────────────────────────────────────────────────────────────────────────

function cmdPrune(/** @type {Session} */ session, /** @type {Opts} */ opts, /** @type {Io} */ io) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
  /** @type {{ protectTokens?: number, minimumSavings?: number, protectedTools?: string[] }} */
  const given = {};
  const protect = intOption(opts, 'protect-tokens');
  const minimum = intOption(opts, 'minimum-savings');
  if (protect !== undefined) given.protectTokens = protect;
  if (minimum !== undefined) given.minimumSavings = minimum;
  if (opts['protected-tools'] !== undefined) {
    given.protectedTools = String(opts['protected-tools'])
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }
  const config = /** @type {Required<import('../index.node.mjs').PruneConfig>} */ ({
    ...engine.defaultPruneConfig(),
    ...given,
  });
  if (opts.write) {
    if (session.sample) throw new CliError('prune --write needs a file: it does not modify the bundled sample session');
    if (session.loadErrors.length) {
      throw new CliError(
        `${session.display}: refusing to rewrite a file with ${plural(session.loadErrors.length, 'malformed line')} ` +
          `(first: ${lineMessage(session.loadErrors[0])}); they would be lost. The file is unchanged.`,
      );
    }
  }
  const path = branchNodes(tree.getTree(), tree.leafId);
  const plan = tree.planPrune(config);
  const wouldPrune = plan.candidates.length > 0;

  /** @type {null | { prunedCount: number, tokensSaved: number, backup: string, formatVersion: number | null }} */
  let written = null;
  if (opts.write && wouldPrune) {
    const result = tree.pruneToolOutputs(config);
    if (result.prunedCount > 0) {
      const backup = `${session.path}.bak`;
      writeFileAtomic(session.path, tree.toJsonl(), {
        backup,
        expect: { size: session.size, mtimeMs: session.mtimeMs },
      });
      written = {
        prunedCount: result.prunedCount,
        tokensSaved: result.tokensSaved,
        backup,
        formatVersion: session.formatVersion,
      };
    }
  }

  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      leafId: tree.leafId ?? null,
      branchLength: path.length,
      config,
      ...plan,
      wouldPrune,
      written,
      loadErrors: session.loadErrors,
    });
    return EXIT_OK;
  }

  reportHeader('tool output pruning', session, io);
  io.out(
    `  settings: protect the newest ${num(config.protectTokens)} tokens of tool output, ` +
      `minimum savings ${num(config.minimumSavings)}, protected tools: ${config.protectedTools.join(', ') || 'none'}`,
  );
  io.out('');
  if (plan.candidates.length) {
    const rows = [
      [style.dim('entry'), style.dim('line'), style.dim('tool'), style.dim('tokens'), style.dim('savings')],
    ];
    for (const c of plan.candidates) {
      rows.push([c.id ?? '-', num(path[c.index]?.line ?? 0), c.toolName ?? '?', num(c.tokens), num(c.savings)]);
    }
    io.out(table(rows, { align: 'lrlrr' }).join('\n'));
    io.out('');
    io.out(
      `  ${style.bold(plural(plan.candidates.length, 'candidate'))}, ${style.bold(num(plan.tokensSaved))} tokens saved ` +
        `(≥ minimum ${num(config.minimumSavings)}) → ${style.yellow('would prune')}`,
    );
  } else if (plan.considered > 0) {
    io.out(
      `  ${plural(plan.considered, 'old tool output')} could be pruned, saving ${num(plan.potentialSavings)} tokens: ` +
        `below the minimum of ${num(config.minimumSavings)} → ${style.green('nothing to prune')}`,
    );
  } else {
    io.out(`  no tool output outside the protected window → ${style.green('nothing to prune')}`);
  }
  if (written) {
    io.out('');
    io.out(
      `  ${style.green('written:')} ${session.display}: ${plural(written.prunedCount, 'tool output')} pruned, ` +
        `${num(written.tokensSaved)} tokens saved; original kept as ${written.backup}`,
    );
    if (written.formatVersion !== null && written.formatVersion < 3) {
      io.out(`  note: the file was in format v${written.formatVersion}; it is now written in format v3 (migrated)`);
    }
  } else if (opts.write) {
    io.out(`  ${session.display} is unchanged (nothing to prune)`);
  } else if (wouldPrune && !session.sample) {
    io.out(style.dim(`  run with --write to apply (the original is kept as ${session.display}.bak)`));
  }
  return EXIT_OK;
}

// ── tree ────────────────────────────────────────────────────────────────────────────────────

/** In a linear run, this many entries are shown at each end; longer middles are collapsed. */
const RUN_EDGE = 3;

function cmdTree(/** @type {Session} */ session, /** @type {Opts} */ opts, /** @type {Io} */ io) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
  /** @type {any[]} */
  const nodes = tree.getTree();
  const leafId = tree.leafId ?? null;
  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      leafId,
      entryCount: tree.entryCount,
      nodes,
      loadErrors: session.loadErrors,
    });
    return EXIT_OK;
  }
  const byId = new Map();
  // With duplicate ids the later entry wins (as in the engine); the earlier one is unreachable.
  for (const n of nodes) if (n.id !== null) byId.set(n.id, n);
  const onPath = new Set(branchNodes(nodes, leafId).map((n) => n.id));
  const roots = nodes.filter((n) => n.parentId === null || !byId.has(n.parentId));
  const full = Boolean(opts.full);

  reportHeader('entry tree', session, io);
  const branchPoints = nodes.filter((n) => n.children.length > 1).length;
  io.out(
    `  ${plural(tree.entryCount, 'entry')}, ${plural(branchPoints, 'branch point')}, leaf ${leafId ?? '(none)'}` +
      style.dim(`   (* = leaf; ${full ? 'all entries shown' : 'long linear runs collapsed, --full shows all'})`),
  );
  if (branchPoints) {
    io.out(
      style.dim(
        '  at a branch point, side branches are indented (├─); the branch leading to the leaf continues below in the same column',
      ),
    );
  }
  io.out('');

  const idWidth = Math.min(36, Math.max(8, ...nodes.map((n) => String(n.id).length)));
  const visited = new Set();
  /** @param {any} node @param {string} prefix */
  const line = (node, prefix) => {
    const entry = node.id !== null ? tree.getEntry(node.id) : undefined;
    const { kind, text } = preview(node, entry);
    const label = node.label !== undefined ? `  ${style.magenta(`[${node.label}]`)}` : '';
    const leaf = node.id === leafId;
    const marker = leaf ? style.bold(style.green('*')) : ' ';
    const id = String(node.id).padEnd(idWidth);
    const missing =
      node.parentId !== null && !byId.has(node.parentId) ? style.red(`  (parent ${node.parentId} missing)`) : '';
    const fork = node.children.length > 1 ? style.yellow(`  ⑂ ${node.children.length} branches`) : '';
    const kindText = kind.padEnd(14);
    const coloredKind =
      node.type === 'compaction' || node.type === 'branch_summary' ? style.yellow(kindText) : style.cyan(kindText);
    io.out(
      `${marker} ${prefix}${leaf ? style.bold(id) : id}  ${coloredKind}  ${text ? style.dim(text) : ''}${label}${fork}${missing}`.trimEnd(),
    );
  };

  /** Draws the subtrees of `starts` with an explicit stack (no recursion, whatever the depth). */
  const walk = (/** @type {any[]} */ starts) => {
    /** @type {{ node: any, first: string, rest: string }[]} */
    const stack = [];
    for (let i = starts.length - 1; i >= 0; i--) stack.push({ node: starts[i], first: '', rest: '' });
    while (stack.length) {
      const item = /** @type {{ node: any, first: string, rest: string }} */ (stack.pop());
      // The linear run starting here: follow single children.
      /** @type {any[]} */
      const run = [];
      let node = item.node;
      while (node && !visited.has(node)) {
        visited.add(node);
        run.push(node);
        if (node.children.length !== 1) break;
        node = byId.get(node.children[0]);
      }
      if (run.length === 0) continue;
      const keep = (/** @type {number} */ i) =>
        full ||
        i < RUN_EDGE ||
        i >= run.length - RUN_EDGE ||
        run[i].id === leafId ||
        run[i].label !== undefined ||
        run[i].type === 'compaction' ||
        run[i].type === 'branch_summary';
      for (let i = 0; i < run.length; ) {
        if (keep(i)) {
          line(run[i], i === 0 ? item.first : item.rest);
          i++;
          continue;
        }
        let j = i;
        while (j < run.length && !keep(j)) j++;
        if (j - i === 1) {
          line(run[i], item.rest);
        } else {
          io.out(`  ${item.rest}${style.dim(`┆ … ${plural(j - i, 'entry')} (${summarizeKinds(run.slice(i, j))}) …`)}`);
        }
        i = j;
      }
      // A branch point: the side branches are drawn indented (├─ …), then the main child (the one
      // leading to the leaf, else the last) continues in the same column, so that the depth grows
      // with nested side branches only, not with every branch point along the way.
      const tail = run[run.length - 1];
      const children =
        tail.children.length > 1
          ? [...new Set(tail.children.map((/** @type {string} */ id) => byId.get(id)))].filter(
              (c) => c && !visited.has(c),
            )
          : [];
      if (children.length) {
        const main = children.find((/** @type {any} */ c) => onPath.has(c.id)) ?? children[children.length - 1];
        stack.push({ node: main, first: item.rest, rest: item.rest });
        const side = children.filter((/** @type {any} */ c) => c !== main);
        for (let k = side.length - 1; k >= 0; k--) {
          stack.push({ node: side[k], first: `${item.rest}├─ `, rest: `${item.rest}│  ` });
        }
      }
    }
  };
  walk(roots);
  if (nodes.length === 0) io.out('  (no entries)');
  const unreachable = nodes.length - visited.size;
  if (unreachable > 0) {
    // Entries in a parent cycle, or shadowed by a later entry with the same id.
    io.out('');
    io.out(
      style.yellow(
        `  ${plural(unreachable, 'entry')} not reachable from a root (a parent cycle or a duplicate id; see \`validate\`):`,
      ),
    );
    for (const node of nodes) if (!visited.has(node)) walk([node]);
  }
  return EXIT_OK;
}

/** `user 3, assistant 10, toolResult 9` for a collapsed run. */
function summarizeKinds(/** @type {any[]} */ run) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const n of run) counts.set(kindOf(n), (counts.get(kindOf(n)) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${num(n)}`)
    .join(', ');
}

/** The kind column and a one-line preview of an entry. */
function preview(/** @type {any} */ node, /** @type {any} */ entry) {
  const width = 70;
  const quote = (/** @type {unknown} */ s) => (typeof s === 'string' && s.trim() ? `"${oneLine(s, width)}"` : '');
  const e = entry ?? {};
  switch (node.type) {
    case 'message': {
      const m = e.message ?? {};
      const role = m.role ?? node.role ?? 'message';
      const text = contentText(m.content);
      switch (role) {
        case 'user':
          return { kind: role, text: quote(text) };
        case 'assistant': {
          const calls = Array.isArray(m.content)
            ? m.content.filter((/** @type {any} */ b) => b?.type === 'toolCall')
            : [];
          const callText = calls.length
            ? `→ ${oneLine(calls.map((/** @type {any} */ c) => c.name).join(', '), 40)}`
            : '';
          const body = text
            ? quote(text)
            : callText
              ? ''
              : m.errorMessage
                ? `error: ${oneLine(m.errorMessage, width)}`
                : '(thinking only)';
          return { kind: role, text: [body, callText].filter(Boolean).join(' ') };
        }
        case 'toolResult':
          return {
            kind: role,
            text: `${m.toolName ?? '?'}${m.isError ? ' (error)' : ''}${m.prunedAt !== undefined ? ' (pruned)' : ''}: ${quote(text) || '(empty)'}`,
          };
        case 'bashExecution':
          return { kind: role, text: `$ ${oneLine(m.command ?? '', width)}` };
        case 'compactionSummary':
        case 'branchSummary':
          return { kind: role, text: quote(m.summary) };
        case 'custom':
        case 'hookMessage':
          return { kind: role, text: `${m.customType ?? ''} ${quote(text)}`.trim() };
        default:
          return { kind: role, text: '' };
      }
    }
    case 'compaction':
      return {
        kind: 'compaction',
        text: `tokensBefore ${num(e.tokensBefore)}, keeps from ${e.firstKeptEntryId}: ${quote(e.summary)}`,
      };
    case 'branch_summary':
      return { kind: 'branch_summary', text: `from ${e.fromId}: ${quote(e.summary)}` };
    case 'custom_message':
      return { kind: 'custom_message', text: `${e.customType ?? ''} ${quote(contentText(e.content))}`.trim() };
    case 'custom':
      return { kind: 'custom', text: String(e.customType ?? '') };
    case 'label':
      return {
        kind: 'label',
        text: `${e.targetId} → ${e.label === undefined ? '(removed)' : JSON.stringify(e.label)}`,
      };
    case 'model_change':
      return { kind: 'model_change', text: `${e.model ?? ''}${e.role && e.role !== 'default' ? ` (${e.role})` : ''}` };
    case 'thinking_level_change':
      return { kind: 'thinking', text: String(e.thinkingLevel ?? '') };
    case 'mode_change':
      return { kind: 'mode_change', text: String(e.mode ?? '') };
    case 'ttsr_injection':
      return { kind: 'ttsr_injection', text: Array.isArray(e.injectedRules) ? e.injectedRules.join(', ') : '' };
    case 'session_init':
      return { kind: 'session_init', text: quote(e.task) };
    default:
      return { kind: String(node.type), text: '' };
  }
}

/** The text of a message content (string or blocks). */
function contentText(/** @type {unknown} */ content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

// ── validate ────────────────────────────────────────────────────────────────────────────────

function cmdValidate(/** @type {Session} */ session, /** @type {Opts} */ opts, /** @type {Io} */ io) {
  const { tree } = session;
  const { style } = io;
  const report = tree.validate();
  const findings = [
    ...session.loadErrors.map((/** @type {any} */ e) => ({
      severity: 'error',
      code: e.code,
      line: e.line,
      id: undefined,
      message: e.message.replace(/^line \d+: /, ''),
    })),
    ...report.issues.map((/** @type {any} */ i) => ({
      severity: WARNING_CODES.has(i.code) ? 'warning' : 'error',
      code: i.code,
      line: i.line,
      id: i.id,
      message: i.message,
    })),
  ].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      entryCount: tree.entryCount,
      valid: errors === 0,
      errors,
      warnings,
      findings,
      issues: report.issues,
      loadErrors: session.loadErrors,
    });
    return errors ? EXIT_FINDINGS : EXIT_OK;
  }

  reportHeader('validation', session, io);
  io.out(`  ${plural(tree.entryCount, 'entry')} loaded, ${plural(session.loadErrors.length, 'malformed line')}`);
  io.out('');
  if (findings.length) {
    const rows = [[style.dim('severity'), style.dim('code'), style.dim('line'), style.dim('message')]];
    for (const f of findings) {
      rows.push([
        f.severity === 'error' ? style.red('error') : style.yellow('warning'),
        f.code,
        f.line !== undefined ? num(f.line) : '-',
        f.message,
      ]);
    }
    io.out(table(rows, { align: 'llrl' }).join('\n'));
    io.out('');
  }
  const verdict = errors ? style.red('INVALID') : style.green('valid');
  io.out(
    `  ${verdict}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}` +
      (warnings ? style.dim('  (unanswered tool calls are warnings: interrupted turns leave them)') : ''),
  );
  return errors ? EXIT_FINDINGS : EXIT_OK;
}

// ── compact and navigate: the summarizer ────────────────────────────────────────────────────

/**
 * @typedef {{ kind: 'extractive' | 'endpoint' | 'openai', label: string, json: Record<string, string>,
 *   model: { complete: (request: any) => Promise<string> } | { remoteEndpoint: string } }} Summarizer
 */

/** The summarizer chosen by --endpoint / --openai --model (default: extractive). @returns {Summarizer} */
function summarizerFrom(/** @type {Opts} */ opts, /** @type {Io} */ io) {
  const endpoint = opts.endpoint === undefined ? undefined : String(opts.endpoint);
  const base = opts.openai === undefined ? undefined : String(opts.openai);
  const model = opts.model === undefined ? undefined : String(opts.model);
  if (endpoint !== undefined && base !== undefined) {
    throw new CliError('--endpoint and --openai exclude each other: choose one summarizer');
  }
  if (model !== undefined && base === undefined) {
    throw new CliError('--model names the model of --openai: pass --openai <base-url> too');
  }
  if (endpoint !== undefined) {
    const url = httpUrl(endpoint, 'endpoint');
    return {
      kind: 'endpoint',
      label: `remote endpoint ${displayUrl(url)}`,
      json: { kind: 'endpoint', endpoint: displayUrl(url) },
      model: { remoteEndpoint: endpoint },
    };
  }
  if (base !== undefined) {
    if (model === undefined || model.trim() === '')
      throw new CliError('--openai needs --model <name> (the model of that API)');
    const url = httpUrl(base, 'openai');
    const apiKey = process.env.OPENAI_API_KEY || undefined;
    if (!apiKey) io.warn('OPENAI_API_KEY is not set: the requests carry no Authorization header');
    return {
      kind: 'openai',
      label: `${model} through the OpenAI-compatible API at ${displayUrl(url)}`,
      json: { kind: 'openai', baseUrl: displayUrl(url), model },
      model: { complete: openaiComplete({ baseUrl: base, model, apiKey }) },
    };
  }
  return {
    kind: 'extractive',
    label: 'extractive: quotes the conversation, no model is called (--endpoint or --openai use one)',
    json: { kind: 'extractive' },
    model: { complete: engine.extractiveSummarizer },
  };
}

/** An http(s) URL option, or a usage error. */
function httpUrl(/** @type {string} */ text, /** @type {string} */ option) {
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`--${option}: not a URL: "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`--${option}: expected an http:// or https:// URL, got "${text}"`);
  }
  return url;
}

/** A URL for display: credentials in it are masked. */
function displayUrl(/** @type {URL} */ url) {
  if (!url.username && !url.password) return url.href;
  const copy = new URL(url.href);
  copy.username = copy.username ? '***' : '';
  copy.password = copy.password ? '***' : '';
  return copy.href;
}

/**
 * Runs `work` with an AbortSignal that the first Ctrl-C aborts (the engine then rejects with
 * E_ABORTED and appends nothing); a second Ctrl-C ends the process at once. On a terminal, a
 * status line on stderr says what is running.
 * @template T
 * @param {string} status @param {(signal: AbortSignal) => Promise<T>} work
 * @returns {Promise<T>}
 */
async function interruptible(status, work, timeoutSeconds = 600) {
  const controller = new AbortController();
  const onSigint = () => {
    process.stderr.write('\ninterrupt: stopping the summarizer (press Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  let timedOut = false;
  const timer =
    timeoutSeconds > 0
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutSeconds * 1000)
      : undefined;
  const tty = Boolean(process.stderr.isTTY);
  if (tty) process.stderr.write(`${status} …`);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (timedOut) {
      throw new CliError(
        `the summarizer did not answer within ${timeoutSeconds} s (--timeout): nothing written`,
        EXIT_SUMMARIZER,
      );
    }
    throw error;
  } finally {
    clearTimeout(timer);
    process.removeListener('SIGINT', onSigint);
    if (tty) process.stderr.write('\r\u001b[K');
  }
}

/** `--timeout` in seconds (default 600; 0 = never). */
function timeoutOf(/** @type {Opts} */ values) {
  if (values.timeout === undefined) return 600;
  const n = Number(values.timeout);
  if (!Number.isFinite(n) || n < 0) throw new CliError(`--timeout takes a number of seconds, got "${values.timeout}"`);
  return n;
}

/**
 * Refuses --write where it cannot work: the bundled sample, and a file whose rewrite would lose
 * malformed lines (a file in an old format must be rewritten: migrated to v3).
 */
function checkWritable(/** @type {Session} */ session, /** @type {string} */ command) {
  if (session.sample)
    throw new CliError(`${command} --write needs a file: it does not modify the bundled sample session`);
  if (needsRewrite(session) && session.loadErrors.length) {
    throw new CliError(
      `${session.display}: refusing to rewrite a file in format v${session.formatVersion} with ` +
        `${plural(session.loadErrors.length, 'malformed line')} (first: ${lineMessage(session.loadErrors[0])}); ` +
        'they would be lost. The file is unchanged.',
    );
  }
}

/** A file in format v1/v2 cannot take a v3 entry at its end: it is rewritten, migrated. */
function needsRewrite(/** @type {Session} */ session) {
  return session.formatVersion !== null && session.formatVersion < 3;
}

/**
 * Writes `entry` (already appended in the handle) to the file: appended as one JSONL line to
 * the original bytes (format v3), or the whole session rewritten in format v3 (older formats);
 * atomically, the original kept as <file>.bak.
 * @returns {{ backup: string, entryId: string, mode: 'appended' | 'rewritten', formatVersion: number | null }}
 */
function persistEntry(/** @type {Session} */ session, /** @type {any} */ entry) {
  const backup = `${session.path}.bak`;
  const expect = { size: session.size, mtimeMs: session.mtimeMs };
  if (needsRewrite(session)) {
    writeFileAtomic(session.path, session.tree.toJsonl(), { backup, expect });
    return { backup, entryId: entry.id, mode: 'rewritten', formatVersion: session.formatVersion };
  }
  appendLineAtomic(session.path, JSON.stringify(entry), { backup, expect });
  return { backup, entryId: entry.id, mode: 'appended', formatVersion: session.formatVersion };
}

/** The messages the model sees and their estimated tokens. */
function contextSize(/** @type {any} */ tree) {
  return { messages: tree.buildLlmMessages().length, tokens: tree.estimateContextTokens() };
}

/** Prints a summary text indented, the whole of it or its first `preview` characters. */
function printText(/** @type {Io} */ io, /** @type {string} */ text, /** @type {number | undefined} */ preview) {
  const c = clip(text, { maxChars: preview ?? 0 });
  for (const line of c.text.split('\n')) io.out(`  ${line}`.trimEnd());
  if (c.cutChars > 0) {
    io.out(io.style.dim(`  … ${plural(c.cutChars, 'more character')} not shown (--preview ${preview ?? 0})`));
  }
}

/** The written / not written line after a --write command. */
function printWritten(
  /** @type {Io} */ io,
  /** @type {Session} */ session,
  /** @type {ReturnType<typeof persistEntry> | null} */ written,
  /** @type {string} */ what,
) {
  const { style } = io;
  if (written) {
    io.out(
      `  ${style.green('written:')} ${session.display}: ${what} ${written.entryId} ` +
        `${written.mode === 'appended' ? 'appended' : 'added'}; original kept as ${written.backup}`,
    );
    if (written.mode === 'rewritten') {
      io.out(`  note: the file was in format v${written.formatVersion}; it is now written in format v3 (migrated)`);
    }
  } else if (!session.sample) {
    io.out(
      style.dim(
        `  nothing written: run with --write to append the ${what} (the original is kept as ${session.display}.bak)`,
      ),
    );
  } else {
    io.out(style.dim('  nothing written (the bundled sample session is never modified; pass a file to use --write)'));
  }
}

// ── compact ─────────────────────────────────────────────────────────────────────────────────

async function cmdCompact(/** @type {Session} */ session, /** @type {Opts} */ opts, /** @type {Io} */ io) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
  /** @type {Record<string, number>} */
  const settings = {};
  const keep = intOption(opts, 'keep-recent-tokens');
  const reserve = intOption(opts, 'reserve-tokens');
  if (keep !== undefined) settings.keepRecentTokens = keep;
  if (reserve !== undefined) settings.reserveTokens = reserve;
  const preview = intOption(opts, 'preview');
  const summarizer = summarizerFrom(opts, io);
  if (opts.write) checkWritable(session, 'compact');

  const before = contextSize(tree);
  const leafBefore = tree.leafId ?? null;
  // What the engine would refuse ("Already compacted" / "Nothing to compact") is not an error here.
  if (!tree.prepareCompaction(settings)) {
    const lastIsCompaction = tree.getBranch().at(-1)?.type === 'compaction';
    const why =
      tree.getBranch().length === 0
        ? 'the branch is empty'
        : lastIsCompaction
          ? 'the branch ends in a compaction: it is already compacted'
          : 'nothing before the cut point to summarize (SPEC §12.2)';
    if (opts.json) {
      printJson(io, {
        file: session.path,
        sample: session.sample,
        summarizer: summarizer.json,
        nothingToCompact: why,
        before,
        written: null,
      });
      return EXIT_OK;
    }
    reportHeader('compaction', session, io);
    io.out('');
    io.out(`  nothing to compact: ${why}. ${session.sample ? '' : `${session.display} is unchanged.`}`.trimEnd());
    return EXIT_OK;
  }

  const instructions = opts.instructions === undefined ? undefined : String(opts.instructions);
  const done = await interruptible(
    `compacting with the ${summarizer.kind} summarizer`,
    (signal) => tree.compact({ ...summarizer.model, customInstructions: instructions, settings, signal }),
    timeoutOf(opts),
  );
  const after = contextSize(tree);
  const entry = /** @type {any} */ (done.compactionEntry);
  const written = opts.write ? persistEntry(session, entry) : null;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      summarizer: summarizer.json,
      before,
      after,
      compactionEntry: entry,
      result: done.result,
      written,
      loadErrors: session.loadErrors,
    });
    return EXIT_OK;
  }

  reportHeader('compaction', session, io);
  io.out(`  summarizer: ${summarizer.label}`);
  io.out('');
  io.out(style.bold('Context'));
  const saved = before.tokens - after.tokens;
  const percent =
    before.tokens > 0 ? ` (${saved >= 0 ? '−' : '+'}${((Math.abs(saved) / before.tokens) * 100).toFixed(1)} %)` : '';
  io.out(
    table(
      [
        [style.dim(''), style.dim('messages'), style.dim('est. tokens'), ''],
        ['before', num(before.messages), num(before.tokens), ''],
        [
          'after',
          num(after.messages),
          num(after.tokens),
          style.dim(`${saved >= 0 ? '−' : '+'}${num(Math.abs(saved))}${percent}`),
        ],
      ],
      { align: 'lrrl' },
    ).join('\n'),
  );
  io.out('');
  io.out(style.bold('Compaction entry'));
  const details = entry.details ?? {};
  io.out(
    table([
      ['id', `${entry.id}  ${style.dim(`(child of the leaf ${leafBefore ?? '(none)'}; the new leaf)`)}`],
      ['first kept entry', String(entry.firstKeptEntryId)],
      [
        'tokens before',
        `${num(entry.tokensBefore)}  ${style.dim('(from the last fresh provider usage; 0 when there is none)')}`,
      ],
      ['files', `${num(details.readFiles?.length ?? 0)} read, ${num(details.modifiedFiles?.length ?? 0)} modified`],
      ['summary', `${num(entry.summary.length)} characters; short summary ${num(entry.shortSummary?.length ?? 0)}`],
    ]).join('\n'),
  );
  io.out('');
  io.out(style.bold('Short summary'));
  printText(io, entry.shortSummary ?? '', undefined);
  io.out('');
  io.out(style.bold('Summary'));
  printText(io, entry.summary, preview);
  io.out('');
  printWritten(io, session, written, 'compaction entry');
  return EXIT_OK;
}

// ── navigate ────────────────────────────────────────────────────────────────────────────────

async function cmdNavigate(
  /** @type {Session} */ session,
  /** @type {Opts} */ opts,
  /** @type {Io} */ io,
  /** @type {string | undefined} */ target,
) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
  const targetId = String(target);
  const preview = intOption(opts, 'preview');
  const summarize = Boolean(opts.summarize);
  if (opts.write && !summarize) {
    throw new CliError(
      'navigate --write needs --summarize: the leaf is not stored in the session file, only the appended ' +
        'branch_summary entry is (see `navigate --help`)',
    );
  }
  const usesModel = MODEL_OPTIONS.some((name) => opts[name] !== undefined);
  if (usesModel && !summarize) {
    throw new CliError('--endpoint, --openai, --model and --instructions apply to the branch summary: add --summarize');
  }
  const summarizer = summarizerFrom(opts, io);
  if (opts.write) checkWritable(session, 'navigate');
  const targetEntry = /** @type {any} */ (tree.getEntry(targetId));
  if (!targetEntry) throw new CliError(`${session.display}: no entry with id ${targetId}`);
  const oldLeafId = tree.leafId ?? null;
  const instructions = opts.instructions === undefined ? undefined : String(opts.instructions);

  const out = await interruptible(
    summarize ? `summarizing the branch with the ${summarizer.kind} summarizer` : 'navigating',
    (signal) =>
      tree.navigateTree(targetId, {
        summarize,
        customInstructions: instructions,
        ...(summarize ? summarizer.model : {}),
        signal,
      }),
    timeoutOf(opts),
  );
  if (out.aborted) throw Object.assign(new Error('Branch summary aborted'), { code: 'E_ABORTED' });
  const summaryEntry = /** @type {any} */ (out.summaryEntry);
  const written = opts.write && summaryEntry ? persistEntry(session, summaryEntry) : null;
  const targetKind = targetEntry.type === 'message' ? `${targetEntry.message?.role ?? '?'} message` : targetEntry.type;
  const newLeafId = out.newLeafId ?? null;
  // The leaf the navigation chose (the summary entry, when there is one, is its child).
  const navigatedTo = summaryEntry ? (summaryEntry.parentId ?? null) : newLeafId;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      targetId,
      oldLeafId,
      navigatedTo,
      newLeafId,
      editorText: out.editorText ?? null,
      summarizer: summarize ? summarizer.json : null,
      summaryEntry: summaryEntry ?? null,
      written,
    });
    return EXIT_OK;
  }

  reportHeader('tree navigation', session, io);
  const leafNote =
    out.editorText !== undefined ? `the target's parent: a ${targetKind} goes back to the editor` : 'the target itself';
  io.out(
    table([
      ['target', `${targetId}  ${style.dim(targetKind)}`],
      ['old leaf', oldLeafId ?? '(none)'],
      ['new leaf', `${navigatedTo ?? '(none: before the first entry)'}  ${style.dim(`(${leafNote})`)}`],
      ...(summaryEntry
        ? [['then', `${summaryEntry.id}  ${style.dim('(the branch_summary entry under it is the leaf now)')}`]]
        : []),
    ]).join('\n'),
  );
  if (out.editorText !== undefined) {
    io.out('');
    io.out(style.bold('Editor text'));
    printText(io, out.editorText, preview);
  }
  io.out('');
  if (!summarize) {
    io.out(
      style.dim('  no branch summary (--summarize writes one); the leaf itself is not stored in the session file'),
    );
    return EXIT_OK;
  }
  if (!summaryEntry) {
    io.out(
      `  no branch summary: the branch being left has no entries to summarize${opts.write ? `; ${session.display} is unchanged` : ''}`,
    );
    return EXIT_OK;
  }
  io.out(style.bold('Branch summary entry'));
  const details = summaryEntry.details ?? {};
  io.out(
    table([
      ['id', summaryEntry.id],
      ['parent', `${summaryEntry.parentId ?? '(none: a new root)'}  ${style.dim('(the new leaf)')}`],
      ['fromId', `${summaryEntry.fromId}  ${style.dim('(the leaf navigated away from)')}`],
      ['summarizer', summarizer.label],
      ['files', `${num(details.readFiles?.length ?? 0)} read, ${num(details.modifiedFiles?.length ?? 0)} modified`],
    ]).join('\n'),
  );
  io.out('');
  printText(io, summaryEntry.summary, preview);
  io.out('');
  printWritten(io, session, written, 'branch_summary entry');
  return EXIT_OK;
}

// ── run ─────────────────────────────────────────────────────────────────────────────────────

// A closed pipe (`… | head`) is not an error.
process.stdout.on('error', (error) => {
  if (/** @type {any} */ (error).code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
process.exitCode = await main(process.argv.slice(2));
