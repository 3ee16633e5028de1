/**
 * The wait block through `troupe serve` (SPEC §1.1, §2.1; docs/waiting.md): a short wait in
 * memory, a long one that parks the execution (202 waiting, record `waiting`), survives a
 * SIGKILL and is resumed by the restarted service at its due time, and waiting time that does
 * not count against the time limit.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { startNatsServer } from '../helpers/nats-server.js';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';
import { deploy, until } from './waiting-helpers.js';

function waitWorkflow(id: string, wait: Record<string, unknown>): unknown {
  return {
    id,
    name: `Wait ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'w', type: 'wait', name: 'Pause', config: wait },
      { id: 'r', type: 'response', name: 'Reply', config: { status: 200, data: { waited: '<pause.waitedMs>', at: '<pause.resumedAt>' } } },
    ],
    connections: [{ from: 'start', to: 'w' }, { from: 'w', to: 'r' }],
  };
}

describe('wait block through troupe serve', function () {
  this.timeout(120_000);
  let proc: ServeProcess | undefined;
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-wait-'));
    dirs.push(dir);
    return join(dir, 'data');
  };

  afterEach(async () => {
    await ensureStopped(proc);
    proc = undefined;
  });
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a 2 s wait completes: a sync caller gets the answer with waitedMs and resumedAt', async () => {
    const data = tempDir();
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const key = await deploy(proc.url, token, waitWorkflow('short', { duration: 2000 }));
    const r = await call(proc.url, 'POST', '/api/workflows/short/execute', { apiKey: key, body: { input: {} } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.waited).to.be.at.least(2000);
    expect(Date.parse(r.body.at as string)).to.be.a('number').and.not.NaN;
    const rec = await call(proc.url, 'GET', `/api/executions/${r.headers.get('x-execution-id')}`, { token });
    const log = rec.body.logs.find((l: { blockId: string }) => l.blockId === 'w');
    expect(log.status).to.equal('completed');
    expect(log.output.waitedMs).to.equal(r.body.waited);
  });

  it('a long wait parks the execution (202 waiting), survives SIGKILL, and completes at its due time after a restart', async () => {
    const data = tempDir();
    // waits over 1 s park; the due time is set close so the test does not last an hour
    const env = { TROUPE_SYNC_WAIT_MS: '1000', TROUPE_WAIT_POLL_MS: '200' };
    proc = await startServe(data, [], env);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const key = await deploy(proc.url, token, waitWorkflow('long', { duration: 'PT8S' }));
    const sent = Date.now();
    const r = await call(proc.url, 'POST', '/api/workflows/long/execute', { apiKey: key, body: { input: {} } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const id = r.body.executionId as string;
    expect(r.body).to.deep.equal({ executionId: id, statusUrl: `/api/executions/${id}`, status: 'waiting' });
    const parked = await call(proc.url, 'GET', `/api/executions/${id}`, { token });
    expect(parked.body.status).to.equal('waiting');
    expect(parked.body.endedAt).to.equal(null);
    expect(parked.body.waiting).to.have.length(1);
    const entry = parked.body.waiting[0];
    expect(entry).to.include({ blockId: 'w', iteration: null, kind: 'wait' });
    expect(Date.parse(entry.until) - Date.parse(entry.since)).to.equal(8000);
    const starterLog = parked.body.logs.find((l: { blockId: string }) => l.blockId === 'start');
    expect(parked.body.logs.find((l: { blockId: string }) => l.blockId === 'w').status).to.equal('waiting');

    proc.child.kill('SIGKILL');
    await proc.exited;
    proc = await startServe(data, [], env);
    const done = await until(async () => {
      const rec = await call(proc!.url, 'GET', `/api/executions/${id}`, { token });
      return rec.body.status === 'waiting' || rec.body.status === 'running' ? null : rec.body;
    }, 60_000, 'the woken execution to end');
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(Date.now() - sent, 'not before its due time').to.be.at.least(8000);
    expect(done.output.data.waited).to.be.at.least(8000);
    expect(Date.parse(done.output.data.at)).to.be.at.least(Date.parse(entry.until));
    // the starter was not run again: its log is the one written before the crash
    expect(done.logs.find((l: { blockId: string }) => l.blockId === 'start')).to.deep.equal(starterLog);
    expect(done.logs.find((l: { blockId: string }) => l.blockId === 'w').status).to.equal('completed');
  });

  it('a wait kept in memory when the service is SIGKILLed resumes with restart recovery and keeps its due time', async () => {
    const data = tempDir();
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const key = await deploy(proc.url, token, waitWorkflow('crash', { duration: 10_000 }));
    const r = await call(proc.url, 'POST', '/api/workflows/crash/execute', { apiKey: key, body: { input: {}, async: true } });
    const id = r.body.executionId as string;
    const log = await until(async () => {
      const rec = await call(proc!.url, 'GET', `/api/executions/${id}`, { token });
      const w = rec.body.logs.find((l: { blockId: string }) => l.blockId === 'w');
      return w?.status === 'waiting' ? w : null;
    }, 10_000, 'the wait to start');
    proc.child.kill('SIGKILL');
    await proc.exited;
    const killedAt = Date.now();
    proc = await startServe(data);
    const done = await until(async () => {
      const rec = await call(proc!.url, 'GET', `/api/executions/${id}`, { token });
      return rec.body.status === 'running' ? null : rec.body;
    }, 60_000, 'the resumed execution to end');
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    const resumedAt = Date.parse(done.output.data.at);
    expect(resumedAt - Date.parse(log.startedAt), 'not before its due time').to.be.at.least(10_000);
    // at its first due time: a wait started again at the restart would end 10 s after it
    expect(resumedAt, 'the due time survived the crash').to.be.below(killedAt + 10_000);
  });

  it('waiting time does not count against the time limit, in memory or parked; a stream ends with event: waiting', async () => {
    const data = tempDir();
    const env = { TROUPE_EXECUTION_TIMEOUT_MS: '1500', TROUPE_SYNC_WAIT_MS: '4000', TROUPE_WAIT_POLL_MS: '200' };
    proc = await startServe(data, [], env);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const shortKey = await deploy(proc.url, token, waitWorkflow('in-memory', { duration: 3000 }));
    const memory = await call(proc.url, 'POST', '/api/workflows/in-memory/execute', { apiKey: shortKey, body: { input: {} } });
    expect(memory.status, JSON.stringify(memory.body)).to.equal(200);
    expect(memory.body.waited).to.be.at.least(3000);

    const longKey = await deploy(proc.url, token, waitWorkflow('parked', { duration: 'PT6S' }));
    const res = await fetch(`${proc.url}/api/workflows/parked/execute`, {
      method: 'POST',
      headers: { 'X-API-Key': longKey, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ input: {} }),
    });
    const text = await res.text();
    const id = res.headers.get('x-execution-id') as string;
    expect(text).to.match(/event: waiting\n(id: \d+\n)?data: (.*)\n/);
    const data1 = JSON.parse(/event: waiting\n(?:id: \d+\n)?data: (.*)\n/.exec(text)?.[1] ?? 'null');
    expect(data1).to.deep.equal({ executionId: id, statusUrl: `/api/executions/${id}`, status: 'waiting' });
    expect(text).to.not.contain('event: done');
    const done = await until(async () => {
      const rec = await call(proc!.url, 'GET', `/api/executions/${id}`, { token });
      return rec.body.status === 'waiting' || rec.body.status === 'running' ? null : rec.body;
    }, 60_000, 'the parked execution to end');
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data.waited).to.be.at.least(6000);
  });

  it('refuses a literal until in the past and a duration over TROUPE_MAX_WAIT_DAYS (422)', async () => {
    const data = tempDir();
    proc = await startServe(data, [], { TROUPE_MAX_WAIT_DAYS: '2' });
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const past = await call(proc.url, 'POST', '/api/workflows', { token, body: waitWorkflow('past', { until: '2020-01-01T00:00:00Z' }) });
    expect(past.status).to.equal(422);
    expect(past.body.error.code).to.equal('INVALID_WORKFLOW');
    expect(past.body.error.details.issues).to.deep.include({ path: '/blocks/1/config/until', message: 'until 2020-01-01T00:00:00Z is in the past' });
    const long = await call(proc.url, 'POST', '/api/workflows', { token, body: waitWorkflow('long', { duration: 'P3D' }) });
    expect(long.status).to.equal(422);
    expect(long.body.error.details.issues).to.deep.include({ path: '/blocks/1/config/duration', message: 'a wait lasts at most 2 days' });
    const ok = await call(proc.url, 'POST', '/api/workflows', { token, body: waitWorkflow('ok', { duration: 'P2D' }) });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    const ref = await call(proc.url, 'POST', '/api/workflows', { token, body: waitWorkflow('ref', { until: '<start.when>' }) });
    expect(ref.status, JSON.stringify(ref.body)).to.equal(201);
  });

  it('over NATS: parking publishes execution.waiting; a parked execution is cancelled at once', async () => {
    const nats = await startNatsServer();
    const nc = await connect({ servers: nats.url });
    try {
      const seen: { subject: string; data: any }[] = [];
      nc.subscribe('troupe.events.execution.*', {
        callback: (err, m) => {
          if (err === null) seen.push({ subject: m.subject, data: JSON.parse(new TextDecoder().decode(m.data)) });
        },
      });
      await nc.flush();
      const data = tempDir();
      proc = await startServe(data, [], { NATS_URL: nats.url, TROUPE_SYNC_WAIT_MS: '1000', TROUPE_WAIT_POLL_MS: '200' });
      const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
      const key = await deploy(proc.url, token, waitWorkflow('hour', { duration: 'PT1H' }));
      const r = await call(proc.url, 'POST', '/api/workflows/hour/execute', { apiKey: key, body: { input: {} } });
      expect(r.status, JSON.stringify(r.body)).to.equal(202);
      const id = r.body.executionId as string;
      const waiting = await until(async () => seen.find((m) => m.subject === 'troupe.events.execution.waiting') ?? null, 10_000, 'execution.waiting');
      expect(waiting.data).to.include({ executionId: id, workflowId: 'hour', status: 'waiting' });
      const cancel = await call(proc.url, 'POST', `/api/executions/${id}/cancel`, { token });
      expect(cancel.status).to.equal(200);
      expect(cancel.body).to.deep.equal({ executionId: id, status: 'cancelled' });
      const rec = await call(proc.url, 'GET', `/api/executions/${id}`, { token });
      expect(rec.body.status).to.equal('cancelled');
      expect(rec.body.error.code).to.equal('CANCELLED');
      expect(rec.body.logs.find((l: { blockId: string }) => l.blockId === 'w').status).to.equal('cancelled');
      await until(async () => seen.find((m) => m.subject === 'troupe.events.execution.cancelled') ?? null, 10_000, 'execution.cancelled');
      const again = await call(proc.url, 'POST', `/api/executions/${id}/cancel`, { token });
      expect(again.status).to.equal(409);
    } finally {
      await nc.close();
      await ensureStopped(proc);
      proc = undefined;
      await nats.stop();
    }
  });
});
