import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { createOutboundClient } from '../../src/outbound/client.js';
import { createHostThrottle } from '../../src/outbound/throttle.js';
import { TroupeError } from '../../src/errors.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { ManualClock, flush, outboundRequest } from './support.js';

const never = new AbortController().signal;

describe('host throttle', () => {
  it('spaces the starts of one host 1/rps apart (no burst saved up while idle)', async () => {
    const clock = new ManualClock();
    const throttle = createHostThrottle({ rps: 10, maxInflight: 100, clock });
    const started: number[] = [];
    for (let i = 0; i < 5; i++) void throttle.acquire('api.test', never).then((release) => (started.push(clock.now()), release()));
    await flush();
    expect(started).to.deep.equal([0]);
    await clock.advance(99);
    expect(started).to.have.length(1);
    await clock.advance(1);
    expect(started).to.deep.equal([0, 100]);
    await clock.advance(300);
    expect(started).to.deep.equal([0, 100, 200, 300, 400]);

    await clock.advance(5000); // idle: the next one goes at once, the one after waits a full interval
    const later: number[] = [];
    for (let i = 0; i < 2; i++) void throttle.acquire('api.test', never).then((release) => (later.push(clock.now()), release()));
    await flush();
    expect(later).to.deep.equal([5400]);
    await clock.advance(100);
    expect(later).to.deep.equal([5400, 5500]);
  });

  it('keeps at most maxInflight per host, granting in arrival order', async () => {
    const clock = new ManualClock();
    const throttle = createHostThrottle({ rps: 1e9, maxInflight: 2, clock });
    const releases: Array<() => void> = [];
    const order: number[] = [];
    for (let i = 0; i < 5; i++) {
      void throttle.acquire('h', never).then((release) => {
        order.push(i);
        releases.push(release);
      });
      await clock.advance(1);
    }
    expect(order).to.deep.equal([0, 1]);
    expect(throttle.stats('h')).to.deep.equal({ inflight: 2, queued: 3 });
    releases[0]!();
    releases[0]!(); // a second release of the same slot is ignored
    await clock.advance(1);
    expect(order).to.deep.equal([0, 1, 2]);
    expect(throttle.stats('h')).to.deep.equal({ inflight: 2, queued: 2 });
    releases[1]!();
    releases[2]!();
    await clock.advance(1);
    expect(order).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('limits each host separately', async () => {
    const clock = new ManualClock();
    const throttle = createHostThrottle({ rps: 1, maxInflight: 1, clock });
    const got: string[] = [];
    for (const host of ['a', 'b', 'a', 'c']) void throttle.acquire(host, never).then(() => got.push(host));
    await flush();
    expect(got).to.deep.equal(['a', 'b', 'c']);
  });

  it('an abort while queued for a slot leaves the queue', async () => {
    const clock = new ManualClock();
    const throttle = createHostThrottle({ rps: 1e9, maxInflight: 1, clock });
    const release = await throttle.acquire('h', never);
    const ctl = new AbortController();
    const waiting = throttle.acquire('h', ctl.signal);
    await flush();
    expect(throttle.stats('h').queued).to.equal(1);
    ctl.abort();
    const err = await waiting.then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(TroupeError).with.property('code', 'CANCELLED');
    expect(throttle.stats('h')).to.deep.equal({ inflight: 1, queued: 0 });
    release();
    expect(throttle.stats('h').inflight).to.equal(0);
  });

  it('an abort while waiting for the rate slot gives the in-flight slot back', async () => {
    const clock = new ManualClock();
    const throttle = createHostThrottle({ rps: 1, maxInflight: 5, clock });
    await throttle.acquire('h', never);
    const ctl = new AbortController();
    const waiting = throttle.acquire('h', ctl.signal);
    await flush();
    expect(throttle.stats('h').inflight).to.equal(2);
    ctl.abort();
    const err = await waiting.then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(TroupeError).with.property('code', 'CANCELLED');
    expect(throttle.stats('h').inflight).to.equal(1);
  });

  it('refuses nonsense limits', () => {
    expect(() => createHostThrottle({ rps: 0, maxInflight: 1, clock: new ManualClock() })).to.throw(TroupeError);
    expect(() => createHostThrottle({ rps: 1, maxInflight: 0, clock: new ManualClock() })).to.throw(TroupeError);
  });
});

describe('host throttle inside the client', () => {
  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).to.equal(true);
  }

  it('is shared by every send of a client: requests per second', async () => {
    const server = await startFaultServer();
    const clock = new ManualClock();
    const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10, hostMaxInflight: 100, clock });
    try {
      const sends = [1, 2, 3].map((i) => client.send(outboundRequest(server.url(`/n${i}`)), never));
      await until(() => server.requests.length === 1);
      await new Promise((r) => setTimeout(r, 30));
      expect(server.requests).to.have.length(1);
      await clock.advance(100);
      await until(() => server.requests.length === 2);
      await clock.advance(100);
      await until(() => server.requests.length === 3);
      expect((await Promise.all(sends)).map((r) => r.status)).to.deep.equal([200, 200, 200]);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('is shared by every send of a client: requests in flight', async () => {
    const server = await startFaultServer();
    const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 1e6, hostMaxInflight: 2 });
    server.script('/slow', [{ status: 200, delayMs: 30, body: 'ok' }]);
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => client.send(outboundRequest(server.url('/slow')), new AbortController().signal)));
      expect(results.every((r) => r.status === 200)).to.equal(true);
      expect(server.requestsTo('/slow')).to.have.length(6);
      expect(server.maxInflight).to.equal(2);
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe('abort signal sharing', () => {
  it('parallel sends on one signal add a single listener to it, and one abort cancels them all', async () => {
    const server = await startFaultServer();
    server.script('/hang', [{ hang: true }]);
    const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 1e6, hostMaxInflight: 5 });
    const ctl = new AbortController();
    try {
      const sends = Array.from({ length: 20 }, () => client.send(outboundRequest(server.url('/hang'), { timeoutMs: 60_000 }), ctl.signal).then(() => null, (e: unknown) => e));
      for (let i = 0; i < 400 && server.requests.length < 5; i++) await new Promise((r) => setTimeout(r, 5));
      expect(server.requests).to.have.length(5); // the other 15 wait for an in-flight slot
      expect(getEventListeners(ctl.signal, 'abort')).to.have.length(1);
      ctl.abort();
      const errors = await Promise.all(sends);
      expect(errors.every((e) => e instanceof TroupeError && e.code === 'CANCELLED')).to.equal(true);
    } finally {
      client.close();
      await server.close();
    }
  });
});
