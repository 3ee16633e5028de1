/**
 * Drives `node bin/troupe.js serve` as a child process: spawn on port 0 with a temp data dir,
 * wait for the "listening" line, talk to it with fetch, stop it with a signal.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { ensureBuilt } from '../helpers/build.js';

export const root = new URL('../../', import.meta.url).pathname;

// every helper here spawns bin/troupe.js, which runs dist/
ensureBuilt();

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stdout(): string;
  stderr(): string;
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | string>;
}

/** The parent's env without any Troupe setting, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(TROUPE_|OPENAI_|ANTHROPIC_)/.test(k) && k !== 'NATS_URL' && k !== 'MONGODB_URL' && k !== 'DATABASE_URL') env[k] = v;
  }
  return { ...env, TROUPE_PORT: '0', TROUPE_LOG_LEVEL: 'warn', ...extra };
}

export async function startServe(dataDir: string, args: string[] = [], extra: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['bin/troupe.js', 'serve', ...args], {
    cwd: root,
    env: cleanEnv({ TROUPE_DATA_DIR: dataDir, ...extra }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in time\nstdout: ${out}\nstderr: ${err}`)), 60_000);
    const check = (): void => {
      const m = /troupe listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });
  return { child, url, stdout: () => out, stderr: () => err, exited };
}

/** Stops the child if it still runs; waits for it to be gone. */
export async function ensureStopped(p: ServeProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (p === undefined || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(signal);
  await p.exited;
}

export function troupeSync(args: string[], env: Record<string, string>): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/troupe.js', ...args], { cwd: root, encoding: 'utf8', env: cleanEnv(env), timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function troupeAsync(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/troupe.js', ...args], { cwd: root, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(url: string, method: string, path: string, opts: { token?: string; apiKey?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey !== undefined) headers['X-API-Key'] = opts.apiKey;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url + path, {
    method,
    headers,
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body };
}

/** start → a function that busy-waits `ms` → response: executions stay in flight a while. */
export function busyWorkflow(id: string, ms: number): unknown {
  return {
    id,
    name: `Busy ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
      {
        id: 'work',
        type: 'function',
        name: 'Work',
        config: { code: `const t0 = Date.now();\nwhile (Date.now() - t0 < ${ms}) {}\nreturn { n: <start.n> };` },
      },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { n: '<work.result.n>' } } },
    ],
    connections: [
      { from: 'start', to: 'work' },
      { from: 'work', to: 'reply' },
    ],
  };
}
