/**
 * Test launcher for a real nats-server: a free loopback port, a temporary JetStream directory,
 * wait until it accepts connections, and clean up afterwards (also on process exit, so a crashed
 * run leaves no server behind).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface NatsServerHandle {
  url: string;
  stop(): Promise<void>;
}

const MISSING = 'nats-server not found: install with `apt-get install -y nats-server`, or run `make setup`';
const START_TIMEOUT_MS = 10_000;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** NATS_SERVER_BIN, then /usr/sbin/nats-server (Debian's package), then PATH. */
export function findNatsServer(): string | undefined {
  const candidates = [process.env['NATS_SERVER_BIN'], '/usr/sbin/nats-server'];
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '') candidates.push(join(dir, 'nats-server'));
  }
  return candidates.find((c): c is string => c !== undefined && c !== '' && isExecutable(c));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitUntilAccepting(child: ChildProcess, port: number, stderr: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`nats-server exited early (${child.exitCode ?? child.signalCode}):\n${stderr()}`);
    }
    if (await canConnect(port)) return;
    await sleep(25);
  }
  throw new Error(`nats-server did not accept connections on port ${port} within ${START_TIMEOUT_MS} ms:\n${stderr()}`);
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  // no pid: the spawn itself failed, there is nothing to wait for
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * `jetstream: false` starts a server without JetStream (what a plain NATS deployment is); `port`
 * starts it on that port (a server come back after an outage, for the clients that knew it);
 * `maxPayload` sets the server's max_payload (default 1 MiB), which only a config file can;
 * `auth` makes it require a user and password, or a token.
 */
export async function startNatsServer(opts: { jetstream?: boolean; port?: number; maxPayload?: number; auth?: { user: string; pass: string } | { token: string } } = {}): Promise<NatsServerHandle> {
  const bin = findNatsServer();
  if (bin === undefined) throw new Error(MISSING);
  const port = opts.port ?? (await freePort());
  const storeDir = mkdtempSync(join(tmpdir(), 'troupe-nats-'));
  const args = ['-a', '127.0.0.1', '-p', String(port), ...(opts.jetstream === false ? [] : ['-js', '-sd', storeDir])];
  if (opts.auth !== undefined) args.push(...('token' in opts.auth ? ['--auth', opts.auth.token] : ['--user', opts.auth.user, '--pass', opts.auth.pass]));
  if (opts.maxPayload !== undefined) {
    const file = join(storeDir, 'server.conf');
    writeFileSync(file, `max_payload: ${opts.maxPayload}\n`);
    args.push('-c', file);
  }
  const child = spawn(bin, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Keep only the tail of the log (it is read, so the pipe never fills and stalls the server).
  let log = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    log = (log + chunk).slice(-4000);
  });
  const cleanupOnExit = (): void => {
    child.kill('SIGKILL');
    rmSync(storeDir, { recursive: true, force: true });
  };
  process.once('exit', cleanupOnExit);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      process.removeListener('exit', cleanupOnExit);
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 5000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5000);
      }
      rmSync(storeDir, { recursive: true, force: true });
    })());

  try {
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    await waitUntilAccepting(child, port, () => log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `nats://127.0.0.1:${port}`, stop };
}
