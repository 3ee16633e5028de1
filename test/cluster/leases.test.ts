/**
 * Execution leases on a real JetStream key-value bucket, two keepers with clocks of their own
 * (the injected clock): a renewed lease is left alone, an expired or released one is taken over
 * by one keeper, and the keeper that lost a lease it still ran stops its run instead of
 * overwriting the new owner's lease.
 */
import { expect } from 'chai';
import pino from 'pino';
import { DEFAULT_LEASE_TIMING } from '../../src/model/lease.js';
import { LeaseKeeper } from '../../src/server/cluster/leases.js';
import { openClusterBuckets, type ClusterBuckets } from '../../src/server/cluster/nats-kv.js';
import type { ResumeOutcome } from '../../src/server/resumption.js';
import type { ExecutionRecord, ExecutionRepo } from '../../src/store/types.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function running(id: string, startedAt: number): ExecutionRecord {
  return { id, workflowId: 'w', version: 1, status: 'running', trigger: { type: 'api' }, input: {}, output: null, error: null, startedAt: new Date(startedAt).toISOString(), endedAt: null, durationMs: null, createdAt: new Date(startedAt).toISOString() };
}

interface Keeper {
  keeper: LeaseKeeper;
  clock: { now: number };
  local: Set<string>;
  resumed: string[];
  lost: string[];
}

describe('execution leases (JetStream key-value)', function () {
  this.timeout(30_000);
  let nats: NatsServerHandle;
  let buckets: ClusterBuckets;
  let records: ExecutionRecord[] = [];

  before(async () => {
    nats = await startNatsServer();
    buckets = await openClusterBuckets(nats.url, 'leasetest', DEFAULT_LEASE_TIMING.expireMs);
  });

  after(async () => {
    await buckets?.nc.close();
    await nats?.stop();
  });

  function keeper(instanceId: string): Keeper {
    const k: Keeper = { clock: { now: T0 }, local: new Set(), resumed: [], lost: [], keeper: undefined as unknown as LeaseKeeper };
    const executions = { listByStatus: async () => records.filter((r) => r.status === 'running') } as unknown as ExecutionRepo;
    k.keeper = new LeaseKeeper({
      bucket: buckets.leases, instanceId, timing: DEFAULT_LEASE_TIMING, now: () => k.clock.now, logger: pino({ level: 'silent' }),
      localIds: () => [...k.local],
      executions,
      resume: async (rec): Promise<ResumeOutcome> => {
        k.resumed.push(rec.id);
        k.local.add(rec.id);
        return 'resumed';
      },
      lost: (id) => {
        k.lost.push(id);
        k.local.delete(id);
      },
    });
    return k;
  }

  it('leaves a renewed lease alone, takes an expired one over once, and the old owner stops its run', async () => {
    records = [running('x1', T0)];
    const a = keeper('a');
    const b = keeper('b');
    const c = keeper('c');
    a.local.add('x1');
    await a.keeper.renew();
    b.clock.now = T0 + 5_000;
    await b.keeper.sweep();
    expect(b.resumed).to.deep.equal([]);
    // a stops renewing (a pause): past the expiry both b and c look, one wins the lease
    b.clock.now = T0 + 10_000;
    c.clock.now = T0 + 10_000;
    await Promise.all([b.keeper.sweep(), c.keeper.sweep()]);
    expect([...b.resumed, ...c.resumed]).to.deep.equal(['x1']);
    // a wakes up: its renewal finds the lease taken, and its run stops instead of overwriting it
    a.clock.now = T0 + 11_000;
    await a.keeper.renew();
    expect(a.lost).to.deep.equal(['x1']);
    const winner = b.resumed.length === 1 ? b : c;
    winner.clock.now = T0 + 12_000;
    await winner.keeper.renew();
    expect(winner.lost).to.deep.equal([]);
  });

  it('takes a released lease over at once, and an orphan without a lease once its record is older than the expiry', async () => {
    records = [running('y1', T0), running('y2', T0 + 20_000)];
    const a = keeper('a2');
    const b = keeper('b2');
    a.local.add('y1');
    await a.keeper.renew();
    await a.keeper.handOver(['y1']);
    a.local.delete('y1');
    b.clock.now = T0 + 21_000;
    await b.keeper.sweep();
    expect(b.resumed).to.deep.equal(['y1']);
    // y2 has no lease: started 1 s ago it may be a run that has not renewed yet
    b.clock.now = T0 + 29_000;
    await b.keeper.sweep();
    expect(b.resumed).to.deep.equal(['y1']);
    b.clock.now = T0 + 30_000;
    await b.keeper.sweep();
    expect(b.resumed).to.deep.equal(['y1', 'y2']);
  });
});
