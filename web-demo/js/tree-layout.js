// The tree's display order and the compact form in which the engine worker hands the nodes of
// `getTree()` to the page. Both run in the worker (no DOM here); the page only unpacks.
//
// Display order: depth-first, children in file order. At a branch point the child with the
// biggest subtree is the main line: it continues at the same depth, after the other children,
// which are indented one level (so a long session with a few side branches stays flat, and each
// side branch shows up right under its branch point).

/**
 * The rows of the tree view: node indices in display order, their depth, and which nodes start
 * a side branch.
 * @param {{ id?: string | null, parentId?: string | null, children: string[] }[]} nodes getTree()
 * @returns {{ order: Int32Array, depth: Int32Array, branchStart: Uint8Array }}
 */
export function layoutTree(nodes) {
  const byId = new Map();
  nodes.forEach((node, i) => {
    if (node.id !== null && node.id !== undefined) byId.set(node.id, i);
  });
  const n = nodes.length;
  const kidsOf = (i) => {
    const out = [];
    for (const id of nodes[i].children) {
      const j = byId.get(id);
      if (j !== undefined && j !== i) out.push(j);
    }
    return out;
  };
  const isRoot = (i) => {
    const p = nodes[i].parentId;
    return p === null || p === undefined || !byId.has(p);
  };
  // Pass 1: a plain depth-first order, to get subtree sizes bottom-up.
  const pre = [];
  const seen1 = new Uint8Array(n);
  const walk = (r) => {
    const stack = [r];
    while (stack.length) {
      const i = stack.pop();
      if (seen1[i]) continue;
      seen1[i] = 1;
      pre.push(i);
      for (const j of kidsOf(i)) if (!seen1[j]) stack.push(j);
    }
  };
  for (let i = 0; i < n; i++) if (isRoot(i)) walk(i);
  for (let i = 0; i < n; i++) if (!seen1[i]) walk(i);
  const size = new Int32Array(n).fill(1);
  const parentIdx = new Int32Array(n).fill(-1);
  for (const i of pre) for (const j of kidsOf(i)) if (parentIdx[j] < 0) parentIdx[j] = i;
  for (let k = pre.length - 1; k >= 0; k--) {
    const i = pre[k];
    if (parentIdx[i] >= 0) size[parentIdx[i]] += size[i];
  }
  // Pass 2: the display order.
  const order = new Int32Array(n);
  const depth = new Int32Array(n);
  const branchStart = new Uint8Array(n);
  const seen = new Uint8Array(n);
  let k = 0;
  const stack = [];
  const visit = (rootIndex) => {
    stack.push(rootIndex, 0);
    while (stack.length) {
      const d = stack.pop();
      const i = stack.pop();
      if (seen[i]) continue;
      seen[i] = 1;
      order[k] = i;
      depth[k] = d;
      k++;
      const kids = kidsOf(i).filter((j) => !seen[j]);
      if (kids.length === 0) continue;
      let main = kids[0];
      for (const j of kids) if (size[j] > size[main]) main = j;
      // Pushed in reverse display order: the main line last on screen, so first on the stack.
      stack.push(main, d);
      for (let c = kids.length - 1; c >= 0; c--) {
        const j = kids[c];
        if (j === main) continue;
        branchStart[j] = 1;
        stack.push(j, d + 1);
      }
    }
  };
  for (let i = 0; i < n; i++) if (isRoot(i)) visit(i);
  // Entries on a cycle (or otherwise unreachable) still get a row, at the end.
  for (let i = 0; i < n; i++) if (!seen[i]) visit(i);
  return { order: order.slice(0, k), depth: depth.slice(0, k), branchStart };
}

/** Distinct strings as a table plus one index per value (undefined / null → 0xffff). */
function intern(values) {
  const table = [];
  const index = new Map();
  const codes = new Uint16Array(values.length);
  values.forEach((v, i) => {
    if (v === undefined || v === null) {
      codes[i] = 0xffff;
      return;
    }
    let c = index.get(v);
    if (c === undefined) {
      c = table.length;
      table.push(v);
      index.set(v, c);
    }
    codes[i] = c;
  });
  return { table, codes };
}

/**
 * The nodes of `getTree()` as columns (typed arrays and string lists), which a worker message
 * copies in a fraction of the time 50,000 small objects take.
 * @param {any[]} nodes
 */
export function packNodes(nodes) {
  const labels = [];
  nodes.forEach((node, i) => {
    if (node.label !== undefined && node.label !== null) labels.push([i, node.label]);
  });
  return {
    ids: nodes.map((node) => node.id ?? null),
    parentIds: nodes.map((node) => node.parentId ?? null),
    types: intern(nodes.map((node) => node.type)),
    roles: intern(nodes.map((node) => node.role)),
    tokens: Float64Array.from(nodes, (node) => node.tokens ?? 0),
    lines: Int32Array.from(nodes, (node) => node.line ?? 0),
    childCounts: Int32Array.from(nodes, (node) => node.children?.length ?? 0),
    labels,
  };
}

/**
 * The page's node objects from `packNodes`: `{ id, parentId, type, role, tokens, line,
 * childCount, label }` (role and label undefined when absent).
 * @param {ReturnType<typeof packNodes>} packed
 */
export function unpackNodes(packed) {
  const { ids, parentIds, types, roles, tokens, lines, childCounts } = packed;
  const str = (/** @type {{ table: string[], codes: Uint16Array }} */ col, i) =>
    col.codes[i] === 0xffff ? undefined : col.table[col.codes[i]];
  const nodes = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    nodes[i] = {
      id: ids[i],
      parentId: parentIds[i],
      type: str(types, i),
      role: str(roles, i),
      tokens: tokens[i],
      line: lines[i],
      childCount: childCounts[i],
      label: undefined,
    };
  }
  for (const [i, label] of packed.labels) nodes[i].label = label;
  return nodes;
}
