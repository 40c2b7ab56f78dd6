// `compact [--write]`: summarize the history now: the compaction entry, the context before and after.
import { intOption, printJson, reportHeader, warnLoadErrors, warnTreeProblems } from '../report.mjs';
import {
  checkWritable,
  contextSize,
  interruptible,
  MODEL_OPTIONS,
  persistEntry,
  printText,
  printWritten,
  summarizerFrom,
  timeoutOf,
  writtenText,
} from '../summarizer.mjs';
import { EXIT_OK, num, table } from '../support.mjs';

/** @type {import('../report.mjs').Command} */
export const compact = {
  summary: 'summarize the history now: the compaction entry, the context before and after',
  usage:
    'compact [file] [--endpoint url | --openai base-url --model name] [--instructions text] [--timeout seconds] ' +
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
  optionHelp: { write: 'append the compaction entry to the file (in place, as pi appends), keep <file>.bak' },
  run: cmdCompact,
};

/** @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts @param {import('../report.mjs').Io} io */
async function cmdCompact(session, opts, io) {
  warnLoadErrors(session, io);
  const treeProblems = warnTreeProblems(session, io);
  const { tree } = session;
  const { style } = io;
  /** @type {Record<string, number>} */
  const settings = {};
  const keep = intOption(opts, 'keep-recent-tokens');
  const reserve = intOption(opts, 'reserve-tokens');
  if (keep !== undefined) settings.keepRecentTokens = keep;
  if (reserve !== undefined) settings.reserveTokens = reserve;
  const preview = intOption(opts, 'preview');
  const timeout = timeoutOf(opts);
  const summarizer = summarizerFrom(opts, io);
  if (opts.write) checkWritable(session, 'compact');

  const before = contextSize(tree);
  const leafBefore = tree.leafId ?? null;
  // What the engine would refuse ("Already compacted" / "Nothing to compact") is not an error here.
  const nothing = tree.nothingToCompact(settings);
  if (nothing) {
    const why = nothing.message;
    if (opts.json) {
      printJson(io, {
        file: session.path,
        treeProblems,
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
    timeout,
    summarizer,
  );
  const after = contextSize(tree);
  // Tokens on both sides are the engine's estimates of the built context (SPEC §13.5), the
  // figures its progress rule compares: the estimate before the run may rest on the provider's
  // last usage, which has no counterpart after it.
  before.tokens = done.result.contextTokensBefore ?? before.tokens;
  after.tokens = done.result.contextTokensAfter ?? after.tokens;
  const entry = /** @type {any} */ (done.compactionEntry);
  const written = opts.write ? persistEntry(session, entry) : null;
  if (written) io.wrote(writtenText(session, written, 'compaction entry'));

  if (opts.json) {
    printJson(io, {
      file: session.path,
      treeProblems,
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
