/** What each section of the store contract gets: the store under test and helpers. */
import { expect } from 'chai';
import { TroupeError } from '../../../src/errors.js';
import type { BlockLog, ExecutionRecord, Now, Store } from '../../../src/store/types.js';
import type { WorkflowDef } from '../../../src/model/types.js';

export interface StoreHarness {
  /** opens (or re-opens) the same database */
  open(now: Now): Promise<Store>;
  /** removes the database */
  destroy(): Promise<void>;
}

export type MakeHarness = () => Promise<StoreHarness>;

export interface ContractContext {
  store(): Store;
  /** closes the current store and opens the same database again */
  reopen(): Promise<Store>;
  clock: TestClock;
}

/** Every call advances 1 ms, so creation order is time order without sleeping. */
export class TestClock {
  private t = Date.parse('2024-01-01T00:00:00.000Z');
  readonly now: Now = () => new Date(this.t++);
  iso(offsetMs = 0): string {
    return new Date(this.t + offsetMs).toISOString();
  }
}

export async function rejectsWith(p: Promise<unknown>, code: string): Promise<TroupeError> {
  try {
    await p;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(TroupeError);
    expect((err as TroupeError).code).to.equal(code);
    return err as TroupeError;
  }
  throw new Error(`expected a rejection with ${code}`);
}

export function workflowDef(id: string, name = `Workflow ${id}`): WorkflowDef & { id: string } {
  return {
    id,
    name,
    variables: { unit: 'metric' },
    blocks: [{ id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [] } }],
    connections: [],
  };
}

export function execution(id: string, workflowId = 'wf', extra: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    id, workflowId, version: 1, status: 'queued', trigger: { type: 'api' }, input: { city: 'Paris' },
    output: null, error: null, startedAt: null, endedAt: null, durationMs: null, ...extra,
  };
}

export function blockLog(blockId: string, order: number, extra: Partial<BlockLog> = {}): BlockLog {
  return {
    blockId, blockName: blockId.toUpperCase(), blockType: 'function', status: 'completed', order,
    startedAt: '2024-01-01T00:00:01.000Z', endedAt: '2024-01-01T00:00:02.000Z', durationMs: 1000,
    input: { n: order }, output: { result: order }, error: null, errorHandled: false, attempts: 1, iteration: null, ...extra,
  };
}
