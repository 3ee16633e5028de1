/**
 * NATS_URL as the NATS adapter reads it (src/bus/nats-url.ts): the client ignores credentials
 * written in a URL and takes no comma-separated string, so the bus passes them on itself; and a
 * URL is never shown with its password or token.
 */
import { expect } from 'chai';
import { NatsBus } from '../../src/bus/nats.js';
import { maskNatsUrl, parseNatsUrl } from '../../src/bus/nats-url.js';
import type { BusMsg } from '../../src/bus/types.js';
import { TroupeError } from '../../src/errors.js';
import { freePort, startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';

async function roundTrip(bus: NatsBus): Promise<unknown> {
  const got: BusMsg[] = [];
  bus.subscribe('conn.check', (m) => got.push(m));
  await bus.flush();
  bus.publish('conn.check', { ok: true });
  const deadline = Date.now() + 5000;
  while (got.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return got[0]?.data;
}

async function failure(url: string): Promise<TroupeError> {
  const err = await NatsBus.connect(url).then(async (bus) => {
    await bus.close();
    return null;
  }, (e: unknown) => e);
  expect(err).to.be.instanceOf(TroupeError);
  return err as TroupeError;
}

describe('bus: connecting with NATS_URL', function () {
  this.timeout(30_000);

  describe('a server that wants a user and password', () => {
    let server: NatsServerHandle;
    let hostPort: string;
    before(async () => {
      server = await startNatsServer({ jetstream: false, auth: { user: 'alice', pass: 'hunter2pass' } });
      hostPort = new URL(server.url).host;
    });
    after(() => server.stop());

    it('takes them from the URL', async () => {
      const bus = await NatsBus.connect(`nats://alice:hunter2pass@${hostPort}`);
      try {
        expect(await roundTrip(bus)).to.deep.equal({ ok: true });
      } finally {
        await bus.close();
      }
    });

    it('says a refused or unreachable server without the password', async () => {
      const wrong = await failure(`nats://alice:wrong-hunter2pass@${hostPort}`);
      expect(wrong.code).to.equal('CONNECTION_FAILED');
      expect(wrong.message).to.contain(`nats://alice:***@${hostPort}`).and.not.contain('hunter2pass');
      const gone = await failure(`nats://alice:hunter2pass@127.0.0.1:${await freePort()}`);
      expect(gone.message).to.match(/^cannot connect to NATS at nats:\/\/alice:\*\*\*@127\.0\.0\.1:\d+: /).and.not.contain('hunter2pass');
    });

    it('reads a comma-separated list, one server of which is down', async () => {
      const bus = await NatsBus.connect(`nats://127.0.0.1:${await freePort()}, nats://alice:hunter2pass@${hostPort}`);
      try {
        expect(await roundTrip(bus)).to.deep.equal({ ok: true });
      } finally {
        await bus.close();
      }
    });
  });

  it('takes a token from the URL', async () => {
    const server = await startNatsServer({ jetstream: false, auth: { token: 's3cr3t-token' } });
    try {
      const bus = await NatsBus.connect(`nats://s3cr3t-token@${new URL(server.url).host}`);
      expect(await roundTrip(bus)).to.deep.equal({ ok: true });
      await bus.close();
      const err = await failure(`nats://not-the-token@${new URL(server.url).host}`);
      expect(err.message).to.contain('nats://***@').and.not.contain('not-the-token');
    } finally {
      await server.stop();
    }
  });

  it('masks passwords and tokens in every form, and parses credentials once for the list', () => {
    expect(maskNatsUrl('nats://alice:hunter2pass@h:4222')).to.equal('nats://alice:***@h:4222');
    expect(maskNatsUrl('nats://tok@h:4222, tls://u:p@ss@h2:1')).to.equal('nats://***@h:4222, tls://u:***@h2:1');
    expect(maskNatsUrl('alice:pw@h:4222')).to.equal('alice:***@h:4222');
    expect(maskNatsUrl('nats://h:4222')).to.equal('nats://h:4222');
    expect(parseNatsUrl('nats://al%40ice:p%3Aw@h:1,h2:2')).to.deep.equal({ servers: ['h:1', 'h2:2'], tls: false, user: 'al@ice', pass: 'p:w' });
    expect(parseNatsUrl('tls://h')).to.deep.equal({ servers: ['h:4222'], tls: true });
  });
});
