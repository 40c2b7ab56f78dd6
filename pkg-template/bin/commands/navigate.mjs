// `navigate <targetId>`: move the leaf to an entry, optionally summarizing the branch being left.
import { intOption, printJson, reportHeader, warnLoadErrors, warnTreeProblems } from '../report.mjs';
import {
  checkWritable,
  interruptible,
  MODEL_OPTIONS,
  persistEntry,
  printText,
  printWritten,
  summarizerFrom,
  timeoutOf,
  writtenText,
} from '../summarizer.mjs';
import { CliError, EXIT_OK, num, table } from '../support.mjs';

/** @type {import('../report.mjs').Command} */
export const navigate = {
  summary: 'move the leaf to an entry, optionally summarizing the branch being left',
  usage:
    'navigate [file] <targetId> [--summarize] [--endpoint url | --openai base-url --model name] ' +
    '[--instructions text] [--timeout seconds] [--write] [--json] [--leaf id] [--preview n]',
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
  optionHelp: { write: 'append the branch_summary entry to the file (in place, as pi appends), keep <file>.bak' },
  run: cmdNavigate,
};

/**
 * @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts
 * @param {import('../report.mjs').Io} io @param {string | undefined} target
 */
async function cmdNavigate(session, opts, io, target) {
  warnLoadErrors(session, io);
  const treeProblems = warnTreeProblems(session, io);
  const { tree } = session;
  const { style } = io;
  const targetId = String(target);
  const preview = intOption(opts, 'preview');
  const timeout = timeoutOf(opts);
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
  if (!targetEntry) throw new CliError(`${session.display}: no entry with id ${targetId}`, 'E_NOT_FOUND');
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
    timeout,
    summarizer,
  );
  if (out.aborted) throw Object.assign(new Error('Branch summary aborted'), { code: 'E_ABORTED' });
  const summaryEntry = /** @type {any} */ (out.summaryEntry);
  const written = opts.write && summaryEntry ? persistEntry(session, summaryEntry) : null;
  if (written) io.wrote(writtenText(session, written, 'branch_summary entry'));
  const targetKind = targetEntry.type === 'message' ? `${targetEntry.message?.role ?? '?'} message` : targetEntry.type;
  const newLeafId = out.newLeafId ?? null;
  // The leaf the navigation chose (the summary entry, when there is one, is its child).
  const navigatedTo = summaryEntry ? (summaryEntry.parentId ?? null) : newLeafId;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      treeProblems,
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
