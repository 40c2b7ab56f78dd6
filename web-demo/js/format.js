// Small formatting helpers shared by the views.

const nf = new Intl.NumberFormat('en-US');

/** 12345 → "12,345" */
export const num = (n) => (Number.isFinite(n) ? nf.format(Math.round(n)) : '–');

/** 1, 'entry', 'entries' → "1 entry"; 2 → "2 entries" (the plural defaults to word + "s"). */
export const plural = (n, word, many = `${word}s`) => `${num(n)} ${n === 1 ? word : many}`;

/** 12345 → "12.3k", 1234567 → "1.23M" */
export function short(n) {
  if (!Number.isFinite(n)) return '–';
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 1 : 2)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return nf.format(Math.round(n));
}

/** Creates an element: el('span', {class: 'x', text: 'y'}, child, ...) */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Collapses whitespace and cuts to `max` characters. */
export function oneLine(text, max = 160) {
  const s = String(text ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * What a tree row shows for an entry: [kind label, short text].
 * @param {any} entry
 * @param {(content: unknown) => string} contentText the engine's `contentText`
 */
export function describeEntry(entry, contentText) {
  if (!entry || typeof entry !== 'object') return ['?', ''];
  switch (entry.type) {
    case 'message': {
      const m = entry.message ?? {};
      switch (m.role) {
        case 'user':
          return ['user', oneLine(contentText(m.content))];
        case 'assistant': {
          const blocks = Array.isArray(m.content) ? m.content : [];
          const text = oneLine(contentText(m.content), 120);
          const calls = blocks.filter((b) => b?.type === 'toolCall').map((b) => `${b.name}(${toolArg(b.arguments)})`);
          if (text && calls.length) return ['assistant', `${text} → ${calls.join(', ')}`];
          if (text) return ['assistant', text];
          if (calls.length) return ['assistant', `→ ${calls.join(', ')}`];
          const thinking = blocks.find((b) => b?.type === 'thinking');
          if (thinking) return ['assistant', `(thinking) ${oneLine(thinking.thinking, 120)}`];
          return ['assistant', m.stopReason ? `(${m.stopReason})` : ''];
        }
        case 'toolResult':
          return [m.toolName ?? 'tool', `${m.isError ? 'error: ' : ''}${oneLine(contentText(m.content), 140)}`];
        case 'bashExecution':
          return ['bash', `$ ${oneLine(m.command, 120)}`];
        case 'pythonExecution':
          return ['python', oneLine(m.code ?? '', 120)];
        case 'custom':
        case 'hookMessage':
          return [m.customType ?? m.role, oneLine(contentText(m.content))];
        case 'branchSummary':
          return ['branch sum.', oneLine(m.summary)];
        case 'compactionSummary':
          return ['summary', oneLine(m.summary)];
        default:
          return [m.role ?? 'message', oneLine(contentText(m.content))];
      }
    }
    case 'compaction':
      return [
        'compaction',
        `keeps from ${entry.firstKeptEntryId ?? '?'} · ${oneLine(firstHeading(entry.summary), 100)}`,
      ];
    case 'branch_summary':
      return ['branch sum.', `from ${entry.fromId ?? '?'} · ${oneLine(entry.summary, 120)}`];
    case 'model_change':
      return ['model', entry.model ? String(entry.model) : [entry.provider, entry.modelId].filter(Boolean).join('/')];
    case 'thinking_level_change':
      return ['thinking', String(entry.thinkingLevel ?? '')];
    case 'mode_change':
      return ['mode', String(entry.mode ?? '')];
    case 'label':
      return ['label', `${entry.targetId ?? ''}: ${entry.label ?? '(cleared)'}`];
    case 'custom':
      return ['custom', String(entry.customType ?? '')];
    case 'custom_message':
      return [entry.customType ?? 'custom msg', oneLine(contentText(entry.content))];
    case 'ttsr_injection':
      return ['ttsr', oneLine(JSON.stringify(entry.rules ?? entry.rule ?? ''), 80)];
    case 'session_init':
      return ['init', ''];
    default:
      return [String(entry.type ?? '?'), ''];
  }
}

function firstHeading(summary) {
  const lines = String(summary ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines[0] ?? '').replace(/^#+\s*/, '');
}

function toolArg(args) {
  if (!args || typeof args !== 'object') return '';
  const value = args.path ?? args.command ?? args.file_path ?? args.pattern ?? Object.values(args)[0];
  if (value === undefined) return '';
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  const tail = s.length > 48 ? `…${s.slice(-47)}` : s;
  return oneLine(tail, 50);
}

/** Icon class and letter of a tree node. */
export function iconOf(node) {
  if (node.type === 'message') {
    switch (node.role) {
      case 'user':
        return ['user', 'U'];
      case 'assistant':
        return ['assistant', 'A'];
      case 'toolResult':
        return ['toolResult', 'T'];
      case 'bashExecution':
        return ['bash', '$'];
      case 'branchSummary':
        return ['branch', 'B'];
      case 'compactionSummary':
        return ['compaction', 'S'];
      default:
        return ['other', 'M'];
    }
  }
  switch (node.type) {
    case 'compaction':
      return ['compaction', 'C'];
    case 'branch_summary':
      return ['branch', 'B'];
    case 'custom_message':
      return ['other', 'X'];
    case 'model_change':
      return ['meta', 'M'];
    case 'thinking_level_change':
      return ['meta', 'θ'];
    case 'label':
      return ['meta', 'L'];
    default:
      return ['meta', '·'];
  }
}

/** The context panel shows this many messages at its start and end (the rest on demand). */
export const CONTEXT_HEAD = 40;
export const CONTEXT_TAIL = 40;
