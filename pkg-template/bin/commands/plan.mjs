// `plan`: what a compaction would summarize and keep (cut point, tokens, files).
import * as engine from '../../index.node.mjs';
import {
  branchNodes,
  DEFAULT_CONTEXT_WINDOW,
  entryRef,
  intOption,
  kindOf,
  printJson,
  reportHeader,
  sumTokens,
  warnLoadErrors,
  warnTreeProblems,
} from '../report.mjs';
import { EXIT_OK, num, plural, table } from '../support.mjs';

/** @type {import('../report.mjs').Command} */
export const plan = {
  summary: 'what a compaction would summarize and keep (cut point, tokens, files)',
  usage: 'plan [file] [--json] [--leaf id] [--keep-recent-tokens n] [--reserve-tokens n] [--context-window n]',
  options: ['json', 'leaf', 'keep-recent-tokens', 'reserve-tokens', 'context-window'],
  run: cmdPlan,
};

/** @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts @param {import('../report.mjs').Io} io */
function cmdPlan(session, opts, io) {
  warnLoadErrors(session, io);
  const treeProblems = warnTreeProblems(session, io);
  const { tree } = session;
  const { style } = io;
  /** @type {Record<string, number>} */
  const given = {};
  const keep = intOption(opts, 'keep-recent-tokens');
  const reserve = intOption(opts, 'reserve-tokens');
  if (keep !== undefined) given.keepRecentTokens = keep;
  if (reserve !== undefined) given.reserveTokens = reserve;
  const settings = /** @type {engine.DefaultCompactionSettings} */ ({
    ...engine.defaultCompactionSettings(),
    ...given,
  });
  const contextWindow = intOption(opts, 'context-window', 1) ?? DEFAULT_CONTEXT_WINDOW;

  const nodes = tree.getTree();
  const path = branchNodes(tree, nodes);
  const plan = tree.planCompaction(settings);
  const prep = tree.prepareCompaction(settings);
  const contextTokens = tree.estimateContextTokens();
  const threshold = engine.compactionThreshold(contextWindow, settings);
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
  const files = prep ? engine.computeFileLists(prep.fileOps) : { readFiles: [], modifiedFiles: [] };
  const why = tree.nothingToCompact(settings)?.message ?? null;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      treeProblems,
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
      previousCompaction:
        plan && prevNode ? { entryId: prevNode.id, index: plan.prevCompactionIndex, line: prevNode.line } : null,
      counts: groups,
      readFiles: files.readFiles,
      modifiedFiles: files.modifiedFiles,
      nothingToCompact: why,
      preview: plan?.preview ?? null,
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

  if (!plan || !cut) {
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

  const preview = plan.preview;
  if (preview?.compaction) {
    // The engine's figures (SPEC §9 budgets): the summary at its maxTokens, the prune first as
    // automatic compaction does it.
    const c = preview.compaction;
    const w = preview.withPrune;
    const below = (/** @type {number} */ n) => (n > threshold ? style.yellow('above') : style.green('below'));
    // Both ends are chars/4 estimates of the built context (SPEC §13.7), not the usage-based
    // `context tokens` of the Session section: say so, or the two "before" figures look contradictory.
    section('Outcome (estimated: characters / 4 of the built context, not the provider usage above)');
    io.out(
      table(
        [
          [
            'after compaction',
            `${num(c.contextTokensBefore)} → ${num(c.contextTokensAfter)} tokens`,
            `${below(c.contextTokensAfter)} the threshold; summary budgeted at ${num(c.summaryTokens)} (its maxTokens) for ${num(c.summarizedTokens)} summarized, ${num(c.keptTokens)} kept`,
          ],
          [
            'prune, then compact',
            `${num(c.contextTokensBefore)} → ${num(w.contextTokensAfterPrune)} → ${num(w.contextTokensAfter)} tokens`,
            `${plural(w.prunedCount, 'tool output')} pruned (${num(w.pruneTokensSaved)} tokens; the prune alone leaves ${below(w.contextTokensAfterPrune)} the threshold)`,
          ],
        ],
        { align: 'lll' },
      ).join('\n'),
    );
  }

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

/**
 * The usage numbers of the assistant message at `node`; its context tokens are the engine's
 * `calculateContextTokens` (SPEC §5).
 * @param {engine.SessionTree} tree @param {engine.TreeNode | undefined} node @param {number} index
 */
function usageOf(tree, node, index) {
  const entry = node?.id ? /** @type {any} */ (tree.getEntry(node.id)) : undefined;
  const u = /** @type {engine.Usage | undefined} */ (entry?.message?.usage);
  if (!node || !u) return null;
  return {
    index,
    entryId: node.id,
    contextTokens: engine.calculateContextTokens(u),
    input: u.input ?? 0,
    output: u.output ?? 0,
    cacheRead: u.cacheRead ?? 0,
    cacheWrite: u.cacheWrite ?? 0,
    totalTokens: u.totalTokens ?? null,
  };
}
