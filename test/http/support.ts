/**
 * A real app over a real runtime for HTTP tests: SQLite store (in memory or a temp file),
 * MemoryBus, an Engine with the real block types plus the test-only ones (sleep, fail, pick),
 * secrets from the secrets API. Requests go through `app.callback()` with supertest.
 */
import { createModelClient } from '../../src/providers/index.js';
import { pino, type Logger } from 'pino';
import request from 'supertest';
import type { Config } from '../../config/load.js';
import { loadConfig } from '../../config/load.js';
import { MemoryBus } from '../../src/bus/memory.js';
import { composeApp, type AppDeps, type ComposedApp } from '../../src/compose.js';
import type { Mailer } from '../../src/service/mailer.js';
import { Engine } from '../../src/engine/engine.js';
import { systemClock } from '../../src/runtime/clock.js';
import { storeSecretSource } from '../../src/service/index.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { sharedSandbox, testBlockTypes, testRegistry } from '../helpers/runtime.js';

export const ADMIN = 'admin-token-for-tests-0123456789';
export const SECRET_KEY = 'secret-key-for-tests-0123456789';

export interface HarnessOptions {
  config?: Partial<Config>;
  /** SQLite file; default ':memory:' */
  dbPath?: string;
  executionTimeoutMs?: number;
  now?: () => number;
  mailer?: Mailer;
  /** the process's own model keys, redacted in every run (as serve's OPENAI_API_KEY...) */
  redact?: string[];
  /** the built console to serve (default: the package's dist/console) */
  consoleDir?: string;
  /** the app's logger; default silent */
  logger?: Logger;
}

export interface Harness extends ComposedApp {
  store: Store;
  bus: MemoryBus;
  engine: Engine;
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

let models: ReturnType<typeof createModelClient> | undefined;
/** one model client for every harness (loopback allowed: tests talk to a scripted model server) */
function testModels(): ReturnType<typeof createModelClient> {
  models ??= createModelClient({ allowPrivateNetwork: true, allowHosts: [] });
  return models;
}

export function harnessEngine(store: Store, bus: MemoryBus, executionTimeoutMs = 20_000, redact?: string[]): Engine {
  return new Engine({
    bus,
    blockTypes: testBlockTypes,
    services: { sandbox: sharedSandbox(), clock: systemClock, functionTimeoutMs: 2000, functionMemoryMb: 32, models: testModels(), memory: store.memories },
    secrets: storeSecretSource(store, SECRET_KEY),
    executions: store.executions,
    busPrefix: 'httptest',
    executionTimeoutMs,
    ...(redact ? { redact } : {}),
  });
}

function appDeps(config: Readonly<Config>, store: Store, bus: MemoryBus, engine: Engine, now?: () => number, mailer?: Mailer, logger?: Logger): AppDeps {
  return {
    config,
    store,
    bus,
    engine,
    registry: testRegistry,
    logger: logger ?? pino({ level: 'silent' }),
    adminToken: ADMIN,
    secretKey: SECRET_KEY,
    eventPollMs: 20,
    ...(now ? { now } : {}),
    ...(mailer ? { mailer } : {}),
  };
}

/**
 * A second app on the same store with its own engine: another process of one service. It shares
 * the harness's bus unless given its own (an instance cut off from the others' messages).
 */
export function otherProcess(h: Harness, opts: { bus?: MemoryBus; now?: () => number } = {}): ReturnType<typeof request> {
  return request(otherInstance(h, opts).app.callback());
}

/** The same as otherProcess, with its services (its scheduler, its webhook sweep). */
export function otherInstance(h: Harness, opts: { bus?: MemoryBus; now?: () => number } = {}): ComposedApp {
  const bus = opts.bus ?? h.bus;
  return composeApp(appDeps(Object.freeze(loadConfig({})), h.store, bus, harnessEngine(h.store, bus), opts.now));
}

export function makeHarness(opts: HarnessOptions = {}): Harness {
  const config = Object.freeze({ ...loadConfig({}), ...opts.config });
  const store = openSqliteStore(opts.dbPath ?? ':memory:');
  const bus = new MemoryBus();
  const engine = harnessEngine(store, bus, opts.executionTimeoutMs, opts.redact);
  const deps = appDeps(config, store, bus, engine, opts.now, opts.mailer, opts.logger);
  const built = composeApp(opts.consoleDir === undefined ? deps : { ...deps, consoleDir: opts.consoleDir });
  const http = request(built.app.callback());
  return {
    ...built,
    store,
    bus,
    engine,
    http,
    async close() {
      // let executions still running end before the store goes away
      for (let i = 0; i < 200 && built.services.executions.inflight > 0; i++) await new Promise((r) => setTimeout(r, 10));
      await bus.close();
      await store.close();
    },
  };
}

export const auth = { Authorization: `Bearer ${ADMIN}` };

/** start → response echoing `city` (required string). */
export function echoWorkflow(id = 'echo', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    name: 'Echo',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'city', type: 'string', required: true }] } },
      { id: 'r', type: 'response', name: 'Reply', config: { status: 201, headers: { 'X-Custom': 'yes' }, data: { city: '<start.city>', v: 1 } } },
    ],
    connections: [{ from: 'start', to: 'r' }],
    ...extra,
  };
}

/** start → sleep(ms) → done, no response block: the sync envelope. */
export function sleepWorkflow(id = 'sleepy', ms = 0, value: unknown = 'slept'): Record<string, unknown> {
  return {
    id,
    name: 'Sleepy',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'nap', type: 'sleep', name: 'Nap', config: { ms, value } },
    ],
    connections: [{ from: 'start', to: 'nap' }],
  };
}

export function failWorkflow(id = 'failing'): Record<string, unknown> {
  return {
    id,
    name: 'Failing',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'boom', type: 'fail', name: 'Boom', config: { message: 'it broke' } },
    ],
    connections: [{ from: 'start', to: 'boom' }],
  };
}

/** Creates and deploys `doc`; returns the API key. */
export async function deployed(h: Harness, doc: Record<string, unknown>): Promise<{ key: string; keyId: string }> {
  await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
  const res = await h.http.post(`/api/workflows/${String(doc['id'])}/deploy`).set(auth).expect(201);
  const apiKey = (res.body as { apiKey: { key: string; id: string } }).apiKey;
  return { key: apiKey.key, keyId: apiKey.id };
}

/** Parses an SSE text body into events. */
export function parseSse(text: string): { event: string; data: unknown; id?: number }[] {
  return text
    .split('\n\n')
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk !== '' && !chunk.startsWith(':'))
    .map((chunk) => {
      const fields: Record<string, string> = {};
      for (const line of chunk.split('\n')) {
        const at = line.indexOf(': ');
        if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2);
      }
      return {
        event: fields['event'] ?? 'message',
        data: fields['data'] === undefined ? null : (JSON.parse(fields['data']) as unknown),
        ...(fields['id'] === undefined ? {} : { id: Number(fields['id']) }),
      };
    });
}

export async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Buffers a text/event-stream body as a string and parses it. */
export async function readSse(req: request.Test): Promise<{ status: number; headers: Record<string, string>; events: ReturnType<typeof parseSse> }> {
  const res = await req.buffer(true).parse((r, cb) => {
    let text = '';
    r.setEncoding('utf8');
    r.on('data', (chunk: string) => (text += chunk));
    r.on('end', () => cb(null, text));
  });
  return { status: res.status, headers: res.headers as Record<string, string>, events: parseSse(res.body as string) };
}
