/** An engine with language models and conversation memory, for the agent suites. */
import type { Bus } from '../../src/bus/types.js';
import { createModelClient } from '../../src/providers/index.js';
import type { Engine } from '../../src/engine/engine.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { openBus, type BusKind } from './buses.js';
import { testEngine } from './runtime.js';

export interface AgentRuntime {
  store: Store;
  bus: Bus;
  engine: Engine;
}

/** Registers the suite's hooks; the fields are set once `before` has run. */
export function useAgentRuntime(opts: { bus?: BusKind; secrets?: Record<string, string> } = {}): AgentRuntime {
  const rt = {} as AgentRuntime;
  // loopback allowed: the suites talk to a scripted model server
  const models = createModelClient({ allowPrivateNetwork: true, allowHosts: [] });
  before(async () => {
    rt.store = openSqliteStore(':memory:');
    rt.bus = await openBus(opts.bus ?? 'memory');
    rt.engine = testEngine(rt.bus, { models, memory: rt.store.memories, ...(opts.secrets ? { secrets: opts.secrets } : {}) });
  });
  after(async () => {
    models.close();
    await rt.bus.close();
    await rt.store.close();
  });
  return rt;
}
