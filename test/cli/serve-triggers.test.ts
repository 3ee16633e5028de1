import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { signHeaders } from '../../src/model/webhook-signature.js';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';

const SECRET = 'serve-webhook-secret-0123456789';

/** a webhook trigger → a function that busy-waits 40 ms: with 2 executions in flight at most, events queue up */
const hookWorkflow = {
  id: 'hooked',
  name: 'Hooked',
  triggers: [{ type: 'webhook', id: 'in', path: 'events/in', provider: 'generic', secret: '{{HOOK_SECRET}}' }],
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'work', type: 'function', name: 'Work', config: { code: 'const t0 = Date.now();\nwhile (Date.now() - t0 < 40) {}\nreturn <start.body.n>;' } },
  ],
  connections: [{ from: 'start', to: 'work' }],
};

async function post(url: string, n: number): Promise<string | null> {
  const body = JSON.stringify({ n });
  try {
    const res = await fetch(`${url}/webhooks/events/in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Delivery-Id': `delivery-${n}`, ...signHeaders('generic', SECRET, Buffer.from(body), Date.now()) },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    if (res.status !== 202) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
    return res.headers.get('x-execution-id');
  } catch (err) {
    // a request the kill cut off was never acknowledged: it may vanish
    if (/fetch failed|terminated|other side closed|ECONNRESET|aborted/i.test(String((err as Error).cause ?? err))) return null;
    throw err;
  }
}

describe('troupe serve: webhooks, schedules and chat (child process)', function () {
  this.timeout(180_000);
  let dir: string;
  let proc: ServeProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-serve-hooks-'));
  });
  afterEach(async () => {
    await ensureStopped(proc);
    proc = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged webhook event when killed with SIGKILL while events queue', async () => {
    const data = join(dir, 'data');
    const env = { TROUPE_MAX_INFLIGHT: '2' };
    proc = await startServe(data, [], env);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    expect((await call(proc.url, 'PUT', '/api/secrets/HOOK_SECRET', { token, body: { value: SECRET } })).status).to.be.oneOf([200, 201]);
    expect((await call(proc.url, 'POST', '/api/workflows', { token, body: hookWorkflow })).status).to.equal(201);
    expect((await call(proc.url, 'POST', '/api/workflows/hooked/deploy', { token })).status).to.equal(201);

    const acked = (await Promise.all(Array.from({ length: 40 }, (_, n) => post(proc!.url, n)))).filter((id): id is string => id !== null);
    expect(acked, 'every event is acknowledged before the kill').to.have.length(40);
    proc.child.kill('SIGKILL');
    await proc.exited;

    proc = await startServe(data, [], env);
    const outcomes = new Map<string, string>();
    const deadline = Date.now() + 90_000;
    while (outcomes.size < acked.length && Date.now() < deadline) {
      for (const id of acked) {
        if (outcomes.has(id)) continue;
        const r = await call(proc.url, 'GET', `/api/executions/${id}`, { token });
        if (r.status === 200 && ['completed', 'failed'].includes(r.body.status as string)) {
          outcomes.set(id, r.body.status === 'completed' ? `completed:${JSON.stringify(r.body.output)}` : `failed:${r.body.error?.code as string}`);
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(outcomes.size, 'every acknowledged event has an ended execution').to.equal(acked.length);
    let completed = 0;
    for (const outcome of outcomes.values()) {
      expect(outcome).to.match(/^completed:\{"result":\d+,|^failed:INTERRUPTED$/);
      if (outcome.startsWith('completed')) completed += 1;
    }
    expect(completed, 'events still pending at the kill ran after the restart').to.be.greaterThan(0);
    // a provider retrying a delivery after the restart starts nothing new
    const retry = await post(proc.url, 3);
    expect(retry).to.equal(acked[3]);
  });

  it('fires a deployed schedule every second, each due time once, and stops when undeployed', async () => {
    const data = join(dir, 'data');
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const doc = {
      id: 'ticker',
      name: 'Ticker',
      triggers: [{ type: 'schedule', id: 'sec', cron: '* * * * * *', input: { n: 1 }, overlap: 'allow' }],
      blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }],
      connections: [],
    };
    expect((await call(proc.url, 'POST', '/api/workflows', { token, body: doc })).status).to.equal(201);
    expect((await call(proc.url, 'POST', '/api/workflows/ticker/deploy', { token })).status).to.equal(201);
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await call(proc.url, 'DELETE', '/api/workflows/ticker/deploy', { token })).status).to.equal(204);
    await new Promise((r) => setTimeout(r, 300));
    const runs = (await call(proc.url, 'GET', '/api/workflows/ticker/executions?limit=100', { token })).body.items as { trigger: { type: string; dueAt: string }; input: unknown }[];
    expect(runs.length).to.be.within(2, 5);
    const dues = runs.map((r) => r.trigger.dueAt);
    expect(new Set(dues).size, 'no due time fired twice').to.equal(dues.length);
    for (const r of runs) {
      expect(r.trigger.type).to.equal('schedule');
      expect(r.trigger.dueAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
      expect(r.input).to.deep.equal({ n: 1 });
    }
    const view = await call(proc.url, 'GET', '/api/workflows/ticker/schedules', { token });
    expect(view.body.items[0]).to.deep.include({ id: 'sec', active: false, nextRuns: [] });
    expect(view.body.items[0].lastResult.dueAt).to.equal([...dues].sort().pop());
    await new Promise((r) => setTimeout(r, 1_200));
    const after = (await call(proc.url, 'GET', '/api/workflows/ticker/executions?limit=100', { token })).body.items as unknown[];
    expect(after.length, 'nothing fires once undeployed').to.equal(runs.length);
  });

  it('keeps a chat conversation across a restart: its history reaches the next run', async () => {
    const data = join(dir, 'data');
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const doc = {
      id: 'chatty',
      name: 'Chatty',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'reply', type: 'function', name: 'Reply', config: { code: 'return `turn ${<start.history>.length / 2 + 1}: ${<start.message>}`;' } },
      ],
      connections: [{ from: 'start', to: 'reply' }],
    };
    expect((await call(proc.url, 'POST', '/api/workflows', { token, body: doc })).status).to.equal(201);
    expect((await call(proc.url, 'POST', '/api/workflows/chatty/deploy', { token })).status).to.equal(201);
    const put = await call(proc.url, 'PUT', '/api/workflows/chatty/chat', { token, body: { subdomain: 'chatty', auth: { mode: 'public' }, branding: { title: 'Chatty' } } });
    expect(put.status).to.equal(201);
    const say = async (url: string, body: unknown): Promise<{ event: string; data: any }[]> => {
      const r = await call(url, 'POST', '/api/chat/chatty/messages', { body });
      expect(r.status).to.equal(200);
      return String(r.body).split('\n\n').filter((b) => b.startsWith('event:')).map((b) => ({
        event: /^event: (.*)$/m.exec(b)?.[1] ?? '', data: JSON.parse(/^data: (.*)$/m.exec(b)?.[1] ?? 'null'),
      }));
    };
    const first = await say(proc.url, { message: 'hello' });
    const { conversationId, conversationToken } = first.at(-1)?.data as { conversationId: string; conversationToken: string };
    expect(first.at(-1)?.data.output).to.deep.include({ result: 'turn 1: hello' });
    proc.child.kill('SIGKILL');
    await proc.exited;
    proc = await startServe(data);
    const second = await say(proc.url, { message: 'again', conversationId, conversationToken });
    expect(second.at(-1)?.event).to.equal('done');
    expect(second.at(-1)?.data.output).to.deep.include({ result: 'turn 2: again' });
    expect(second[0]).to.deep.equal({ event: 'chunk', data: { text: 'turn 2: again' } });
  });

  it('a chat run resumed after SIGKILL puts its answer in the conversation', async () => {
    const data = join(dir, 'data');
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const doc = {
      id: 'slowchat',
      name: 'Slow chat',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'think', type: 'function', name: 'Think', config: { code: 'await new Promise((r) => setTimeout(r, 1500));\nreturn <start.message>;' } },
        { id: 'reply', type: 'function', name: 'Reply', config: { code: 'return `turn ${<start.history>.length / 2 + 1}: ${<think.result>}`;' } },
      ],
      connections: [{ from: 'start', to: 'think' }, { from: 'think', to: 'reply' }],
    };
    expect((await call(proc.url, 'POST', '/api/workflows', { token, body: doc })).status).to.equal(201);
    expect((await call(proc.url, 'POST', '/api/workflows/slowchat/deploy', { token })).status).to.equal(201);
    expect((await call(proc.url, 'PUT', '/api/workflows/slowchat/chat', { token, body: { subdomain: 'slowchat', auth: { mode: 'public' }, branding: { title: 'Slow' } } })).status).to.equal(201);
    // the first message's stream is cut by the kill; its headers (sent before any answer) hold the conversation's token
    let conversationToken: string | null = null;
    const cut = fetch(`${proc.url}/api/chat/slowchat/messages`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ message: 'hello' }) })
      .then((res) => {
        conversationToken = res.headers.get('x-conversation-token');
        return res.text();
      })
      .catch(() => null);
    let running: { id: string; trigger: { conversationId: string } } | undefined;
    for (let i = 0; i < 200 && running === undefined; i++) {
      const list = await call(proc.url, 'GET', '/api/workflows/slowchat/executions', { token });
      const item = (list.body.items as { id: string; status: string; trigger: { conversationId: string } }[])[0];
      if (item?.status === 'running' && ((await call(proc.url, 'GET', `/api/executions/${item.id}`, { token })).body.logs as unknown[]).length >= 1) running = item;
      else await new Promise((r) => setTimeout(r, 25));
    }
    expect(running, 'the chat run was seen running').to.not.equal(undefined);
    proc.child.kill('SIGKILL');
    await proc.exited;
    await cut;
    expect(conversationToken, 'the token came with the headers').to.be.a('string');
    proc = await startServe(data);
    for (let i = 0; i < 200; i++) {
      const rec = await call(proc.url, 'GET', `/api/executions/${running?.id ?? ''}`, { token });
      if (rec.body.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
    const next = await call(proc.url, 'POST', '/api/chat/slowchat/messages', { body: { message: 'again', conversationId: running?.trigger.conversationId, conversationToken } });
    const done = String(next.body).split('\n\n').find((b) => b.startsWith('event: done')) ?? '';
    // the first turn's question and its answer (from the resumed run) are both in the history
    expect(JSON.parse(/^data: (.*)$/m.exec(done)?.[1] ?? 'null')?.output).to.deep.include({ result: 'turn 2: again' });
  });
});
