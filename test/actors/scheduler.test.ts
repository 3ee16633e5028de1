/**
 * The scheduler actor's lifecycle (actors/scheduler.ts; docs/architecture.md "Scheduler
 * actor") on a simulated clock with recording ports: it leads at once with the one-process
 * lease, follows until a cluster lease is granted, ticks just after each whole second while
 * leading, steps down when a renewal finds the lease taken and takes it again later, and on a
 * stop lets the tick in progress end before it releases the lease.
 */
import { expect } from 'chai';
import pino from 'pino';
import { SimulatedClock } from 'xstate';
import { soleLeader, startScheduler, type LeaderLeasePort, type SchedulerPorts } from '../../actors/scheduler.js';

const RENEW_MS = 2_000;

interface Recorder {
  ports: SchedulerPorts;
  clock: SimulatedClock;
  calls: string[];
  /** what the next acquire / renew answers */
  grant: { acquire: boolean; renew: boolean };
  /** a tick in progress holds until this is called (when set) */
  holdTicks: boolean;
  release(): void;
  /** the tick in progress, which deactivate waits for (as the schedule service's does) */
  current: Promise<number> | undefined;
}

function recorder(lease?: Partial<LeaderLeasePort>): Recorder {
  const clock = new SimulatedClock();
  clock.set(Date.parse('2026-11-27T10:00:00.300Z'));
  const calls: string[] = [];
  let releaseTick: (() => void) | undefined;
  const r: Recorder = {
    clock,
    calls,
    grant: { acquire: true, renew: true },
    holdTicks: false,
    release: () => releaseTick?.(),
    current: undefined,
    ports: {
      lease: {
        acquire: async () => (calls.push('acquire'), r.grant.acquire),
        renew: async () => (calls.push('renew'), r.grant.renew),
        release: async () => void calls.push('release'),
        ...lease,
      },
      activate: () => void calls.push(`activate@${clock.now() % 10_000}`),
      tick: () => {
        calls.push(`tick@${clock.now() % 10_000}`);
        r.current = (async () => {
          if (r.holdTicks) await new Promise<void>((resolve) => (releaseTick = resolve));
          calls.push('tick-end');
          return 0;
        })();
        return r.current;
      },
      deactivate: async () => {
        calls.push('deactivate');
        await r.current;
      },
      now: () => clock.now(),
      renewMs: RENEW_MS,
      logger: pino({ level: 'silent' }),
    },
  };
  return r;
}

/** lets the invoked promises settle */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

async function advance(r: Recorder, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    r.clock.increment(step);
    await settle();
  }
}

describe('the scheduler actor', () => {
  it('alone, leads at once and ticks just after each whole second; a stop ends the term', async () => {
    const r = recorder(soleLeader);
    const actor = startScheduler(r.ports, r.clock);
    await settle();
    expect(actor.leading).to.equal(true);
    await advance(r, 2_000, 5);
    // activated at .300, ticked at once, then at the start of each second (.005 past it)
    expect(r.calls.filter((c) => c.startsWith('activate') || c.startsWith('tick@'))).to.deep.equal(['activate@300', 'tick@300', 'tick@1005', 'tick@2005']);
    await actor.stop();
    expect(r.calls.at(-1)).to.equal('deactivate');
    expect(actor.state).to.equal('stopped');
    const before = r.calls.length;
    await advance(r, 3_000);
    expect(r.calls.length, 'nothing after the stop').to.equal(before);
  });

  it('follows until the lease is granted, trying once per renewal period', async () => {
    const r = recorder();
    r.grant.acquire = false;
    const actor = startScheduler(r.ports, r.clock);
    await settle();
    expect(actor.state).to.equal('follower');
    await advance(r, 4_000);
    expect(r.calls).to.deep.equal(['acquire', 'acquire', 'acquire']);
    r.grant.acquire = true;
    await advance(r, 2_000);
    expect(actor.leading).to.equal(true);
    expect(r.calls.filter((c) => c.startsWith('activate'))).to.have.length(1);
    await actor.stop();
  });

  it('renews while leading; a renewal that finds the lease taken stops firing, and it follows again', async () => {
    const r = recorder();
    const actor = startScheduler(r.ports, r.clock);
    await settle();
    await advance(r, 4_000);
    expect(r.calls.filter((c) => c === 'renew')).to.have.length(2);
    r.grant.renew = false;
    r.grant.acquire = false;
    await advance(r, 2_000);
    expect(actor.state).to.equal('follower');
    const deposedAt = r.calls.lastIndexOf('deactivate');
    expect(deposedAt, 'the term ended').to.be.above(0);
    expect(r.calls, 'a deposed leader releases nothing: the lease is another\'s').to.not.include('release');
    await advance(r, 3_000);
    expect(r.calls.slice(deposedAt).some((c) => c.startsWith('tick@')), 'no tick after it lost the lease').to.equal(false);
    r.grant.acquire = true;
    r.grant.renew = true;
    await advance(r, 2_000);
    expect(actor.leading, 'leads again once the lease is free').to.equal(true);
    await actor.stop();
  });

  it('on a stop, lets the tick in progress end before it releases the lease', async () => {
    const r = recorder();
    r.holdTicks = true;
    const actor = startScheduler(r.ports, r.clock);
    await settle();
    expect(r.calls.at(-1)).to.match(/^tick@/);
    let stopped = false;
    const stopping = actor.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).to.equal(false);
    expect(r.calls).to.not.include('release');
    r.release();
    await stopping;
    expect(r.calls.slice(-3)).to.deep.equal(['deactivate', 'tick-end', 'release']);
  });
});
