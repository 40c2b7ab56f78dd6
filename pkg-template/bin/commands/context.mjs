// `context`: the messages the model sees (after convertToLlm).
import * as engine from '../../index.node.mjs';
import { DEFAULT_MAX_CHARS, intOption, printJson, reportHeader, warnLoadErrors } from '../report.mjs';
import { bytes, clip, EXIT_OK, num, oneLine, plural, table } from '../support.mjs';

/** @type {import('../report.mjs').Command} */
export const context = {
  summary: 'the messages the model sees (after convertToLlm)',
  usage: 'context [file] [--json] [--leaf id] [--max-chars n] [--first n] [--last n] [--full]',
  options: ['json', 'leaf', 'max-chars', 'first', 'last', 'full'],
  run: cmdContext,
};

/** @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts @param {import('../report.mjs').Io} io */
function cmdContext(session, opts, io) {
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
  // that is really the compaction summary); the concatenation is buildLlmMessages(): the
  // provider-valid messages (SPEC §13.1) converted.
  /** @type {{ origin: string, message: any }[]} */
  const shown = [];
  for (const message of JSON.parse(tree.buildSessionContextJson())) {
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
 * @param {import('../report.mjs').Io} io @param {number} n @param {string} origin @param {any} message
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
