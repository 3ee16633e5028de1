/**
 * Run the same mocha tests on both bus adapters:
 *
 *   forEachBus('execution semantics', (getBus, kind) => {
 *     it('joins once', async () => { const bus = getBus(); ... });
 *   });
 *
 * defines `execution semantics [memory]` and `execution semantics [nats]`. Each test gets a fresh
 * bus (closed after the test). The NATS variant connects to ONE nats-server shared by the whole
 * mocha run, started lazily on first use and stopped by a root `after` hook (and on process exit).
 */
import { MemoryBus } from '../../src/bus/memory.js';
import { NatsBus } from '../../src/bus/nats.js';
import type { Bus, BusMsg } from '../../src/bus/types.js';
import { startNatsServer, type NatsServerHandle } from './nats-server.js';

export type BusKind = 'memory' | 'nats';

let shared: Promise<NatsServerHandle> | undefined;

/** The nats-server shared by this mocha run (started on first call). */
export function sharedNatsServer(): Promise<NatsServerHandle> {
  if (shared === undefined) {
    const starting = startNatsServer();
    shared = starting;
    // a failed start is not cached: the next suite retries and reports the same clear error
    starting.catch(() => {
      if (shared === starting) shared = undefined;
    });
  }
  return shared;
}

export async function stopSharedNatsServer(): Promise<void> {
  const current = shared;
  shared = undefined;
  if (current === undefined) return;
  try {
    await (await current).stop();
  } catch {
    // it never started: nothing to stop
  }
}

// Registered while mocha loads the first test file importing this module, i.e. on the root suite.
if (typeof after === 'function') after(stopSharedNatsServer);

const errorsByBus = new WeakMap<Bus, unknown[]>();

/** Exceptions thrown by subscription handlers of a bus made by this helper (its onError hook). */
export function handlerErrors(bus: Bus): unknown[] {
  return errorsByBus.get(bus) ?? [];
}

/** A new bus of `kind` (for NATS: connected to the shared server); the caller closes it. */
export async function openBus(kind: BusKind): Promise<Bus> {
  const errors: unknown[] = [];
  const onError = (err: unknown, _msg: BusMsg): void => {
    errors.push(err);
  };
  const bus: Bus =
    kind === 'memory'
      ? new MemoryBus({ onError })
      : await NatsBus.connect((await sharedNatsServer()).url, { name: 'troupe-test', onError });
  errorsByBus.set(bus, errors);
  return bus;
}

export function forEachBus(title: string, fn: (getBus: () => Bus, kind: BusKind) => void): void {
  for (const kind of ['memory', 'nats'] as const) {
    describe(`${title} [${kind}]`, function () {
      let bus: Bus | undefined;
      if (kind === 'nats') {
        before(async function () {
          this.timeout(20_000);
          await sharedNatsServer();
        });
      }
      beforeEach(async function () {
        bus = await openBus(kind);
      });
      afterEach(async function () {
        const current = bus;
        bus = undefined;
        await current?.close();
      });
      fn(() => {
        if (bus === undefined) throw new Error('getBus() is only available inside a test or hook of forEachBus');
        return bus;
      }, kind);
    });
  }
}
