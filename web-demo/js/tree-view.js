// The session tree: every entry as a row, in depth-first order (children in file order).
// Indentation grows only where the tree branches, so a linear session stays flat. Long linear runs
// of assistant / tool entries fold into one row ("⋯ 37 entries") between anchors (user messages,
// compactions, branch points, labels, the leaf, the cut point, the turn start, the boundary).
// Virtualized: only the rows in view (plus a margin) are in the DOM, so 50,000 entries scroll
// smoothly. Keyboard: the tree element holds the focus (aria-activedescendant points at the
// active row); arrows / PageUp / PageDown / Home / End move, Enter makes the entry the leaf (or
// opens a fold), S navigates there with a summary. A click only selects a row (the leaf moves
// with "Make leaf" or Enter); its "⤷ with summary" button navigates there.
import { el, iconOf, num, short } from './format.js';

const HEAD = 2;
const TAIL = 2;
const FOLD_MIN = 8;
const OVERSCAN = 10;
const MAX_INDENT = 14;

export class TreeView {
  /**
   * @param {HTMLElement} root the scroll container (role=tree)
   * @param {{ describe: (i: number) => [string, string], onLeaf: (i: number) => void,
   *           onNavigate: (i: number) => void, onActiveChange: (i: number) => void }} callbacks
   */
  constructor(root, callbacks) {
    this.root = root;
    this.spacer = /** @type {HTMLElement} */ (root.querySelector('.tree-spacer'));
    this.rowsEl = /** @type {HTMLElement} */ (root.querySelector('.tree-rows'));
    this.cb = callbacks;
    this.nodes = [];
    this.order = new Int32Array(0);
    this.depth = new Int32Array(0);
    this.branchStart = new Uint8Array(0);
    this.decor = null;
    this.rows = [];
    this.rowOfNode = new Int32Array(0);
    this.expanded = new Set();
    this.collapse = true;
    this.active = -1; // row index
    this.rowHeight = 28;
    this.pending = 0;
    this.version = 0;
    this.renderedKey = '';
    root.addEventListener('scroll', () => this.schedule());
    root.addEventListener('keydown', (event) => this.onKey(event));
    root.addEventListener('click', (event) => this.onClick(event));
    new ResizeObserver(() => this.schedule()).observe(root);
  }

  /**
   * New structure (load, compaction, navigation): the nodes (see tree-layout.js `unpackNodes`)
   * and their display order from `layoutTree` (computed in the engine worker).
   * @param {any[]} nodes
   * @param {{ order: Int32Array<ArrayBuffer>, depth: Int32Array<ArrayBuffer>, branchStart: Uint8Array<ArrayBuffer> }} layout
   */
  setNodes(nodes, layout) {
    this.nodes = nodes;
    const n = nodes.length;
    this.order = layout.order;
    this.depth = layout.depth;
    this.branchStart = layout.branchStart;
    this.rowOfNode = new Int32Array(n).fill(-1);
    this.expanded.clear();
    this.active = -1;
  }

  /**
   * Decorations: `region` per node (-1 off the branch), leaf / cut / turn start / boundary node
   * indices, prune candidates and entries with validation issues (Sets of node indices).
   */
  setDecor(decor) {
    this.decor = decor;
  }

  setCollapse(on) {
    const keep = this.activeNode();
    this.collapse = on;
    this.refresh(keep);
  }

  activeNode() {
    const row = this.rows[this.active];
    return row && row.kind === 0 ? row.i : -1;
  }

  isAnchor(i) {
    const n = this.nodes[i];
    const d = this.decor;
    if (n.childCount !== 1 || this.branchStart[i] || n.parentId == null || n.label) return true;
    if (d && (i === d.leaf || i === d.cut || i === d.turn || i === d.boundary || d.issues.has(i))) return true;
    if (n.type === 'message')
      return n.role === 'user' || n.role === 'branchSummary' || n.role === 'compactionSummary' || n.role === 'custom';
    return n.type === 'compaction' || n.type === 'branch_summary' || n.type === 'custom_message';
  }

  /** Recomputes the rows (folds follow the anchors) and renders; keeps `keepNode` active. */
  refresh(keepNode = this.activeNode()) {
    const rows = [];
    const rowOfNode = this.rowOfNode;
    rowOfNode.fill(-1);
    const { order, depth } = this;
    const k = order.length;
    let p = 0;
    while (p < k) {
      const i = order[p];
      if (!this.collapse || this.isAnchor(i)) {
        rowOfNode[i] = rows.length;
        rows.push({ kind: 0, i, depth: depth[p] });
        p++;
        continue;
      }
      let q = p;
      while (q < k && depth[q] === depth[p] && !this.isAnchor(order[q])) q++;
      const len = q - p;
      let expanded = len < FOLD_MIN;
      if (!expanded) {
        for (let r = p; r < q; r++) {
          if (this.expanded.has(order[r])) {
            expanded = true;
            break;
          }
        }
      }
      if (expanded) {
        for (let r = p; r < q; r++) {
          rowOfNode[order[r]] = rows.length;
          rows.push({ kind: 0, i: order[r], depth: depth[r] });
        }
      } else {
        for (let r = p; r < p + HEAD; r++) {
          rowOfNode[order[r]] = rows.length;
          rows.push({ kind: 0, i: order[r], depth: depth[r] });
        }
        const foldRow = rows.length;
        rows.push({ kind: 1, from: p + HEAD, to: q - TAIL, depth: depth[p] });
        for (let r = p + HEAD; r < q - TAIL; r++) rowOfNode[order[r]] = foldRow;
        for (let r = q - TAIL; r < q; r++) {
          rowOfNode[order[r]] = rows.length;
          rows.push({ kind: 0, i: order[r], depth: depth[r] });
        }
      }
      p = q;
    }
    this.rows = rows;
    this.version++;
    this.spacer.style.height = `${rows.length * this.rowHeight}px`;
    if (keepNode >= 0 && rowOfNode[keepNode] >= 0) this.active = rowOfNode[keepNode];
    else if (this.active >= rows.length) this.active = rows.length - 1;
    this.root.dataset.visibleRows = String(rows.length);
    this.render();
  }

  schedule() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.render();
    });
  }

  /** Makes node `i` visible (opening its fold) and optionally active; scrolls to it. */
  reveal(i, { activate = true, align = 'center' } = {}) {
    if (i < 0 || i >= this.nodes.length) return;
    let row = this.rowOfNode[i];
    if (row >= 0 && this.rows[row].kind === 1) {
      this.expandFold(this.rows[row], false);
      row = this.rowOfNode[i];
    }
    if (row < 0) return;
    if (activate) this.setActive(row, false);
    this.scrollToRow(row, align);
    this.render();
  }

  scrollToRow(row, align = 'nearest') {
    const h = this.root.clientHeight;
    const y = row * this.rowHeight;
    const top = this.root.scrollTop;
    if (align === 'center') this.root.scrollTop = Math.max(0, y - h / 2 + this.rowHeight / 2);
    else if (y < top) this.root.scrollTop = y;
    else if (y + this.rowHeight > top + h) this.root.scrollTop = y + this.rowHeight - h;
  }

  setActive(row, scroll = true) {
    if (!this.rows.length) return;
    row = Math.max(0, Math.min(this.rows.length - 1, row));
    this.active = row;
    if (scroll) this.scrollToRow(row);
    this.render();
    this.cb.onActiveChange(this.activeNode());
  }

  expandFold(fold, render = true) {
    for (let r = fold.from; r < fold.to; r++) this.expanded.add(this.order[r]);
    const first = this.order[fold.from];
    this.refresh(-1);
    if (render) this.setActive(this.rowOfNode[first]);
  }

  onClick(event) {
    const rowEl = event.target.closest('.row');
    if (!rowEl) return;
    const row = Number(rowEl.dataset.row);
    const data = this.rows[row];
    if (!data) return;
    if (data.kind === 1) {
      this.expandFold(data);
      return;
    }
    this.setActive(row, false);
    if (event.target.closest('[data-action="navigate"]')) this.cb.onNavigate(data.i);
  }

  onKey(event) {
    if (!this.rows.length || event.altKey || event.ctrlKey || event.metaKey) return;
    const page = Math.max(1, Math.floor(this.root.clientHeight / this.rowHeight) - 1);
    const current = Math.max(this.active, 0);
    let handled = true;
    switch (event.key) {
      case 'ArrowDown':
        this.setActive(this.active < 0 ? 0 : current + 1);
        break;
      case 'ArrowUp':
        this.setActive(current - 1);
        break;
      case 'PageDown':
        this.setActive(current + page);
        break;
      case 'PageUp':
        this.setActive(current - page);
        break;
      case 'Home':
        this.setActive(0);
        break;
      case 'End':
        this.setActive(this.rows.length - 1);
        break;
      case 'ArrowRight':
      case 'Enter':
      case ' ': {
        const data = this.rows[current];
        if (data.kind === 1) this.expandFold(data);
        else if (event.key !== 'ArrowRight') this.cb.onLeaf(data.i);
        break;
      }
      case 's':
      case 'S': {
        const data = this.rows[current];
        if (data.kind === 0) this.cb.onNavigate(data.i);
        break;
      }
      default:
        handled = false;
    }
    if (handled) event.preventDefault();
  }

  /** Draws the rows in view again (same rows; their texts changed, e.g. descriptions arrived). */
  redraw() {
    this.version++;
    this.schedule();
  }

  render() {
    const { rows, rowHeight } = this;
    const top = this.root.scrollTop;
    const height = this.root.clientHeight || 600;
    const start = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
    const end = Math.min(rows.length, Math.ceil((top + height) / rowHeight) + OVERSCAN);
    // Same window, same data: keep the DOM (hover states and pending clicks stay valid).
    const key = `${start}:${end}:${this.active}:${this.version}`;
    if (key === this.renderedKey && this.rowsEl.isConnected) return;
    this.renderedKey = key;
    this.rowsEl.style.transform = `translateY(${start * rowHeight}px)`;
    const frag = document.createDocumentFragment();
    for (let r = start; r < end; r++) frag.append(this.renderRow(r));
    this.rowsEl.replaceChildren(frag);
    const activeEl = this.active >= start && this.active < end ? this.rowsEl.children[this.active - start] : null;
    if (activeEl) this.root.setAttribute('aria-activedescendant', activeEl.id);
    else this.root.removeAttribute('aria-activedescendant');
  }

  renderRow(r) {
    const data = this.rows[r];
    const d = this.decor;
    const indent = el('span', { class: 'indent', 'aria-hidden': 'true' });
    indent.style.width = `${Math.min(data.depth, MAX_INDENT) * 16 + 6}px`;
    if (data.kind === 1) {
      const counts = new Map();
      let tokens = 0;
      for (let p = data.from; p < data.to; p++) {
        const n = this.nodes[this.order[p]];
        const key = n.type === 'message' ? (n.role ?? 'message') : n.type;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        tokens += n.tokens;
      }
      const first = this.order[data.from];
      const region = d ? d.region[first] : -1;
      const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`);
      const count = data.to - data.from;
      return el(
        'div',
        {
          class: `row fold${region >= 0 ? ` reg-${region}` : ' off-branch'}${r === this.active ? ' active' : ''}`,
          role: 'treeitem',
          id: `tree-fold-${first}`,
          'aria-expanded': 'false',
          'aria-level': data.depth + 1,
          'aria-label': `${count} entries folded; Enter to show them`,
          'data-row': r,
          title: 'Show these entries',
        },
        indent,
        el('span', { class: 'icon', 'aria-hidden': 'true', text: '⋯' }),
        el('span', { class: 'text', text: `${num(count)} entries: ${parts.join(' · ')}` }),
        el('span', { class: 'tok', text: tokens ? `${short(tokens)} tok` : '' }),
      );
    }
    const i = data.i;
    const n = this.nodes[i];
    const [iconClass, letter] = iconOf(n);
    const [kind, text] = this.cb.describe(i);
    const region = d ? d.region[i] : -1;
    const isLeaf = d && i === d.leaf;
    const badges = [];
    if (isLeaf) badges.push(el('span', { class: 'badge leaf', text: 'leaf' }));
    if (d && i === d.cut) badges.push(el('span', { class: 'badge cut', text: '✂ first kept' }));
    if (d && i === d.turn && d.turn !== d.cut) badges.push(el('span', { class: 'badge turn', text: 'turn start' }));
    if (n.label) badges.push(el('span', { class: 'badge label', text: `# ${n.label}` }));
    if (d?.pruned.has(i)) badges.push(el('span', { class: 'badge prune', text: 'prunable' }));
    if (d?.issues.has(i)) badges.push(el('span', { class: 'badge issue', text: '!', title: 'validation issue' }));
    const id = n.id ?? '';
    const row = el(
      'div',
      {
        class: `row${region >= 0 ? ` reg-${region}` : ' off-branch'}${r === this.active ? ' active' : ''}`,
        role: 'treeitem',
        id: `tree-node-${i}`,
        'aria-level': data.depth + 1,
        'aria-selected': r === this.active ? 'true' : 'false',
        'aria-current': isLeaf ? 'true' : undefined,
        'data-row': r,
        'data-entry-id': id,
        'data-entry-type': n.type,
        'data-role-name': n.role,
        'data-leaf': isLeaf ? 'true' : undefined,
        title: `${id || '(no id)'} · line ${n.line || '–'} · ${n.type}${n.role ? `/${n.role}` : ''} · ${num(n.tokens)} tokens`,
      },
      indent,
      this.branchStart[i]
        ? el('span', { class: 'elbow', 'aria-hidden': 'true', text: '↳', title: 'a side branch starts here' })
        : null,
      el('span', { class: `icon ${iconClass}`, 'aria-hidden': 'true', text: letter }),
      el('span', { class: 'kind', text: kind }),
      el('span', { class: 'text', text: text || '\u00a0' }),
      ...badges,
      el('span', { class: 'tok', text: n.tokens ? short(n.tokens) : '' }),
      id
        ? el('button', {
            type: 'button',
            class: 'go',
            tabindex: '-1',
            'data-action': 'navigate',
            'data-entry-id': undefined,
            title: 'Navigate here and summarize the branch left behind (S)',
            text: '⤷ with summary',
          })
        : null,
    );
    return row;
  }
}
