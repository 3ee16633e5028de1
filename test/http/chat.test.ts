import { expect } from 'chai';
import type { Mailer } from '../../src/service/mailer.js';
import { auth, makeHarness, type Harness } from './support.js';

interface SseEvent {
  event: string;
  data: any;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('event:'))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null';
      return { event, data: JSON.parse(data) };
    });
}

/** start → talk (streams "<start.message>" back word by word), or a workflow answering with a response block */
function chatWorkflow(id: string, blocks?: unknown[]): Record<string, unknown> {
  return {
    id,
    name: `Chat ${id}`,
    blocks: blocks ?? [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'echo', type: 'function', name: 'Echo', config: { code: 'return `You said: ${<start.message>} (turn ${<start.history>.length / 2 + 1}, ${<start.conversationId>})`;' } },
    ],
    connections: [{ from: 'start', to: blocks ? 'talk' : 'echo' }],
  };
}

const streaming = [
  { id: 'start', type: 'starter', name: 'Start', config: {} },
  { id: 'talk', type: 'talk', name: 'Talk', config: { text: 'one two three' } },
];

describe('http: chat deployments', () => {
  let h: Harness;
  const mails: { to: string; text: string }[] = [];
  const mailer: Mailer = {
    async send(to, _subject, text) {
      mails.push({ to, text });
    },
  };
  beforeEach(() => {
    mails.length = 0;
    h = makeHarness({ mailer });
  });
  afterEach(() => h.close());

  async function setUp(id: string, settings: Record<string, unknown>, blocks?: unknown[], deploy = true) {
    await h.http.post('/api/workflows').set(auth).send(chatWorkflow(id, blocks)).expect(201);
    if (deploy) await h.http.post(`/api/workflows/${id}/deploy`).set(auth).expect(201);
    return await h.http.put(`/api/workflows/${id}/chat`).set(auth).send(settings);
  }

  async function status(pending: Promise<{ status: number; body: any }>, expected: number): Promise<{ status: number; body: any }> {
    const res = await pending;
    expect(res.status, JSON.stringify(res.body)).to.equal(expected);
    return res;
  }

  function send(sub: string, body: Record<string, unknown>, cookie?: string[]) {
    const req = h.http.post(`/api/chat/${sub}/messages`).send(body);
    if (cookie) req.set('Cookie', cookie);
    return req.buffer(true).parse((res, cb) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => cb(null, text));
    });
  }

  it('PUT creates (201) then replaces (200) a chat; GET and DELETE; the password is never returned', async () => {
    const created = await status(setUp('c', { subdomain: 'support', auth: { mode: 'password', password: 'correct horse' }, branding: { title: 'Support' } }), 201);
    expect(created.body).to.deep.include({ workflowId: 'c', subdomain: 'support', host: 'support.chat.localhost', path: '/chat/support/' });
    expect(JSON.stringify(created.body)).to.not.include('correct horse');
    expect(JSON.stringify(created.body)).to.not.include('scrypt');
    const replaced = await h.http.put('/api/workflows/c/chat').set(auth).send({ subdomain: 'help', auth: { mode: 'public' }, branding: { title: 'Help', primaryColor: '#112233' } }).expect(200);
    expect(replaced.body.createdAt).to.equal(created.body.createdAt);
    await h.http.get('/api/chat/support').expect(404);
    const pub = await h.http.get('/api/chat/help').expect(200);
    expect(pub.body).to.deep.equal({ subdomain: 'help', branding: { title: 'Help', primaryColor: '#112233' }, auth: { mode: 'public' } });
    await h.http.get('/api/workflows/c/chat').set(auth).expect(200);
    await h.http.delete('/api/workflows/c/chat').set(auth).expect(204);
    await h.http.delete('/api/workflows/c/chat').set(auth).expect(404);
    await h.http.get('/api/chat/help').expect(404);
  });

  it('validates settings: 400 with each issue, 409 for a subdomain of another workflow, 404 unknown workflow, 401 without the admin token', async () => {
    const bad = await status(setUp('v', { subdomain: 'Bad_Name', auth: { mode: 'email' }, branding: { title: '' } }), 400);
    expect(bad.body.error.code).to.equal('INVALID_REQUEST');
    const paths = JSON.stringify(bad.body.error.details);
    expect(paths).to.include('/subdomain');
    expect(paths).to.include('/branding/title');
    await h.http.put('/api/workflows/v/chat').set(auth).send({ subdomain: 'ok', auth: { mode: 'email' }, branding: { title: 'T' } }).expect(400);
    await h.http.put('/api/workflows/v/chat').set(auth).send({ subdomain: 'ok', auth: { mode: 'password' }, branding: { title: 'T' } }).expect(400);
    await h.http.put('/api/workflows/v/chat').set(auth).send({ subdomain: 'ok', auth: { mode: 'public' }, branding: { title: 'T' }, output: { block: 'nope' } }).expect(400);
    await h.http.put('/api/workflows/v/chat').set(auth).send({ subdomain: 'taken', auth: { mode: 'public' }, branding: { title: 'T' } }).expect(201);
    const clash = await status(setUp('w', { subdomain: 'taken', auth: { mode: 'public' }, branding: { title: 'T' } }), 409);
    expect(clash.body.error.details).to.deep.include({ subdomain: 'taken' });
    await h.http.put('/api/workflows/none/chat').set(auth).send({ subdomain: 'x', auth: { mode: 'public' }, branding: { title: 'T' } }).expect(404);
    await h.http.put('/api/workflows/v/chat').send({ subdomain: 'x', auth: { mode: 'public' }, branding: { title: 'T' } }).expect(401);
  });

  it('public chat: streams chunks as they come, then done; the conversation and its history carry on', async () => {
    await status(setUp('p', { subdomain: 'talk', auth: { mode: 'public' }, branding: { title: 'Talk' } }, streaming), 201);
    const res = await send('talk', { message: 'hi' }).expect(200);
    expect(res.headers['content-type']).to.match(/^text\/event-stream/);
    const events = parseSse(res.body as string);
    expect(events.filter((e) => e.event === 'chunk').map((e) => e.data.text)).to.deep.equal(['one ', 'two ', 'three']);
    const done = events.at(-1)!;
    expect(done.event).to.equal('done');
    expect(done.data).to.have.keys('conversationId', 'conversationToken', 'executionId', 'output');
    expect(done.data.output).to.deep.equal({ content: 'one two three' });
    const stored = await h.store.chats.getConversation(done.data.conversationId as string);
    expect(stored?.messages.map((m) => [m.role, m.content])).to.deep.equal([['user', 'hi'], ['assistant', 'one two three']]);
    const rec = await h.http.get(`/api/executions/${done.data.executionId as string}`).set(auth).expect(200);
    expect(rec.body.trigger).to.deep.include({ type: 'chat', subdomain: 'talk', conversationId: done.data.conversationId });
  });

  it('hands the history and <start.conversationId> to the workflow; a non-streaming answer arrives as one chunk', async () => {
    await status(setUp('e', { subdomain: 'echo', auth: { mode: 'public' }, branding: { title: 'Echo' } }), 201);
    const first = parseSse((await send('echo', { message: 'hello' }).expect(200)).body as string);
    const { conversationId, conversationToken } = first.at(-1)!.data as { conversationId: string; conversationToken: string };
    expect(first[0]).to.deep.equal({ event: 'chunk', data: { text: `You said: hello (turn 1, ${conversationId})` } });
    const second = parseSse((await send('echo', { message: 'again', conversationId, conversationToken }).expect(200)).body as string);
    expect(second[0]!.data.text).to.equal(`You said: again (turn 2, ${conversationId})`);
    // the input counts the turn itself: history is only a window of the conversation
    const rec = await h.http.get(`/api/executions/${second.at(-1)!.data.executionId as string}`).set(auth).expect(200);
    expect(rec.body.input).to.deep.include({ message: 'again', conversationId, turn: 2 });
    await send('echo', { message: 'x', conversationId: 'not-a-conversation', conversationToken }).expect(403);
  });

  it('answers one message of a conversation at a time: one sent during an answer waits for it', async () => {
    await status(setUp('q', { subdomain: 'queue', auth: { mode: 'public' }, branding: { title: 'Q' } }, [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'talk', type: 'function', name: 'Talk', config: { code: 'await new Promise((r) => setTimeout(r, 150));\nreturn `${<start.message>} after ${<start.history>.length}`;' } },
    ]), 201);
    const first = parseSse((await send('queue', { message: 'c0' }).expect(200)).body as string);
    const { conversationId, conversationToken } = first.at(-1)!.data as { conversationId: string; conversationToken: string };
    const [a, b] = await Promise.all([send('queue', { message: 'c1', conversationId, conversationToken }), send('queue', { message: 'c2', conversationId, conversationToken })]);
    const answers = [a, b].map((r) => parseSse(r.body as string)[0]!.data.text as string).sort();
    expect(answers).to.deep.equal(['c1 after 2', 'c2 after 4']);
    const stored = await h.store.chats.getConversation(conversationId);
    expect(stored?.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  });

  it('the output setting picks a block and path; a failing run ends with event: error', async () => {
    await status(setUp('o', { subdomain: 'picked', auth: { mode: 'public' }, branding: { title: 'P' }, output: { block: 'Talk', path: 'content' } }, streaming), 201);
    const done = parseSse((await send('picked', { message: 'x' }).expect(200)).body as string).at(-1)!;
    expect(done.data.output).to.equal('one two three');
    await status(setUp('f', { subdomain: 'broken', auth: { mode: 'public' }, branding: { title: 'B' } }, [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'talk', type: 'fail', name: 'Boom', config: { message: 'it broke' } },
    ]), 201);
    const events = parseSse((await send('broken', { message: 'x' }).expect(200)).body as string);
    expect(events.at(-1)?.event).to.equal('error');
    expect(events.at(-1)?.data).to.deep.include({ code: 'FUNCTION_ERROR', message: 'the assistant could not answer this message' });
    expect(JSON.stringify(events), 'what broke inside stays in the record').to.not.include('it broke');
    expect(events.at(-1)?.data.conversationId).to.be.a('string');
  });

  it('the output path takes indexes as references write them: items[1].text as well as items.1.text', async () => {
    const lister = [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'talk', type: 'function', name: 'Lister', config: { code: "return { items: [{ text: 'first' }, { text: 'second' }], grid: [[1, 2], [3, 4]] };" } },
    ];
    await status(setUp('ix', { subdomain: 'indexed', auth: { mode: 'public' }, branding: { title: 'I' }, output: { block: 'Lister', path: 'result.items[1].text' } }, lister), 201);
    const outputOf = async (path: string): Promise<unknown> => {
      await h.http.put('/api/workflows/ix/chat').set(auth).send({ subdomain: 'indexed', auth: { mode: 'public' }, branding: { title: 'I' }, output: { block: 'Lister', path } }).expect(200);
      return parseSse((await send('indexed', { message: 'x' }).expect(200)).body as string).at(-1)!.data.output;
    };
    const first = parseSse((await send('indexed', { message: 'x' }).expect(200)).body as string);
    expect(first.map((e) => [e.event, e.data.text ?? e.data.output])).to.deep.equal([['chunk', 'second'], ['done', 'second']]);
    expect(await outputOf('result.items.1.text')).to.equal('second');
    expect(await outputOf('result.grid[1][0]')).to.equal(3);
    expect(await outputOf('result.items[2].text')).to.equal(null);
  });

  it('password chat: 401 without a session, wrong password 401, right one sets an HttpOnly cookie', async () => {
    await status(setUp('pw', { subdomain: 'secret', auth: { mode: 'password', password: 'open sesame' }, branding: { title: 'S' } }, streaming), 201);
    const no = await send('secret', { message: 'hi' }).expect(401);
    expect(no.headers['content-type']).to.match(/json/);
    await h.http.post('/api/chat/secret/auth').send({ password: 'wrong password' }).expect(401);
    const ok = await h.http.post('/api/chat/secret/auth').send({ password: 'open sesame' }).expect(200);
    const cookie = ok.headers['set-cookie'] as unknown as string[];
    expect(cookie.join(';')).to.match(/troupe_chat_secret=.+; path=\/api\/chat\/secret; .*httponly/i);
    const done = parseSse((await send('secret', { message: 'hi' }, cookie).expect(200)).body as string).at(-1)!;
    expect(done.event).to.equal('done');
    await send('secret', { message: 'hi' }, [cookie[0]!.replace(/=([^;]{5})/, '=xxxxx')]).expect(401);
    // the same password sent again (with the rest, a branding edit) keeps them; GET's own answer goes back as it is
    const view = (await h.http.get('/api/workflows/pw/chat').set(auth).expect(200)).body as Record<string, unknown>;
    expect(view['output']).to.equal(null);
    await h.http.put('/api/workflows/pw/chat').set(auth)
      .send({ subdomain: 'secret', auth: { mode: 'password', password: 'open sesame' }, branding: { title: 'S2' }, output: view['output'] }).expect(200);
    await send('secret', { message: 'hi' }, cookie).expect(200);
    // a new password ends the sessions signed before it
    await h.http.put('/api/workflows/pw/chat').set(auth).send({ subdomain: 'secret', auth: { mode: 'password', password: 'another one!' }, branding: { title: 'S' } }).expect(200);
    await send('secret', { message: 'hi' }, cookie).expect(401);
  });

  it('takes JSON from its own origin only, and keeps the answer when the visitor leaves mid-run', async () => {
    await status(setUp('so', { subdomain: 'own', auth: { mode: 'public' }, branding: { title: 'O' } }, streaming), 201);
    await h.http.post('/api/chat/own/messages').set('Content-Type', 'text/plain').send('{"message":"hi"}').expect(400);
    await h.http.post('/api/chat/own/messages').set('Origin', 'http://evil.example').send({ message: 'hi' }).expect(403);
    await h.http.post('/api/chat/own/messages').set('Sec-Fetch-Site', 'cross-site').send({ message: 'hi' }).expect(403);
    const chat = await h.store.chats.getBySubdomain('own');
    const started = await h.services.chatMessages.start(chat!, { email: null }, '127.0.0.1', { message: 'nobody listens' });
    await started.answer;
    const stored = await h.store.chats.getConversation(started.conversationId);
    expect(stored?.messages.map((m) => [m.role, m.content])).to.deep.equal([['user', 'nobody listens'], ['assistant', 'one two three']]);
  });

  it('email chat: a 6-digit code for allowed addresses only (the same 202 for others), 5 attempts, own conversations only', async () => {
    await status(setUp('em', { subdomain: 'team', auth: { mode: 'email', allowedEmails: ['ada@example.com', '@corp.example'] }, branding: { title: 'Team' } }, streaming), 201);
    // the same answer as for an allowed address: the list cannot be probed (SPEC §4.4)
    for (const email of ['eve@evil.example', 'ada@example.com.evil.example']) await h.http.post('/api/chat/team/auth').send({ email }).expect(202);
    for (const email of ['<eve@evil.example> x@corp.example', 'eve@evil.example, x@corp.example']) await h.http.post('/api/chat/team/auth').send({ email }).expect(400);
    const insider = await h.http.post('/api/chat/team/auth').send({ email: 'Ada@Example.com' }).expect(202);
    expect(insider.body).to.deep.equal({ sent: true });
    await new Promise((r) => setTimeout(r, 50)); // codes are mailed in the background
    expect(mails.map((m) => m.to), 'only the plain allowed address gets a code').to.deep.equal(['ada@example.com']);
    const code = /\b(\d{6})\b/.exec(mails[0]!.text)?.[1] as string;
    expect(code).to.match(/^\d{6}$/);
    await h.http.post('/api/chat/team/auth').send({ email: 'eve@evil.example', code }).expect(401);
    const wrong = code === '000000' ? '111111' : '000000';
    await h.http.post('/api/chat/team/auth').send({ email: 'ada@example.com', code: wrong }).expect(401);
    const ok = await h.http.post('/api/chat/team/auth').send({ email: 'ada@example.com', code }).expect(200);
    const adaCookie = ok.headers['set-cookie'] as unknown as string[];
    await h.http.post('/api/chat/team/auth').send({ email: 'ada@example.com', code }).expect(401); // used up
    const mine = parseSse((await send('team', { message: 'hi' }, adaCookie).expect(200)).body as string).at(-1)!;
    await h.http.post('/api/chat/team/auth').send({ email: 'bob@corp.example' }).expect(202);
    await new Promise((r) => setTimeout(r, 50));
    const bobCode = /\b(\d{6})\b/.exec(mails.at(-1)!.text)?.[1] as string;
    for (let i = 0; i < 5; i++) await h.http.post('/api/chat/team/auth').send({ email: 'bob@corp.example', code: bobCode === '999999' ? '123456' : '999999' }).expect(401);
    await h.http.post('/api/chat/team/auth').send({ email: 'bob@corp.example', code: bobCode }).expect(401); // attempts used up
    await h.http.post('/api/chat/team/auth').send({ email: 'bob@corp.example' }).expect(202);
    await new Promise((r) => setTimeout(r, 50));
    const fresh = /\b(\d{6})\b/.exec(mails.at(-1)!.text)?.[1] as string;
    const bob = await h.http.post('/api/chat/team/auth').send({ email: 'bob@corp.example', code: fresh }).expect(200);
    await send('team', { message: 'x', conversationId: mine.data.conversationId }, bob.headers['set-cookie'] as unknown as string[]).expect(403);
  });

  it('limits sign-in attempts per address (429 with Retry-After)', async () => {
    await status(setUp('rl', { subdomain: 'limited', auth: { mode: 'password', password: 'open sesame' }, branding: { title: 'L' } }), 201);
    let last = 0;
    for (let i = 0; i < 40 && last !== 429; i++) last = (await h.http.post('/api/chat/limited/auth').send({ password: 'not it at all' })).status;
    expect(last).to.equal(429);
    const res = await h.http.post('/api/chat/limited/auth').send({ password: 'open sesame' }).expect(429);
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
  });

  it('behind a trusted proxy, limits by the forwarded client address (TROUPE_TRUST_PROXY)', async () => {
    const proxied = makeHarness({ mailer, config: { trustProxy: 1 } });
    try {
      await proxied.http.post('/api/workflows').set(auth).send(chatWorkflow('tp')).expect(201);
      await proxied.http.put('/api/workflows/tp/chat').set(auth).send({ subdomain: 'tp', auth: { mode: 'password', password: 'open sesame' }, branding: { title: 'T' } }).expect(201);
      let last = 0;
      for (let i = 0; i < 40 && last !== 429; i++) {
        last = (await proxied.http.post('/api/chat/tp/auth').set('X-Forwarded-For', '203.0.113.7').send({ password: 'not it at all' })).status;
      }
      expect(last).to.equal(429);
      await proxied.http.post('/api/chat/tp/auth').set('X-Forwarded-For', '198.51.100.9').send({ password: 'open sesame' }).expect(200);
    } finally {
      await proxied.close();
    }
  });

  it('refuses a blank message (only spaces or line breaks) with 400 before anything runs or is stored', async () => {
    await status(setUp('bl', { subdomain: 'blank', auth: { mode: 'public' }, branding: { title: 'B' } }), 201);
    for (const message of ['   ', '\n\t ']) {
      const res = await send('blank', { message }).expect(400);
      expect(res.body).to.match(/INVALID_REQUEST/);
      expect(res.body).to.include('/message');
    }
    const list = await h.http.get('/api/workflows/bl/executions').set(auth).expect(200);
    expect(list.body.items).to.deep.equal([]);
    // text with spaces around it is a message, sent as typed
    const done = parseSse((await send('blank', { message: ' hi ' }).expect(200)).body as string).at(-1)!;
    expect(done.event).to.equal('done');
  });

  it('a new subdomain keeps the chat\'s conversations: one begun on the old one carries on with its history', async () => {
    await status(setUp('mv', { subdomain: 'before', auth: { mode: 'public' }, branding: { title: 'M' } }), 201);
    const first = parseSse((await send('before', { message: 'hello' }).expect(200)).body as string).at(-1)!;
    const { conversationId, conversationToken } = first.data as { conversationId: string; conversationToken: string };
    await h.http.put('/api/workflows/mv/chat').set(auth).send({ subdomain: 'after', auth: { mode: 'public' }, branding: { title: 'M' } }).expect(200);
    await send('before', { message: 'x', conversationId, conversationToken }).expect(404);
    const second = parseSse((await send('after', { message: 'again', conversationId, conversationToken }).expect(200)).body as string);
    expect(second[0]!.data.text).to.equal(`You said: again (turn 2, ${conversationId})`);
    // another workflow's chat still does not see it, even on the subdomain the conversation began on
    await status(setUp('mv2', { subdomain: 'before', auth: { mode: 'public' }, branding: { title: 'N' } }), 201);
    await send('before', { message: 'x', conversationId, conversationToken }).expect(403);
  });

  it('signs out: DELETE /api/chat/{sub}/auth expires the session cookie (204) signed in or not; another origin 403, unknown chat 404', async () => {
    await status(setUp('so2', { subdomain: 'leave', auth: { mode: 'password', password: 'open sesame' }, branding: { title: 'L' } }), 201);
    await h.http.post('/api/chat/leave/auth').send({ password: 'open sesame' }).expect(200);
    const out = await h.http.delete('/api/chat/leave/auth').expect(204);
    const cleared = (out.headers['set-cookie'] as unknown as string[]).join(';');
    expect(cleared).to.match(/troupe_chat_leave=; path=\/api\/chat\/leave; expires=Thu, 01 Jan 1970 00:00:00 GMT;.*httponly/i);
    await h.http.delete('/api/chat/leave/auth').set('Origin', 'http://evil.example').expect(403);
    await h.http.delete('/api/chat/nowhere/auth').expect(404);
  });

  it('serves the branded page at /chat/{sub}/ and at / on {sub}.{TROUPE_CHAT_HOST}; 403 NOT_DEPLOYED before deploying', async () => {
    await status(setUp('pg', { subdomain: 'page', auth: { mode: 'public' }, branding: { title: 'Page <Title>', welcomeMessage: 'Hello there' } }, undefined, false), 201);
    const local = await h.http.get('/chat/page/').expect(200);
    expect(local.headers['content-type']).to.match(/text\/html/);
    expect(local.headers['x-frame-options']).to.equal('DENY');
    await h.http.get('/chat/page').expect(308).expect('Location', '/chat/page/');
    expect(local.text).to.include('Page &lt;Title&gt;');
    const byHost = await h.http.get('/').set('Host', 'page.chat.localhost:3000').expect(200);
    expect(byHost.text).to.equal(local.text);
    await h.http.get('/').set('Host', 'nothing.chat.localhost').expect(404);
    await h.http.get('/chat/nothing/').expect(404);
    const notDeployed = await send('page', { message: 'x' }).expect(403);
    expect(notDeployed.body).to.match(/NOT_DEPLOYED/);
  });
});
