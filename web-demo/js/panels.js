// The detail panels: preparation, context (after convertToLlm), validation, prune preview and
// the result of the last action. Each function replaces the content of its panel.
import { REGION } from './branch-bar.js';
import { el, num } from './format.js';

const TEXT_LIMIT = 1500;

/** A <pre> that shows the first TEXT_LIMIT characters and a button for the rest. */
function longText(text, className = '') {
  const s = String(text ?? '');
  const pre = el('pre', { class: className, text: s.length > TEXT_LIMIT ? `${s.slice(0, TEXT_LIMIT)}…` : s });
  if (s.length <= TEXT_LIMIT) return pre;
  const more = el('button', { type: 'button', class: 'link more small', text: `show all ${num(s.length)} characters` });
  more.addEventListener('click', () => {
    pre.textContent = s;
    more.remove();
  });
  return el('div', {}, pre, more);
}

function idButton(id, onJump) {
  if (!id) return el('span', { class: 'muted', text: '–' });
  return el('button', {
    type: 'button',
    class: 'link mono',
    text: id,
    title: 'Show in the tree',
    onclick: () => onJump(id),
  });
}

function fileList(title, files) {
  return [
    el('h3', { text: `${title} (${files.length})` }),
    files.length
      ? el(
          'ul',
          { class: 'files' },
          files.map((f) => el('li', { text: f })),
        )
      : el('p', { class: 'muted', text: 'none' }),
  ];
}

/**
 * The preparation panel. `prep` is the engine worker's digest of `prepareCompaction()`: its
 * `firstKeptEntryId`, `isSplitTurn`, `tokensBefore`, `previousSummary` and the lengths of its
 * message lists (`messageCounts`), without the messages themselves.
 * @param {HTMLElement} panel
 * @param {{ prep: any, plan: any, sums: number[], counts: number[], fileLists: any,
 *   settings: any, cutId: string, turnId: string, onJump: (id: string) => void, pending?: boolean,
 *   nothing?: { reason: string, message: string } }} s
 */
export function renderPreparation(panel, s) {
  const { prep, plan } = s;
  panel.dataset.firstKeptEntryId = prep?.firstKeptEntryId ?? '';
  if (!prep) {
    panel.dataset.nothingToCompact = s.nothing?.reason ?? '';
    panel.replaceChildren(
      el('h3', { text: 'Nothing to compact' }),
      el('p', {
        class: 'muted',
        text: `prepareCompaction() returned nothing: ${s.nothing?.message ?? 'see nothingToCompact()'}. Select an earlier entry or load another session.`,
      }),
    );
    return;
  }
  panel.dataset.nothingToCompact = '';
  const rows = [
    ['To summarize (history)', prep.messageCounts.messagesToSummarize, s.sums[REGION.SUMMARIZE]],
    ['Turn prefix (summarized separately)', prep.messageCounts.turnPrefixMessages, s.sums[REGION.PREFIX]],
    ['Kept verbatim', prep.messageCounts.recentMessages, s.sums[REGION.KEPT]],
  ];
  const table = el(
    'table',
    { class: 'counts' },
    el(
      'thead',
      {},
      el('tr', {}, el('th', { text: '' }), el('th', { text: 'messages' }), el('th', { text: 'est. tokens' })),
    ),
    el(
      'tbody',
      {},
      rows.map(([label, count, tokens]) =>
        el('tr', {}, el('td', { text: label }), el('td', { text: num(count) }), el('td', { text: num(tokens) })),
      ),
    ),
  );
  const kv = el(
    'dl',
    { class: 'kv' },
    el('dt', { text: 'first kept entry' }),
    el('dd', {}, idButton(prep.firstKeptEntryId, s.onJump)),
    el('dt', { text: 'split turn' }),
    el('dd', {}, prep.isSplitTurn ? el('span', {}, 'yes — the turn starts at ', idButton(s.turnId, s.onJump)) : 'no'),
    el('dt', { text: 'tokens before' }),
    el('dd', { text: `${num(prep.tokensBefore)} (provider usage of the last fresh assistant turn)` }),
    plan
      ? [
          el('dt', { text: 'keepRecentTokens used' }),
          el('dd', {
            text: `${num(plan.effectiveKeepRecentTokens)} (asked: ${num(s.settings.keepRecentTokens)}; after the adaptive ratio)`,
          }),
          el('dt', { text: 'boundary' }),
          el('dd', {
            text: `branch entries ${num(plan.boundaryStart)} – ${num(plan.boundaryEnd - 1)} (${num(plan.estimatedTokens)} est. tokens)`,
          }),
          el('dt', { text: 'previous compaction' }),
          el('dd', {
            text: plan.prevCompactionIndex >= 0 ? `at branch index ${num(plan.prevCompactionIndex)}` : 'none',
          }),
          el('dt', { text: 'last usage' }),
          el('dd', {
            text:
              plan.usageIndex >= 0
                ? `branch index ${num(plan.usageIndex)}, ${num(plan.promptTokens)} prompt tokens`
                : 'none',
          }),
        ]
      : null,
  );
  const children = [el('h3', { text: 'What a compaction would do now' }), table, el('h3', { text: 'Details' }), kv];
  if (s.fileLists) {
    children.push(
      ...fileList('Files read (only)', s.fileLists.readFiles),
      ...fileList('Files modified', s.fileLists.modifiedFiles),
    );
  }
  if (prep.previousSummary) {
    const details = el(
      'details',
      { class: 'summary-box' },
      el('summary', {
        text: `Previous summary (${num(prep.previousSummary.length)} characters) — the new summary updates it`,
      }),
      longText(prep.previousSummary, 'text'),
    );
    children.push(el('h3', { text: 'Previous summary' }), details);
  }
  panel.replaceChildren(...children);
}

/**
 * The messages exactly as `buildLlmMessages()` returns them (the context after convertToLlm),
 * as the engine worker hands them over: the first and last messages as cards (each with the
 * engine's token estimate), the ones in between on demand.
 * @param {HTMLElement} panel
 * @param {{ count: number, head: Card[], tail: Card[] }} context
 * @param {number} contextTokens estimateContextTokens() of the branch
 * @param {(from: number, to: number) => Promise<Card[]>} loadRange the cards in between, from the worker
 * @typedef {{ index: number, message: any, tokens: number }} Card
 */
export function renderContext(panel, context, contextTokens, loadRange) {
  const { count, head: first, tail } = context;
  panel.dataset.messageCount = String(count);
  const head = el(
    'p',
    { class: 'small' },
    el('strong', { text: `${num(count)} messages · ${num(contextTokens)} estimated tokens` }),
    ' — what the model receives next: ',
    el('code', { text: 'buildLlmMessages()' }),
    ', the branch context after ',
    el('code', { text: 'convertToLlm' }),
    '.',
  );
  const list = el('div', { class: 'messages' });
  const render = (cards) => cards.map((c) => messageCard(c.message, c.index, c.tokens));
  list.append(...render(first));
  if (tail.length) {
    const from = first.length;
    const to = count - tail.length;
    const more = el('button', {
      type: 'button',
      class: 'more',
      text: `Show the ${num(to - from)} messages in between`,
    });
    more.addEventListener('click', () => {
      more.disabled = true;
      more.textContent = 'Loading…';
      loadRange(from, to).then(
        (cards) => more.replaceWith(...render(cards)),
        (error) => {
          more.disabled = false;
          more.textContent = `Could not load them (${error.message}); try again`;
        },
      );
    });
    list.append(more, ...render(tail));
  }
  if (!count) list.append(el('p', { class: 'muted', text: 'The context is empty.' }));
  panel.replaceChildren(head, list);
}

function messageCard(m, index, tokens) {
  const role = m?.role ?? '?';
  const header = el(
    'header',
    {},
    el('span', { class: 'idx', text: `#${index}` }),
    el('span', { class: 'role', text: role }),
    m?.toolName ? el('code', { text: m.toolName }) : null,
    m?.isError ? el('span', { class: 'badge issue', text: 'error' }) : null,
    role === 'assistant' && m.model ? el('span', { class: 'muted small', text: m.model }) : null,
    el('span', { class: 'tok', text: `${num(tokens)} tok` }),
  );
  const blocks = [];
  const content = m?.content;
  if (typeof content === 'string') {
    blocks.push(el('div', { class: 'block' }, longText(content)));
  } else if (Array.isArray(content)) {
    for (const b of content) {
      if (b?.type === 'text') blocks.push(el('div', { class: 'block' }, longText(b.text)));
      else if (b?.type === 'thinking')
        blocks.push(
          el(
            'div',
            { class: 'block thinking' },
            el('div', { class: 'block-kind', text: 'thinking' }),
            longText(b.thinking),
          ),
        );
      else if (b?.type === 'toolCall')
        blocks.push(
          el(
            'div',
            { class: 'block' },
            el('div', { class: 'block-kind', text: `tool call · ${b.name}` }),
            longText(JSON.stringify(b.arguments, null, 1)),
          ),
        );
      else if (b?.type === 'image')
        blocks.push(
          el('div', { class: 'block' }, el('div', { class: 'block-kind', text: `image · ${b.mimeType ?? ''}` })),
        );
      else
        blocks.push(
          el(
            'div',
            { class: 'block' },
            el('div', { class: 'block-kind', text: String(b?.type ?? 'block') }),
            longText(JSON.stringify(b)),
          ),
        );
    }
  } else {
    blocks.push(el('div', { class: 'block' }, longText(JSON.stringify(m, null, 1))));
  }
  return el('article', { class: `msg ${role}` }, header, ...blocks);
}

/** The validation report. */
export function renderValidation(panel, report, onJump) {
  const issues = report?.issues ?? [];
  panel.dataset.issueCount = String(issues.length);
  if (!issues.length) {
    panel.replaceChildren(
      el('p', {
        class: 'ok-note',
        text: 'No issues: ids are unique, every parent exists, no cycles, kept entries are on their path, every tool call is answered.',
      }),
    );
    return;
  }
  panel.replaceChildren(
    el('p', {
      class: 'small',
      text: `${num(issues.length)} issue${issues.length === 1 ? '' : 's'} (validate() reports; nothing is changed).`,
    }),
    el(
      'ul',
      { class: 'list-plain' },
      issues
        .slice(0, 1000)
        .map((issue) =>
          el(
            'li',
            { class: 'issue' },
            el('code', { text: issue.code }),
            ' ',
            issue.line ? el('span', { class: 'muted', text: `line ${issue.line} · ` }) : null,
            issue.id ? idButton(issue.id, onJump) : null,
            el('div', { text: issue.message }),
          ),
        ),
    ),
  );
}

/** The prune preview (planPrune): what pruning would replace, or why it would not. */
export function renderPrune(panel, plan, config, onJump) {
  panel.dataset.candidateCount = String(plan?.candidates.length ?? 0);
  if (!plan) {
    panel.replaceChildren(el('p', { class: 'muted', text: 'No session.' }));
    return;
  }
  const head = plan.candidates.length
    ? el(
        'p',
        {},
        el('strong', {
          text: `Would prune ${num(plan.candidates.length)} tool outputs, saving ${num(plan.tokensSaved)} tokens`,
        }),
        ` (at least minimumSavings = ${num(config.minimumSavings)}). They are hatched in the bar.`,
      )
    : el(
        'p',
        {},
        el('strong', { text: 'Nothing would be pruned' }),
        `: ${num(plan.considered)} older tool outputs would save ${num(plan.potentialSavings)} tokens, below minimumSavings = ${num(config.minimumSavings)}.`,
      );
  const note = el('p', {
    class: 'muted small',
    text: `The newest ${num(config.protectTokens)} tokens of tool output are protected, and results of ${config.protectedTools.length ? config.protectedTools.join(', ') : '(no tools)'} are never pruned. Pruning replaces an output with a short notice.`,
  });
  const children = [head, note];
  if (plan.candidates.length) {
    const shown = plan.candidates.slice(0, 300);
    children.push(
      el(
        'table',
        { class: 'counts prune-table' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            el('th', { text: 'entry' }),
            el('th', { text: 'tool' }),
            el('th', { text: 'tokens' }),
            el('th', { text: 'saves' }),
          ),
        ),
        el(
          'tbody',
          {},
          shown.map((c) =>
            el(
              'tr',
              {},
              el('td', { class: 'id' }, idButton(c.id, onJump)),
              el('td', { text: c.toolName ?? '' }),
              el('td', { text: num(c.tokens) }),
              el('td', { text: num(c.savings) }),
            ),
          ),
        ),
      ),
    );
    if (plan.candidates.length > shown.length)
      children.push(
        el('p', { class: 'muted small', text: `… and ${num(plan.candidates.length - shown.length)} more` }),
      );
  }
  panel.replaceChildren(...children);
}

/** The last compaction or navigation. */
export function renderResult(panel, action, onJump) {
  if (!action) {
    panel.replaceChildren(
      el('p', {
        class: 'muted',
        text: 'Run “Compact” or “Navigate with summary”: the new entry and its summary appear here.',
      }),
    );
    return;
  }
  const children = [];
  if (action.kind === 'compaction') {
    const r = action.result;
    children.push(
      el('h3', { text: `Compaction ${action.entryId} (${action.summarizer})` }),
      el(
        'dl',
        { class: 'kv' },
        el('dt', { text: 'entry' }),
        el('dd', {}, idButton(action.entryId, onJump)),
        el('dt', { text: 'first kept entry' }),
        el('dd', {}, idButton(r.firstKeptEntryId, onJump)),
        el('dt', { text: 'context (est. tokens)' }),
        el('dd', {
          text: `${num(action.before.tokens)} → ${num(action.after.tokens)} (saved ${num(action.before.tokens - action.after.tokens)})`,
        }),
        el('dt', { text: 'context messages' }),
        el('dd', { text: `${num(action.before.messages)} → ${num(action.after.messages)}` }),
        el('dt', { text: 'tokensBefore' }),
        el('dd', { text: num(r.tokensBefore) }),
        el('dt', { text: 'took' }),
        el('dd', { text: `${num(action.ms)} ms` }),
      ),
      el('h3', { text: 'Short summary' }),
      el('p', { text: r.shortSummary || '–' }),
      el('h3', { text: `Summary (${num(r.summary.length)} characters)` }),
      longText(r.summary, 'text'),
    );
  } else {
    children.push(
      el('h3', { text: `Navigation to ${action.targetId} (${action.summarizer})` }),
      el(
        'dl',
        { class: 'kv' },
        el('dt', { text: 'new leaf' }),
        el('dd', {}, idButton(action.newLeafId, onJump)),
        el('dt', { text: 'branch summary entry' }),
        el(
          'dd',
          {},
          action.summaryEntry
            ? idButton(action.summaryEntry.id, onJump)
            : el('span', { class: 'muted', text: 'none (nothing to summarize)' }),
        ),
        el('dt', { text: 'took' }),
        el('dd', { text: `${num(action.ms)} ms` }),
      ),
    );
    if (action.editorText)
      children.push(el('h3', { text: 'Text put back in the editor' }), longText(action.editorText, 'text'));
    if (action.summaryEntry?.summary)
      children.push(el('h3', { text: 'Branch summary' }), longText(action.summaryEntry.summary, 'text'));
  }
  panel.replaceChildren(...children);
}
