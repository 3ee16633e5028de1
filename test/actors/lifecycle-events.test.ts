/**
 * The engine's outbox of lifecycle events (src/runtime/event-outbox.ts) over a bus that can be
 * switched between reachable, reconnecting and closed, as a NatsBus is: held events go out in
 * order once it is reachable again, the queue is bounded (oldest dropped, one warning per
 * outage), and a closed bus drops them, said once. The real outage is test/contract/bus-outage.test.ts.
 */
import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { closedError, unavailableError } from '../../src/bus/checks.js';
import type { Bus } from '../../src/bus/types.js';
import { TroupeError } from '../../src/errors.js';
import { EventOutbox } from '../../src/runtime/event-outbox.js';
import { FakeClock } from '../helpers/fake-clock.js';

type State = 'up' | 'reconnecting' | 'closed';

/** a bus whose reachability the test decides; records what it publishes */
function switchableBus(): { bus: Bus; sent: unknown[]; set(s: State): void } {
  let state: State = 'up';
  const sent: unknown[] = [];
  const bus = {
    kind: 'nats',
    get connected() {
      return state === 'up';
    },
    publish(_subject: string, data: unknown) {
      if (state === 'closed') throw closedError();
      if (state === 'reconnecting') throw unavailableError();
      sent.push(data);
    },
  } as unknown as Bus;
  return { bus, sent, set: (s) => (state = s) };
}


describe('lifecycle events across a bus outage (EventOutbox)', () => {
  it('publishes at once while the bus is up', () => {
    const { bus, sent } = switchableBus();
    const outbox = new EventOutbox(bus, () => undefined);
    outbox.publish('e.started', 1);
    expect(sent).to.deep.equal([1]);
    expect(outbox.held).to.equal(0);
  });

  it('holds events while the bus reconnects and publishes them in order once it has been back for the grace period, new ones after them', async () => {
    const { bus, sent, set } = switchableBus();
    const reports: unknown[] = [];
    const clock = new FakeClock();
    const outbox = new EventOutbox(bus, (e) => reports.push(e), { graceMs: 600, clock });
    outbox.publish('e', 'a.started');
    set('reconnecting');
    outbox.publish('e', 'a.failed');
    outbox.publish('e', 'b.failed');
    expect(outbox.held).to.equal(2);
    await clock.advance(300);
    set('up');
    outbox.publish('e', 'c.started');
    // the other services' clients are given time to reconnect first
    await clock.advance(300);
    expect(sent).to.deep.equal(['a.started']);
    await clock.advance(500);
    expect(sent, 'still within the grace period').to.deep.equal(['a.started']);
    await clock.advance(300);
    expect(sent).to.deep.equal(['a.started', 'a.failed', 'b.failed', 'c.started']);
    expect(outbox.held).to.equal(0);
    outbox.publish('e', 'c.completed');
    expect(sent.at(-1), 'nothing held: at once').to.equal('c.completed');
    expect(reports).to.deep.equal([]);
  });

  it('keeps at most its capacity, dropping the oldest with one warning per outage', async () => {
    const { bus, sent, set } = switchableBus();
    const reports: unknown[] = [];
    const clock = new FakeClock();
    const outbox = new EventOutbox(bus, (e) => reports.push(e), { capacity: 3, graceMs: 0, clock });
    set('reconnecting');
    for (let i = 1; i <= 6; i++) outbox.publish('e', i);
    expect(outbox.held).to.equal(3);
    expect(reports).to.have.length(1);
    expect(reports[0]).to.be.instanceOf(TroupeError).with.property('code', 'BUS_UNAVAILABLE');
    expect((reports[0] as Error).message).to.match(/3 execution lifecycle events are waiting.*oldest are dropped/);
    set('up');
    await clock.advance(400);
    expect(sent).to.deep.equal([4, 5, 6]);
    // a later outage warns again
    set('reconnecting');
    for (let i = 7; i <= 10; i++) outbox.publish('e', i);
    expect(reports).to.have.length(2);
  });

  it('drops what it holds when the bus closes, said once', async () => {
    const { bus, set } = switchableBus();
    const reports: unknown[] = [];
    const clock = new FakeClock();
    const outbox = new EventOutbox(bus, (e) => reports.push(e), { graceMs: 0, clock });
    set('reconnecting');
    outbox.publish('e', 1);
    outbox.publish('e', 2);
    set('closed');
    await clock.advance(400);
    expect(outbox.held).to.equal(0);
    expect(reports.map((e) => (e as TroupeError).code)).to.deep.equal(['BUS_CLOSED']);
    expect((reports[0] as Error).message).to.match(/^2 execution lifecycle events/);
  });

  it('never holds anything on the in-process bus: closed is reported, as before', async () => {
    const bus = new MemoryBus();
    const reports: unknown[] = [];
    const outbox = new EventOutbox(bus, (e) => reports.push(e));
    const got: unknown[] = [];
    bus.subscribe('e.x', (m) => got.push(m.data));
    outbox.publish('e.x', 1);
    await bus.flush();
    expect(got).to.deep.equal([1]);
    await bus.close();
    outbox.publish('e.x', 2);
    expect(outbox.held).to.equal(0);
    expect(reports.map((e) => (e as TroupeError).code)).to.deep.equal(['BUS_CLOSED']);
  });
});
