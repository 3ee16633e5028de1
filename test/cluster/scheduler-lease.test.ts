/**
 * The scheduler's leader lease on a real JetStream key-value bucket (the scheduler actor's
 * cluster adapter, src/server/cluster/scheduler-lease.ts), two instances with clocks of their
 * own: one takes it and the other cannot while it is renewed; an expired one is taken over and
 * the old leader's next renewal says it lost it; a released one is taken at once.
 */
import { expect } from 'chai';
import pino from 'pino';
import { DEFAULT_LEASE_TIMING } from '../../src/model/lease.js';
import { openClusterBuckets, type ClusterBuckets } from '../../src/server/cluster/nats-kv.js';
import { SchedulerLease } from '../../src/server/cluster/scheduler-lease.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

describe('the scheduler leader lease (JetStream key-value)', function () {
  this.timeout(30_000);
  let nats: NatsServerHandle;
  let buckets: ClusterBuckets;
  let prefix = 0;

  before(async () => {
    nats = await startNatsServer();
  });

  beforeEach(async () => {
    await buckets?.nc.close();
    buckets = await openClusterBuckets(nats.url, `schedlease${(prefix += 1)}`, DEFAULT_LEASE_TIMING.expireMs);
  });

  after(async () => {
    await buckets?.nc.close();
    await nats?.stop();
  });

  function lease(instanceId: string, clock: { now: number }): SchedulerLease {
    return new SchedulerLease({ bucket: buckets.leader, instanceId, timing: DEFAULT_LEASE_TIMING, now: () => clock.now, logger: pino({ level: 'silent' }) });
  }

  it('is taken by one; the other takes it only once it expired, and the old leader learns it lost it', async () => {
    const clockA = { now: T0 };
    const clockB = { now: T0 };
    const a = lease('a', clockA);
    const b = lease('b', clockB);
    expect(await a.acquire()).to.equal(true);
    expect(await b.acquire(), 'held and fresh').to.equal(false);
    clockA.now += 2_000;
    expect(await a.renew()).to.equal(true);
    clockB.now += DEFAULT_LEASE_TIMING.expireMs + 1_000;
    expect(await b.acquire(), 'renewed 9 s ago on its clock: not expired').to.equal(false);
    clockB.now += 2_000;
    expect(await b.acquire(), 'expired').to.equal(true);
    expect(b.held).to.equal(true);
    expect(await a.renew(), 'the lease was written by another since').to.equal(false);
    expect(a.held).to.equal(false);
    await a.release();
    expect(await b.renew(), 'a release by the old leader leaves the new one\'s lease alone').to.equal(true);
  });

  it('is taken at once once released, and a release waits for a take in flight', async () => {
    const clock = { now: T0 };
    const a = lease('a', clock);
    const b = lease('b', clock);
    const taking = a.acquire();
    await a.release();
    expect(await taking).to.equal(true);
    expect(a.held, 'the release came after the take: nothing is left held').to.equal(false);
    expect(await b.acquire(), 'released: taken without waiting for the expiry').to.equal(true);
  });
});
