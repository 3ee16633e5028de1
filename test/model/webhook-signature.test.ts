import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import {
  deliveryIdOf,
  signatureHeaders,
  signHeaders,
  starterHeaders,
  verifySignature,
  type SignatureCheck,
  type WebhookProvider,
} from '../../src/model/webhook-signature.js';

const SECRET = 'whsec_test_secret';
const NOW_MS = 1_700_000_000_500;
const NOW_S = 1_700_000_000;
const BODY = Buffer.from('{"id":"evt_1","type":"ping","text":"héllo"}');
const MISMATCH = { ok: false, reason: 'signature does not match' };
const STALE = { ok: false, reason: 'timestamp outside the 5-minute tolerance' };

// computed here with createHmac, independently of the module under test
function hex(secret: string, payload: string | Buffer): string {
  return createHmac('sha256', secret).update(payload).digest('hex');
}
function stripePayload(t: number | string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${t}.`), body]);
}
function slackPayload(t: number | string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`v0:${t}:`), body]);
}
function reasonOf(check: SignatureCheck): string | undefined {
  return check.ok ? undefined : check.reason;
}

describe('model/webhook-signature', () => {
  describe('generic and github (sha256=<hex> of the raw body)', () => {
    const cases = [
      { provider: 'generic', header: 'x-signature', label: 'X-Signature' },
      { provider: 'github', header: 'x-hub-signature-256', label: 'X-Hub-Signature-256' },
    ] as const;
    for (const { provider, header, label } of cases) {
      const verify = (value: string | undefined, body = BODY, secret = SECRET) =>
        verifySignature(provider, secret, body, { [header]: value, 'content-type': 'application/json' }, NOW_MS);
      const valid = `sha256=${hex(SECRET, BODY)}`;

      it(`${provider}: accepts a valid signature`, () => expect(verify(valid)).to.deep.equal({ ok: true }));
      it(`${provider}: rejects a signature made with another secret`, () =>
        expect(verify(`sha256=${hex('other', BODY)}`)).to.deep.equal(MISMATCH));
      it(`${provider}: rejects a tampered body`, () =>
        expect(verify(valid, Buffer.from(BODY.toString().replace('ping', 'pong')))).to.deep.equal(MISMATCH));
      it(`${provider}: rejects when the secret given to verify differs`, () =>
        expect(verify(valid, BODY, 'other')).to.deep.equal(MISMATCH));
      it(`${provider}: rejects a missing or empty header`, () => {
        expect(verify(undefined)).to.deep.equal({ ok: false, reason: `missing ${label} header` });
        expect(verify('')).to.deep.equal({ ok: false, reason: `missing ${label} header` });
        expect(verify('   ')).to.deep.equal({ ok: false, reason: `missing ${label} header` });
      });
      it(`${provider}: rejects a header without the sha256= prefix`, () => {
        expect(reasonOf(verify(hex(SECRET, BODY)))).to.match(new RegExp(`^malformed ${label} header`));
        expect(reasonOf(verify(valid.replace('sha256=', 'sha1=')))).to.match(/^malformed/);
      });
      it(`${provider}: rejects truncated, extended and non-hex digests`, () => {
        expect(verify(valid.slice(0, -2))).to.deep.equal(MISMATCH);
        expect(verify(`${valid}00`)).to.deep.equal(MISMATCH);
        expect(verify(`${valid}zz`)).to.deep.equal(MISMATCH);
        expect(verify('sha256=')).to.deep.equal(MISMATCH);
      });
      it(`${provider}: accepts an upper-case hex digest`, () =>
        expect(verify(`sha256=${hex(SECRET, BODY).toUpperCase()}`)).to.deep.equal({ ok: true }));
      it(`${provider}: signs the raw bytes, even when they are not UTF-8`, () => {
        const raw = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
        expect(verify(`sha256=${hex(SECRET, raw)}`, raw)).to.deep.equal({ ok: true });
      });
    }

    it("github: matches GitHub's documented test vector", () => {
      const secret = "It's a Secret to Everybody";
      const header = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
      const body = Buffer.from('Hello, World!');
      expect(verifySignature('github', secret, body, { 'x-hub-signature-256': header }, NOW_MS)).to.deep.equal({ ok: true });
      expect(signHeaders('github', secret, body, NOW_MS)).to.deep.equal({ 'x-hub-signature-256': header });
    });

    it('github: the SHA-1 x-hub-signature alone is not enough', () => {
      const sha1 = `sha1=${createHmac('sha1', SECRET).update(BODY).digest('hex')}`;
      expect(verifySignature('github', SECRET, BODY, { 'x-hub-signature': sha1 }, NOW_MS))
        .to.deep.equal({ ok: false, reason: 'missing X-Hub-Signature-256 header' });
    });

    it('generic does not read the GitHub header and vice versa', () => {
      const value = `sha256=${hex(SECRET, BODY)}`;
      expect(verifySignature('generic', SECRET, BODY, { 'x-hub-signature-256': value }, NOW_MS).ok).to.equal(false);
      expect(verifySignature('github', SECRET, BODY, { 'x-signature': value }, NOW_MS).ok).to.equal(false);
    });
  });

  describe('stripe', () => {
    const verify = (value: string | undefined, body = BODY, nowMs = NOW_MS) =>
      verifySignature('stripe', SECRET, body, { 'stripe-signature': value }, nowMs);
    const sig = (t: number, secret = SECRET, body = BODY) => hex(secret, stripePayload(t, body));

    it('accepts a valid signature', () =>
      expect(verify(`t=${NOW_S},v1=${sig(NOW_S)}`)).to.deep.equal({ ok: true }));
    it('rejects a signature made with another secret', () =>
      expect(verify(`t=${NOW_S},v1=${sig(NOW_S, 'other')}`)).to.deep.equal(MISMATCH));
    it('rejects a tampered body', () =>
      expect(verify(`t=${NOW_S},v1=${sig(NOW_S)}`, Buffer.from('{"id":"evt_2"}'))).to.deep.equal(MISMATCH));
    it('rejects a changed timestamp, because t is part of the signed payload', () =>
      expect(verify(`t=${NOW_S - 1},v1=${sig(NOW_S)}`)).to.deep.equal(MISMATCH));
    it('rejects a missing or empty header', () => {
      expect(verify(undefined)).to.deep.equal({ ok: false, reason: 'missing Stripe-Signature header' });
      expect(verify('')).to.deep.equal({ ok: false, reason: 'missing Stripe-Signature header' });
    });

    it('accepts any matching v1 among several, and ignores v0', () => {
      const header = `t=${NOW_S},v1=${sig(NOW_S, 'rolled-secret')},v1=${sig(NOW_S)},v0=${'0'.repeat(64)}`;
      expect(verify(header)).to.deep.equal({ ok: true });
      expect(verify(`t=${NOW_S},v1=${sig(NOW_S, 'a')},v1=${sig(NOW_S, 'b')}`)).to.deep.equal(MISMATCH);
    });

    it('enforces the 5-minute tolerance in both directions', () => {
      // in whole seconds, as Stripe's library counts (the clock is half a second past NOW_S):
      // exactly 300 s old or ahead passes, 301 does not
      for (const offset of [-240, 240, -300, 300]) {
        const t = NOW_S + offset;
        expect(verify(`t=${t},v1=${sig(t)}`), `offset ${offset}s`).to.deep.equal({ ok: true });
      }
      for (const offset of [-360, 360, -301, 301]) {
        const t = NOW_S + offset;
        expect(verify(`t=${t},v1=${sig(t)}`), `offset ${offset}s`).to.deep.equal(STALE);
      }
    });

    it('rejects missing, non-numeric or repeated timestamps as malformed', () => {
      const v1 = `v1=${sig(NOW_S)}`;
      for (const header of [v1, `t=,${v1}`, `t=abc,${v1}`, `t=1e9,${v1}`, `t=-${NOW_S},${v1}`, `t=${NOW_S},t=${NOW_S},${v1}`]) {
        expect(reasonOf(verify(header)), header).to.match(/^malformed Stripe-Signature header/);
      }
    });

    it('rejects a header with no v1 signature as malformed', () => {
      expect(reasonOf(verify(`t=${NOW_S}`))).to.match(/^malformed Stripe-Signature header/);
      expect(reasonOf(verify(`t=${NOW_S},v0=${sig(NOW_S)}`))).to.match(/^malformed Stripe-Signature header/);
      expect(reasonOf(verify('garbage'))).to.match(/^malformed Stripe-Signature header/);
    });

    it('fails closed when the clock is not a number', () =>
      expect(verify(`t=${NOW_S},v1=${sig(NOW_S)}`, BODY, Number.NaN)).to.deep.equal(STALE));
  });

  describe('slack', () => {
    const verify = (ts: string | undefined, signature: string | undefined, body = BODY, nowMs = NOW_MS) =>
      verifySignature('slack', SECRET, body, { 'x-slack-request-timestamp': ts, 'x-slack-signature': signature }, nowMs);
    const sig = (t: number | string, secret = SECRET, body = BODY) => `v0=${hex(secret, slackPayload(t, body))}`;

    it('accepts a valid signature', () => expect(verify(String(NOW_S), sig(NOW_S))).to.deep.equal({ ok: true }));
    it('rejects a signature made with another secret', () =>
      expect(verify(String(NOW_S), sig(NOW_S, 'other'))).to.deep.equal(MISMATCH));
    it('rejects a tampered body', () =>
      expect(verify(String(NOW_S), sig(NOW_S), Buffer.from('token=x'))).to.deep.equal(MISMATCH));
    it('rejects a changed timestamp, because it is part of the basestring', () =>
      expect(verify(String(NOW_S + 1), sig(NOW_S))).to.deep.equal(MISMATCH));

    it('rejects a missing or empty signature header', () => {
      const reason = { ok: false, reason: 'missing X-Slack-Signature header' };
      expect(verify(String(NOW_S), undefined)).to.deep.equal(reason);
      expect(verify(String(NOW_S), '')).to.deep.equal(reason);
    });

    it('rejects a missing, empty or non-numeric timestamp', () => {
      const missing = { ok: false, reason: 'missing X-Slack-Request-Timestamp header' };
      expect(verify(undefined, sig(NOW_S))).to.deep.equal(missing);
      expect(verify('', sig(NOW_S))).to.deep.equal(missing);
      for (const ts of ['abc', '1.7e9', '0x10', `${NOW_S}.5`]) {
        expect(reasonOf(verify(ts, sig(ts))), ts).to.match(/^malformed X-Slack-Request-Timestamp header/);
      }
    });

    it('rejects a signature without the v0= prefix', () =>
      expect(reasonOf(verify(String(NOW_S), sig(NOW_S).slice(3)))).to.match(/^malformed X-Slack-Signature header/));

    it('enforces the 5-minute tolerance in both directions', () => {
      for (const offset of [-240, 240, -300, 300]) {
        const t = NOW_S + offset;
        expect(verify(String(t), sig(t)), `offset ${offset}s`).to.deep.equal({ ok: true });
      }
      for (const offset of [-360, 360, -301, 301]) {
        const t = NOW_S + offset;
        expect(verify(String(t), sig(t)), `offset ${offset}s`).to.deep.equal(STALE);
      }
    });
  });

  describe('verifySignature in general', () => {
    it('refuses to check against an empty secret, for every provider', () => {
      for (const provider of ['generic', 'github', 'stripe', 'slack'] as const) {
        const headers = signHeaders(provider, '', BODY, NOW_MS);
        expect(verifySignature(provider, '', BODY, headers, NOW_MS).ok, provider).to.equal(false);
      }
    });

    it('rejects an unknown provider from an untyped caller', () => {
      const check = verifySignature('gitlab' as WebhookProvider, SECRET, BODY, {}, NOW_MS);
      expect(reasonOf(check)).to.match(/unknown webhook provider/);
    });
  });

  describe('signHeaders', () => {
    it('produces the documented formats with independently computed digests', () => {
      expect(signHeaders('generic', SECRET, BODY, NOW_MS)).to.deep.equal({ 'x-signature': `sha256=${hex(SECRET, BODY)}` });
      expect(signHeaders('github', SECRET, BODY, NOW_MS)).to.deep.equal({ 'x-hub-signature-256': `sha256=${hex(SECRET, BODY)}` });
      expect(signHeaders('stripe', SECRET, BODY, NOW_MS)).to.deep.equal({
        'stripe-signature': `t=${NOW_S},v1=${hex(SECRET, stripePayload(NOW_S, BODY))}`,
      });
      expect(signHeaders('slack', SECRET, BODY, NOW_MS)).to.deep.equal({
        'x-slack-request-timestamp': String(NOW_S),
        'x-slack-signature': `v0=${hex(SECRET, slackPayload(NOW_S, BODY))}`,
      });
    });

    it('has the literal shapes: sha256=<64 hex>, t=<seconds>,v1=<64 hex>, v0=<64 hex>', () => {
      expect(signHeaders('generic', SECRET, BODY, NOW_MS)['x-signature']).to.match(/^sha256=[0-9a-f]{64}$/);
      expect(signHeaders('github', SECRET, BODY, NOW_MS)['x-hub-signature-256']).to.match(/^sha256=[0-9a-f]{64}$/);
      expect(signHeaders('stripe', SECRET, BODY, NOW_MS)['stripe-signature']).to.match(/^t=1700000000,v1=[0-9a-f]{64}$/);
      expect(signHeaders('slack', SECRET, BODY, NOW_MS)['x-slack-signature']).to.match(/^v0=[0-9a-f]{64}$/);
    });

    it('round-trips through verifySignature for every provider', () => {
      for (const provider of ['generic', 'github', 'stripe', 'slack'] as const) {
        const headers = signHeaders(provider, SECRET, BODY, NOW_MS);
        expect(verifySignature(provider, SECRET, BODY, headers, NOW_MS), provider).to.deep.equal({ ok: true });
        expect(verifySignature(provider, 'other', BODY, headers, NOW_MS), provider).to.deep.equal(MISMATCH);
      }
    });
  });

  describe('signatureHeaders and starterHeaders', () => {
    it('names the signature headers of each provider', () => {
      expect(signatureHeaders('generic')).to.deep.equal(['x-signature']);
      expect(signatureHeaders('github')).to.deep.equal(['x-hub-signature-256', 'x-hub-signature']);
      expect(signatureHeaders('stripe')).to.deep.equal(['stripe-signature']);
      expect(signatureHeaders('slack')).to.deep.equal(['x-slack-signature']);
      expect(Object.isFrozen(signatureHeaders('github'))).to.equal(true);
    });

    const common = {
      authorization: 'Bearer k',
      cookie: 'sid=1',
      'x-api-key': 'key',
      'content-type': 'application/json',
      'user-agent': 'agent/1',
      'x-empty': '',
      'x-absent': undefined,
    };

    it('drops credentials and the provider signature headers, keeps the rest', () => {
      const headers = { ...common, 'x-hub-signature-256': 'sha256=a', 'x-hub-signature': 'sha1=b', 'x-github-delivery': 'd1', 'x-signature': 's' };
      expect(starterHeaders('github', headers)).to.deep.equal({
        'content-type': 'application/json',
        'user-agent': 'agent/1',
        'x-empty': '',
        'x-github-delivery': 'd1',
        'x-signature': 's',
      });
      expect(starterHeaders('generic', headers)).to.deep.equal({
        'content-type': 'application/json',
        'user-agent': 'agent/1',
        'x-empty': '',
        'x-github-delivery': 'd1',
        'x-hub-signature-256': 'sha256=a',
        'x-hub-signature': 'sha1=b',
      });
    });

    it('keeps the Slack timestamp but drops the Slack and Stripe signatures', () => {
      const slack = starterHeaders('slack', { ...common, 'x-slack-signature': 'v0=a', 'x-slack-request-timestamp': '1' });
      expect(slack).to.deep.equal({ 'content-type': 'application/json', 'user-agent': 'agent/1', 'x-empty': '', 'x-slack-request-timestamp': '1' });
      const stripe = starterHeaders('stripe', { 'stripe-signature': 't=1,v1=a', 'content-type': 'application/json' });
      expect(stripe).to.deep.equal({ 'content-type': 'application/json' });
    });

    it('does not modify its input', () => {
      const headers = { ...common, 'x-signature': 's' };
      starterHeaders('generic', headers);
      expect(headers).to.deep.equal({ ...common, 'x-signature': 's' });
    });
  });

  describe('deliveryIdOf', () => {
    const all = { 'x-github-delivery': 'gh-1', 'idempotency-key': 'idem-1', 'x-delivery-id': 'del-1' };

    it('github: X-GitHub-Delivery, then Idempotency-Key, then X-Delivery-Id', () => {
      expect(deliveryIdOf('github', all, { id: 'evt_1' })).to.equal('gh-1');
      expect(deliveryIdOf('github', { ...all, 'x-github-delivery': '' }, null)).to.equal('idem-1');
      expect(deliveryIdOf('github', { 'x-delivery-id': 'del-1' }, null)).to.equal('del-1');
      expect(deliveryIdOf('github', {}, null)).to.equal(null);
    });

    it("stripe: the event's id, then Idempotency-Key, then X-Delivery-Id", () => {
      expect(deliveryIdOf('stripe', all, { id: 'evt_1', type: 'charge.succeeded' })).to.equal('evt_1');
      for (const body of [{ id: 42 }, { id: '' }, {}, null, 'evt_1', ['evt_1'], undefined]) {
        expect(deliveryIdOf('stripe', all, body), JSON.stringify(body)).to.equal('idem-1');
      }
      expect(deliveryIdOf('stripe', { 'x-delivery-id': 'del-1' }, {})).to.equal('del-1');
      expect(deliveryIdOf('stripe', {}, {})).to.equal(null);
    });

    it("slack: the Events API's event_id (a retry carries the same), then Idempotency-Key, then X-Delivery-Id", () => {
      expect(deliveryIdOf('slack', all, { event_id: 'Ev01', type: 'event_callback' })).to.equal('Ev01');
      expect(deliveryIdOf('slack', all, { event_id: '' })).to.equal('idem-1');
    });

    for (const provider of ['generic', 'slack'] as const) {
      it(`${provider}: ignores GitHub's header and the body id`, () => {
        expect(deliveryIdOf(provider, all, { id: 'evt_1' })).to.equal('idem-1');
        expect(deliveryIdOf(provider, { ...all, 'idempotency-key': '  ' }, null)).to.equal('del-1');
        expect(deliveryIdOf(provider, { 'x-github-delivery': 'gh-1' }, { id: 'evt_1' })).to.equal(null);
      });
    }
  });

  describe('generic with X-Signature-Timestamp (SPEC §4.3)', () => {
    const timed = (t: number | string, body = BODY): Record<string, string> => ({ 'x-signature-timestamp': String(t), 'x-signature': `sha256=${hex(SECRET, stripePayload(t, body))}` });

    it('signs "<timestamp>.<raw body>" and takes 300 s either way, not more', () => {
      expect(verifySignature('generic', SECRET, BODY, timed(NOW_S), NOW_MS)).to.deep.equal({ ok: true });
      expect(verifySignature('generic', SECRET, BODY, timed(NOW_S - 300), NOW_MS)).to.deep.equal({ ok: true });
      expect(verifySignature('generic', SECRET, BODY, timed(NOW_S + 300), NOW_MS)).to.deep.equal({ ok: true });
      expect(verifySignature('generic', SECRET, BODY, timed(NOW_S - 301), NOW_MS)).to.deep.equal(STALE);
      expect(verifySignature('generic', SECRET, BODY, timed(NOW_S + 301), NOW_MS)).to.deep.equal(STALE);
      expect(signHeaders('generic', SECRET, BODY, NOW_MS, true)).to.deep.equal(timed(NOW_S));
    });

    it('refuses a body-only signature with a timestamp, another body, and timestamps that are not plain seconds', () => {
      expect(verifySignature('generic', SECRET, BODY, { 'x-signature-timestamp': String(NOW_S), 'x-signature': `sha256=${hex(SECRET, BODY)}` }, NOW_MS)).to.deep.equal(MISMATCH);
      expect(verifySignature('generic', SECRET, Buffer.from('{}'), timed(NOW_S), NOW_MS)).to.deep.equal(MISMATCH);
      for (const t of ['1e9', ' 1700000000x', '-1', '0x10']) {
        expect(reasonOf(verifySignature('generic', SECRET, BODY, { ...timed(NOW_S), 'x-signature-timestamp': t }, NOW_MS)), t).to.include('malformed X-Signature-Timestamp');
      }
    });

    it('requireTimestamp refuses a delivery without one; without the option a body-only signature still passes', () => {
      const bodyOnly = { 'x-signature': `sha256=${hex(SECRET, BODY)}` };
      expect(verifySignature('generic', SECRET, BODY, bodyOnly, NOW_MS)).to.deep.equal({ ok: true });
      expect(reasonOf(verifySignature('generic', SECRET, BODY, bodyOnly, NOW_MS, { requireTimestamp: true }))).to.include('missing X-Signature-Timestamp header');
      expect(verifySignature('generic', SECRET, BODY, timed(NOW_S), NOW_MS, { requireTimestamp: true })).to.deep.equal({ ok: true });
    });
  });
});
