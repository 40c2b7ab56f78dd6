// `prune [--write]`: old tool outputs that pruning would replace, and the tokens saved.
import * as engine from '../../index.node.mjs';
import { intOption, printJson, reportHeader, warnLoadErrors, warnTreeProblems } from '../report.mjs';
import { checkWritable } from '../summarizer.mjs';
import { CliError, EXIT_OK, num, plural, replaceLinesAtomic, table, writeFileAtomic } from '../support.mjs';

/** @type {import('../report.mjs').Command} */
export const prune = {
  summary: 'old tool outputs that pruning would replace, and the tokens saved',
  usage:
    'prune [file] [--write] [--json] [--leaf id] [--protect-tokens n] [--minimum-savings n] [--protected-tools a,b]',
  options: ['json', 'leaf', 'protect-tokens', 'minimum-savings', 'protected-tools', 'write'],
  notes: [
    'Without --write nothing is written. With --write only the lines of the pruned entries are',
    'rewritten (each keeps its line end); every other byte of the file stays as it is (a byte order',
    'mark, \\r\\n line ends, bytes that are not UTF-8). A file in an old format (v1, v2) is rewritten',
    'whole in format v3, and so is a file where a pruned entry shares its line with other records',
    '(glued records). The original is kept as <file>.bak.',
  ],
  optionHelp: { write: "apply the pruning: rewrite the pruned entries' lines atomically, keep <file>.bak" },
  run: cmdPrune,
};

/** @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts @param {import('../report.mjs').Io} io */
function cmdPrune(session, opts, io) {
  warnLoadErrors(session, io);
  const treeProblems = warnTreeProblems(session, io);
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
  const config = /** @type {Required<engine.PruneConfig>} */ ({
    ...engine.defaultPruneConfig(),
    ...given,
  });
  // The rules of every --write (summarizer.mjs): a current-format file keeps its malformed lines
  // (only the pruned lines are replaced), so only a file that must be migrated with them is refused.
  if (opts.write) checkWritable(session, 'prune');
  const nodes = tree.getTree();
  const plan = tree.planPrune(config);
  const wouldPrune = plan.candidates.length > 0;

  /** @type {null | { prunedCount: number, tokensSaved: number, backup: string, formatVersion: number | null }} */
  let written = null;
  if (opts.write && wouldPrune) {
    const result = tree.pruneToolOutputs(config);
    if (result.prunedCount > 0) {
      const backup = `${session.path}.bak`;
      const expect = { size: session.size, mtimeMs: session.mtimeMs };
      if (tree.migrated) {
        // An old format: the whole file is written in the current one.
        writeFileAtomic(session.path, tree.toBytes(), { backup, expect });
      } else {
        // Only the pruned entries' lines change: the engine's new text of each (`jsonl`, one
        // line per entry of `entryIndices`, in that order) at the line the entry was read from.
        const texts = result.jsonl.split('\n');
        /** @type {Map<number, string>} */
        const lines = new Map();
        Array.from(result.entryIndices).forEach((index, k) => {
          const line = nodes[index]?.line;
          if (!line)
            throw new CliError(`${session.display}: pruned entry ${index} has no line in the file`, 'E_INTERNAL');
          lines.set(line, texts[k]);
        });
        // A line of glued records (`{…}{…}`) is not one entry's: the file is then written whole.
        replaceLinesAtomic(session.path, lines, { backup, expect, whole: () => tree.toBytes() });
      }
      written = {
        prunedCount: result.prunedCount,
        tokensSaved: result.tokensSaved,
        backup,
        formatVersion: tree.sourceVersion ?? null,
      };
      io.wrote(prunedText(session, written));
    }
  }

  if (opts.json) {
    printJson(io, {
      file: session.path,
      treeProblems,
      sample: session.sample,
      leafId: tree.leafId ?? null,
      branchLength: tree.branchIndices().length,
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
      const line = c.entryIndex !== undefined ? nodes[c.entryIndex]?.line : undefined;
      rows.push([c.id ?? '-', num(line ?? 0), c.toolName ?? '?', num(c.tokens), num(c.savings)]);
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
    io.out(`  ${style.green('written:')} ${prunedText(session, written)}`);
    if (tree.migrated) {
      io.out(`  note: the file was in format v${written.formatVersion}; it is now written in format v3 (migrated)`);
    }
  } else if (opts.write) {
    io.out(`  ${session.display} is unchanged (nothing to prune)`);
  } else if (wouldPrune && !session.sample) {
    io.out(style.dim(`  run with --write to apply (the original is kept as ${session.display}.bak)`));
  }
  return EXIT_OK;
}

/**
 * What `prune --write` wrote, as the written line and a failed output name it.
 * @param {import('../report.mjs').Session} session
 * @param {{ prunedCount: number, tokensSaved: number, backup: string }} written
 */
function prunedText(session, written) {
  return (
    `${session.display}: ${plural(written.prunedCount, 'tool output')} pruned, ` +
    `${num(written.tokensSaved)} tokens saved; original kept as ${written.backup}`
  );
}
