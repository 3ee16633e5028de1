/**
 * The chat end to end in a real browser against the real app (routes, sign-in, SSE, store):
 * the page on `{sub}.chat.localhost`, an email sign-in with the mailed code, a streamed answer,
 * and the conversation carried on after a reload, its history reaching the workflow; then
 * signing out.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Mailer } from '../../src/service/mailer.js';
import { auth, makeHarness, type Harness } from '../http/support.js';
import { launchBrowser, type TestBrowser } from './support.js';

const WORKFLOW = {
  id: 'helpdesk',
  name: 'Helpdesk',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'turn', type: 'function', name: 'Turn', config: { code: 'return `${<start.history>.length / 2 + 1}`;' } },
    { id: 'talk', type: 'talk', name: 'Talk', config: { text: 'Answer number <turn.result> for you', gapMs: 150 } },
  ],
  connections: [{ from: 'start', to: 'turn' }, { from: 'turn', to: 'talk' }],
};

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const answers = (page: Page): Promise<string[]> => page.locator('#messages .message.assistant:not(.welcome) .message-text').allTextContents();

describe('browser: chat against the service', function () {
  this.timeout(60_000);
  let h: Harness;
  let server: http.Server;
  let browser: TestBrowser;
  let port = 0;
  const mails: string[] = [];
  const mailer: Mailer = {
    async send(_to, _subject, text) {
      mails.push(text);
    },
  };

  before(async () => {
    h = makeHarness({ mailer });
    server = http.createServer(h.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
    await h.http.post('/api/workflows').set(auth).send(WORKFLOW).expect(201);
    await h.http.post('/api/workflows/helpdesk/deploy').set(auth).expect(201);
    await h.http.put('/api/workflows/helpdesk/chat').set(auth).send({
      subdomain: 'helpdesk',
      auth: { mode: 'email', allowedEmails: ['@example.com'] },
      branding: { title: 'Helpdesk', welcomeMessage: 'Ask away', primaryColor: '#0f766e' },
      output: { block: 'talk', path: 'content' },
    }).expect(201);
    await h.http.post('/api/workflows').set(auth).send({ ...WORKFLOW, id: 'frontdesk', name: 'Front desk' }).expect(201);
    await h.http.post('/api/workflows/frontdesk/deploy').set(auth).expect(201);
    await h.http.put('/api/workflows/frontdesk/chat').set(auth).send({
      subdomain: 'frontdesk', auth: { mode: 'public' }, branding: { title: 'Front desk' }, output: { block: 'talk', path: 'content' },
    }).expect(201);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await h.close();
  });

  it('signs in by email code, streams the answer, and keeps the conversation across a reload', async () => {
    const page = await browser.newPage();
    await page.goto(`http://helpdesk.chat.localhost:${port}/`);
    expect(await page.locator('#chat-title').textContent()).to.equal('Helpdesk');
    await page.fill('#email', 'ada@example.com');
    await page.click('#signin-submit');
    await page.locator('#code').waitFor({ state: 'visible' });
    const code = await until(async () => /\b(\d{6})\b/.exec(mails.at(-1) ?? '')?.[1], (c) => c !== undefined, 'the mailed code');
    await page.fill('#code', code as string);
    await page.click('#signin-submit');
    await page.locator('#message-input').waitFor({ state: 'visible' });

    await page.fill('#message-input', 'Where is my order?');
    await page.press('#message-input', 'Enter');
    // part of the answer is on screen before the run has ended
    const partial = await until(() => answers(page), (a) => (a[0] ?? '').length > 0 && a[0] !== 'Answer number 1 for you', 'a partial answer');
    expect('Answer number 1 for you'.startsWith(partial[0] as string)).to.equal(true);
    await until(() => answers(page), (a) => a[0] === 'Answer number 1 for you', 'the whole answer');

    // the stream has ended (done received) once the composer is enabled again
    await until(() => page.locator('#send').isEnabled(), (v) => v, 'the end of the stream');
    await page.reload();
    await page.locator('#message-input').waitFor({ state: 'visible' });
    expect(await answers(page)).to.deep.equal(['Answer number 1 for you']);
    await page.fill('#message-input', 'And now?');
    await page.press('#message-input', 'Enter');
    // the second turn: the workflow saw the first exchange in its history
    await until(() => answers(page), (a) => a[1] === 'Answer number 2 for you', 'the second answer');
    await page.close();
  });

  it('a public chat keeps the conversationToken of done and sends it: the conversation carries on after a reload', async () => {
    const page = await browser.newPage();
    const sent: Record<string, unknown>[] = [];
    page.on('request', (req) => {
      if (req.url().endsWith('/api/chat/frontdesk/messages')) sent.push(JSON.parse(req.postData() ?? '{}') as Record<string, unknown>);
    });
    await page.goto(`http://frontdesk.chat.localhost:${port}/`);
    await page.fill('#message-input', 'Hello');
    await page.press('#message-input', 'Enter');
    await until(() => answers(page), (a) => a[0] === 'Answer number 1 for you', 'the first answer');
    await until(() => page.locator('#send').isEnabled(), (v) => v, 'the end of the stream');
    const kept = JSON.parse(String(await page.evaluate("localStorage.getItem('troupe-chat:frontdesk')"))) as { conversationId: string; conversationToken: string };
    expect(kept.conversationToken).to.be.a('string').with.length.greaterThan(20);
    const stored = await h.store.chats.getConversation(kept.conversationId);
    expect(stored?.messages).to.have.length(2);
    await page.reload();
    await page.fill('#message-input', 'And now?');
    await page.press('#message-input', 'Enter');
    await until(() => answers(page), (a) => a[1] === 'Answer number 2 for you', 'the second answer, with the first turn in its history');
    expect(sent[1]).to.deep.equal({ message: 'And now?', conversationId: kept.conversationId, conversationToken: kept.conversationToken });
    await page.close();
  });

  it('a kept conversation the service refuses (403: its token does not open it) goes on as a new one', async () => {
    const page = await browser.newPage();
    await page.goto(`http://frontdesk.chat.localhost:${port}/`);
    await page.evaluate(`localStorage.setItem('troupe-chat:frontdesk', JSON.stringify({ conversationId: 'someone-elses', conversationToken: 'a-guess', messages: [], signedIn: false }))`);
    await page.reload();
    await page.fill('#message-input', 'Hello again');
    await page.press('#message-input', 'Enter');
    await until(() => answers(page), (a) => a[0] === 'Answer number 1 for you', 'an answer in a new conversation');
    await until(() => page.locator('#send').isEnabled(), (v) => v, 'the end of the stream');
    const kept = JSON.parse(String(await page.evaluate("localStorage.getItem('troupe-chat:frontdesk')"))) as { conversationId: string; conversationToken: string };
    expect(kept.conversationId).to.not.equal('someone-elses');
    expect(kept.conversationToken).to.not.equal('a-guess');
    expect((await h.store.chats.getConversation(kept.conversationId))?.messages.map((m) => m.content)).to.deep.equal(['Hello again', 'Answer number 1 for you']);
    await page.close();
  });

  it('"Sign out" drops the session cookie and the stored conversation, and shows the sign-in again', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    await page.goto(`http://helpdesk.chat.localhost:${port}/`);
    await page.locator('#sign-out').waitFor({ state: 'visible' });
    expect(await answers(page)).to.not.deep.equal([]);
    const cookies = await browser.context.cookies(`http://helpdesk.chat.localhost:${port}/api/chat/helpdesk/messages`);
    expect(cookies).to.have.length(1);
    const copy = `${cookies[0]!.name}=${cookies[0]!.value}`;
    await h.http.post('/api/chat/helpdesk/messages').set('Cookie', copy).send({ message: 'still in?' }).expect(200);
    await page.click('#sign-out');
    await page.locator('#email').waitFor({ state: 'visible' });
    expect(await page.isVisible('#sign-out')).to.equal(false);
    expect(await page.isVisible('#message-input')).to.equal(false);
    expect(await page.inputValue('#email')).to.equal('');
    expect(await answers(page)).to.deep.equal([]);
    expect(await browser.context.cookies(`http://helpdesk.chat.localhost:${port}/api/chat/helpdesk/messages`)).to.deep.equal([]);
    const kept = JSON.parse(String(await page.evaluate("localStorage.getItem('troupe-chat:helpdesk')"))) as unknown;
    expect(kept).to.deep.equal({ conversationId: null, conversationToken: null, messages: [], signedIn: false });
    // the session ended on the server: a copy of its cookie is refused from now on
    await h.http.post('/api/chat/helpdesk/messages').set('Cookie', copy).send({ message: 'still in?' }).expect(401);
    await page.reload();
    await page.locator('#email').waitFor({ state: 'visible' });
    expect(await answers(page)).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
    await page.close();
  });
});
