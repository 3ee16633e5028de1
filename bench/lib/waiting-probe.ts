/**
 * Memory held per waiting execution (docs/waiting.md): N executions that each park on a one-hour
 * wait, recorded in a SQLite store in a temp dir, then the process's RSS growth once they have
 * all parked (after a GC when `--expose-gc` is on). A parked execution should hold nothing: its
 * state is the record, its logs and one `waits` row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { blockTypes } from '../../src/blocks/index.js';
import { MemoryBus } from '../../src/bus/memory.js';
import { systemClock } from '../../src/runtime/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';

const DOC = {
  id: 'napper',
  name: 'napper',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'w', type: 'wait', name: 'Nap', config: { duration: 'PT1H' } },
  ],
  connections: [{ from: 'start', to: 'w' }],
};

function collect(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
}

export async function measureWaitingMemory(count = 10_000, inflight = 200): Promise<{ count: number; rssMiB: number; bytesPer: number; parked: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-waiting-'));
  const store = openSqliteStore(join(dir, 'troupe.db'));
  const sandbox = new IsolatedVmSandbox();
  const engine = new Engine({
    bus: new MemoryBus(), blockTypes, secrets: { get: async () => undefined }, busPrefix: 'bench', executionTimeoutMs: 600_000,
    executions: store.executions, parkAfterMs: 0,
    services: { sandbox, clock: systemClock, functionTimeoutMs: 5000, functionMemoryMb: 64, waits: store.waits },
  });
  const { compiled } = loadWorkflow(DOC, blockTypeRegistry());
  const run = async (): Promise<string> => (await (await engine.start(compiled, { workflowId: 'napper', version: 1, input: {}, trigger: { type: 'api' } })).done).status;
  try {
    // warm up: code paths, caches and the store's pages exist before the baseline
    await Promise.all(Array.from({ length: inflight }, run));
    collect();
    const base = process.memoryUsage().rss;
    let parked = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        next += 1;
        if ((await run()) === 'waiting') parked += 1;
      }
    };
    await Promise.all(Array.from({ length: inflight }, worker));
    collect();
    const grown = process.memoryUsage().rss - base;
    return { count, rssMiB: grown / 2 ** 20, bytesPer: grown / count, parked };
  } finally {
    await store.close();
    await sandbox.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}
