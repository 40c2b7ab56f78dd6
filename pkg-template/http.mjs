// Shared by the provider adapters (openai.mjs, anthropic.mjs, ai-sdk.mjs); not an export of the
// package. One POST-JSON-over-fetch with the errors the engine's retries read (`status`,
// `headers`), secrets and URL credentials redacted from every message; and pi message entries.

/**
 * The URL without credentials: `user:password@` and the values of query parameters that carry
 * a secret (`key`, `api_key`, `token`, `sig`, `auth`… any name containing them) become `[redacted]`.
 * @param {string} url
 * @returns {string}
 */
export function redactUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return String(url).replace(/\/\/[^/@\s]*@/, '//[redacted]@');
  }
  if (parsed.username || parsed.password) {
    parsed.username = '[redacted]';
    parsed.password = '';
  }
  for (const name of [...parsed.searchParams.keys()]) {
    if (/key|token|secret|sig|auth|password|credential/i.test(name)) parsed.searchParams.set(name, '[redacted]');
  }
  return parsed.toString().replace(/%5Bredacted%5D/gi, '[redacted]');
}

/**
 * `text` with every URL in it passed through {@link redactUrl} and every secret removed: each
 * string of `secrets` (an API key, …; shorter than 4 characters is ignored) and, for each URL
 * among them, the credentials written into it (user, password, secret query values) become
 * `[redacted]`. For error messages that may quote a request (a `fetch` failure quotes its URL,
 * some servers quote the header they refused).
 * @param {unknown} text
 * @param {(string | undefined)[]} [secrets]
 * @returns {string}
 */
export function redactText(text, secrets = []) {
  const hidden = secrets.flatMap((s) =>
    typeof s === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? urlSecrets(s) : [s],
  );
  let out = String(text).replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (found) => {
    // Punctuation right after a URL ends the sentence, not the URL.
    const tail = /[.,;:!?)]+$/.exec(found)?.[0] ?? '';
    return redactUrl(found.slice(0, found.length - tail.length)) + tail;
  });
  for (const s of hidden) {
    if (typeof s === 'string' && s.length >= 4) out = out.split(s).join('[redacted]');
  }
  return out;
}

/**
 * Refuses an options object with a key not in `known`: throws a `SessionCompactionError` with
 * code `E_INVALID_ARGUMENT` naming the key and the function (`what`), so that a misspelt option
 * is never silently ignored. `undefined` / `null` pass (no options).
 * @param {unknown} options
 * @param {readonly string[]} known
 * @param {string} what
 */
export function knownOptions(options, known, what) {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object') throw invalidArgument(`${what}: expected an options object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw invalidArgument(
        `${what}: unknown option \`${key}\` (expected one of ${known.map((k) => `\`${k}\``).join(', ')})`,
      );
    }
  }
}

/** @param {string} message */
function invalidArgument(message) {
  const error = new TypeError(message);
  error.name = 'SessionCompactionError';
  return Object.assign(error, { code: 'E_INVALID_ARGUMENT' });
}

/**
 * `base` with `path` appended to its path (trailing slashes of the base dropped), its query kept:
 * `joinUrl("https://h/v1/?k=1", "messages")` is `"https://h/v1/messages?k=1"`.
 * @param {string} base
 * @param {string} path
 * @returns {string}
 */
export function joinUrl(base, path) {
  const at = base.search(/[?#]/);
  const [head, tail] = at < 0 ? [base, ''] : [base.slice(0, at), base.slice(at)];
  return `${head.replace(/\/+$/, '')}/${path}${tail}`;
}

/**
 * `POST url` with a JSON body; resolves to the parsed JSON reply.
 *
 * Rejects with an `Error` whose message names the URL without credentials and never contains
 * one of `secrets`: a non-2xx reply carries `status` and `headers` (the response's `Headers`, so
 * the engine's retries see 429/5xx and honour `retry-after`); a network failure reads
 * "fetch failed: cannot reach …" (retried as transient); an abort of `signal` rejects with the
 * `AbortError` of `fetch`.
 * @param {{ url: string, headers: Record<string, string>, body: unknown, signal?: AbortSignal,
 *   fetch?: typeof globalThis.fetch, secrets?: (string | undefined)[] }} options
 * @returns {Promise<any>}
 */
export async function postJson({ url, headers, body, signal, fetch: fetchImpl = globalThis.fetch, secrets = [] }) {
  const shown = redactUrl(url);
  /** Removes every secret from a text that may echo it (some servers quote the header they refused). */
  const redact = (/** @type {unknown} */ text) => redactText(text, [...secrets, url]);
  /** @type {Response} */
  let response;
  /** @type {string} */
  let text;
  try {
    response = await fetchImpl(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
    });
    text = await response.text();
  } catch (error) {
    if (/** @type {any} */ (error)?.name === 'AbortError') throw error;
    const cause = /** @type {any} */ (error)?.cause;
    const why = cause?.code ?? cause?.message ?? /** @type {any} */ (error)?.message ?? String(error);
    throw new Error(redact(`fetch failed: cannot reach ${shown}: ${why}`));
  }
  if (!response.ok) {
    const detail = errorDetail(text);
    const error = /** @type {Error & { status?: number, headers?: Headers }} */ (
      new Error(
        redact(
          `${shown} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${detail ? `: ${detail}` : ''}`,
        ),
      )
    );
    error.status = response.status;
    error.headers = response.headers;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${shown}: the reply is not JSON: ${redact(oneLine(text, 120))}`);
  }
}

/** The credentials written into a URL (user, password, secret query values), to keep out of messages. */
function urlSecrets(/** @type {string} */ url) {
  try {
    const parsed = new URL(url);
    const out = [decodeURIComponent(parsed.username), decodeURIComponent(parsed.password)];
    for (const [name, value] of parsed.searchParams) {
      if (/key|token|secret|sig|auth|password|credential/i.test(name)) out.push(value);
    }
    return out;
  } catch {
    return [];
  }
}

/** The error text of an API reply body: `error.message` of a JSON body, else the start of the text. */
function errorDetail(/** @type {string} */ text) {
  try {
    const body = JSON.parse(text);
    const message = body?.error?.message ?? body?.message ?? body?.error;
    if (typeof message === 'string') return oneLine(message, 300);
  } catch {
    // not JSON
  }
  return oneLine(text, 300);
}

/**
 * One line of at most `max` characters: whitespace runs collapsed, `…` when cut.
 * @param {unknown} text
 * @param {number} max
 */
export function oneLine(text, max) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let cut = flat.slice(0, Math.max(1, max - 1));
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/**
 * A pi assistant message: `content` blocks with the fields every assistant message has
 * (`provider`, `model`, `stopReason`: `"toolUse"` when it calls a tool, else `"stop"`, unless
 * given; `api` and `usage` when given).
 * @param {any[]} content
 * @param {{ api?: string, provider?: string, model?: string, stopReason?: string, usage?: any, now: number }} meta
 * @returns {any}
 */
export function assistantMessage(content, { api, provider = '', model = '', stopReason, usage, now }) {
  /** @type {any} */
  const message = { role: 'assistant', content, provider, model, stopReason: stopReason ?? '', timestamp: now };
  if (api !== undefined) message.api = api;
  if (usage !== undefined) message.usage = usage;
  if (!stopReason) finishAssistant(message);
  return message;
}

/**
 * A pi tool result message: the answer to the tool call `toolCallId` (of tool `toolName`, "" when
 * unknown), with its `content` blocks.
 * @param {string} toolCallId
 * @param {string} toolName
 * @param {any[]} content
 * @param {boolean} isError
 * @param {number} now
 * @returns {any}
 */
export function toolResultMessage(toolCallId, toolName, content, isError, now) {
  return { role: 'toolResult', toolCallId, toolName, content, isError, timestamp: now };
}

/**
 * Sets `stopReason` from the content (`"toolUse"` when it calls a tool, else `"stop"`), for an
 * assistant message whose blocks were added after it was made.
 * @param {any} message
 */
export function finishAssistant(message) {
  message.stopReason = message.content.some((/** @type {any} */ b) => b.type === 'toolCall') ? 'toolUse' : 'stop';
}

/**
 * The text of a pi content value (a string or blocks): its text blocks joined with "\n".
 * @param {unknown} content
 * @returns {string}
 */
export function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

/**
 * The blocks of a pi content value: a string becomes one text block; other values no blocks.
 * @param {unknown} content
 * @returns {any[]}
 */
export function blocksOf(content) {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter((b) => b && typeof b === 'object') : [];
}

/**
 * Tool call ids a provider accepts, for one request: a function from the id a call (and its
 * result) has in the engine's LLM messages to the id sent. The provider's rule: at most `max`
 * UTF-16 units, and with `plain` only `a-z A-Z 0-9 _ -` (Anthropic's pattern). An id that keeps
 * the rule is sent as it is; another one gets `_` for each character `plain` refuses and is cut
 * to `max` (never half a surrogate pair), then, if that is taken by another id of `messages` (a
 * call's `id` or a result's `toolCallId`) or by an earlier one, `_2`, `_3`, … at its end until it
 * is free. Calls and results map the same id to the same id, so they still pair.
 * @param {any[]} messages the engine's LLM messages
 * @param {{ max?: number, plain?: boolean }} rule
 * @returns {(id: string) => string}
 */
export function toolIdMap(messages, { max = Infinity, plain = false }) {
  const valid = (/** @type {string} */ id) => id.length <= max && (!plain || /^[a-zA-Z0-9_-]+$/.test(id));
  const fix = (/** @type {string} */ id, n = 1) => {
    const suffix = n > 1 ? `_${n}` : '';
    const head = (plain ? id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'call' : id).slice(0, max - suffix.length);
    return `${/[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head}${suffix}`;
  };
  /** @type {Set<string>} */
  const taken = new Set();
  for (const m of Array.isArray(messages) ? messages : []) {
    if (m?.role === 'toolResult') taken.add(String(m.toolCallId));
    else if (m?.role === 'assistant') {
      for (const b of blocksOf(m.content)) if (b.type === 'toolCall') taken.add(String(b.id));
    }
  }
  /** @type {Map<string, string>} */
  const fixed = new Map();
  return (id) => {
    if (valid(id)) return id;
    let sent = fixed.get(id);
    if (sent === undefined) {
      sent = fix(id);
      for (let n = 2; taken.has(sent) || !valid(sent); n++) sent = fix(id, n);
      taken.add(sent);
      fixed.set(id, sent);
    }
    return sent;
  };
}

/**
 * The messages of `messages` a model is sent again: an assistant message that failed or was
 * aborted (`stopReason` `"error"` / `"aborted"`: a turn cut off, with partial text, thinking or
 * calls, that the next message retries) is left out, with the tool results that answer its
 * calls, as pi does before any provider. Replayed, it is refused or misread: Anthropic merges it
 * with the retry, whose thinking then no longer begins the turn; OpenAI's Responses API refuses
 * reasoning without the item it led to.
 * The results left out are those after the message and before the next assistant message (a
 * later turn may use the same call id). `what` names the caller in the `TypeError` of an argument
 * that is no array.
 * @param {any[]} messages the engine's LLM messages
 * @param {string} what
 * @returns {any[]}
 */
export function replayedMessages(messages, what) {
  if (!Array.isArray(messages)) throw new TypeError(`${what}: messages must be an array of LLM messages`);
  /** The calls of the assistant message left out last, until the next assistant message. */
  let dropped = new Set();
  const out = [];
  for (const m of messages) {
    if (m?.role === 'assistant') {
      dropped = new Set();
      if (m.stopReason === 'error' || m.stopReason === 'aborted') {
        for (const b of blocksOf(m.content)) if (b.type === 'toolCall') dropped.add(String(b.id));
        continue;
      }
    } else if (m?.role === 'toolResult' && dropped.has(String(m.toolCallId))) {
      continue;
    }
    out.push(m);
  }
  return out;
}

/**
 * The text of the user message an adapter puts first when a context would start with the
 * assistant (a session whose first user text was blank, or one that began with a reply): the
 * Messages API refuses a conversation that does not begin with a user turn. The Anthropic
 * adapters also put it between two assistant messages when the second begins with thinking
 * Anthropic signed (merged, its thinking would no longer begin the turn, which the API requires
 * of a tool loop's turn with thinking on).
 */
export const LEADING_USER_TEXT = '(continued)';

/**
 * Whether `text` is no text a provider takes: not a string, empty or only white space (Anthropic
 * refuses such a text block, and a failed tool result or user message of nothing else).
 * @param {unknown} text
 */
export const isBlank = (text) => typeof text !== 'string' || text.trim() === '';

/**
 * The text of a failed tool result that has no text of its own (its output was empty, blank or
 * only images): Anthropic refuses an error result whose content is empty or holds anything but
 * text.
 */
export const EMPTY_ERROR_TEXT = '(the tool failed without output)';

/**
 * What an Anthropic model can be sent back of a pi `thinking` block of assistant message
 * `message`: `{signature, thinking}` for signed thinking, `{redactedData}` for a redacted block
 * (pi keeps its encrypted payload in `thinkingSignature`), or `undefined` when it cannot be sent
 * (no signature, or a signature another API made: the Messages API refuses a thinking block
 * without a valid signature). A signature counts as Anthropic's when the message's `api` is
 * `anthropic-messages` or the message names no `api` (a host's own message).
 * @param {any} message
 * @param {any} block
 * @returns {{ signature: string, thinking: string } | { redactedData: string } | undefined}
 */
export function anthropicThinking(message, block) {
  const signature = block?.thinkingSignature;
  if (typeof signature !== 'string' || !signature) return undefined;
  if (message?.api !== undefined && message.api !== 'anthropic-messages') return undefined;
  if (block.redacted === true) return { redactedData: signature };
  return { signature, thinking: String(block.thinking ?? '') };
}

/**
 * A tool call's arguments as the JSON object providers take for its input: a plain object as it
 * is, a string that is the JSON text of one as that object, anything else (another string, an
 * array, null) as `{}` (Anthropic refuses any other input).
 * @param {unknown} args
 * @returns {Record<string, unknown>}
 */
export function callInput(args) {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value)
    ? /** @type {Record<string, unknown>} */ (value)
    : {};
}
