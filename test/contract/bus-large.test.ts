/**
 * Messages larger than the NATS server's max_payload (1 MiB by default): both adapters carry
 * them through publish/subscribe and request/reply, intact and in order. On NATS they travel in
 * pieces (src/bus/nats-chunks.ts); what remains of the limit is BUS_MESSAGE_TOO_LARGE: queue
 * groups, durable messages, and anything over 64 MiB.
 */
import { expect } from 'chai';
import { connect, headers as natsHeaders, type NatsConnection } from 'nats';
import { NatsBus } from '../../src/bus/nats.js';
import { CHUNK_HEADER, MAX_MESSAGE_BYTES, Reassembly, chunkOf, headerBytes, splitMessage, type PartialBudget } from '../../src/bus/nats-chunks.js';
import { webhookStream } from '../../src/bus/subjects.js';
import type { Bus, BusMsg } from '../../src/bus/types.js';
import { TroupeError } from '../../src/errors.js';
import { forEachBus, handlerErrors } from '../helpers/buses.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';

const MiB = 1024 * 1024;

function record<T = unknown>(bus: Bus, subject: string, queue?: string): BusMsg<T>[] {
  const msgs: BusMsg<T>[] = [];
  bus.subscribe<T>(subject, (m) => msgs.push(m), queue === undefined ? undefined : { queue });
  return msgs;
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function codeOf(fn: () => unknown): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    return err instanceof TroupeError ? err.code : String(err);
  }
}

/** a JSON value of about `bytes` bytes whose content shows any piece out of place */
function big(bytes: number, tag = 'm'): { tag: string; rows: string[] } {
  const rows: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const row = `${tag}-${i}-${'é'.repeat(40)}-${'z'.repeat(40)}`;
    rows.push(row);
    n += row.length + 40;
  }
  return { tag, rows };
}

forEachBus('bus contract: large messages', (getBus) => {
  it('carries a 3 MiB message through publish/subscribe, intact, with its headers, in order with small ones', async () => {
    const bus = getBus();
    const exact = record(bus, 'large.one');
    const wild = record(bus, 'large.>');
    await bus.flush();
    const payload = big(3 * MiB);
    bus.publish('large.one', 'before');
    bus.publish('large.one', payload, { headers: { 'x-trace': 't-1' } });
    bus.publish('large.one', 'after');
    await until(() => exact.length === 3 && wild.length === 3, 'three messages on each subscription');
    for (const msgs of [exact, wild]) {
      expect(msgs.map((m) => (typeof m.data === 'string' ? m.data : 'big'))).to.deep.equal(['before', 'big', 'after']);
      expect(msgs[1]).to.deep.equal({ subject: 'large.one', data: payload, headers: { 'x-trace': 't-1' } });
    }
  });

  it('carries a 3 MiB request and a 3 MiB reply', async () => {
    const bus = getBus();
    bus.subscribe<{ rows: string[] }>('large.echo', (m) => {
      bus.reply(m, { rows: [...m.data.rows].reverse(), n: m.data.rows.length }, { headers: { 'x-answer': 'yes' } });
    });
    await bus.flush();
    const payload = big(3 * MiB);
    const res = await bus.request<{ rows: string[]; n: number }>('large.echo', payload, { timeoutMs: 10_000 });
    expect(res.data.n).to.equal(payload.rows.length);
    expect(res.data.rows).to.deep.equal([...payload.rows].reverse());
    expect(res.headers).to.deep.equal({ 'x-answer': 'yes' });
  });

  it('keeps Troupe-Chunk and Troupe-Error for itself (INVALID_SUBJECT)', async () => {
    const bus = getBus();
    expect(await codeOf(() => bus.publish('x', 1, { headers: { [CHUNK_HEADER]: 'a;0;1;1' } }))).to.equal('INVALID_SUBJECT');
    expect(await codeOf(() => bus.publish('x', 1, { headers: { 'troupe-error': 'X' } }))).to.equal('INVALID_SUBJECT');
  });
});

describe('bus: large messages on NATS', function () {
  this.timeout(60_000);
  // a small max_payload: many pieces per message, and the limits within reach of a test
  const MAX = 64 * 1024;
  let server: NatsServerHandle;
  let bus: NatsBus;
  let errors: unknown[];
  let raw: NatsConnection;
  before(async () => {
    server = await startNatsServer({ maxPayload: MAX });
    raw = await connect({ servers: server.url });
  });
  beforeEach(async () => {
    errors = [];
    bus = await NatsBus.connect(server.url, { name: 'large-test', streams: [webhookStream('large')], onError: (err) => errors.push(err) });
  });
  afterEach(async () => {
    await bus.close();
  });
  after(async () => {
    await raw.close();
    await server.stop();
  });

  it('puts back messages of two publishers whose pieces interleave', async () => {
    const other = await NatsBus.connect(server.url);
    try {
      const got = record<{ tag: string }>(bus, 'mix.>');
      await bus.flush();
      const sent = [big(600_000, 'a'), big(700_000, 'b'), big(500_000, 'c'), big(800_000, 'd')];
      bus.publish('mix.a', sent[0]);
      other.publish('mix.b', sent[1]);
      bus.publish('mix.c', sent[2]);
      other.publish('mix.d', sent[3]);
      await until(() => got.length === 4, 'four messages');
      const byTag = new Map(got.map((m) => [m.data.tag, m.data]));
      for (const s of sent) expect(byTag.get(s.tag)).to.deep.equal(s);
      // each publisher's own order holds
      expect(got.map((m) => m.data.tag).filter((t) => t === 'a' || t === 'c')).to.deep.equal(['a', 'c']);
      expect(errors).to.deep.equal([]);
    } finally {
      await other.close();
    }
  });

  it('a queue group gets no split message: its members would share the pieces (BUS_MESSAGE_TOO_LARGE)', async () => {
    const plain = record(bus, 'q.big');
    const members = [record(bus, 'q.big', 'workers'), record(bus, 'q.big', 'workers')];
    await bus.flush();
    bus.publish('q.big', big(300_000));
    bus.publish('q.big', 'small');
    await until(() => plain.length === 2 && members[0]!.length + members[1]!.length === 1, 'the deliveries');
    expect(members.flatMap((m) => m.map((x) => x.data))).to.deep.equal(['small']);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.instanceOf(TroupeError).with.property('code', 'BUS_MESSAGE_TOO_LARGE');
    expect((errors[0] as TroupeError).message).to.match(/queue group "workers"/);
  });

  it('a split request to a queue group is refused at once with BUS_MESSAGE_TOO_LARGE', async () => {
    bus.subscribe('svc.big', (m) => bus.reply(m, 'ok'), { queue: 'svc' });
    await bus.flush();
    const started = Date.now();
    expect(await codeOf(() => bus.request('svc.big', big(200_000), { timeoutMs: 10_000 }))).to.equal('BUS_MESSAGE_TOO_LARGE');
    expect(Date.now() - started).to.be.lessThan(5000);
    // a split reply to a plain request still arrives
    bus.subscribe('svc.many', (m) => bus.reply(m, big(200_000)));
    await bus.flush();
    expect((await bus.request<{ rows: string[] }>('svc.many', 1)).data.rows.length).to.be.greaterThan(1000);
  });

  it('a durable message is kept whole: over max_payload it is refused with BUS_MESSAGE_TOO_LARGE', async () => {
    const err = await bus.publishDurable('large.webhooks.wf.hook', big(MAX), { msgId: 'too-big' }).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(TroupeError).with.property('code', 'BUS_MESSAGE_TOO_LARGE');
    expect((err as TroupeError).message).to.match(/max_payload of 65536 bytes/);
    await bus.publishDurable('large.webhooks.wf.hook', big(MAX / 2), { msgId: 'fits' });
  });

  it('refuses a message over 64 MiB with BUS_MESSAGE_TOO_LARGE', async () => {
    expect(await codeOf(() => bus.publish('huge', 'x'.repeat(MAX_MESSAGE_BYTES)))).to.equal('BUS_MESSAGE_TOO_LARGE');
  });

  it('drops a message whose pieces come out of sequence, and reports it; whole messages still pass', async () => {
    const got = record(bus, 'broken');
    await bus.flush();
    const piece = (value: string): { headers: ReturnType<typeof natsHeaders> } => {
      const h = natsHeaders();
      h.set(CHUNK_HEADER, value);
      return { headers: h };
    };
    raw.publish('broken', new TextEncoder().encode('"ab'), piece('id1;0;3;6'));
    raw.publish('broken', new TextEncoder().encode('cd"'), piece('id1;2;3;6'));
    raw.publish('broken', new TextEncoder().encode('"whole"'));
    raw.publish('broken', new TextEncoder().encode('1'), piece('not-ours'));
    raw.publish('broken', new TextEncoder().encode('"end"'));
    await raw.flush();
    await until(() => got.length === 2, 'the whole messages');
    expect(got.map((m) => m.data)).to.deep.equal(['whole', 'end']);
    expect(errors.map((e) => (e as TroupeError).code)).to.deep.equal(['BUS_MESSAGE_INCOMPLETE', 'BUS_MESSAGE_INCOMPLETE']);
  });
});

describe('bus: split messages put back together (nats-chunks)', () => {
  const fakeMsg = (subject: string, data: Uint8Array, headers: Record<string, string>): never => {
    const h = natsHeaders();
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return { subject, data, headers: h, reply: '' } as never;
  };

  it('splits into pieces that fit, and puts them back', () => {
    const bytes = new TextEncoder().encode(JSON.stringify(big(50_000)));
    const pieces = splitMessage(bytes, { 'x-a': 'b' }, 4096);
    expect(pieces.length).to.be.greaterThan(10);
    for (const p of pieces) expect(p.data.length + headerBytes(p.headers)).to.be.at.most(4096);
    expect(pieces[0]!.headers['x-a']).to.equal('b');
    expect(pieces[1]!.headers['x-a']).to.equal(undefined);
    const budget: PartialBudget = { bytes: 0 };
    const r = new Reassembly(budget, () => undefined);
    let out = null;
    for (const p of pieces) {
      const m = fakeMsg('s', p.data, p.headers);
      const info = chunkOf((m as { headers: ReturnType<typeof natsHeaders> }).headers);
      if (info === null || info === 'invalid') throw new Error('not a piece');
      out = r.add(info, m);
      if (p !== pieces.at(-1)) expect(budget.bytes).to.equal(bytes.length);
    }
    expect(Buffer.from(out!.bytes).equals(Buffer.from(bytes))).to.equal(true);
    expect(budget.bytes).to.equal(0);
  });

  it('drops a message whose pieces stop coming after its timeout, and frees what it held', async () => {
    const reports: TroupeError[] = [];
    const budget: PartialBudget = { bytes: 0 };
    const r = new Reassembly(budget, (e) => reports.push(e), 50);
    const m = fakeMsg('s', new Uint8Array(10), { [CHUNK_HEADER]: 'id;0;2;20' });
    expect(r.add({ id: 'id', index: 0, count: 2, total: 20 }, m)).to.equal(null);
    expect(budget.bytes).to.equal(20);
    await new Promise((done) => setTimeout(done, 120));
    expect(reports.map((e) => e.code)).to.deep.equal(['BUS_MESSAGE_INCOMPLETE']);
    expect(reports[0]!.message).to.match(/did not all arrive within 50 ms/);
    expect(budget.bytes).to.equal(0);
    // its last piece, late: nothing to add it to
    expect(r.add({ id: 'id', index: 1, count: 2, total: 20 }, fakeMsg('s', new Uint8Array(10), {}))).to.equal(null);
  });

  it('refuses a first piece that would take the unfinished messages past their bound', () => {
    const reports: TroupeError[] = [];
    const r = new Reassembly({ bytes: 256 * MiB - 10 }, (e) => reports.push(e));
    expect(r.add({ id: 'x', index: 0, count: 2, total: 20 }, fakeMsg('s', new Uint8Array(10), {}))).to.equal(null);
    expect(reports.map((e) => e.code)).to.deep.equal(['BUS_MESSAGE_INCOMPLETE']);
  });
});
