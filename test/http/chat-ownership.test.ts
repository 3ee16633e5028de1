/**
 * Issue 21, finding 4 (SPEC §4.4 as of 2026-11-27): sign-in that cannot probe the allowed list
 * nor lock a person out, conversations that belong to whoever holds their token, and a sign-out
 * that ends the session on the server (for every instance, and after a restart).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Mailer } from '../../src/service/mailer.js';
import { auth, makeHarness, otherProcess, type Harness } from './support.js';

interface SseEvent {
  event: string;
  data: any;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('event:'))
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1] ?? '', data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') }));
}

const echo = {
  id: 'echo-wf',
  name: 'Echo',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'echo', type: 'function', name: 'Echo', config: { code: 'return `${<start.message>} after ${<start.history>.length}: ${JSON.stringify(<start.history>)}`;' } },
  ],
  connections: [{ from: 'start', to: 'echo' }],
};

describe('http: chat sign-in, conversation ownership and sign-out (issue 21)', () => {
  let h: Harness;
  const mails: { to: string; text: string }[] = [];
  const mailer: Mailer = {
    async send(to, _subject, text) {
      mails.push({ to, text });
    },
  };
  let dir: string;

  beforeEach(() => {
    mails.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'troupe-chat-own-'));
    // one file, so a second harness on it is the same service restarted
    h = makeHarness({ mailer, config: { trustProxy: 1 }, dbPath: join(dir, 'troupe.db') });
  });
  afterEach(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function setUp(subdomain: string, chatAuth: Record<string, unknown>): Promise<void> {
    await h.http.post('/api/workflows').set(auth).send(echo).expect(201);
    await h.http.post('/api/workflows/echo-wf/deploy').set(auth).expect(201);
    await h.http.put('/api/workflows/echo-wf/chat').set(auth).send({ subdomain, auth: chatAuth, branding: { title: 'T' } }).expect(201);
  }

  function send(http: Harness['http'], sub: string, body: Record<string, unknown>, cookie?: string[]) {
    const req = http.post(`/api/chat/${sub}/messages`).set('X-Forwarded-For', '198.51.100.1').send(body);
    if (cookie) req.set('Cookie', cookie);
    return req.buffer(true).parse((res, cb) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => cb(null, text));
    });
  }

  function signIn(from: string, body: Record<string, unknown>) {
    return h.http.post('/api/chat/team/auth').set('X-Forwarded-For', from).send(body);
  }

  /** the code of the newest mail to `to`, once it is sent (codes are mailed after the answer) */
  async function codeFor(to: string, count: number): Promise<string> {
    for (let i = 0; i < 200 && mails.filter((m) => m.to === to).length < count; i++) await new Promise((r) => setTimeout(r, 10));
    const mine = mails.filter((m) => m.to === to);
    expect(mine, `mail ${count} to ${to}`).to.have.length(count);
    return /\b(\d{6})\b/.exec(mine.at(-1)!.text)?.[1] as string;
  }

  const wrongFor = (code: string): string => (code === '000000' ? '111111' : '000000');

  it('answers 202 for every well-formed address and mails only allowed ones; a malformed one is 400', async () => {
    await setUp('team', { mode: 'email', allowedEmails: ['ada@example.com', '@corp.example'] });
    for (const email of ['eve@evil.example', 'ada@example.com.evil.example', 'Ada@Example.com', 'bob@corp.example']) {
      const res = await signIn('203.0.113.1', { email }).expect(202);
      expect(res.body).to.deep.equal({ sent: true });
    }
    await codeFor('bob@corp.example', 1);
    expect(mails.map((m) => m.to).sort()).to.deep.equal(['ada@example.com', 'bob@corp.example']);
    for (const email of ['<eve@evil.example> x@corp.example', 'eve@evil.example, x@corp.example', 'not an address']) {
      const res = await signIn('203.0.113.1', { email }).expect(400);
      expect(res.body.error.code).to.equal('INVALID_REQUEST');
    }
    // an outsider's guess is an invalid code like any other, never a sign of the list
    const res = await signIn('203.0.113.1', { email: 'eve@evil.example', code: '123456' }).expect(401);
    expect(res.body.error.message).to.equal('invalid or expired code');
  });

  it('ten wrong codes from ten addresses do not lock an allowed person out; a code dies after 5 wrong tries', async () => {
    await setUp('team', { mode: 'email', allowedEmails: ['ada@example.com'] });
    await signIn('198.51.100.1', { email: 'ada@example.com' }).expect(202);
    const hers = await codeFor('ada@example.com', 1);
    for (let i = 0; i < 10; i++) {
      // outsiders guess, and ask for codes of their own (mailed to Ada, useless to them)
      await signIn(`203.0.113.${10 + i}`, { email: 'ada@example.com', code: wrongFor(hers) }).expect(401);
      await signIn(`203.0.113.${10 + i}`, { email: 'ada@example.com' }).expect(202);
      for (let k = 0; k < 5; k++) await signIn(`203.0.113.${10 + i}`, { email: 'ada@example.com', code: wrongFor(hers) }).expect(401);
    }
    await codeFor('ada@example.com', 11);
    // none of it touched the code Ada asked for: she signs in with it
    const ok = await signIn('198.51.100.1', { email: 'ada@example.com', code: hers }).expect(200);
    expect((ok.headers['set-cookie'] as unknown as string[]).join(';')).to.match(/troupe_chat_team=/);
    // her own 5 wrong tries end a code, the right one after them is refused; a new one works
    await signIn('198.51.100.1', { email: 'ada@example.com' }).expect(202);
    const next = await codeFor('ada@example.com', 12);
    for (let k = 0; k < 5; k++) await signIn('198.51.100.1', { email: 'ada@example.com', code: wrongFor(next) }).expect(401);
    await signIn('198.51.100.1', { email: 'ada@example.com', code: next }).expect(401);
    await signIn('198.51.100.2', { email: 'ada@example.com' }).expect(202);
    await signIn('198.51.100.2', { email: 'ada@example.com', code: await codeFor('ada@example.com', 13) }).expect(200);
  });

  it('limits attempts per client address and per (email, client address): 429 there, not elsewhere', async () => {
    await setUp('team', { mode: 'email', allowedEmails: ['ada@example.com', 'bob@example.com'] });
    let last = 0;
    for (let i = 0; i < 40 && last !== 429; i++) last = (await signIn('203.0.113.5', { email: 'ada@example.com', code: '000000' })).status;
    expect(last).to.equal(429);
    const limited = await signIn('203.0.113.5', { email: 'ada@example.com' }).expect(429);
    expect(Number(limited.headers['retry-after'])).to.be.greaterThan(0);
    await signIn('198.51.100.1', { email: 'ada@example.com' }).expect(202);
    const code = await codeFor('ada@example.com', 1);
    await signIn('198.51.100.1', { email: 'ada@example.com', code }).expect(200);
  });

  it('a conversation continues only with the conversationToken of its done events: 403 without it, no history shown', async () => {
    await setUp('team', { mode: 'public' });
    const first = parseSse((await send(h.http, 'team', { message: 'my secret plan' }).expect(200)).body as string).at(-1)!;
    expect(first.event).to.equal('done');
    expect(first.data).to.have.keys('conversationId', 'conversationToken', 'executionId', 'output');
    const { conversationId, conversationToken } = first.data as { conversationId: string; conversationToken: string };
    expect(conversationToken).to.be.a('string').with.length.greaterThan(20);
    const stored = await h.store.chats.getConversation(conversationId);
    expect(JSON.stringify(stored), 'only a hash of the token is stored').to.not.include(conversationToken);

    const without = await send(h.http, 'team', { message: 'what did they say?', conversationId }).expect(403);
    expect(JSON.parse(without.body as string).error.code).to.equal('FORBIDDEN');
    expect(without.body).to.not.include('secret plan');
    const forged = await send(h.http, 'team', { message: 'x', conversationId, conversationToken: conversationToken.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }).expect(403);
    expect(forged.body).to.not.include('secret plan');
    await send(h.http, 'team', { message: 'x', conversationId: 'not-a-conversation', conversationToken }).expect(403);
    expect((await h.store.chats.getConversation(conversationId))?.messages, 'nothing was added').to.have.length(2);

    const again = parseSse((await send(h.http, 'team', { message: 'and then', conversationId, conversationToken }).expect(200)).body as string);
    expect(again[0]!.data.text).to.match(/^and then after 2: .*my secret plan/);
    expect(again.at(-1)!.data).to.deep.include({ conversationId, conversationToken });
  });

  it('in email mode, a session of the same address continues without the token; another address cannot', async () => {
    await setUp('team', { mode: 'email', allowedEmails: ['@example.com'] });
    const cookieOf = async (email: string, n: number): Promise<string[]> => {
      await signIn('198.51.100.1', { email }).expect(202);
      const res = await signIn('198.51.100.1', { email, code: await codeFor(email, n) }).expect(200);
      return res.headers['set-cookie'] as unknown as string[];
    };
    const ada = await cookieOf('ada@example.com', 1);
    const first = parseSse((await send(h.http, 'team', { message: 'note one' }, ada).expect(200)).body as string).at(-1)!;
    const { conversationId, conversationToken } = first.data as { conversationId: string; conversationToken: string };
    const byAda = parseSse((await send(h.http, 'team', { message: 'note two', conversationId }, ada).expect(200)).body as string).at(-1)!;
    expect(byAda.event).to.equal('done');
    expect(byAda.data.conversationToken, 'a fresh token for the page that had none').to.be.a('string');
    const bob = await cookieOf('bob@example.com', 1);
    await send(h.http, 'team', { message: 'x', conversationId }, bob).expect(403);
    // the token makes its holder the conversation's visitor, as the page keeps it
    const withToken = parseSse((await send(h.http, 'team', { message: 'x', conversationId, conversationToken: byAda.data.conversationToken }, bob).expect(200)).body as string);
    expect(withToken.at(-1)!.event).to.equal('done');
    expect(conversationToken).to.not.equal(byAda.data.conversationToken);
  });

  it('sign-out ends the session on the server: its cookie is refused, on another instance and after a restart too', async () => {
    await setUp('team', { mode: 'password', password: 'open sesame' });
    const login = async (): Promise<string[]> =>
      (await h.http.post('/api/chat/team/auth').send({ password: 'open sesame' }).expect(200)).headers['set-cookie'] as unknown as string[];
    const kept = await login();
    const ended = await login();
    await send(h.http, 'team', { message: 'hi' }, ended).expect(200);
    await h.http.delete('/api/chat/team/auth').set('Cookie', ended).expect(204);
    await send(h.http, 'team', { message: 'hi' }, ended).expect(401);
    await send(otherProcess(h), 'team', { message: 'hi' }, ended).expect(401);
    await send(otherProcess(h), 'team', { message: 'hi' }, kept).expect(200);
    await h.close();
    h = makeHarness({ mailer, config: { trustProxy: 1 }, dbPath: join(dir, 'troupe.db') });
    await send(h.http, 'team', { message: 'hi' }, ended).expect(401);
    await send(h.http, 'team', { message: 'hi' }, kept).expect(200);
  });
});
