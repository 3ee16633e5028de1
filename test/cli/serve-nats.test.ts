/**
 * `troupe serve` with NATS_URL (the distributed bus) as a child process against a real
 * nats-server of its own: the three execute modes, cancel and webhooks work through it, and
 * SPEC §5's events reach an outside subscriber on the documented subjects with their fields.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { connect, type NatsConnection, type Subscription } from 'nats';
import { signHeaders } from '../../src/model/webhook-signature.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'nats-serve-admin-token-0123456789abcdef';
const HOOK_SECRET = 'nats-serve-hook-secret-0123456789';

const echo = {
  id: 'echo',
  name: 'Echo',
  triggers: [{ type: 'webhook', id: 'hook', path: 'echo/hook', provider: 'generic', secret: '{{HOOK_SECRET}}' }],
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'reply', type: 'response', name: 'Reply', config: { status: 201, data: { got: '<start.input>' } } },
  ],
  connections: [{ from: 'start', to: 'reply' }],
};

/** sleeps `<start.ms>` in the sandbox, or throws when asked to */
const slow = {
  id: 'slow',
  name: 'Slow',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    {
      id: 'work',
      type: 'function',
      name: 'Work',
      config: { code: 'if (<start.fail>) throw new Error("asked to fail");\nawait new Promise((done) => setTimeout(done, <start.ms>));\nreturn 1;' },
    },
  ],
  connections: [{ from: 'start', to: 'work' }],
};

interface BusMessage {
  subject: string;
  data: any;
}

/** Every message on `subject` (a pattern), decoded, in arrival order. */
function record(nc: NatsConnection, subject: string): { seen: BusMessage[]; sub: Subscription } {
  const seen: BusMessage[] = [];
  const sub = nc.subscribe(subject, {
    callback: (err, m) => {
      if (err === null) seen.push({ subject: m.subject, data: JSON.parse(new TextDecoder().decode(m.data)) });
    },
  });
  return { seen, sub };
}

async function until<T>(what: string, probe: () => T | undefined, boundMs = 10_000): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('troupe serve over NATS (child process, NATS_URL)', function () {
  this.timeout(120_000);
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let dir: string;
  let proc: ServeProcess | undefined;
  let lifecycle: BusMessage[];
  let webhooks: BusMessage[];
  let echoKey: string;
  let slowKey: string;

  before(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    lifecycle = record(nc, 'troupe.events.execution.>').seen;
    webhooks = record(nc, 'troupe.webhooks.>').seen;
    await nc.flush();
    dir = mkdtempSync(join(tmpdir(), 'troupe-serve-nats-'));
    proc = await startServe(dir, [], { NATS_URL: nats.url, TROUPE_ADMIN_TOKEN: TOKEN });
    expect((await call(proc.url, 'PUT', '/api/secrets/HOOK_SECRET', { token: TOKEN, body: { value: HOOK_SECRET } })).status).to.be.oneOf([200, 201]);
    echoKey = await deploy(proc.url, echo);
    slowKey = await deploy(proc.url, slow);
  });

  after(async () => {
    await ensureStopped(proc, 'SIGTERM');
    await nc?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function deploy(url: string, doc: { id: string }): Promise<string> {
    expect((await call(url, 'POST', '/api/workflows', { token: TOKEN, body: doc })).status).to.equal(201);
    const deployed = await call(url, 'POST', `/api/workflows/${doc.id}/deploy`, { token: TOKEN });
    expect(deployed.status, JSON.stringify(deployed.body)).to.equal(201);
    return deployed.body.apiKey.key as string;
  }

  function eventsOf(executionId: string): BusMessage[] {
    return lifecycle.filter((m) => m.data.executionId === executionId);
  }

  async function ended(executionId: string): Promise<BusMessage[]> {
    return until(`the end of ${executionId} on the bus`, () => {
      const events = eventsOf(executionId);
      return events.length >= 2 ? events : undefined;
    });
  }

  it('sync execute answers with the response block, and started/completed reach the bus with SPEC §5 fields', async () => {
    const res = await call(proc!.url, 'POST', '/api/workflows/echo/execute', { apiKey: echoKey, body: { input: { a: 1 } } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.deep.equal({ got: { a: 1 } });
    const id = res.headers.get('x-execution-id')!;
    const [started, completed] = await ended(id);
    expect(started!.subject).to.equal('troupe.events.execution.started');
    expect(started!.data).to.include({ executionId: id, workflowId: 'echo', status: 'running' });
    expect(completed!.subject).to.equal('troupe.events.execution.completed');
    expect(completed!.data).to.have.all.keys('executionId', 'workflowId', 'trigger', 'status', 'durationMs');
    expect(completed!.data).to.include({ executionId: id, workflowId: 'echo', status: 'completed' });
    expect(completed!.data.trigger.type).to.equal('api');
    expect(completed!.data.durationMs).to.be.a('number').and.at.least(0);
  });

  it('sync execute carries block outputs over the 1 MiB max_payload of NATS (a 600 KB input the starter holds twice)', async () => {
    const name = 'n'.repeat(600_000);
    const res = await call(proc!.url, 'POST', '/api/workflows/echo/execute', { apiKey: echoKey, body: { input: { name } } });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(201);
    expect(res.body).to.deep.equal({ got: { name } });
  });

  it('async execute records the run, and its /events replay ends with done', async () => {
    const res = await call(proc!.url, 'POST', '/api/workflows/echo/execute', { apiKey: echoKey, body: { input: { a: 2 }, async: true } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const id = res.body.executionId as string;
    await ended(id);
    const rec = await call(proc!.url, 'GET', `/api/executions/${id}`, { token: TOKEN });
    expect(rec.body.status).to.equal('completed');
    expect(rec.body.output).to.deep.equal({ status: 201, headers: {}, data: { got: { a: 2 } } });
    const events = await fetch(`${proc!.url}/api/executions/${id}/events`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const text = await events.text();
    expect(text.match(/^event: (.+)$/gm)).to.deep.equal([
      'event: block.started', 'event: block.completed', 'event: block.started', 'event: block.completed', 'event: done',
    ]);
  });

  it('stream execute sends the block events, then done with the sync body', async () => {
    const res = await fetch(`${proc!.url}/api/workflows/echo/execute`, {
      method: 'POST',
      headers: { 'X-API-Key': echoKey, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ input: { a: 3 } }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const text = await res.text();
    expect(text).to.match(/event: block\.completed[\s\S]*event: done/);
    const done = /event: done\ndata: (.*)\n/.exec(text);
    const envelope = JSON.parse(done![1]!);
    expect(envelope).to.include({ success: true, error: null });
    expect(envelope.output.data).to.deep.equal({ got: { a: 3 } });
  });

  it('cancel ends a running execution and publishes execution.cancelled; a failure publishes execution.failed', async () => {
    const started = await call(proc!.url, 'POST', '/api/workflows/slow/execute', { apiKey: slowKey, body: { input: { ms: 30_000, fail: false }, async: true } });
    expect(started.status).to.equal(202);
    const id = started.body.executionId as string;
    const cancelled = await call(proc!.url, 'POST', `/api/executions/${id}/cancel`, { token: TOKEN });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    expect(cancelled.body).to.deep.equal({ executionId: id, status: 'cancelled' });
    expect((await ended(id))[1]!.subject).to.equal('troupe.events.execution.cancelled');

    const failed = await call(proc!.url, 'POST', '/api/workflows/slow/execute', { apiKey: slowKey, body: { input: { ms: 0, fail: true } } });
    expect(failed.status).to.equal(500);
    expect(failed.body.success).to.equal(false);
    const events = await ended(failed.headers.get('x-execution-id')!);
    expect(events[1]!.subject).to.equal('troupe.events.execution.failed');
    expect(events[1]!.data.status).to.equal('failed');
  });

  it('a signed webhook is published on troupe.webhooks.{workflowId}.{triggerId}, kept in JetStream, and runs once; its repeat is a duplicate', async () => {
    const body = JSON.stringify({ hello: 'bus' });
    const headers = { 'Content-Type': 'application/json', 'X-Delivery-Id': 'nats-1', ...signHeaders('generic', HOOK_SECRET, Buffer.from(body), Date.now()) };
    const first = await fetch(`${proc!.url}/webhooks/echo/hook`, { method: 'POST', headers, body });
    expect(first.status).to.equal(202);
    const accepted = (await first.json()) as { eventId: string; duplicate: boolean };
    expect(accepted.duplicate).to.equal(false);
    const published = await until('the webhook event on the bus', () => webhooks.find((m) => m.data.eventId === accepted.eventId));
    expect(published.subject).to.equal('troupe.webhooks.echo.hook');
    // stored by the bus before the 202 (SPEC §4.3): a consumer that was not listening reads it
    const kept = await (await nc.jetstream().consumers.get('TROUPE_WEBHOOKS')).next({ expires: 2000 });
    expect(kept?.subject).to.equal('troupe.webhooks.echo.hook');
    expect((kept?.json() as { eventId: string }).eventId).to.equal(accepted.eventId);
    const again = await fetch(`${proc!.url}/webhooks/echo/hook`, { method: 'POST', headers, body });
    expect(await again.json()).to.deep.equal({ eventId: accepted.eventId, duplicate: true });
    const executionId = published.data.executionId as string;
    const events = await ended(executionId);
    expect(events[1]!.data).to.include({ workflowId: 'echo', status: 'completed' });
    expect(events[1]!.data.trigger).to.include({ type: 'webhook' });
    const rec = await call(proc!.url, 'GET', `/api/executions/${executionId}`, { token: TOKEN });
    expect(rec.body.output.data.got.body).to.deep.equal({ hello: 'bus' });
    const runs = await call(proc!.url, 'GET', '/api/workflows/echo/executions', { token: TOKEN });
    expect(runs.body.items.filter((r: any) => r.trigger.type === 'webhook')).to.have.length(1);
  });

  it('a webhook event too large to keep whole on the bus is announced without its input, and runs with it', async () => {
    // at the default 1 MiB body limit: with its headers the event is over the server's max_payload
    const body = JSON.stringify({ pad: 'p'.repeat(1_048_500 - 12) });
    const headers = { 'Content-Type': 'application/json', 'X-Delivery-Id': 'nats-big', ...signHeaders('generic', HOOK_SECRET, Buffer.from(body), Date.now()) };
    const res = await fetch(`${proc!.url}/webhooks/echo/hook`, { method: 'POST', headers, body });
    expect(res.status).to.equal(202);
    const { eventId } = (await res.json()) as { eventId: string };
    const published = await until('the big webhook event on the bus', () => webhooks.find((m) => m.data.eventId === eventId));
    expect(published.data).to.include({ input: null, inputOmitted: true, workflowId: 'echo' });
    const events = await ended(published.data.executionId as string);
    expect(events[1]!.data.status).to.equal('completed');
    const rec = await call(proc!.url, 'GET', `/api/executions/${published.data.executionId as string}`, { token: TOKEN });
    expect(rec.body.output.data.got.body.pad.length).to.equal(1_048_500 - 12);
  });
});
