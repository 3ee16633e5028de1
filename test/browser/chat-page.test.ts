/**
 * The chat page (src/http/chat-page.ts) in a real Chromium against FAKE endpoints that follow the
 * SPEC §4.4 contract: a password-mode chat whose messages answer with an SSE stream. The fake
 * holds the last chunk back until the test lets it go, so the partial (streaming) state is seen.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { renderChatPage } from '../../src/http/chat-page.js';
import { launchBrowser, type TestBrowser } from './support.js';

const SUB = 'chat-test';
const PASSWORD = 'open-sesame';
const SESSION = 'chat_session=fake-session-token';
const STORAGE_KEY = `troupe-chat:${SUB}`;
const WRONG_PASSWORD_MESSAGE = 'That password is not right (fake).';
const PAGE = renderChatPage({
  subdomain: SUB,
  branding: { title: 'Test <Chat> & "Co"', description: 'Ask me anything', welcomeMessage: 'Hi! How can I help?', primaryColor: '#0a7' },
  authMode: 'password',
});
const MAIL_SUB = 'mail-test';
const MAIL_CODE = '123456';
const MAIL_PAGE = renderChatPage({ subdomain: MAIL_SUB, branding: { title: 'Mail chat' }, authMode: 'email' });

interface SeenMessage { message: string; conversationId?: string; conversationToken?: string; host: string; cookie: string }

/** The fake chat API: records what it saw; `hold()` keeps the next answer's last chunk until released. */
class FakeChat {
  readonly auths: unknown[] = [];
  readonly messages: SeenMessage[] = [];
  readonly pageHosts: string[] = [];
  private gate: Promise<void> | undefined;
  private conversations = 0;
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return release;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = req.headers.host ?? '';
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && (path === `/chat/${SUB}/` || (path === '/' && host.startsWith(`${SUB}.localhost`)))) {
      this.pageHosts.push(host);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (req.method === 'GET' && path === `/chat/${MAIL_SUB}/`) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(MAIL_PAGE);
    } else if (req.method === 'POST' && path === `/api/chat/${MAIL_SUB}/auth`) {
      this.mailAuth(await jsonBody(req), res);
    } else if (req.method === 'POST' && path === `/api/chat/${SUB}/auth`) {
      this.auth(await jsonBody(req), res);
    } else if (req.method === 'POST' && path === `/api/chat/${SUB}/messages`) {
      await this.answer(req, await jsonBody(req), res);
    } else {
      sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'not found', details: {} } });
    }
  }

  private auth(body: Record<string, unknown>, res: ServerResponse): void {
    this.auths.push(body);
    if (body.password !== PASSWORD) {
      sendJson(res, 401, { error: { code: 'UNAUTHORIZED', message: WRONG_PASSWORD_MESSAGE, details: {} } });
      return;
    }
    res.setHeader('Set-Cookie', `${SESSION}; HttpOnly; Path=/; SameSite=Lax`);
    sendJson(res, 200, { ok: true });
  }

  /** email mode: `{ email }` → 202 { sent: true }; `{ email, code }` → 200 + cookie, or 401 */
  private mailAuth(body: Record<string, unknown>, res: ServerResponse): void {
    this.auths.push(body);
    if (body.code === undefined) {
      sendJson(res, 202, { sent: true });
    } else if (body.code === MAIL_CODE && body.email === 'ada@example.com') {
      res.setHeader('Set-Cookie', `${SESSION}; HttpOnly; Path=/; SameSite=Lax`);
      sendJson(res, 200, { ok: true });
    } else {
      sendJson(res, 401, { error: { code: 'UNAUTHORIZED', message: 'Wrong or expired code (fake).', details: {} } });
    }
  }

  private async answer(req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const cookie = req.headers.cookie ?? '';
    const seen: SeenMessage = { message: String(body.message), host: req.headers.host ?? '', cookie };
    if (typeof body.conversationId === 'string') seen.conversationId = body.conversationId;
    if (typeof body.conversationToken === 'string') seen.conversationToken = body.conversationToken;
    this.messages.push(seen);
    if (!cookie.split(/;\s*/).includes(SESSION)) {
      sendJson(res, 401, { error: { code: 'UNAUTHORIZED', message: 'Sign in first.', details: {} } });
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    if (seen.message === 'please fail') {
      res.end(sse('error', { code: 'EXECUTION_FAILED', message: 'The workflow failed (fake).' }));
      return;
    }
    await this.stream(res, seen.conversationId ?? `conv-${++this.conversations}`);
  }

  private async stream(res: ServerResponse, conversationId: string): Promise<void> {
    const gate = this.gate;
    this.gate = undefined;
    res.write(': a comment line the page must ignore\n\n');
    // the first event is split across two writes, the second uses CRLF line ends
    const first = sse('chunk', { text: 'Hello' });
    res.write(first.slice(0, 9));
    await sleep(30);
    res.write(first.slice(9));
    await sleep(30);
    res.write(sse('chunk', { text: ', wor' }).replace(/\n/g, '\r\n'));
    if (gate) await Promise.race([gate, sleep(15_000)]);
    await sleep(30);
    res.write(sse('chunk', { text: 'ld!' }));
    await sleep(30);
    res.end(sse('done', { conversationId, conversationToken: `token-of-${conversationId}`, executionId: `exec-${this.messages.length}`, output: 'Hello, world!' }));
  }
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Record<string, unknown>;
}

/** Polls until `read()` gives `expected` (deep equal), then returns; fails with the last value. */
async function until<T>(read: () => Promise<T>, expected: T, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (JSON.stringify(last) !== JSON.stringify(expected)) {
    if (Date.now() > deadline) expect(last, what).to.deep.equal(expected);
    await sleep(20);
    last = await read();
  }
}

const texts = (page: Page, role: 'user' | 'assistant') => () =>
  page.locator(`#messages .message.${role}:not(.welcome) .message-text`).allTextContents();

type Stored = { conversationId: string | null; conversationToken: string | null; messages: Array<{ role: string; text: string }>; signedIn: boolean };

async function stored(page: Page): Promise<Stored> {
  const raw = await page.evaluate(`localStorage.getItem(${JSON.stringify(STORAGE_KEY)})`);
  return JSON.parse(String(raw)) as Stored;
}

async function signIn(page: Page, password: string): Promise<void> {
  await page.fill('#password', password);
  await page.click('#signin-submit');
}

async function sendAndFinish(page: Page, text: string, answers: number): Promise<void> {
  await page.fill('#message-input', text);
  await page.press('#message-input', 'Enter');
  await until(async () => (await texts(page, 'assistant')()).length, answers, 'assistant bubbles');
  await until(() => page.locator('#send').isEnabled(), true, 'send enabled again');
}

describe('browser: chat page', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let fake: FakeChat;
  let port: number;
  let page: Page;
  const problems: string[] = [];

  const watch = (p: Page): Page => {
    p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    // the expected 401s are logged by Chromium as failed resources; anything else (CSP, script) is a problem
    p.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 401/.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    return p;
  };

  before(async () => {
    fake = new FakeChat();
    port = await fake.listen();
    browser = await launchBrowser();
    page = watch(await browser.newPage());
  });
  afterEach(() => {
    expect(problems, 'browser console errors').to.deep.equal([]);
  });
  after(async () => {
    await browser?.close();
    await fake?.close();
  });

  it('shows the branding, the welcome message and the sign-in form first; a wrong password shows the error', async () => {
    await page.goto(`http://127.0.0.1:${port}/chat/${SUB}/`);
    expect(await page.textContent('#chat-title')).to.equal('Test <Chat> & "Co"');
    expect(await page.title()).to.equal('Test <Chat> & "Co"');
    expect(await page.locator('#messages .message.assistant.welcome .message-text').textContent()).to.equal('Hi! How can I help?');
    expect(await page.isVisible('#signin')).to.equal(true);
    expect(await page.isVisible('#message-input')).to.equal(false);
    expect(await page.getAttribute('#messages', 'aria-live')).to.equal('polite');
    await signIn(page, 'nope');
    await until(() => page.textContent('#signin-error'), WRONG_PASSWORD_MESSAGE, 'sign-in error');
    expect(fake.auths).to.deep.equal([{ password: 'nope' }]);
    expect(await page.isVisible('#signin')).to.equal(true);
  });

  it('signs in with the right password, then streams the answer into an assistant bubble as it arrives', async () => {
    await signIn(page, PASSWORD);
    await page.locator('#message-input').waitFor({ state: 'visible' });
    expect(await page.isVisible('#signin')).to.equal(false);
    const release = fake.hold();
    await page.fill('#message-input', 'Hi');
    await page.press('#message-input', 'Shift+Enter'); // a new line, not a send
    await page.locator('#message-input').pressSequentially('there');
    expect(await page.inputValue('#message-input')).to.equal('Hi\nthere');
    expect(fake.messages).to.have.length(0);
    await page.press('#message-input', 'Enter');
    // partial: two chunks shown, the third held back by the fake
    await until(texts(page, 'assistant'), ['Hello, wor'], 'partial answer');
    expect(await page.locator('.message.assistant.streaming').count()).to.equal(1);
    expect(await page.isDisabled('#send')).to.equal(true);
    expect(await page.isDisabled('#message-input')).to.equal(true);
    expect(await page.getAttribute('#messages', 'aria-busy')).to.equal('true');
    release();
    await until(texts(page, 'assistant'), ['Hello, world!'], 'full answer');
    await until(() => page.locator('#send').isEnabled(), true, 'send enabled again');
    expect(await texts(page, 'user')()).to.deep.equal(['Hi\nthere']);
    expect(await page.locator('.message.assistant.streaming').count()).to.equal(0);
    expect(fake.messages[0]).to.deep.include({ message: 'Hi\nthere', cookie: SESSION });
    expect(fake.messages[0]).to.not.have.property('conversationId');
  });

  it('keeps the conversation across a reload and sends its conversationId with the conversationToken of done', async () => {
    expect(await stored(page)).to.deep.equal({
      conversationId: 'conv-1',
      conversationToken: 'token-of-conv-1',
      messages: [{ role: 'user', text: 'Hi\nthere' }, { role: 'assistant', text: 'Hello, world!' }],
      signedIn: true,
    });
    await page.reload();
    await page.locator('#message-input').waitFor({ state: 'visible' });
    expect(await page.isVisible('#signin')).to.equal(false);
    expect(await texts(page, 'user')()).to.deep.equal(['Hi\nthere']);
    expect(await texts(page, 'assistant')()).to.deep.equal(['Hello, world!']);
    await sendAndFinish(page, 'Again', 2);
    expect(fake.messages[1]).to.deep.include({ message: 'Again', conversationId: 'conv-1', conversationToken: 'token-of-conv-1' });
    expect(await texts(page, 'user')()).to.deep.equal(['Hi\nthere', 'Again']);
  });

  it('shows an error event in the bubble', async () => {
    await sendAndFinish(page, 'please fail', 3);
    const last = page.locator('#messages .message.assistant').last();
    expect(await last.getAttribute('class')).to.include('error');
    expect(await last.locator('.message-error').textContent()).to.equal('The workflow failed (fake).');
  });

  it('"New conversation" clears the messages and the conversationId', async () => {
    await page.click('#new-conversation');
    expect(await texts(page, 'user')()).to.deep.equal([]);
    expect(await texts(page, 'assistant')()).to.deep.equal([]);
    expect(await page.locator('#messages .message.welcome').count()).to.equal(1);
    expect(await stored(page)).to.deep.equal({ conversationId: null, conversationToken: null, messages: [], signedIn: true });
    await sendAndFinish(page, 'Fresh start', 1);
    expect(fake.messages.at(-1)).to.deep.include({ message: 'Fresh start' });
    expect(fake.messages.at(-1)).to.not.have.property('conversationId');
    expect(fake.messages.at(-1)).to.not.have.property('conversationToken');
    expect((await stored(page)).conversationId).to.equal('conv-2');
  });

  it('asks to sign in again when the session is gone, then sends the pending message', async () => {
    await browser.context.clearCookies();
    await page.fill('#message-input', 'After expiry');
    await page.click('#send');
    await page.locator('#signin').waitFor({ state: 'visible' });
    expect(await page.textContent('#signin-error')).to.equal('Sign in first.');
    expect(await texts(page, 'user')()).to.deep.equal(['Fresh start']); // the refused message is not kept
    await signIn(page, PASSWORD);
    await until(texts(page, 'user'), ['Fresh start', 'After expiry'], 'pending message resent');
    await until(texts(page, 'assistant'), ['Hello, world!', 'Hello, world!'], 'its answer');
    expect(fake.messages.at(-1)).to.deep.include({ message: 'After expiry', conversationId: 'conv-2', conversationToken: 'token-of-conv-2', cookie: SESSION });
  });

  it('works at the Host-style URL http://chat-test.localhost:PORT/', async () => {
    const hostPage = watch(await browser.newPage());
    try {
      await hostPage.goto(`http://${SUB}.localhost:${port}/`);
      expect(fake.pageHosts.at(-1)).to.equal(`${SUB}.localhost:${port}`);
      expect(await hostPage.textContent('#chat-title')).to.equal('Test <Chat> & "Co"');
      await hostPage.locator('#signin').waitFor({ state: 'visible' }); // another origin: its own storage and cookie
      await signIn(hostPage, PASSWORD);
      await hostPage.locator('#message-input').waitFor({ state: 'visible' });
      await sendAndFinish(hostPage, 'From the subdomain', 1);
      expect(await texts(hostPage, 'assistant')()).to.deep.equal(['Hello, world!']);
      expect(fake.messages.at(-1)).to.deep.include({ message: 'From the subdomain', host: `${SUB}.localhost:${port}`, cookie: SESSION });
    } finally {
      await hostPage.close();
    }
  });

  it('email mode: asks for the email, then the 6-digit code, then shows the chat', async () => {
    await browser.context.clearCookies();
    const mailPage = watch(await browser.newPage());
    try {
      await mailPage.goto(`http://127.0.0.1:${port}/chat/${MAIL_SUB}/`);
      await mailPage.locator('#email').waitFor({ state: 'visible' });
      expect(await mailPage.isVisible('#code')).to.equal(false);
      await mailPage.fill('#email', 'ada@example.com');
      await mailPage.click('#signin-submit');
      await mailPage.locator('#code').waitFor({ state: 'visible' });
      expect(fake.auths.at(-1)).to.deep.equal({ email: 'ada@example.com' });
      await mailPage.fill('#code', '000000');
      await mailPage.click('#signin-submit');
      await until(() => mailPage.textContent('#signin-error'), 'Wrong or expired code (fake).', 'code error');
      await mailPage.fill('#code', MAIL_CODE);
      await mailPage.click('#signin-submit');
      await mailPage.locator('#message-input').waitFor({ state: 'visible' });
      expect(fake.auths.at(-1)).to.deep.equal({ email: 'ada@example.com', code: MAIL_CODE });
      expect(await mailPage.isVisible('#signin')).to.equal(false);
    } finally {
      await mailPage.close();
    }
  });
});
