// The branch bar: the root→leaf path as one horizontal bar on a canvas, each entry a segment as
// wide as its estimated tokens, coloured by region. Entries without tokens (model changes,
// compactions, …) are ticks in a thin lane under the bar. Prune candidates are hatched. The cut
// point, the turn start and the previous compaction's kept region are DOM overlays (so tests and
// screen readers can find them): `[data-cut-entry-id]`, `[data-turn-start-entry-id]`,
// `[data-role="prev-kept"]`.
import { el, num, plural, short } from './format.js';

export const REGION = { SUMMARIZED: 0, SUMMARIZE: 1, PREFIX: 2, KEPT: 3, META: 4 };
const REGION_VARS = ['--r-summarized', '--r-summarize', '--r-prefix', '--r-kept', '--r-meta'];
export const REGION_NAMES = ['already summarized', 'to summarize', 'turn prefix', 'kept', 'metadata'];

const BAR_TOP = 3;
const BAR_H = 28;
const LANE_TOP = 34;
const LANE_H = 8;

export class BranchBar {
  constructor(root, { onPick, describe }) {
    this.wrap = root.querySelector('#bar-wrap');
    this.canvas = root.querySelector('#bar-canvas');
    this.markers = root.querySelector('#bar-markers');
    this.tooltip = root.querySelector('#bar-tooltip');
    this.legend = root.querySelector('#legend');
    this.caption = root.querySelector('#bar-caption');
    this.onPick = onPick;
    this.describe = describe;
    this.model = null;
    this.cutMarker = el('div', { class: 'marker cut hidden', 'data-cut-entry-id': '', 'data-role': 'cut-marker' });
    this.turnMarker = el('div', { class: 'marker turn hidden', 'data-turn-start-entry-id': '' });
    this.prevKept = el('div', { class: 'prev-kept', 'data-role': 'prev-kept', hidden: true });
    this.markers.append(this.prevKept, this.turnMarker, this.cutMarker);
    new ResizeObserver(() => this.draw()).observe(this.wrap);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.draw());
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => (this.tooltip.hidden = true));
    this.canvas.addEventListener('click', (e) => {
      const pos = this.posAt(e.offsetX);
      if (pos >= 0) this.onPick(this.model.branch[pos]);
    });
  }

  /**
   * @param {{ nodes: any[], branch: Int32Array, region: Uint8Array, pruned: Uint8Array,
   *   cut: {pos: number, id: string} | null, turn: {pos: number, id: string} | null,
   *   prevKept: {start: number, end: number, id: string} | null, boundaryStart: number,
   *   scale: 'branch' | 'boundary', sums: number[], counts: number[], prunedTokens: number,
   *   prunedCount: number }} model
   */
  update(model) {
    const { branch, nodes } = model;
    const cum = new Float64Array(branch.length + 1);
    for (let p = 0; p < branch.length; p++) cum[p + 1] = cum[p] + nodes[branch[p]].tokens;
    this.model = model;
    this.cum = cum;
    this.view0 = model.scale === 'boundary' ? Math.min(model.boundaryStart, branch.length) : 0;
    this.cutMarker.dataset.cutEntryId = model.cut?.id ?? '';
    this.turnMarker.dataset.turnStartEntryId = model.turn?.id ?? '';
    this.renderLegend();
    this.draw();
  }

  /** Token offset → x in CSS pixels. */
  x(pos, width) {
    const { cum, view0 } = this;
    const total = cum[cum.length - 1] - cum[view0];
    if (total <= 0) {
      const n = cum.length - 1 - view0;
      return n > 0 ? ((pos - view0) / n) * width : 0;
    }
    return ((cum[pos] - cum[view0]) / total) * width;
  }

  posAt(xCss) {
    if (!this.model?.branch.length) return -1;
    const width = this.canvas.clientWidth;
    const { cum, view0 } = this;
    const n = cum.length - 1;
    const total = cum[n] - cum[view0];
    if (total <= 0) return Math.min(n - 1, view0 + Math.floor((xCss / width) * (n - view0)));
    const target = cum[view0] + (xCss / width) * total;
    let lo = view0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid + 1] <= target) lo = mid + 1;
      else hi = mid;
    }
    // Prefer an entry with tokens (zero-width ones are ticks in the lane).
    return lo;
  }

  hover(event) {
    const pos = this.posAt(event.offsetX);
    if (pos < 0) return;
    this.tooltip.textContent = this.describe(pos);
    this.tooltip.hidden = false;
    const width = this.wrap.clientWidth;
    const tipWidth = this.tooltip.offsetWidth;
    this.tooltip.style.left = `${Math.max(0, Math.min(width - tipWidth, event.offsetX - tipWidth / 2))}px`;
  }

  draw() {
    const model = this.model;
    const canvas = this.canvas;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const css = getComputedStyle(document.documentElement);
    const color = (name) => css.getPropertyValue(name).trim();
    ctx.fillStyle = color('--surface-2');
    ctx.fillRect(0, BAR_TOP, width, BAR_H);
    if (!model?.branch.length) {
      this.placeMarkers(width);
      return;
    }
    const colors = REGION_VARS.map(color);
    const compactionColor = color('--r-compaction');
    const hatch = hatchPattern(ctx, color('--hatch'));
    const { branch, nodes, region, pruned } = model;
    const n = branch.length;
    // Rasterize first: per device-pixel column, how much of each region (and of prunable
    // output) falls into it. Drawing then costs one rectangle per run of equal columns, whatever
    // the number of entries (50,000 entries would otherwise be 50,000 pattern fills).
    const cols = Math.max(1, canvas.width);
    const scale = cols / width;
    const weight = new Float32Array(cols * 4);
    const prunedWeight = new Float32Array(cols);
    const metaCol = new Uint8Array(cols); // 1 metadata, 2 compaction
    for (let p = this.view0; p < n; p++) {
      const node = nodes[branch[p]];
      const x0 = this.x(p, width) * scale;
      if (node.tokens <= 0) {
        const c = Math.min(cols - 1, Math.floor(x0));
        metaCol[c] = Math.max(metaCol[c], node.type === 'compaction' ? 2 : 1);
        continue;
      }
      const r = region[p] === REGION.META ? REGION.KEPT : region[p];
      const x1 = this.x(p + 1, width) * scale;
      const c0 = Math.max(0, Math.floor(x0));
      const c1 = Math.min(cols - 1, Math.floor(Math.max(x0, x1 - 1e-6)));
      for (let c = c0; c <= c1; c++) {
        const overlap = Math.min(x1, c + 1) - Math.max(x0, c);
        if (overlap <= 0) continue;
        weight[c * 4 + r] += overlap;
        if (pruned[p]) prunedWeight[c] += overlap;
      }
    }
    const keyOf = (c) => {
      let best = -1;
      let bestWeight = 0;
      let total = 0;
      for (let r = 0; r < 4; r++) {
        const w = weight[c * 4 + r];
        total += w;
        if (w > bestWeight) {
          bestWeight = w;
          best = r;
        }
      }
      if (best < 0) return -1;
      return (best << 1) | (prunedWeight[c] > total / 2 ? 1 : 0);
    };
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    const top = BAR_TOP * dpr;
    const barH = BAR_H * dpr;
    let runStart = 0;
    let runKey = keyOf(0);
    const flush = (end) => {
      if (runKey < 0) return;
      ctx.fillStyle = colors[runKey >> 1];
      ctx.fillRect(runStart, top, end - runStart, barH);
      if (runKey & 1) {
        ctx.fillStyle = hatch;
        ctx.fillRect(runStart, top, end - runStart, barH);
      }
    };
    const separators = [];
    for (let c = 1; c <= cols; c++) {
      const key = c < cols ? keyOf(c) : -2;
      if (key === runKey) continue;
      flush(c);
      if (c < cols && key >= 0 && runKey >= 0 && key >> 1 !== runKey >> 1) separators.push(c);
      runStart = c;
      runKey = key;
    }
    // A thin gap where the region changes keeps adjacent regions distinct in both schemes.
    ctx.fillStyle = color('--surface');
    for (const c of separators)
      ctx.fillRect(c - Math.max(1, Math.round(dpr / 2)) / 2, top, Math.max(1, Math.round(dpr / 2)), barH);
    // Entries without tokens: ticks in the lane under the bar; compactions cross the bar.
    for (let c = 0; c < cols; c++) {
      if (!metaCol[c]) continue;
      if (metaCol[c] === 2) {
        ctx.fillStyle = compactionColor;
        ctx.fillRect(c - dpr, top, 2 * dpr, (BAR_H + LANE_H + 3) * dpr);
      } else {
        ctx.fillStyle = colors[REGION.META];
        ctx.fillRect(c - 0.75 * dpr, LANE_TOP * dpr, 1.5 * dpr, LANE_H * dpr);
      }
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.placeMarkers(width);
  }

  placeMarkers(width) {
    const model = this.model;
    const place = (marker, at, label) => {
      if (!at || !model || at.pos < this.view0) {
        marker.classList.add('hidden');
        marker.replaceChildren();
        return;
      }
      const x = this.x(at.pos, width);
      marker.classList.remove('hidden');
      marker.classList.toggle('flip', x > width - 240);
      marker.style.left = `${x - 1}px`;
      marker.replaceChildren(el('span', { class: 'marker-label', text: label }));
    };
    place(this.cutMarker, model?.cut, model?.cut ? `✂ cut · first kept ${model.cut.id}` : '');
    place(
      this.turnMarker,
      model?.turn && model.turn.pos !== model.cut?.pos ? model.turn : null,
      model?.turn ? `turn start ${model.turn.id}` : '',
    );
    const prev = model?.prevKept;
    if (prev && prev.end > this.view0) {
      const x0 = this.x(Math.max(prev.start, this.view0), width);
      const x1 = this.x(prev.end, width);
      this.prevKept.hidden = false;
      this.prevKept.style.left = `${x0}px`;
      this.prevKept.style.width = `${Math.max(4, x1 - x0)}px`;
      this.prevKept.dataset.compactionId = prev.id;
      this.prevKept.classList.toggle('flip', x0 > width - 320);
      this.prevKept.replaceChildren(el('span', { text: `kept by compaction ${prev.id}` }));
    } else {
      this.prevKept.hidden = true;
      this.prevKept.replaceChildren();
    }
  }

  renderLegend() {
    const m = this.model;
    const item = (swatchClass, swatchVar, label, value) => {
      const swatch = el('span', { class: `swatch ${swatchClass}`, 'aria-hidden': 'true' });
      if (swatchVar) swatch.style.background = `var(${swatchVar})`;
      return el('li', {}, swatch, label, value ? el('span', { class: 'n', text: value }) : null);
    };
    const items = [];
    for (let r = 0; r < 4; r++) {
      items.push(item('', REGION_VARS[r], REGION_NAMES[r], `${short(m.sums[r])} tok · ${num(m.counts[r])}`));
    }
    items.push(item('', REGION_VARS[4], 'metadata (lane below)', num(m.counts[4])));
    items.push(item('', '--r-compaction', 'compaction entry', ''));
    items.push(
      item(
        'hatched',
        null,
        'prunable tool output',
        m.prunedCount ? `${short(m.prunedTokens)} tok saved · ${num(m.prunedCount)}` : 'none',
      ),
    );
    items.push(item('outline', null, "previous compaction's kept region", ''));
    items.push(item('line', null, 'cut point', ''));
    items.push(item('dashed', null, 'turn start', ''));
    this.legend.replaceChildren(...items);
    const total = this.cum[this.cum.length - 1];
    this.caption.textContent = `· ${plural(m.branch.length, 'entry', 'entries')} · ${plural(total, 'estimated token')}`;
    this.canvas.setAttribute(
      'aria-label',
      `Branch bar: ${REGION_NAMES.slice(0, 4)
        .map((name, r) => `${name} ${num(m.sums[r])} tokens`)
        .join(', ')}${m.cut ? `; cut at ${m.cut.id}` : '; nothing to compact'}`,
    );
  }
}

function hatchPattern(ctx, color) {
  const size = 6;
  const tile = document.createElement('canvas');
  tile.width = size;
  tile.height = size;
  const t = tile.getContext('2d');
  t.strokeStyle = color;
  t.lineWidth = 1.6;
  t.beginPath();
  t.moveTo(0, size);
  t.lineTo(size, 0);
  t.moveTo(-size / 2, size / 2);
  t.lineTo(size / 2, -size / 2);
  t.moveTo(size / 2, size * 1.5);
  t.lineTo(size * 1.5, size / 2);
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}
