/**
 * Durable publishes (Bus.publishDurable, used for webhook events, SPEC §4.3): delivered like any
 * publish on both adapters; over NATS kept in a JetStream stream, once per message id, readable
 * by a consumer that was not listening; on a server without JetStream, published plainly and
 * said once.
 */
import { expect } from 'chai';
import { connect, type NatsConnection } from 'nats';
import { MemoryBus } from '../../src/bus/memory.js';
import { NatsBus } from '../../src/bus/nats.js';
import { webhookEvents, webhookStream } from '../../src/bus/subjects.js';
import type { Bus, BusMsg } from '../../src/bus/types.js';
import { TroupeError } from '../../src/errors.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';

function record(bus: Bus, subject: string): BusMsg[] {
  const msgs: BusMsg[] = [];
  bus.subscribe(subject, (m) => msgs.push(m));
  return msgs;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('bus: durable publish', function () {
  this.timeout(20_000);
  const subject = webhookEvents('dur', 'wf', 'hook');

  it('memory: delivered to subscribers before it resolves', async () => {
    const bus = new MemoryBus();
    const got = record(bus, 'dur.webhooks.>');
    await bus.publishDurable(subject, { n: 1 }, { msgId: 'e1' });
    expect(got.map((m) => m.data)).to.deep.equal([{ n: 1 }]);
    await bus.close();
  });

  describe('nats with JetStream', () => {
    let server: NatsServerHandle;
    let bus: NatsBus;
    let nc: NatsConnection;
    before(async () => {
      server = await startNatsServer();
      bus = await NatsBus.connect(server.url, { name: 'durable-test', streams: [webhookStream('dur')] });
      nc = await connect({ servers: server.url });
    });
    after(async () => {
      await bus.close();
      await nc.close();
      await server.stop();
    });

    it('stores the message in the stream once per id, delivers it, and a later consumer reads it', async () => {
      const got = record(bus, 'dur.webhooks.>');
      await bus.flush();
      await bus.publishDurable(subject, { n: 1 }, { msgId: 'ev-1' });
      await bus.publishDurable(subject, { n: 1 }, { msgId: 'ev-1' });
      await bus.publishDurable(subject, { n: 2 }, { msgId: 'ev-2' });
      const jsm = await nc.jetstreamManager();
      const info = await jsm.streams.info('DUR_WEBHOOKS');
      expect(info.config.subjects).to.deep.equal(['dur.webhooks.>']);
      expect(info.state.messages, 'a repeated id is kept once').to.equal(2);
      // a consumer that was not listening when they were published
      const consumer = await nc.jetstream().consumers.get('DUR_WEBHOOKS');
      const first = await consumer.next({ expires: 2000 });
      expect(first?.subject).to.equal(subject);
      expect(first?.json()).to.deep.equal({ n: 1 });
      // plain subscribers get every publish (a repeat too: at least once)
      await until(() => got.length === 3, 'three deliveries');
    });

    it('a second bus on the same prefix finds the stream and keeps adding to it', async () => {
      const again = await NatsBus.connect(server.url, { name: 'durable-test-2', streams: [webhookStream('dur')] });
      try {
        const before = (await (await nc.jetstreamManager()).streams.info('DUR_WEBHOOKS')).state.messages;
        await again.publishDurable(subject, { n: 3 }, { msgId: 'ev-3' });
        expect((await (await nc.jetstreamManager()).streams.info('DUR_WEBHOOKS')).state.messages).to.equal(before + 1);
      } finally {
        await again.close();
      }
    });

    it('prefixes that differ only in case keep a stream each (the second does not take the first one\'s over)', async () => {
      const lower = await NatsBus.connect(server.url, { streams: [webhookStream('probe')] });
      const upper = await NatsBus.connect(server.url, { streams: [webhookStream('Probe')] });
      try {
        await lower.publishDurable(webhookEvents('probe', 'wf', 'hook'), { n: 'lower' }, { msgId: 'l1' });
        await upper.publishDurable(webhookEvents('Probe', 'wf', 'hook'), { n: 'upper' }, { msgId: 'u1' });
        await lower.publishDurable(webhookEvents('probe', 'wf', 'hook'), { n: 'lower' }, { msgId: 'l2' });
        const jsm = await nc.jetstreamManager();
        const names = [webhookStream('probe').name, webhookStream('Probe').name];
        expect(names[0]).to.equal('PROBE_WEBHOOKS');
        const infos = await Promise.all(names.map((n) => jsm.streams.info(n)));
        expect(infos.map((i) => i.config.subjects)).to.deep.equal([['probe.webhooks.>'], ['Probe.webhooks.>']]);
        expect(infos.map((i) => i.state.messages)).to.deep.equal([2, 1]);
      } finally {
        await lower.close();
        await upper.close();
      }
    });

    it('refuses a subject no stream keeps (NO_RESPONDERS), and a bad subject before sending', async () => {
      const err = await bus.publishDurable('elsewhere.webhooks.x.y', {}, { msgId: 'x' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(TroupeError);
      expect((err as TroupeError).code).to.equal('NO_RESPONDERS');
      const bad = await bus.publishDurable('dur.webhooks.*', {}, { msgId: 'y' }).catch((e: unknown) => e);
      expect((bad as TroupeError).code).to.equal('INVALID_SUBJECT');
    });
  });

  describe('nats without JetStream', () => {
    let server: NatsServerHandle;
    before(async () => {
      server = await startNatsServer({ jetstream: false });
    });
    after(async () => {
      await server.stop();
    });

    it('publishes plainly and says so once', async () => {
      const warnings: string[] = [];
      const bus = await NatsBus.connect(server.url, { streams: [webhookStream('dur')], onWarning: (m) => warnings.push(m) });
      try {
        const got = record(bus, 'dur.webhooks.>');
        await bus.flush();
        await bus.publishDurable(subject, { n: 1 }, { msgId: 'a' });
        await bus.publishDurable(subject, { n: 2 }, { msgId: 'b' });
        await until(() => got.length === 2, 'two deliveries');
        expect(warnings).to.have.length(1);
        expect(warnings[0]).to.match(/no JetStream/);
      } finally {
        await bus.close();
      }
    });
  });
});
