// `tree`: the entry tree: ids, roles, previews, labels, the leaf (*).
import * as engine from '../../index.node.mjs';
import { branchNodes, kindOf, printJson, reportHeader, warnLoadErrors } from '../report.mjs';
import { EXIT_OK, num, oneLine, plural } from '../support.mjs';

/** @type {import('../report.mjs').Command} */
export const tree = {
  summary: 'the entry tree: ids, roles, previews, labels, the leaf (*)',
  usage: 'tree [file] [--json] [--leaf id] [--full]',
  options: ['json', 'leaf', 'full'],
  run: cmdTree,
};

/** In a linear run, this many entries are shown at each end; longer middles are collapsed. */
const RUN_EDGE = 3;

/** @typedef {engine.TreeNode} Node */

/** @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts @param {import('../report.mjs').Io} io */
function cmdTree(session, opts, io) {
  warnLoadErrors(session, io);
  const { tree } = session;
  const { style } = io;
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
  /** @type {Map<string, Node>} */
  const byId = new Map();
  // With duplicate ids the later entry wins (as in the engine); the earlier one is unreachable.
  for (const n of nodes) if (n.id !== null) byId.set(n.id, n);
  const onPath = new Set(branchNodes(tree, nodes).map((n) => n.id));
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
  /** @type {Set<Node>} */
  const visited = new Set();
  /** @param {Node} node @param {string} prefix */
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
  const walk = (/** @type {Node[]} */ starts) => {
    /** @type {{ node: Node, first: string, rest: string }[]} */
    const stack = [];
    for (let i = starts.length - 1; i >= 0; i--) stack.push({ node: starts[i], first: '', rest: '' });
    while (stack.length) {
      const item = /** @type {{ node: Node, first: string, rest: string }} */ (stack.pop());
      // The linear run starting here: follow single children.
      /** @type {Node[]} */
      const run = [];
      /** @type {Node | undefined} */
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
      /** @type {Node[]} */
      const children =
        tail.children.length > 1
          ? /** @type {Node[]} */ (
              [...new Set(tail.children.map((id) => byId.get(id)))].filter((c) => c && !visited.has(c))
            )
          : [];
      if (children.length) {
        const main = children.find((c) => onPath.has(c.id)) ?? children[children.length - 1];
        stack.push({ node: main, first: item.rest, rest: item.rest });
        const side = children.filter((c) => c !== main);
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
function summarizeKinds(/** @type {Node[]} */ run) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const n of run) counts.set(kindOf(n), (counts.get(kindOf(n)) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${num(n)}`)
    .join(', ');
}

/** The kind column and a one-line preview of an entry (its text: the engine's `contentText`). */
function preview(/** @type {Node} */ node, /** @type {any} */ entry) {
  const width = 70;
  const quote = (/** @type {unknown} */ s) => (typeof s === 'string' && s.trim() ? `"${oneLine(s, width)}"` : '');
  const e = entry ?? {};
  switch (node.type) {
    case 'message': {
      const m = e.message ?? {};
      const role = m.role ?? node.role ?? 'message';
      const text = engine.contentText(m.content);
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
      return { kind: 'custom_message', text: `${e.customType ?? ''} ${quote(engine.contentText(e.content))}`.trim() };
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
