#!/usr/bin/env node
// Lint step (make lint): no import cycle among the shipped sources, type-only imports included,
// and no import against the layer order (below). eslint's import-x/no-cycle skips `import type`,
// yet a type-only cycle still ties two modules together (DESIGN.md: dependencies point one way),
// so this reads every import TypeScript sees.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOTS = ['src', 'actors', 'config'];
const root = resolve(process.argv[2] ?? '.');
// the console is a browser bundle with its own tsconfig; the service never imports it
const SKIP = new Set([join(root, 'src', 'console'), join(root, 'node_modules')]);

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function sourcesUnder(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP.has(path)) out = out.concat(sourcesUnder(path));
    } else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Relative imports and re-exports of one file, `import type` and `export type` included. */
function importsOf(file) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const out = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = resolve(dirname(file), fileName).replace(/\.js$/, '');
    const hit = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find(isFile);
    if (hit !== undefined) out.push(hit);
  }
  return out;
}

/** Strongly connected components of more than one file (Tarjan): each one is a cycle. */
function cycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The layers of the execution core, lowest first (docs/architecture.md "Layers"): a file may
 * import from its own layer and the ones before it, never from one after it. Folders not named
 * here (blocks, bus, store, providers...) are the ports and adapters every layer may use.
 */
const LAYERS = [
  ['src/model'],
  ['src/runtime'],
  ['actors'],
  ['src/engine'],
  ['src/service', 'src/server'],
  ['src/http'],
  // the composition root: builds every layer in order (runtime, services, background work, the
  // app on the services) and starts the background work
  ['src/main.ts', 'src/compose.ts'],
  // the commands, each opening the service or a runtime through the root
  ['src/cli'],
];

/** The layer of a file: the one naming it or its nearest folder (a file named on its own wins over its folder). */
function layerOf(file) {
  const rel = relative(root, file).split('\\').join('/');
  let best = -1;
  let bestLength = 0;
  LAYERS.forEach((entries, layer) => {
    for (const e of entries) {
      if ((rel === e || rel.startsWith(`${e}/`)) && e.length > bestLength) {
        best = layer;
        bestLength = e.length;
      }
    }
  });
  return best;
}

/** Imports that point from a layer to a later one. */
function againstLayers(graph) {
  const found = [];
  for (const [from, targets] of graph) {
    const own = layerOf(from);
    if (own < 0) continue;
    for (const to of targets) if (layerOf(to) > own) found.push([from, to]);
  }
  return found;
}

const files = ROOTS.flatMap((r) => (existsSync(join(root, r)) && !isFile(join(root, r)) ? sourcesUnder(join(root, r)) : []));
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const found = cycles(graph);
for (const scc of found) console.error(`import cycle: ${scc.map((f) => relative(root, f)).sort().join(' <-> ')}`);
const upward = againstLayers(graph);
const order = LAYERS.map((folders) => folders.join(', ')).join(' -> ');
for (const [from, to] of upward) console.error(`import against the layer order (${order}): ${relative(root, from)} imports ${relative(root, to)}`);
if (found.length > 0 || upward.length > 0) process.exit(1);
console.log(`no import cycle among ${files.length} files (type-only imports included); layers in order: ${order}`);
