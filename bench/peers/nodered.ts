/**
 * Node-RED for `make bench-peers`: installed from the npm registry into a temporary folder
 * (never into the project), with a flows file holding the four scenarios and settings that keep
 * it on loopback, quiet and offline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const NODERED_VERSION = process.env['NODERED_VERSION'] ?? '4.1.15';

/** Installs node-red@VERSION under `root` unless it is there; returns the path of red.js. */
export function installNodeRed(root: string): string {
  const dir = join(root, `node-red-${NODERED_VERSION}`);
  const red = join(dir, 'node_modules', 'node-red', 'red.js');
  if (existsSync(red)) return red;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench-peers-node-red', private: true }));
  console.log(`installing node-red@${NODERED_VERSION} into ${dir} (npm registry)`);
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `node-red@${NODERED_VERSION}`], { cwd: dir, stdio: 'inherit', timeout: 900_000 });
  if (r.status !== 0 || !existsSync(red)) throw new Error(`npm install node-red@${NODERED_VERSION} failed (${r.status ?? r.signal})`);
  return red;
}

type Node = Record<string, unknown> & { id: string };

/** The flows: POST /bench/{s1,s2,s3f,s4}, the same work as the Troupe scenarios. */
export function nodeRedFlows(upstreamPort: number): Node[] {
  const z = 'bench';
  const nodes: Node[] = [{ id: z, type: 'tab', label: 'bench', disabled: false, info: '' }];
  let n = 0;
  const add = (node: Omit<Node, 'id'>, prefix: string): string => {
    const id = `${prefix}${(++n).toString(16).padStart(4, '0')}`;
    nodes.push({ id, z, x: 100 + n * 10, y: 100, ...node });
    return id;
  };
  const httpIn = (path: string, wires: string[]): string =>
    add({ type: 'http in', name: '', url: path, method: 'post', upload: false, swaggerDoc: '', wires: [wires] }, 'in');
  const httpOut = (): string => add({ type: 'http response', name: '', statusCode: '', headers: {}, wires: [] }, 'out');
  const fn = (code: string, next: string): string =>
    add({ type: 'function', name: '', func: code, outputs: 1, timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], wires: [[next]] }, 'fn');

  // S1: the parsed body back
  httpIn('/bench/s1', [httpOut()]);
  // S2: GET the upstream with ?n, answer its parsed JSON (keep-alive)
  const request = add({
    type: 'http request', name: '', method: 'GET', ret: 'obj', paytoqs: 'ignore', url: `http://127.0.0.1:${upstreamPort}/?n={{payload.n}}`,
    tls: '', persist: true, proxy: '', insecureHTTPParser: false, authType: '', senderr: false, headers: [], wires: [[httpOut()]],
  }, 'req');
  httpIn('/bench/s2', [request]);
  // S3f: ten function nodes in a chain, each adding fK = K
  let next = httpOut();
  for (let k = 10; k >= 1; k--) next = fn(`msg.payload = { ...msg.payload, f${k}: ${k} };\nreturn msg;`, next);
  httpIn('/bench/s3f', [next]);
  // S4: eight function nodes fed the same message, joined by request (msg.parts.id) into one object
  const join = add({
    type: 'join', name: '', mode: 'auto', build: 'object', property: 'payload', propertyType: 'msg', key: 'topic', joiner: '\\n',
    joinerType: 'str', useparts: false, accumulate: 'false', timeout: '', count: '', reduceRight: false, wires: [[httpOut()]],
  }, 'join');
  const branches = Array.from({ length: 8 }, (_, i) =>
    fn(`msg.parts = { id: msg._msgid, index: ${i}, count: 8, type: 'object', key: 'b${i + 1}' };\nmsg.payload = msg.payload.n;\nreturn msg;`, join));
  httpIn('/bench/s4', branches);
  return nodes;
}

/** settings.js: loopback, warn-level logs, no telemetry or installs. */
export function nodeRedSettings(port: number): string {
  const settings = {
    uiHost: '127.0.0.1',
    uiPort: port,
    flowFile: 'flows.json',
    credentialSecret: false,
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    diagnostics: { enabled: false, ui: false },
    runtimeState: { enabled: false, ui: false },
    telemetry: { enabled: false, updateNotification: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    editorTheme: { tours: false, projects: { enabled: false } },
    functionExternalModules: false,
  };
  return `module.exports = ${JSON.stringify(settings, null, 1)};\n`;
}
