// Where a V8 heap snapshot's memory is held: `node scripts/heap-summary.ts FILE.heapsnapshot [TOP]`.
// Prints the self size by constructor, then the objects that retain the most (a dominator tree,
// Cooper–Harvey–Kennedy over the snapshot's graph, weak edges ignored as DevTools does), each
// with the path that reaches it from the root. Used to find what a tracked workload costs the
// controller (docs/scale.md); `--heap-snapshot DIR` of `npm run bench` writes the snapshots.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const [file, topArgument] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/heap-summary.ts FILE.heapsnapshot [TOP]');
  process.exit(2);
}
const top = Number(topArgument ?? 40);
const snap = readSnapshot(file);
const { meta } = snap.snapshot;
const nodeFieldCount = meta.node_fields.length;
const edgeFieldCount = meta.edge_fields.length;
const nodeType = meta.node_fields.indexOf('type');
const nodeName = meta.node_fields.indexOf('name');
const nodeSelf = meta.node_fields.indexOf('self_size');
const nodeEdges = meta.node_fields.indexOf('edge_count');
const edgeType = meta.edge_fields.indexOf('type');
const edgeName = meta.edge_fields.indexOf('name_or_index');
const edgeTo = meta.edge_fields.indexOf('to_node');
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const weak = edgeTypes.indexOf('weak');
const shortcut = edgeTypes.indexOf('shortcut');
const { nodes, edges, strings } = snap;
const count = nodes.length / nodeFieldCount;

const firstEdge = new Uint32Array(count + 1);
for (let i = 0, e = 0; i < count; i++) {
  firstEdge[i] = e;
  e += (nodes[i * nodeFieldCount + nodeEdges] ?? 0) * edgeFieldCount;
  firstEdge[i + 1] = e;
}
const label = (i: number): string => {
  const type = nodeTypes[nodes[i * nodeFieldCount + nodeType] ?? 0] ?? '?';
  const name = strings[nodes[i * nodeFieldCount + nodeName] ?? 0] ?? '';
  return type === 'object' || type === 'closure' || type === 'native'
    ? name
    : `(${type}) ${name.slice(0, 40)}`;
};
const selfSize = (i: number): number => nodes[i * nodeFieldCount + nodeSelf] ?? 0;
const strong = (e: number): boolean => {
  const type = edges[e + edgeType];
  return type !== weak && type !== shortcut;
};

// Self size by constructor (strings and code by type).
const byLabel = new Map<string, { size: number; count: number }>();
let total = 0;
for (let i = 0; i < count; i++) {
  const type = nodeTypes[nodes[i * nodeFieldCount + nodeType] ?? 0] ?? '?';
  const key = type === 'object' || type === 'closure' || type === 'native' ? label(i) : `(${type})`;
  const entry = byLabel.get(key) ?? { size: 0, count: 0 };
  entry.size += selfSize(i);
  entry.count++;
  byLabel.set(key, entry);
  total += selfSize(i);
}
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1).padStart(8);
console.log(`${count} nodes, ${mib(total)} MiB in all\n\nself size by constructor:`);
for (const [key, { size, count: n }] of [...byLabel].sort((a, b) => b[1].size - a[1].size).slice(0, top))
  console.log(`${mib(size)} MiB ${String(n).padStart(9)}  ${key}`);

// Reverse postorder from the root (node 0) over strong edges, then dominators.
const order = new Int32Array(count).fill(-1);
const postorder = new Uint32Array(count);
const parent = new Int32Array(count).fill(-1);
const parentEdge = new Int32Array(count).fill(-1);
let visited = 0;
{
  const stack = new Uint32Array(count);
  const cursor = new Uint32Array(count);
  const seen = new Uint8Array(count);
  let depth = 0;
  stack[0] = 0;
  cursor[0] = firstEdge[0] ?? 0;
  seen[0] = 1;
  while (depth >= 0) {
    const node = stack[depth] ?? 0;
    const e = cursor[depth] ?? 0;
    if (e < (firstEdge[node + 1] ?? 0)) {
      cursor[depth] = e + edgeFieldCount;
      if (!strong(e)) continue;
      const to = (edges[e + edgeTo] ?? 0) / nodeFieldCount;
      if (seen[to]) continue;
      seen[to] = 1;
      parent[to] = node;
      parentEdge[to] = e;
      depth++;
      stack[depth] = to;
      cursor[depth] = firstEdge[to] ?? 0;
    } else {
      order[node] = visited;
      postorder[visited++] = node;
      depth--;
    }
  }
}
const predecessors: number[][] = Array.from({ length: count }, () => []);
for (let i = 0; i < count; i++) {
  if (order[i] === -1) continue;
  for (let e = firstEdge[i] ?? 0; e < (firstEdge[i + 1] ?? 0); e += edgeFieldCount) {
    if (!strong(e)) continue;
    const to = (edges[e + edgeTo] ?? 0) / nodeFieldCount;
    (predecessors[to] as number[]).push(i);
  }
}
const idom = new Int32Array(count).fill(-1);
idom[0] = 0;
const intersect = (a: number, b: number): number => {
  let x = a;
  let y = b;
  while (x !== y) {
    while ((order[x] ?? 0) < (order[y] ?? 0)) x = idom[x] ?? 0;
    while ((order[y] ?? 0) < (order[x] ?? 0)) y = idom[y] ?? 0;
  }
  return x;
};
for (let changed = true; changed; ) {
  changed = false;
  for (let k = visited - 2; k >= 0; k--) {
    const node = postorder[k] ?? 0;
    let candidate = -1;
    for (const p of predecessors[node] as number[]) {
      if (idom[p] === -1) continue;
      candidate = candidate === -1 ? p : intersect(p, candidate);
    }
    if (candidate !== -1 && idom[node] !== candidate) {
      idom[node] = candidate;
      changed = true;
    }
  }
}
const retained = new Float64Array(count);
for (let k = 0; k < visited; k++) {
  const node = postorder[k] ?? 0;
  retained[node] = (retained[node] ?? 0) + selfSize(node);
  if (node !== 0) retained[idom[node] ?? 0] = (retained[idom[node] ?? 0] ?? 0) + (retained[node] ?? 0);
}
const edgeLabel = (e: number): string => {
  const type = edgeTypes[edges[e + edgeType] ?? 0];
  const name = edges[e + edgeName] ?? 0;
  return type === 'element' || type === 'hidden' ? `[${name}]` : String(strings[name]);
};
const path = (node: number): string => {
  const steps: string[] = [];
  for (let at = node; at > 0 && steps.length < 12; at = parent[at] ?? 0)
    steps.unshift(`${edgeLabel(parentEdge[at] ?? 0)}`);
  return steps.join('.');
};
console.log('\nlargest retainers (not counting those whose dominator is listed above them):');
const shown = new Set<number>();
const candidates = [...Array(visited).keys()]
  .map((k) => postorder[k] ?? 0)
  .filter((n) => n !== 0 && (retained[n] ?? 0) >= total / 200)
  .sort((a, b) => (retained[b] ?? 0) - (retained[a] ?? 0));
for (const node of candidates) {
  if (shown.size >= top) break;
  let dominatedByShown = false;
  for (let at = idom[node] ?? 0; at !== 0; at = idom[at] ?? 0)
    if (shown.has(at) && (retained[at] ?? 0) < (retained[node] ?? 0) * 1.5) dominatedByShown = true;
  if (dominatedByShown) continue;
  shown.add(node);
  console.log(`${mib(retained[node] ?? 0)} MiB  ${label(node)}  ← ${path(node)}`);
  // What it holds: its biggest directly dominated objects, by the edge that reaches them.
  const held = new Map<string, number>();
  for (let e = firstEdge[node] ?? 0; e < (firstEdge[node + 1] ?? 0); e += edgeFieldCount) {
    const to = (edges[e + edgeTo] ?? 0) / nodeFieldCount;
    if (idom[to] !== node || !strong(e)) continue;
    const name = edgeTypes[edges[e + edgeType] ?? 0] === 'element' ? '[n]' : edgeLabel(e);
    held.set(name, (held.get(name) ?? 0) + (retained[to] ?? 0));
  }
  for (const [name, size] of [...held].sort((a, b) => b[1] - a[1]).slice(0, 6))
    if (size >= total / 1000) console.log(`           ${mib(size)} MiB  .${name}`);
}

/**
 * Reads a snapshot bigger than V8's longest string (a leader tracking 100,000 workloads wrote
 * 740 MB): the numbers straight from the bytes, the strings section in pieces.
 */
function readSnapshot(path: string): Snapshot {
  const bytes = readFileSync(path);
  const find = (marker: string, from = 0): number => {
    const at = bytes.indexOf(marker, from);
    if (at < 0) throw new Error(`${path}: no ${marker} in the snapshot`);
    return at + marker.length;
  };
  const nodesAt = find('"nodes":[');
  const head = JSON.parse(`${bytes.toString('utf8', 0, nodesAt - '"nodes":['.length).replace(/,\s*$/, '')}}`);
  const numbers = (from: number): { values: number[]; end: number } => {
    const values: number[] = [];
    let value = 0;
    let inNumber = false;
    let at = from;
    for (; at < bytes.length; at++) {
      const c = bytes[at] as number;
      if (c >= 48 && c <= 57) {
        value = value * 10 + (c - 48);
        inNumber = true;
      } else {
        if (inNumber) values.push(value);
        value = 0;
        inNumber = false;
        if (c === 93) break; // ]
      }
    }
    return { values, end: at };
  };
  const nodes = numbers(nodesAt);
  const edges = numbers(find('"edges":[', nodes.end));
  const stringsAt = find('"strings":[', edges.end);
  // Strings one by one: each is a JSON string literal, parsed on its own.
  const strings: string[] = [];
  let at = stringsAt;
  while (at < bytes.length) {
    const c = bytes[at] as number;
    if (c === 93) break;
    if (c !== 34) {
      at++;
      continue;
    }
    let end = at + 1;
    while (bytes[end] !== 34) end += bytes[end] === 92 ? 2 : 1;
    strings.push(JSON.parse(bytes.toString('utf8', at, end + 1)) as string);
    at = end + 1;
  }
  return { snapshot: head.snapshot, nodes: nodes.values, edges: edges.values, strings };
}
