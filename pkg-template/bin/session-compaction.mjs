#!/usr/bin/env node
// session-compaction: runs the compaction engine on a pi session file (JSONL) and shows what it
// would do. Commands: plan, context, prune [--write], tree, validate, and the two that write
// summaries: compact [--write] and navigate [--summarize] [--write] (see `--help`). Each command
// is a module of commands/; report.mjs, summarizer.mjs and support.mjs hold what they share.
// Exit codes: 0 ok · 1 `validate` found errors · 2 bad usage, unreadable or unusable input ·
// 3 the summarizer (remote endpoint or model) failed · 130 interrupted before anything was written.
// Node >= 20, no dependencies beyond Node's built-ins and this package.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { redactText } from '../http.mjs';
import * as engine from '../index.node.mjs';
import { compact } from './commands/compact.mjs';
import { context } from './commands/context.mjs';
import { navigate } from './commands/navigate.mjs';
import { plan } from './commands/plan.mjs';
import { prune } from './commands/prune.mjs';
import { tree } from './commands/tree.mjs';
import { validate } from './commands/validate.mjs';
import { DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_CHARS, DEFAULT_MAX_ERRORS, NAME, openSession } from './report.mjs';
import { SUMMARIZER_CODES } from './summarizer.mjs';
import {
  CliError,
  colorEnabled,
  EXIT_INPUT,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_SUMMARIZER,
  makeStyle,
  num,
  SAMPLE_FILE,
  table,
} from './support.mjs';

// ── options and commands ────────────────────────────────────────────────────────────────────

/** Every option of every command (parseArgs specs + help). */
const OPTIONS = {
  json: {
    type: 'boolean',
    help: 'print JSON instead of the readable report (an error too: {"error":{"code","message","exitCode"}} on stdout)',
  },
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
  'max-errors': {
    type: 'string',
    arg: 'n',
    help: `list at most n unreadable lines or findings, then say how many more (default ${DEFAULT_MAX_ERRORS}; 0 = all)`,
  },
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
const COMMON = ['strict', 'progress', 'max-errors', 'help'];

/** The commands, in the order of `--help`. @type {Record<string, import('./report.mjs').Command>} */
const COMMANDS = { plan, context, prune, tree, validate, compact, navigate };

/**
 * @typedef {import('./report.mjs').Opts} Opts
 * @typedef {import('./report.mjs').Io} Io
 */

// ── main ────────────────────────────────────────────────────────────────────────────────────

/** @param {string[]} argv @returns {Promise<number>} the exit code */
async function main(argv) {
  const style = makeStyle(colorEnabled(process.stdout));
  const errStyle = makeStyle(colorEnabled(process.stderr));
  const json = wantsJson(argv);
  /** @type {string[]} */
  const lines = [];
  /** @type {Io} */
  const io = {
    out: (line = '') => lines.push(line),
    warn: (line) => process.stderr.write(`${errStyle.yellow('warning:')} ${line}\n`),
    style,
    errStyle,
    wrote: (what) => sessionWrites.push(what),
  };
  const flush = () => {
    if (lines.length) writeStdout(`${lines.join('\n')}\n`);
    lines.length = 0;
  };
  try {
    const code = await run(argv, io);
    flush();
    return code;
  } catch (error) {
    // With --json, stdout holds only the error object (no half report).
    if (json) lines.length = 0;
    else flush();
    const failure = describeFailure(error);
    if (json) {
      writeStdout(
        `${JSON.stringify({ error: { code: failure.code, message: failure.message, exitCode: failure.exitCode } })}\n`,
      );
    } else {
      process.stderr.write(`${errStyle.red(`${NAME}: ${failure.label}:`)} ${failure.text}\n`);
    }
    return failure.exitCode;
  }
}

/**
 * Whether the run asked for JSON (`--json` before a `--`): then an error too is printed as JSON,
 * even one found while the options are parsed.
 * @param {string[]} argv
 */
function wantsJson(argv) {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * A fatal error as it is printed: its engine code (every one has one), the message, the exit
 * code, and for the readable form the label and the text with ` (CODE)` on its first line.
 * @param {unknown} error
 * @returns {{ code: string, message: string, exitCode: number, label: string, text: string }}
 */
function describeFailure(error) {
  const withCode = (/** @type {string} */ message, /** @type {string} */ code) => {
    if (message.includes(`(${code})`)) return message;
    const cut = message.indexOf('\n');
    return cut < 0 ? `${message} (${code})` : `${message.slice(0, cut)} (${code})${message.slice(cut)}`;
  };
  // The JSON form's message without the ` (CODE)` the readable form shows: the code is a field.
  const bare = (/** @type {string} */ message, /** @type {string} */ code) => message.replace(` (${code})`, '');
  if (error instanceof CliError) {
    const code = String(error.code);
    return {
      code,
      message: bare(error.message, code),
      exitCode: error.exitCode,
      label: 'error',
      text: withCode(error.message, code),
    };
  }
  const code = /** @type {any} */ (error)?.code;
  const message = String(/** @type {any} */ (error)?.message ?? error);
  if (code === 'E_ABORTED') {
    const text = `${message}; nothing was written`;
    return { code, message: text, exitCode: EXIT_INTERRUPTED, label: 'interrupted', text: withCode(text, code) };
  }
  if (typeof code === 'string' && SUMMARIZER_CODES.has(code)) {
    // Outside `interruptible` (which names the endpoint): the message with every URL in it
    // redacted (the HTTP status and the reply's error text; never a key).
    const text = `the summarizer failed: ${redactText(message)} (${code}); nothing was written`;
    return { code, message: bare(text, code), exitCode: EXIT_SUMMARIZER, label: 'error', text: withCode(text, code) };
  }
  if (typeof code === 'string' && code.startsWith('E_') && code !== 'E_INTERNAL') {
    // The engine refused the input (its message names the entry or line).
    return { code, message, exitCode: EXIT_INPUT, label: 'error', text: withCode(message, code) };
  }
  const stack = String(/** @type {any} */ (error)?.stack ?? error);
  return {
    code: 'E_INTERNAL',
    message: `internal error${code ? ` (${code})` : ''}: ${message}`,
    exitCode: EXIT_INPUT,
    label: `internal error (${code ?? 'E_INTERNAL'})`,
    text: stack,
  };
}

/**
 * `--keep-recent-tokens -5` → `--keep-recent-tokens=-5`: a value that looks like a negative
 * number goes to the option before it (parseArgs would call it "ambiguous"), so that the option's
 * own check names it and says what is accepted.
 * @param {string[]} argv
 */
function joinNegativeValues(argv) {
  /** @type {string[]} */
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    const option = name === undefined ? undefined : /** @type {any} */ (OPTIONS)[name];
    if (option?.type === 'string' && i + 1 < argv.length && /^-[\d.]/.test(argv[i + 1])) {
      out.push(`${arg}=${argv[i + 1]}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** @param {string[]} argv @param {Io} io @returns {number | Promise<number>} */
function run(argv, io) {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv),
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
    const message = /** @type {Error} */ (error).message.replace(
      /\.?\s*To specify (an option|a positional) argument[\s\S]*$/,
      '.',
    );
    throw new CliError(`${message}\n${hint()}`);
  }
  const opts = /** @type {Opts} */ ({ ...parsed.values });
  const [command, ...rest] = parsed.positionals;

  if (opts.version) {
    io.out(`${NAME} ${engine.version()}`);
    return EXIT_OK;
  }
  if (command === undefined && !opts.help) {
    if (opts.json) throw new CliError(`no command given\n${hint()}`);
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
  /** @type {string | undefined} */
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
  const session = openSession(file, opts);
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
      '  Without a file, the sample session of a repository checkout is used.',
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
    ...(existsSync(SAMPLE_FILE)
      ? ['Without a file, a real pi session of this repository checkout is used:', `  ${SAMPLE_FILE}`]
      : [
          'Without a file, a repository checkout uses its sample session; this installation has none:',
          '  pass a session file.',
        ]),
    '',
    'Common options:',
    ...optionLines([...COMMON, 'version']),
    '',
    `Run \`${NAME} <command> --help\` for the options of a command.`,
    'Exit codes: 0 ok, 1 validate found errors, 2 bad usage or unreadable input,',
    '3 the summarizer (endpoint or model) failed, 130 interrupted (nothing written).',
    'Every error names its code (E_INVALID_ARGUMENT, E_FILE, E_PARSE, E_MODEL, …); with --json it is',
    'printed on stdout as one JSON object, {"error":{"code":"E_…","message":"…","exitCode":2}}.',
  ].join('\n');
}

// ── run ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Writes to stdout; a failed write ends the run through {@link stdoutFailed}.
 * @param {string} text
 */
function writeStdout(text) {
  try {
    process.stdout.write(text);
  } catch (error) {
    stdoutFailed(error);
  }
}

/**
 * What this run's --write wrote to the session file (`Io.wrote`), in order: a failed output
 * says it, so that nobody runs the command again and writes a second entry.
 * @type {string[]}
 */
const sessionWrites = [];

/**
 * A failed write to stdout: a closed pipe (`… | head`) is not an error (exit quietly); anything
 * else (a full disk, `> /dev/full`, a closed descriptor) is one line on stderr and exit 2. When
 * the session file was written before, the line says so and names it (the file stays written).
 * @param {unknown} error
 * @returns {never}
 */
function stdoutFailed(error) {
  const code = /** @type {any} */ (error)?.code;
  if (code === 'EPIPE') process.exit(process.exitCode ?? 0);
  const why =
    code === 'ENOSPC'
      ? 'no space left on the device'
      : code === 'EBADF'
        ? 'it is closed'
        : String(/** @type {any} */ (error)?.message ?? error);
  const written = sessionWrites.length
    ? `; the session file was written all the same: ${sessionWrites.join('; ')} (running the command again would write it again)`
    : '';
  try {
    process.stderr.write(
      `${NAME}: error: cannot write the output to stdout: ${why}${code ? ` (${code})` : ''} (E_FILE)${written}\n`,
    );
  } catch {
    // stderr is gone too: the exit code says it
  }
  process.exit(EXIT_INPUT);
}

process.stdout.on('error', stdoutFailed);
process.exitCode = await main(process.argv.slice(2));
