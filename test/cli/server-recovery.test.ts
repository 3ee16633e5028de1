import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.js';
import { openRuntime, type Runtime } from '../../src/main.js';
import type { WorkflowDef } from '../../src/model/types.js';
import { INTERRUPTED_MESSAGE, recoverExecutions } from '../../src/server/recovery.js';
import { loadServiceSecrets } from '../../src/server/secrets-at-rest.js';
import type { ExecutionRecord } from '../../src/store/types.js';

const silent = pino({ level: 'silent' });

const echo = {
  id: 'echo',
  name: 'Echo',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'f', type: 'function', name: 'F', config: { code: 'return <start.x> * 2;' } },
  ],
  connections: [{ from: 'start', to: 'f' }],
} as unknown as WorkflowDef & { id: string };

function record(id: string, status: ExecutionRecord['status'], startedAt: string | null): ExecutionRecord {
  return { id, workflowId: 'echo', version: 1, status, trigger: { type: 'api' }, input: { x: 21 }, output: null, error: null, startedAt, endedAt: null, durationMs: null };
}

describe('server: restart recovery', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: Runtime;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-recovery-'));
    runtime = await openRuntime(loadConfig({ TROUPE_DATA_DIR: dir }));
    await runtime.store.workflows.create(echo);
  });
  afterEach(async () => {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deps = (now?: () => Date) => ({ store: runtime.store, engine: runtime.engine, registry: runtime.registry, logger: silent, ...(now ? { now } : {}) });

  it('fails running executions with INTERRUPTED and a done event; re-runs queued ones under their id', async () => {
    const repo = runtime.store.executions;
    await repo.create(record('r1', 'running', '2026-01-01T00:00:00.000Z'));
    await repo.saveBoundary('r1', { events: [{ executionId: 'r1', seq: 1, event: 'block.started', data: {}, at: '2026-01-01T00:00:00.001Z' }] });
    await repo.create(record('q1', 'queued', null));
    await repo.create(record('done', 'completed', '2026-01-01T00:00:00.000Z'));
    const at = new Date('2026-01-01T00:00:05.000Z');
    const report = await recoverExecutions(deps(() => at), { mode: 'exclusive', staleAfterMs: 1 });
    expect(report).to.deep.equal({ interrupted: ['r1'], rerun: ['q1'] });

    const r1 = await repo.get('r1');
    expect(r1?.status).to.equal('failed');
    expect(r1?.error).to.deep.equal({ code: 'INTERRUPTED', message: INTERRUPTED_MESSAGE, blockId: null });
    expect(r1?.endedAt).to.equal(at.toISOString());
    expect(r1?.durationMs).to.equal(5000);
    const events = await repo.listEvents('r1');
    expect(events.map((e) => [e.seq, e.event])).to.deep.equal([[1, 'block.started'], [2, 'done']]);

    await runtime.engine.whenIdle(10_000);
    const q1 = await repo.get('q1');
    expect(q1?.status).to.equal('completed');
    expect(q1?.output).to.deep.equal({ result: 42, stdout: '' });
    expect((await repo.get('done'))?.status).to.equal('completed');
    // nothing is left to recover
    expect(await recoverExecutions(deps(), { mode: 'exclusive', staleAfterMs: 1 })).to.deep.equal({ interrupted: [], rerun: [] });
  });

  it('fails a queued execution whose workflow version is gone', async () => {
    await runtime.store.executions.create({ ...record('q2', 'queued', null), version: 9 });
    const report = await recoverExecutions(deps(), { mode: 'exclusive', staleAfterMs: 1 });
    expect(report.interrupted).to.deep.equal(['q2']);
    expect((await runtime.store.executions.get('q2'))?.status).to.equal('failed');
  });

  it('on a shared store, touches only records older than the stale bound', async () => {
    const repo = runtime.store.executions;
    await repo.create({ ...record('old', 'running', '2026-01-01T00:00:00.000Z'), createdAt: '2026-01-01T00:00:00.000Z' });
    await repo.create({ ...record('oldq', 'queued', '2026-01-01T00:00:01.000Z'), createdAt: '2026-01-01T00:00:01.000Z' });
    await repo.create({ ...record('young', 'running', '2026-01-01T00:09:00.000Z'), createdAt: '2026-01-01T00:09:00.000Z' });
    const now = () => new Date('2026-01-01T00:10:00.000Z');
    const report = await recoverExecutions(deps(now), { mode: 'shared', staleAfterMs: 5 * 60_000 });
    expect(report).to.deep.equal({ interrupted: ['old', 'oldq'], rerun: [] });
    expect((await repo.get('young'))?.status).to.equal('running');
  });
});

describe('server: admin token and secret key at rest', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates both once with mode 0600 in a 0700 dir, then reads them back', () => {
    const data = join(dir, 'nested', 'data');
    const first = loadServiceSecrets(loadConfig({ TROUPE_DATA_DIR: data }));
    expect(first.adminToken.origin).to.equal('generated');
    expect(first.adminToken.value).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(first.secretKey.value).to.not.equal(first.adminToken.value);
    expect(statSync(join(data, 'admin-token')).mode & 0o777).to.equal(0o600);
    expect(statSync(join(data, 'secret-key')).mode & 0o777).to.equal(0o600);
    expect(statSync(data).mode & 0o777).to.equal(0o700);
    const second = loadServiceSecrets(loadConfig({ TROUPE_DATA_DIR: data }));
    expect(second.adminToken).to.deep.equal({ ...first.adminToken, origin: 'file' });
    expect(second.secretKey.value).to.equal(first.secretKey.value);
  });

  it('prefers the environment and refuses a too-short file', () => {
    const env = loadServiceSecrets(loadConfig({ TROUPE_DATA_DIR: dir, TROUPE_ADMIN_TOKEN: 'a'.repeat(20), TROUPE_SECRET_KEY: 'b'.repeat(20) }));
    expect(env.adminToken).to.deep.equal({ value: 'a'.repeat(20), origin: 'env', path: null });
    expect(() => readFileSync(join(dir, 'admin-token'))).to.throw();
    writeFileSync(join(dir, 'admin-token'), 'short\n', { mode: 0o644 });
    expect(() => loadServiceSecrets(loadConfig({ TROUPE_DATA_DIR: dir }))).to.throw(/at least 16 characters/);
  });
});
