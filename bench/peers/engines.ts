/**
 * The engines `make bench-peers` compares, each a child process on a free loopback port:
 * Node-RED (from the temporary install), `troupe serve` from this checkout's compiled build
 * (embedded defaults), and `troupe serve` on NATS (a nats-server started here with JetStream).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdminClient } from '../../src/server/admin-client.js';
import { generateSecret } from '../../src/server/secrets-at-rest.js';
import { findNatsServer, freePort } from '../../test/helpers/nats-server.js';
import { SCENARIOS, scenarioWorkflows, type ScenarioKey } from '../lib/scenarios.js';
import type { Target } from './load.js';
import { nodeRedFlows, nodeRedSettings } from './nodered.js';

export interface Engine {
  name: string;
  /** processes whose RSS is the engine's */
  pids: number[];
  targets: Record<ScenarioKey, Target>;
  stop(): Promise<void>;
}

const ROOT = new URL('../../', import.meta.url).pathname;
export const BODY = { n: 42, msg: 'hello' };

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resolves with the first match of `pattern` on the child's output (stdout or stderr), or rejects when it exits or times out. */
function waitForOutput(child: ChildProcess, pattern: RegExp, what: string, ms = 60_000): Promise<RegExpExecArray> {
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${ms} ms:\n${text.slice(-2000)}`)), ms);
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const m = pattern.exec(text);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}):\n${text.slice(-2000)}`));
    });
  });
}

async function answering(child: ChildProcess, url: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the process exited (${child.exitCode}) before ${url} answered`);
    const ok = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(BODY) })
      .then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer in ${ms} ms`);
}

export async function startNodeRed(red: string, runDir: string, upstreamPort: number): Promise<Engine> {
  const home = join(runDir, 'node-red');
  mkdirSync(home, { recursive: true });
  const port = await freePort();
  writeFileSync(join(home, 'settings.js'), nodeRedSettings(port));
  writeFileSync(join(home, 'flows.json'), JSON.stringify(nodeRedFlows(upstreamPort)));
  const child = spawn(process.execPath, [red, '--userDir', home, '--settings', join(home, 'settings.js')], { stdio: ['ignore', 'pipe', 'pipe'] });
  // its logs are at warn: it is up once its first flow answers
  await answering(child, `http://127.0.0.1:${port}/bench/s1`);
  const target = (key: ScenarioKey): Target => ({
    url: `http://127.0.0.1:${port}/bench/${key}`,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(BODY),
  });
  return {
    name: 'Node-RED',
    pids: [child.pid ?? 0],
    targets: { s1: target('s1'), s2: target('s2'), s3f: target('s3f'), s4: target('s4') },
    stop: () => stopChild(child),
  };
}

async function startNats(runDir: string): Promise<{ url: string; child: ChildProcess }> {
  const bin = findNatsServer();
  if (bin === undefined) throw new Error('nats-server not found: `make setup` installs it');
  const port = await freePort();
  const store = join(runDir, 'nats');
  mkdirSync(store, { recursive: true });
  const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForOutput(child, /Server is ready/, 'nats-server', 15_000);
  return { url: `nats://127.0.0.1:${port}`, child };
}

/** `troupe serve` (bin/troupe.js, the compiled build) with its defaults but the limits a load would hit. */
export async function startTroupe(name: string, runDir: string, upstreamPort: number, nats: boolean): Promise<Engine> {
  const dataDir = join(runDir, name.replace(/\W+/g, '-'));
  const bus = nats ? await startNats(runDir) : undefined;
  const token = generateSecret();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    TROUPE_PORT: '0',
    TROUPE_DATA_DIR: dataDir,
    TROUPE_ADMIN_TOKEN: token,
    TROUPE_LOG_LEVEL: 'warn',
    // the upstream is on loopback; the default per-key, in-flight and per-host limits would throttle the load
    TROUPE_ALLOW_PRIVATE_NETWORK: 'true',
    TROUPE_KEY_RATE_LIMIT: '100000000',
    TROUPE_MAX_INFLIGHT: '100000',
    TROUPE_HOST_RPS: '100000000',
    ...(bus === undefined ? {} : { NATS_URL: bus.url }),
  };
  const child = spawn(process.execPath, [join(ROOT, 'bin/troupe.js'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async (): Promise<void> => {
    await stopChild(child);
    if (bus !== undefined) await stopChild(bus.child);
  };
  try {
    const url = (await waitForOutput(child, /troupe listening on (http:\/\/\S+)/, name))[1] as string;
    const admin = new AdminClient(url, token);
    const docs = scenarioWorkflows(upstreamPort);
    const targets = {} as Record<ScenarioKey, Target>;
    for (const key of SCENARIOS) {
      const deployed = await admin.deployDocument(docs[key]);
      targets[key] = {
        url: deployed.endpoint,
        headers: { 'Content-Type': 'application/json', 'X-API-Key': deployed.apiKey.key },
        body: JSON.stringify({ input: BODY }),
      };
    }
    return { name, pids: [child.pid ?? 0, ...(bus?.child.pid === undefined ? [] : [bus.child.pid])], targets, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
