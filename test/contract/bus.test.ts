/**
 * The bus contract: every test runs on the in-process bus and on NATS (real nats-server).
 *
 * Negative checks ("this was not delivered") use a barrier: a last message that the subscription
 * does match. Both adapters keep order per subscription, so once the barrier arrives anything
 * published before it would have arrived too.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { TroupeError } from '../../src/errors.js';
import {
  blockInbox,
  encodeToken,
  executionControl,
  executionEvents,
  executionSubjects,
  isValidSubject,
  isValidSubscription,
  subjectMatches,
  webhookEvents,
  webhookStream,
} from '../../src/bus/subjects.js';
import type { Bus, BusMsg, Subscription } from '../../src/bus/types.js';
import { forEachBus, handlerErrors } from '../helpers/buses.js';

interface Recorder<T> {
  msgs: BusMsg<T>[];
  sub: Subscription;
}

function record<T = unknown>(bus: Bus, subject: string, queue?: string): Recorder<T> {
  const msgs: BusMsg<T>[] = [];
  const sub = bus.subscribe<T>(subject, (m) => msgs.push(m), queue === undefined ? undefined : { queue });
  return { msgs, sub };
}

async function waitFor(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Subscriptions reach the NATS server asynchronously; flush makes them effective. */
async function ready(bus: Bus): Promise<void> {
  await bus.flush();
}

async function expectCode(fn: () => unknown, code: string): Promise<TroupeError> {
  let caught: unknown;
  try {
    await fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a TroupeError ${code}`).to.be.instanceOf(TroupeError);
  expect((caught as TroupeError).code).to.equal(code);
  return caught as TroupeError;
}

const subjectsOf = (msgs: BusMsg[]): string[] => msgs.map((m) => m.subject);

forEachBus('bus contract', (getBus, kind) => {
  it('reports its kind', () => {
    expect(getBus().kind).to.equal(kind);
  });

  describe('delivery', () => {
    it('delivers to exact subscribers only, asynchronously', async () => {
      const bus = getBus();
      const r = record(bus, 'a.b');
      const other = record(bus, 'a.c');
      await ready(bus);
      bus.publish('a.b', { x: 1 });
      expect(r.msgs, 'never delivered inside publish()').to.have.length(0);
      bus.publish('a.b.c', 2);
      bus.publish('a', 3);
      bus.publish('a.b', 'barrier');
      await waitFor(() => r.msgs.length >= 2, 'two messages');
      expect(r.msgs.map((m) => m.data)).to.deep.equal([{ x: 1 }, 'barrier']);
      expect(r.msgs[0]).to.deep.equal({ subject: 'a.b', data: { x: 1 } });
      expect(other.msgs).to.have.length(0);
    });

    it('fans out to every plain subscriber', async () => {
      const bus = getBus();
      const rs = [record(bus, 'fan.out'), record(bus, 'fan.out'), record(bus, 'fan.*')];
      await ready(bus);
      bus.publish('fan.out', 7);
      await waitFor(() => rs.every((r) => r.msgs.length === 1), 'every subscriber');
      for (const r of rs) expect(r.msgs[0]?.data).to.equal(7);
    });

    it('carries JSON values intact', async () => {
      const bus = getBus();
      const r = record(bus, 'json');
      await ready(bus);
      const values: unknown[] = [{ a: [1, 'two', { three: null }], b: true }, [], 'text', 0, -1.5, null, false, undefined];
      for (const v of values) bus.publish('json', v);
      await waitFor(() => r.msgs.length === values.length, 'all values');
      expect(r.msgs.map((m) => m.data)).to.deep.equal(values);
    });

    it('keeps the order of 1000 messages on every subscription', async () => {
      const bus = getBus();
      const literal = record<number>(bus, 'seq.items');
      const wild = record<number>(bus, 'seq.>');
      await ready(bus);
      for (let i = 0; i < 1000; i++) bus.publish('seq.items', i);
      await waitFor(() => literal.msgs.length === 1000 && wild.msgs.length === 1000, '1000 messages');
      const expected = Array.from({ length: 1000 }, (_, i) => i);
      expect(literal.msgs.map((m) => m.data)).to.deep.equal(expected);
      expect(wild.msgs.map((m) => m.data)).to.deep.equal(expected);
    });
  });

  describe('wildcards', () => {
    it('`*` matches exactly one token', async () => {
      const bus = getBus();
      const r = record(bus, 'orders.*.created');
      await ready(bus);
      for (const s of ['orders.1.created', 'orders.created', 'orders.1.2.created', 'orders.1.updated', 'x.1.created']) {
        bus.publish(s, null);
      }
      bus.publish('orders.end.created', null);
      await waitFor(() => r.msgs.length >= 2, 'barrier');
      expect(subjectsOf(r.msgs)).to.deep.equal(['orders.1.created', 'orders.end.created']);
    });

    it('`>` matches one or more trailing tokens', async () => {
      const bus = getBus();
      const r = record(bus, 'orders.>');
      const mid = record(bus, 'a.*.>');
      await ready(bus);
      for (const s of ['orders', 'orders.1', 'other.1', 'orders.1.2.3', 'a.b', 'a.b.c', 'a.b.c.d', 'a']) bus.publish(s, null);
      bus.publish('orders.end', null);
      bus.publish('a.end.end', null);
      await waitFor(() => r.msgs.length >= 3 && mid.msgs.length >= 3, 'barriers');
      expect(subjectsOf(r.msgs)).to.deep.equal(['orders.1', 'orders.1.2.3', 'orders.end']);
      expect(subjectsOf(mid.msgs)).to.deep.equal(['a.b.c', 'a.b.c.d', 'a.end.end']);
    });

    it('a message matching several patterns reaches each subscription once', async () => {
      const bus = getBus();
      const rs = [record(bus, 'x.y.z'), record(bus, 'x.*.z'), record(bus, 'x.>'), record(bus, '>'), record(bus, '*.*.*')];
      await ready(bus);
      bus.publish('x.y.z', 1);
      bus.publish('x.y.z', 2);
      await waitFor(() => rs.every((r) => r.msgs.length >= 2), 'every pattern');
      for (const r of rs) expect(r.msgs.map((m) => m.data)).to.deep.equal([1, 2]);
    });
  });

  it('routes random subjects to random patterns exactly as subjectMatches says', async () => {
    const bus = getBus();
    const token = fc.constantFrom('a', 'b', 'c');
    const subjectArb = fc.array(token, { minLength: 1, maxLength: 4 }).map((t) => t.join('.'));
    const patternArb = fc
      .tuple(fc.array(fc.oneof(token, fc.constant('*')), { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([t, gt]) => (gt ? [...t.slice(0, -1), '>'] : t).join('.'));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(patternArb, { minLength: 1, maxLength: 12 }), fc.array(subjectArb, { maxLength: 30 }), async (patterns, subjects) => {
        const rs = patterns.map((p) => record(bus, p));
        const barrier = record(bus, 'zz.barrier');
        await ready(bus);
        subjects.forEach((s, i) => bus.publish(s, i));
        bus.publish('zz.barrier', null);
        await waitFor(() => barrier.msgs.length === 1, 'barrier');
        patterns.forEach((p, k) => {
          const expected = subjects.map((s, i) => [s, i] as const).filter(([s]) => subjectMatches(p, s));
          const got = rs[k]?.msgs.filter((m) => m.subject !== 'zz.barrier').map((m) => [m.subject, m.data]);
          expect(got, p).to.deep.equal(expected);
        });
        for (const r of [...rs, barrier]) r.sub.unsubscribe();
      }),
      { numRuns: 15, seed: 42 },
    );
  });

  describe('queue groups', () => {
    it('deliver each message to exactly one member, plus every plain subscriber', async () => {
      const bus = getBus();
      // one group across patterns: NATS groups queue subscribers by queue name
      const workers = [
        record<number>(bus, 'jobs.run', 'workers'),
        record<number>(bus, 'jobs.run', 'workers'),
        record<number>(bus, 'jobs.*', 'workers'),
      ];
      const audit = record<number>(bus, 'jobs.run', 'audit');
      const plain = record<number>(bus, 'jobs.run');
      const elsewhere = record<number>(bus, 'jobs.other', 'workers');
      await ready(bus);
      for (let i = 0; i < 100; i++) bus.publish('jobs.run', i);
      const groupCount = (): number => workers.reduce((n, w) => n + w.msgs.length, 0);
      await waitFor(() => groupCount() >= 100 && audit.msgs.length === 100 && plain.msgs.length === 100, 'all deliveries');
      bus.publish('jobs.run', 'barrier');
      await waitFor(() => plain.msgs.length === 101 && groupCount() === 101, 'barrier');
      const seen = workers
        .flatMap((w) => w.msgs.map((m) => m.data))
        .filter((d): d is number => typeof d === 'number')
        .sort((a, b) => a - b);
      const all = Array.from({ length: 100 }, (_, i) => i);
      expect(seen, 'each message once within the group').to.deep.equal(all);
      for (const w of workers) expect(w.msgs.length, 'every member is used').to.be.greaterThan(0);
      expect(audit.msgs.slice(0, 100).map((m) => m.data)).to.deep.equal(all);
      expect(plain.msgs.slice(0, 100).map((m) => m.data)).to.deep.equal(all);
      expect(elsewhere.msgs).to.have.length(0);
    });

    it('stop using a member after it unsubscribes', async () => {
      const bus = getBus();
      const a = record(bus, 'q.one', 'g');
      const b = record(bus, 'q.one', 'g');
      await ready(bus);
      a.sub.unsubscribe();
      await ready(bus);
      for (let i = 0; i < 20; i++) bus.publish('q.one', i);
      await waitFor(() => b.msgs.length === 20, 'remaining member gets all');
      expect(a.msgs).to.have.length(0);
    });
  });

  describe('request/reply', () => {
    it('returns the reply, with headers both ways', async () => {
      const bus = getBus();
      bus.subscribe<{ n: number }>('math.double', (m) => {
        bus.reply(m, { n: m.data.n * 2, trace: m.headers?.['x-trace'] }, { headers: { 'x-answer': 'yes' } });
      });
      await ready(bus);
      const res = await bus.request<{ n: number; trace: string }>('math.double', { n: 21 }, { headers: { 'x-trace': 't1' } });
      expect(res.data).to.deep.equal({ n: 42, trace: 't1' });
      expect(res.headers).to.deep.equal({ 'x-answer': 'yes' });
    });

    it('gets exactly one reply from a queue group of responders', async () => {
      const bus = getBus();
      let calls = 0;
      for (const id of ['r1', 'r2']) {
        bus.subscribe('svc.echo', (m) => {
          calls++;
          bus.reply(m, { id, echo: m.data });
        }, { queue: 'svc' });
      }
      await ready(bus);
      for (let i = 0; i < 10; i++) {
        const res = await bus.request<{ echo: number }>('svc.echo', i);
        expect(res.data.echo).to.equal(i);
      }
      expect(calls).to.equal(10);
    });

    it('rejects with BUS_TIMEOUT when nobody answers in time', async () => {
      const bus = getBus();
      const r = record(bus, 'silent.svc');
      await ready(bus);
      const err = await expectCode(() => bus.request('silent.svc', 1, { timeoutMs: 100 }), 'BUS_TIMEOUT');
      expect(err.retryable).to.equal(true);
      expect(r.msgs, 'the request was delivered').to.have.length(1);
      expect(r.msgs[0]?.reply).to.be.a('string');
      // a reply after the timeout is dropped quietly
      bus.reply(r.msgs[0] as BusMsg, 'late');
      await bus.flush();
    });

    it('rejects with NO_RESPONDERS at once when nobody subscribes', async () => {
      const bus = getBus();
      const started = Date.now();
      await expectCode(() => bus.request('nobody.home', 1, { timeoutMs: 10_000 }), 'NO_RESPONDERS');
      expect(Date.now() - started, 'well before the timeout').to.be.lessThan(5000);
    });

    it('reply() without a reply subject is a no-op', () => {
      const bus = getBus();
      expect(() => bus.reply({ subject: 'x', data: 1 }, 2)).not.to.throw();
    });
  });

  describe('subscriptions', () => {
    it('unsubscribe stops delivery to that subscription only', async () => {
      const bus = getBus();
      const a = record(bus, 'u.x');
      const b = record(bus, 'u.x');
      await ready(bus);
      bus.publish('u.x', 1);
      await waitFor(() => a.msgs.length === 1 && b.msgs.length === 1, 'first message');
      a.sub.unsubscribe();
      a.sub.unsubscribe();
      expect(a.sub.subject).to.equal('u.x');
      bus.publish('u.x', 2);
      await waitFor(() => b.msgs.length === 2, 'second message');
      expect(a.msgs.map((m) => m.data)).to.deep.equal([1]);
    });

    it('unsubscribe drops messages not yet delivered', async () => {
      const bus = getBus();
      const a = record(bus, 'u.y');
      const b = record(bus, 'u.y');
      await ready(bus);
      bus.publish('u.y', 1);
      a.sub.unsubscribe();
      await waitFor(() => b.msgs.length === 1, 'delivery to the other subscriber');
      bus.publish('u.y', 2);
      await waitFor(() => b.msgs.length === 2, 'barrier');
      expect(a.msgs).to.have.length(0);
    });

    it('carries headers', async () => {
      const bus = getBus();
      const r = record(bus, 'h.x');
      await ready(bus);
      bus.publish('h.x', 1, { headers: { 'X-Trace-Id': 'abc-123', 'troupe-kind': 'ready' } });
      bus.publish('h.x', 2, { headers: {} });
      bus.publish('h.x', 3);
      await waitFor(() => r.msgs.length === 3, 'three messages');
      expect(r.msgs[0]?.headers).to.deep.equal({ 'X-Trace-Id': 'abc-123', 'troupe-kind': 'ready' });
      expect(r.msgs[1]).to.deep.equal({ subject: 'h.x', data: 2 });
      expect(r.msgs[2]).to.deep.equal({ subject: 'h.x', data: 3 });
    });

    it('a throwing handler does not break delivery', async () => {
      const bus = getBus();
      let thrown = 0;
      bus.subscribe('boom', () => {
        thrown++;
        throw new Error(`handler failure ${thrown}`);
      });
      const ok = record(bus, 'boom');
      await ready(bus);
      for (let i = 0; i < 3; i++) bus.publish('boom', i);
      await waitFor(() => ok.msgs.length === 3 && thrown === 3, 'all deliveries');
      const errors = handlerErrors(bus);
      expect(errors).to.have.length(3);
      expect((errors[2] as Error).message).to.equal('handler failure 3');
    });
  });

  describe('validation and lifecycle', () => {
    it('rejects invalid subjects, queues and headers with INVALID_SUBJECT', async () => {
      const bus = getBus();
      for (const s of ['', 'a..b', '.a', 'a.', 'a.*', 'a.>', '>', 'a b', 'a\tb', 'a.b*']) {
        await expectCode(() => bus.publish(s, 1), 'INVALID_SUBJECT');
        await expectCode(() => bus.request(s, 1), 'INVALID_SUBJECT');
      }
      for (const s of ['', 'a..b', 'a.>.b', '>.a', 'a.b*', 'a.>x', 'a b']) {
        await expectCode(() => bus.subscribe(s, () => undefined), 'INVALID_SUBJECT');
      }
      await expectCode(() => bus.subscribe('ok.subject', () => undefined, { queue: 'bad queue' }), 'INVALID_SUBJECT');
      await expectCode(() => bus.publish('ok', 1, { headers: { 'bad:name': 'v' } }), 'INVALID_SUBJECT');
      await expectCode(() => bus.publish('ok', 1, { headers: { name: 'a\r\nb' } }), 'INVALID_SUBJECT');
      await expectCode(() => bus.publish('ok', 1, { reply: 'a.*' }), 'INVALID_SUBJECT');
      expect(() => bus.subscribe('a.*.>', () => undefined).unsubscribe()).not.to.throw();
    });

    it('close delivers what was published, then publish/subscribe/request fail with BUS_CLOSED', async () => {
      const bus = getBus();
      const r = record(bus, 'c.x');
      await ready(bus);
      for (let i = 0; i < 10; i++) bus.publish('c.x', i);
      expect(bus.connected).to.equal(true);
      await bus.close();
      expect(bus.connected).to.equal(false);
      expect(r.msgs).to.have.length(10);
      await expectCode(() => bus.publish('c.x', 1), 'BUS_CLOSED');
      await expectCode(() => bus.subscribe('c.x', () => undefined), 'BUS_CLOSED');
      await expectCode(() => bus.request('c.x', 1), 'BUS_CLOSED');
      expect(() => r.sub.unsubscribe()).not.to.throw();
      await bus.close();
    });

    it('close rejects a pending request with BUS_CLOSED', async () => {
      const bus = getBus();
      record(bus, 'never.answers');
      await ready(bus);
      const pending = bus.request('never.answers', 1, { timeoutMs: 10_000 });
      pending.catch(() => undefined);
      await bus.flush();
      await bus.close();
      await expectCode(() => pending, 'BUS_CLOSED');
    });
  });
});

describe('bus subjects', () => {
  it('validates publish subjects and subscription patterns', () => {
    for (const s of ['a', 'a.b', 'troupe.exec.e1.block.root.b-1', '_INBOX.x.1', 'A_b-c.9']) expect(isValidSubject(s), s).to.equal(true);
    for (const s of ['', '.', 'a.', '.a', 'a..b', 'a.*', 'a.>', 'a b', 'a\nb', 'a*']) expect(isValidSubject(s), s).to.equal(false);
    for (const s of ['a', '*', '>', 'a.*', 'a.>', '*.*.>', 'a.*.c']) expect(isValidSubscription(s), s).to.equal(true);
    for (const s of ['', 'a..b', '>.a', 'a.>.b', 'a*', 'a.b>', 'a .b', '.', 'a.', '*a', '>>', 'a.*b', '*.>x', '\t']) expect(isValidSubscription(s), s).to.equal(false);
  });

  it('matches patterns token by token', () => {
    const cases: Array<[string, string, boolean]> = [
      ['a.b', 'a.b', true], ['a.b', 'a.c', false], ['a.b', 'a.b.c', false],
      ['a.*', 'a.b', true], ['a.*', 'a', false], ['a.*', 'a.b.c', false], ['*.b', 'a.b', true],
      ['a.>', 'a.b', true], ['a.>', 'a.b.c', true], ['a.>', 'a', false], ['>', 'a', true], ['>', 'a.b', true],
      ['a.*.>', 'a.b', false], ['a.*.>', 'a.b.c', true],
    ];
    for (const [p, s, m] of cases) expect(subjectMatches(p, s), `${p} ~ ${s}`).to.equal(m);
  });

  it('builds the runtime subjects under a prefix', () => {
    expect(blockInbox('troupe', 'ex1', 'loop1-3', 'b_2')).to.equal('troupe.exec.ex1.block.loop1-3.b_2');
    expect(executionSubjects('troupe', 'ex1')).to.equal('troupe.exec.ex1.>');
    expect(executionControl('acme.troupe', 'ex1')).to.equal('acme.troupe.exec.ex1.control');
    expect(executionEvents('troupe', 'completed')).to.equal('troupe.events.execution.completed');
    expect(webhookEvents('troupe', 'wf-1', 'hook_1')).to.equal('troupe.webhooks.wf-1.hook_1');
    expect(() => executionEvents('troupe', 'exploded' as 'started')).to.throw(TroupeError);
    for (const bad of ['', 'a..b', 'a.*', 'a b']) expect(() => executionControl(bad, 'x')).to.throw(TroupeError);
  });

  it('names one JetStream stream per prefix: the old name for lowercase ones, a distinct valid one for the rest', () => {
    expect(webhookStream('troupe')).to.deep.equal({ name: 'TROUPE_WEBHOOKS', subjects: ['troupe.webhooks.>'], maxAgeMs: 24 * 60 * 60 * 1000 });
    expect(webhookStream('my_app-2').name).to.equal('MY_APP-2_WEBHOOKS');
    const prefixes = ['probe', 'Probe', 'PROBE', 'pRobe', 'a.b', 'a_b', 'A_B', 'x'.repeat(300), 'X'.repeat(300), 'a.b.c', 'A.b'];
    const names = prefixes.map((p) => webhookStream(p).name);
    expect(new Set(names).size, names.join(' ')).to.equal(prefixes.length);
    for (const n of names) expect(n, n).to.match(/^[A-Z0-9_-]+$/);
    for (const n of names.filter((_, i) => !/^[a-z0-9_-]+$/.test(prefixes[i] as string))) expect(n.length, n).to.be.at.most(32 + 10 + 12);
    expect(webhookStream('Probe').name).to.match(/^PROBE_WEBHOOKS_[0-9A-F]{12}$/);
    expect(webhookStream('Probe').name, 'stable across starts').to.equal(webhookStream('Probe').name);
  });

  it('turns any id into one safe token, injectively', () => {
    expect(encodeToken('abc-DEF_09')).to.equal('abc-DEF_09');
    const odd = ['a.b', 'a b', '*', '>', '', 'é', 'a.b.c'];
    const tokens = odd.map(encodeToken);
    for (const t of tokens) expect(isValidSubject(t), t).to.equal(true);
    expect(new Set(tokens).size).to.equal(odd.length);
    expect(blockInbox('t', 'e', 'root', 'my block.1').split('.')).to.have.length(6);
    fc.assert(
      fc.property(fc.string(), fc.string(), (x, y) => {
        expect(isValidSubject(encodeToken(x))).to.equal(true);
        if (x !== y) expect(encodeToken(x)).not.to.equal(encodeToken(y));
      }),
    );
  });
});
