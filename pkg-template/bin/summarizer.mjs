// Shared parts of `compact` and `navigate`: the summarizer chosen by the options (extractive,
// --endpoint, --openai), running it interruptibly with a timeout, and writing the new entry.

import { redactText, redactUrl } from '../http.mjs';
import * as engine from '../index.node.mjs';
import { openaiComplete } from '../openai.mjs';
import { byCode, lineMessage } from './report.mjs';
import { appendLine, assertWritable, CliError, clip, EXIT_SUMMARIZER, plural, writeFileAtomic } from './support.mjs';

/** Options choosing and steering the summarizer (compact, navigate). */
export const MODEL_OPTIONS = ['endpoint', 'openai', 'model', 'instructions', 'timeout'];

/** Error codes of a failed summarizer (exit code 3). */
export const SUMMARIZER_CODES = new Set(['E_MODEL', 'E_REMOTE', 'E_SUMMARIZATION']);

/**
 * @typedef {{ kind: 'extractive' | 'endpoint' | 'openai', label: string, json: Record<string, string>,
 *   model: { complete: (request: any) => Promise<string> } | { remoteEndpoint: string },
 *   url?: string, secrets: (string | undefined)[] }} Summarizer
 *   `url`: the endpoint as shown (credentials redacted); `secrets`: what no message may contain
 *   (the API key, the URL given, whose credentials are redacted from messages).
 * @typedef {import('./report.mjs').Session} Session
 * @typedef {import('./report.mjs').Opts} Opts
 * @typedef {import('./report.mjs').Io} Io
 */

/** The summarizer chosen by --endpoint / --openai --model (default: extractive). @returns {Summarizer} */
export function summarizerFrom(/** @type {Opts} */ opts, /** @type {Io} */ io) {
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
    installFetchCauses();
    return {
      kind: 'endpoint',
      label: `remote endpoint ${displayUrl(url)}`,
      json: { kind: 'endpoint', endpoint: displayUrl(url) },
      model: { remoteEndpoint: endpoint },
      url: displayUrl(url),
      secrets: [endpoint],
    };
  }
  if (base !== undefined) {
    if (model === undefined || model.trim() === '')
      throw new CliError('--openai needs --model <name> (the model of that API)');
    const url = httpUrl(base, 'openai');
    // Unset: an error that says what to do. Set to '' (`OPENAI_API_KEY= …`): no key on purpose
    // (a local server that needs none), the requests carry no Authorization header.
    if (process.env.OPENAI_API_KEY === undefined) {
      throw new CliError(
        '--openai needs an API key in the environment variable OPENAI_API_KEY, which is not set: ' +
          'export OPENAI_API_KEY=<key> (for a local server that needs no key, set it empty: OPENAI_API_KEY=); ' +
          'or leave out --openai and --model to use the extractive summarizer (no model, no API key)',
      );
    }
    const apiKey = process.env.OPENAI_API_KEY || undefined;
    if (!apiKey) io.warn('OPENAI_API_KEY is empty: the requests carry no Authorization header');
    return {
      kind: 'openai',
      label: `${model} through the OpenAI-compatible API at ${displayUrl(url)}`,
      json: { kind: 'openai', baseUrl: displayUrl(url), model },
      model: { complete: openaiComplete({ baseUrl: base, model, apiKey }) },
      url: displayUrl(url),
      secrets: [apiKey, base],
    };
  }
  return {
    kind: 'extractive',
    label: 'extractive: quotes the conversation, no model is called (--endpoint or --openai use one)',
    json: { kind: 'extractive' },
    model: { complete: engine.extractiveSummarizer },
    secrets: [],
  };
}

/**
 * The failure of a summarizer as the user reads it: the cause, the endpoint's URL (credentials
 * redacted), the code; the API key, URL credentials and secret query values never appear.
 * @param {Summarizer} summarizer
 * @param {any} error an engine error with a code of {@link SUMMARIZER_CODES}
 * @returns {CliError} exit code 3
 */
export function summarizerFailure(summarizer, error) {
  const cause = redactText(error?.message ?? error, summarizer.secrets);
  const where = summarizer.url && !cause.includes(summarizer.url) ? ` — ${summarizer.kind} ${summarizer.url}` : '';
  return new CliError(
    `the summarizer failed: ${cause}${where} (${error.code}); nothing was written`,
    error.code,
    EXIT_SUMMARIZER,
  );
}

let fetchCausesInstalled = false;

/**
 * Makes a network failure of `fetch` name its cause. Node's fetch rejects with a TypeError
 * "fetch failed" whose `cause` holds the reason (ECONNREFUSED, ENOTFOUND, …); the engine's remote
 * summarizer (--endpoint) only passes the message on, so this CLI process wraps its global
 * `fetch` to add the cause to the message. Aborts and replies are untouched.
 */
function installFetchCauses() {
  if (fetchCausesInstalled || typeof globalThis.fetch !== 'function') return;
  fetchCausesInstalled = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (...args) => {
    try {
      return await original(...args);
    } catch (error) {
      const cause = /** @type {any} */ (error)?.cause;
      if (/** @type {any} */ (error)?.name === 'AbortError' || !cause) throw error;
      const why = [cause.code, cause.message].filter(Boolean).join(': ');
      throw new TypeError(`${/** @type {Error} */ (error).message}: ${why}`, { cause });
    }
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
    throw new CliError(`--${option}: expected an http:// or https:// URL, got "${redactUrl(text)}"`);
  }
  if (url.username || url.password) {
    throw new CliError(
      `--${option}: the URL carries credentials (user:password@), which fetch refuses to send: ` +
        `remove them${option === 'openai' ? ' (the API key comes from $OPENAI_API_KEY)' : ''}: ${displayUrl(url)}`,
    );
  }
  return url;
}

/** A URL for display: user, password and secret query values (`key=`, `token=`, …) redacted. */
function displayUrl(/** @type {URL} */ url) {
  return redactUrl(url.href);
}

/**
 * Runs `work` with an AbortSignal that the first Ctrl-C aborts (the engine then rejects with
 * E_ABORTED and appends nothing); a second Ctrl-C ends the process at once. On a terminal, a
 * status line on stderr says what is running. A summarizer failure (E_MODEL, E_REMOTE,
 * E_SUMMARIZATION) becomes {@link summarizerFailure} of `summarizer`: the cause and the endpoint,
 * credentials redacted (exit code 3).
 * @template T
 * @param {string} status @param {(signal: AbortSignal) => Promise<T>} work
 * @param {Summarizer} [summarizer]
 * @returns {Promise<T>}
 */
export async function interruptible(status, work, timeoutSeconds = 600, summarizer = undefined) {
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
        `the summarizer did not answer within ${timeoutSeconds} s (--timeout)${summarizer?.url ? ` — ${summarizer.kind} ${summarizer.url}` : ''}: nothing written`,
        summarizer?.kind === 'endpoint' ? 'E_REMOTE' : 'E_MODEL',
        EXIT_SUMMARIZER,
      );
    }
    const code = /** @type {any} */ (error)?.code;
    if (summarizer && typeof code === 'string' && SUMMARIZER_CODES.has(code))
      throw summarizerFailure(summarizer, error);
    throw error;
  } finally {
    clearTimeout(timer);
    process.removeListener('SIGINT', onSigint);
    if (tty) process.stderr.write('\r\u001b[K');
  }
}

/** The longest `--timeout`, s: `setTimeout` fires at once above 2^31 − 1 ms (about 24.8 days). */
const MAX_TIMEOUT_SECONDS = 2_147_483;

/** `--timeout` in seconds (default 600; 0 = never; at most {@link MAX_TIMEOUT_SECONDS}). */
export function timeoutOf(/** @type {Opts} */ values) {
  if (values.timeout === undefined) return 600;
  const n = Number(values.timeout);
  if (String(values.timeout).trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new CliError(
      `--timeout ${JSON.stringify(String(values.timeout))} is not accepted: expected a number of seconds >= 0 (0 = never)`,
    );
  }
  if (n > MAX_TIMEOUT_SECONDS) {
    throw new CliError(
      `--timeout ${JSON.stringify(String(values.timeout))} is not accepted: at most ${MAX_TIMEOUT_SECONDS} seconds (about 24.8 days; 0 = never)`,
    );
  }
  return n;
}

/**
 * Refuses --write where it cannot work, before any model call: the bundled sample, a file whose
 * rewrite would lose malformed lines (a file the engine migrated from an old format must be
 * rewritten), and a file or folder that cannot be written (the error the write would end with).
 */
export function checkWritable(/** @type {Session} */ session, /** @type {string} */ command) {
  if (session.sample)
    throw new CliError(`${command} --write needs a file: it does not modify the bundled sample session`);
  if (session.tree.migrated && session.loadErrors.length) {
    throw new CliError(
      `${session.display}: refusing to rewrite a file in format v${session.tree.sourceVersion} with ` +
        `${plural(session.loadErrors.length, 'load error')} (${byCode(session.loadErrors)}; first: ${lineMessage(session.loadErrors[0])}); ` +
        'they would be lost. The file is unchanged.',
      'E_PARSE',
    );
  }
  assertWritable(session.path, `${session.path}.bak`);
}

/**
 * Writes `entry` (already appended in the handle) to the file: appended as one JSONL line to
 * the original bytes (current format), or the whole session rewritten in the current format
 * (a file the engine migrated on load, atomically); the original kept as <file>.bak. Lines
 * another process appends meanwhile are kept either way (see appendLine, writeFileAtomic).
 * @returns {{ backup: string, entryId: string, mode: 'appended' | 'rewritten', formatVersion: number | null }}
 */
export function persistEntry(/** @type {Session} */ session, /** @type {any} */ entry) {
  const backup = `${session.path}.bak`;
  const expect = { size: session.size, mtimeMs: session.mtimeMs };
  const formatVersion = session.tree.sourceVersion ?? null;
  if (session.tree.migrated) {
    writeFileAtomic(session.path, session.tree.toBytes(), { backup, expect });
    return { backup, entryId: entry.id, mode: 'rewritten', formatVersion };
  }
  appendLine(session.path, JSON.stringify(entry), { backup, expect });
  return { backup, entryId: entry.id, mode: 'appended', formatVersion };
}

/** The messages the model sees and their estimated tokens. */
export function contextSize(/** @type {engine.SessionTree} */ tree) {
  return { messages: tree.buildLlmMessages().length, tokens: tree.estimateContextTokens() };
}

/** Prints a summary text indented, the whole of it or its first `preview` characters. */
export function printText(/** @type {Io} */ io, /** @type {string} */ text, /** @type {number | undefined} */ preview) {
  const c = clip(text, { maxChars: preview ?? 0 });
  for (const line of c.text.split('\n')) io.out(`  ${line}`.trimEnd());
  if (c.cutChars > 0) {
    io.out(io.style.dim(`  … ${plural(c.cutChars, 'more character')} not shown (--preview ${preview ?? 0})`));
  }
}

/**
 * What a {@link persistEntry} wrote, as the written line and a failed output name it:
 * `s.jsonl: compaction entry 1a2b appended; original kept as s.jsonl.bak`.
 */
export function writtenText(
  /** @type {Session} */ session,
  /** @type {ReturnType<typeof persistEntry>} */ written,
  /** @type {string} */ what,
) {
  return (
    `${session.display}: ${what} ${written.entryId} ` +
    `${written.mode === 'appended' ? 'appended' : 'added'}; original kept as ${written.backup}`
  );
}

/** The written / not written line after a --write command. */
export function printWritten(
  /** @type {Io} */ io,
  /** @type {Session} */ session,
  /** @type {ReturnType<typeof persistEntry> | null} */ written,
  /** @type {string} */ what,
) {
  const { style } = io;
  if (written) {
    io.out(`  ${style.green('written:')} ${writtenText(session, written, what)}`);
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
