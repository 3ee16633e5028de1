import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.js';
import { executionEvents } from '../../src/bus/subjects.js';
import { openRuntime, type Runtime } from '../../src/main.js';
import type { WorkflowDef } from '../../src/model/types.js';
import { INTERRUPTED_MESSAGE, recoverExecutions } from '../../src/server/recovery.js';
import { loadServiceSecrets } from '../../src/server/secrets-at-rest.js';
import { SecretService } from '../../src/service/secrets.js';
import { ensureDataDir } from '../../src/store/data-dir.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { BlockLog, ExecutionRecord } from '../../src/store/types.js';

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

function record(id: string, status: ExecutionRecord['status'], startedAt: string | null, workflowId = 'echo'): ExecutionRecord {
  return { id, workflowId, version: 1, status, trigger: { type: 'api' }, input: { x: 21 }, output: null, error: null, startedAt, endedAt: null, durationMs: null };
}

/** A stored block log as the engine writes it (`activated` omitted to play a log of an older version). */
function log(blockId: string, blockType: string, order: number, status: string, output: unknown, activated?: number[]): BlockLog {
  const at = `2026-01-01T00:00:00.${String(100 + order).padStart(3, '0')}Z`;
  return {
    blockId, blockName: blockId, blockType, status, order, startedAt: at, endedAt: status === 'running' ? null : at, durationMs: status === 'running' ? null : 0,
    input: null, output, error: null, errorHandled: false, attempts: status === 'running' ? 0 : 1, iteration: null, ...(activated ? { activated } : {}),
  };
}

const STARTER_OUT = { input: { x: 21 }, x: 21, trigger: { type: 'api' } };

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

  const deps = (now?: () => Date) => ({
    store: runtime.store, engine: runtime.engine, registry: runtime.registry, logger: silent, ...(now ? { now } : {}),
    events: { bus: runtime.bus, prefix: runtime.config.busPrefix },
  });

  const opts = { mode: 'exclusive' as const, staleAfterMs: 1, executionTimeoutMs: 300_000 };

  it('fails running executions it cannot resume with INTERRUPTED and a done event; re-runs queued ones under their id', async () => {
    const repo = runtime.store.executions;
    await repo.create(record('r1', 'running', '2026-01-01T00:00:00.000Z'));
    // a settled log that does not say which connections it activated (written before resumption existed)
    await repo.saveBoundary('r1', {
      logs: [log('start', 'starter', 0, 'completed', STARTER_OUT), log('f', 'function', 1, 'running', null)],
      events: [{ executionId: 'r1', seq: 1, event: 'block.started', data: {}, at: '2026-01-01T00:00:00.001Z' }],
    });
    await repo.create(record('q1', 'queued', null));
    await repo.create(record('done', 'completed', '2026-01-01T00:00:00.000Z'));
    const at = new Date('2026-01-01T00:00:05.000Z');
    const announced: unknown[] = [];
    const sub = runtime.bus.subscribe(executionEvents(runtime.config.busPrefix, 'failed'), (m) => announced.push(m.data));
    const report = await recoverExecutions(deps(() => at), opts);
    expect(report).to.deep.equal({ interrupted: ['r1'], rerun: ['q1'], resumed: [], refused: [] });

    const r1 = await repo.get('r1');
    expect(r1?.status).to.equal('failed');
    expect(r1?.error).to.deep.equal({ code: 'INTERRUPTED', message: INTERRUPTED_MESSAGE, blockId: null });
    expect(r1?.endedAt).to.equal(at.toISOString());
    expect(r1?.durationMs).to.equal(5000);
    // the block that was running when the process stopped ended with it
    const f = r1?.logs.find((l) => l.blockId === 'f');
    expect([f?.status, f?.endedAt, f?.durationMs]).to.deep.equal(['cancelled', at.toISOString(), 4899]);
    // SPEC §5: subscribers hear that it failed, as from the engine
    await new Promise((r) => setTimeout(r, 20));
    sub.unsubscribe();
    expect(announced).to.deep.equal([{ executionId: 'r1', workflowId: 'echo', trigger: { type: 'api' }, status: 'failed', durationMs: 5000 }]);
    const events = await repo.listEvents('r1');
    expect(events.map((e) => [e.seq, e.event])).to.deep.equal([[1, 'block.started'], [2, 'done']]);

    await runtime.engine.whenIdle(10_000);
    const q1 = await repo.get('q1');
    expect(q1?.status).to.equal('completed');
    expect(q1?.output).to.deep.equal({ result: 42, stdout: '' });
    expect((await repo.get('done'))?.status).to.equal('completed');
    // nothing is left to recover
    expect(await recoverExecutions(deps(), opts)).to.deep.equal({ interrupted: [], rerun: [], resumed: [], refused: [] });
  });

  describe('resumption from the last block boundary', () => {
    const chain = {
      id: 'chain', name: 'Chain',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'a', type: 'function', name: 'A', config: { code: 'return Math.random();' } },
        { id: 'b', type: 'function', name: 'B', config: { code: 'return <a.result>;' } },
      ],
      connections: [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }],
    } as unknown as WorkflowDef & { id: string };
    const branching = {
      id: 'branching', name: 'Branching',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'c', type: 'condition', name: 'Big', config: { branches: [{ id: 'yes', expression: '<start.x> > 100' }], else: true } },
        { id: 'r1', type: 'response', name: 'Large', config: { status: 200, data: { size: 'large', x: '<start.x>' } } },
        { id: 'r2', type: 'response', name: 'Small', config: { status: 200, data: { size: 'small' } } },
      ],
      connections: [{ from: 'start', to: 'c' }, { from: 'c', handle: 'yes', to: 'r1' }, { from: 'c', handle: 'else', to: 'r2' }],
    } as unknown as WorkflowDef & { id: string };
    const events = (id: string, n: number) => Array.from({ length: n }, (_, i) => ({ executionId: id, seq: i + 1, event: 'block.started', data: {}, at: '2026-01-01T00:00:00.120Z' }));

    beforeEach(async () => {
      await runtime.store.workflows.create(chain);
      await runtime.store.workflows.create(branching);
    });

    it('does not run settled blocks again: the block that was running runs with their recorded outputs', async () => {
      const repo = runtime.store.executions;
      await repo.create(record('c1', 'running', '2026-01-01T00:00:00.000Z', 'chain'));
      await repo.saveBoundary('c1', {
        logs: [log('start', 'starter', 0, 'completed', STARTER_OUT, [0]), log('a', 'function', 1, 'completed', { result: 0.25, stdout: '' }, [1]), log('b', 'function', 2, 'running', null)],
        events: events('c1', 5),
      });
      expect(await recoverExecutions(deps(), opts)).to.deep.equal({ interrupted: [], rerun: [], resumed: ['c1'], refused: [] });
      await runtime.engine.whenIdle(10_000);
      const c1 = await repo.get('c1');
      expect(c1?.status).to.equal('completed');
      expect(c1?.output).to.deep.equal({ result: 0.25, stdout: '' });
      expect(c1?.startedAt).to.equal('2026-01-01T00:00:00.000Z');
      // B's log from before the crash said running: dropped, B started over and took its place again
      expect(c1?.logs.map((l) => [l.blockId, l.status, l.order])).to.deep.equal([['start', 'completed', 0], ['a', 'completed', 1], ['b', 'completed', 2]]);
      expect(c1?.logs[1]?.startedAt).to.equal('2026-01-01T00:00:00.101Z');
      const seqs = (await repo.listEvents('c1')).map((e) => [e.seq, e.event]);
      expect(seqs.slice(5)).to.deep.equal([[6, 'block.started'], [7, 'block.completed'], [8, 'done']]);
    });

    it('follows the decisions recorded before the crash, not new ones', async () => {
      const repo = runtime.store.executions;
      await repo.create(record('b1', 'running', '2026-01-01T00:00:00.000Z', 'branching'));
      // x is 21, but the condition had chosen `yes` (a different input then, say): that path goes on
      await repo.saveBoundary('b1', {
        logs: [log('start', 'starter', 0, 'completed', STARTER_OUT, [0]), log('c', 'condition', 1, 'completed', { selectedBranch: 'yes', result: true }, [1])],
        events: events('b1', 3),
      });
      expect((await recoverExecutions(deps(), opts)).resumed).to.deep.equal(['b1']);
      await runtime.engine.whenIdle(10_000);
      const b1 = await repo.get('b1');
      expect(b1?.status).to.equal('completed');
      expect(b1?.output).to.deep.equal({ status: 200, headers: {}, data: { size: 'large', x: 21 } });
      expect(b1?.logs.map((l) => [l.blockId, l.status])).to.deep.equal([['start', 'completed'], ['c', 'completed'], ['r1', 'completed'], ['r2', 'skipped']]);
      expect((b1?.context as { decisions: unknown }).decisions).to.deep.equal({ c: 'yes' });
    });

    it('counts only the time it ran against the time limit, across several crashes', async () => {
      const napping = {
        id: 'napping', name: 'Napping',
        blocks: [
          { id: 'start', type: 'starter', name: 'Start', config: {} },
          { id: 'a', type: 'function', name: 'A', config: { code: 'return 1;' } },
          { id: 'b', type: 'function', name: 'B', config: { code: 'await new Promise((r) => setTimeout(r, 400)); return 2;' } },
        ],
        connections: [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }],
      } as unknown as WorkflowDef & { id: string };
      await runtime.store.workflows.create(napping);
      const repo = runtime.store.executions;
      // ran 10 s, crashed, was resumed 10 minutes later, ran 2 s more (A settled then), crashed again
      const twice = async (id: string) => {
        await repo.create({ ...record(id, 'running', '2026-01-01T00:00:00.000Z', 'napping'), context: { resumed: { activeMs: 10_000, at: '2026-01-01T00:10:00.000Z' } } });
        const a = { ...log('a', 'function', 1, 'completed', { result: 1, stdout: '' }, [1]), startedAt: '2026-01-01T00:10:01.000Z', endedAt: '2026-01-01T00:10:02.000Z' };
        await repo.saveBoundary(id, { logs: [log('start', 'starter', 0, 'completed', STARTER_OUT, [0]), a] });
      };
      await twice('t1');
      expect((await recoverExecutions(deps(), { ...opts, executionTimeoutMs: 13_000 })).resumed).to.deep.equal(['t1']);
      // while it runs, the record says how long it had run before this resume
      expect(((await repo.get('t1'))?.context as { resumed: { activeMs: number } }).resumed.activeMs).to.equal(12_000);
      await runtime.engine.whenIdle(10_000);
      expect((await repo.get('t1'))?.status, '1 s of its 13 s left, enough for B').to.equal('completed');

      await twice('t2');
      expect((await recoverExecutions(deps(), { ...opts, executionTimeoutMs: 12_100 })).resumed).to.deep.equal(['t2']);
      await runtime.engine.whenIdle(10_000);
      const t2 = await repo.get('t2');
      expect(t2?.status).to.equal('failed');
      expect(t2?.error).to.deep.equal({ code: 'EXECUTION_TIMEOUT', message: 'execution exceeded its 12100 ms time limit', blockId: null });
    });

    it('runs an unfinished loop again from its first iteration, dropping the child logs of iterations it does not reach again', async () => {
      const looping = {
        id: 'looping', name: 'Looping',
        blocks: [
          { id: 'start', type: 'starter', name: 'Start', config: {} },
          { id: 'l', type: 'loop', name: 'L', config: { kind: 'forEach', items: ['x', 'y'] } },
          { id: 'body', type: 'function', name: 'Body', parent: 'l', config: { code: 'return <loop.item>;' } },
        ],
        connections: [{ from: 'start', to: 'l' }],
      } as unknown as WorkflowDef & { id: string };
      await runtime.store.workflows.create(looping);
      const repo = runtime.store.executions;
      await repo.create(record('l1', 'running', '2026-01-01T00:00:00.000Z', 'looping'));
      // the interrupted run had got further (its items were different, say): iterations 0..3
      const child = (index: number) => ({ ...log('body', 'function', 1 + index, 'completed', { result: 'old', stdout: '' }), iteration: { container: 'l', index } });
      await repo.saveBoundary('l1', { logs: [log('start', 'starter', 0, 'completed', STARTER_OUT, [0]), child(0), child(1), child(2), child(3)] });
      expect((await recoverExecutions(deps(), opts)).resumed).to.deep.equal(['l1']);
      await runtime.engine.whenIdle(10_000);
      const l1 = await repo.get('l1');
      expect(l1?.status).to.equal('completed');
      const bodies = (l1?.logs ?? []).filter((l) => l.blockId === 'body');
      expect(bodies.map((l) => [(l.iteration as { index: number }).index, (l.output as { result: unknown }).result])).to.deep.equal([[0, 'x'], [1, 'y']]);
    });

    it('does not resume a troupe run execution: it ran a file, not a stored version', async () => {
      const repo = runtime.store.executions;
      await repo.create({ ...record('cli1', 'running', '2026-01-01T00:00:00.000Z'), trigger: { type: 'manual', source: 'cli' } });
      const report = await recoverExecutions(deps(), opts);
      expect(report).to.deep.include({ resumed: [], interrupted: ['cli1'] });
    });

    it("keeps a chat execution's conversation when it starts over", async () => {
      const convo = {
        id: 'convo', name: 'Convo',
        blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'f', type: 'function', name: 'F', config: { code: 'return <start.conversationId>;' } }],
        connections: [{ from: 'start', to: 'f' }],
      } as unknown as WorkflowDef & { id: string };
      await runtime.store.workflows.create(convo);
      const repo = runtime.store.executions;
      await repo.create({ ...record('v1', 'running', '2026-01-01T00:00:00.000Z', 'convo'), trigger: { type: 'chat', subdomain: 's', conversationId: 'conv-1' } });
      expect((await recoverExecutions(deps(), opts)).resumed).to.deep.equal(['v1']);
      await runtime.engine.whenIdle(10_000);
      expect((await repo.get('v1'))?.output).to.deep.equal({ result: 'conv-1', stdout: '' });
    });

    it('ends at once when the settled blocks decide the end: a response, or a failure with no error connection', async () => {
      const repo = runtime.store.executions;
      await repo.create(record('d1', 'running', '2026-01-01T00:00:00.000Z', 'branching'));
      await repo.saveBoundary('d1', {
        logs: [
          log('start', 'starter', 0, 'completed', STARTER_OUT, [0]),
          log('c', 'condition', 1, 'completed', { selectedBranch: 'else', result: false }, [2]),
          log('r2', 'response', 2, 'completed', { status: 201, headers: {}, data: { size: 'small' } }, []),
        ],
      });
      await repo.create(record('f1', 'running', '2026-01-01T00:00:00.000Z', 'chain'));
      const failed = { ...log('a', 'function', 1, 'failed', null, []), error: { code: 'FUNCTION_ERROR', message: 'boom' } };
      await repo.saveBoundary('f1', { logs: [log('start', 'starter', 0, 'completed', STARTER_OUT, [0]), failed] });
      expect((await recoverExecutions(deps(), opts)).resumed).to.deep.equal(['d1', 'f1']);
      await runtime.engine.whenIdle(10_000);
      const d1 = await repo.get('d1');
      expect([d1?.status, d1?.output, d1?.logs.length]).to.deep.equal(['completed', { status: 201, headers: {}, data: { size: 'small' } }, 3]);
      const f1 = await repo.get('f1');
      expect([f1?.status, f1?.error, f1?.logs.length]).to.deep.equal(['failed', { code: 'FUNCTION_ERROR', message: 'boom', blockId: 'a' }, 2]);
    });
  });

  it('reaches every orphan when there are more than a page of them, although resumed ones stay running', async () => {
    const repo = runtime.store.executions;
    for (let i = 0; i < 510; i++) await repo.create({ ...record(`o${String(i).padStart(3, '0')}`, 'running', '2026-01-01T00:00:00.000Z'), createdAt: '2026-01-01T00:00:00.000Z' });
    const started: string[] = [];
    // a run that never ends: each stays `running` while the listing goes on
    const start = async (_compiled: unknown, req: { executionId: string }) => {
      started.push(req.executionId);
      return { id: req.executionId, done: new Promise<never>(() => undefined), recorded: Promise.resolve(), cancel: () => undefined, subscribe: () => () => undefined, redactText: (text: string) => text };
    };
    const report = await recoverExecutions({ ...deps(), start }, opts);
    expect(report.resumed).to.have.length(510);
    expect(new Set(started).size).to.equal(510);
  });

  it('fails a queued execution whose workflow version is gone', async () => {
    await runtime.store.executions.create({ ...record('q2', 'queued', null), version: 9 });
    const report = await recoverExecutions(deps(), opts);
    expect(report.interrupted).to.deep.equal(['q2']);
    expect((await runtime.store.executions.get('q2'))?.status).to.equal('failed');
  });

  it('on a shared store, touches only records started or resumed before the stale bound; one instance wins each resumption', async () => {
    const repo = runtime.store.executions;
    await repo.create({ ...record('old', 'running', '2026-01-01T00:00:00.000Z'), createdAt: '2026-01-01T00:00:00.000Z' });
    await repo.create({ ...record('oldq', 'queued', '2026-01-01T00:00:01.000Z'), createdAt: '2026-01-01T00:00:01.000Z' });
    await repo.create({ ...record('young', 'running', '2026-01-01T00:09:00.000Z'), createdAt: '2026-01-01T00:09:00.000Z' });
    const now = () => new Date('2026-01-01T00:10:00.000Z');
    // two instances sweep at once: one of them resumes the old running one, the other leaves it
    const shared = { mode: 'shared' as const, staleAfterMs: 5 * 60_000, executionTimeoutMs: 300_000 };
    const [a, b] = await Promise.all([recoverExecutions(deps(now), shared), recoverExecutions(deps(now), shared)]);
    expect([...(a?.resumed ?? []), ...(b?.resumed ?? [])]).to.deep.equal(['old']);
    expect([...(a?.interrupted ?? []), ...(b?.interrupted ?? [])]).to.include('oldq').and.not.include('old');
    expect((await repo.get('young'))?.status).to.equal('running');
    await runtime.engine.whenIdle(10_000);
    expect((await repo.get('old'))?.status).to.equal('completed');
    expect((await repo.get('oldq'))?.status).to.equal('failed');
    // a sweep that listed it before another instance claimed it does not claim it again
    await repo.create({ ...record('late', 'running', '2026-01-01T00:00:00.000Z'), createdAt: '2026-01-01T00:00:00.000Z' });
    const started: string[] = [];
    const startAs = (who: string) => async (_c: unknown, req: { executionId: string }) => {
      started.push(`${who}:${req.executionId}`);
      return { id: req.executionId, done: new Promise<never>(() => undefined), recorded: Promise.resolve(), cancel: () => undefined, subscribe: () => () => undefined, redactText: (text: string) => text };
    };
    // B's view of the store: the same, but instance A sweeps completely between B's listing and B's claim
    const slowRepo = Object.create(repo) as typeof repo;
    slowRepo.listByStatus = async (...args) => {
      const listed = await repo.listByStatus(...args);
      if (listed.some((r) => r.id === 'late')) await recoverExecutions({ ...deps(now), start: startAs('A') }, shared);
      return listed;
    };
    const slowStore = Object.assign(Object.create(runtime.store) as typeof runtime.store, { executions: slowRepo });
    await recoverExecutions({ ...deps(now), store: slowStore, start: startAs('B') }, shared);
    expect(started.filter((s) => s.endsWith(':late'))).to.deep.equal(['A:late']);
    expect((await repo.get('late'))?.status, 'not failed by the instance that lost the claim').to.equal('running');

    // resumed a moment ago: not stale, whatever its start, so the next sweep leaves it alone
    await repo.create({ ...record('again', 'running', '2026-01-01T00:00:00.000Z'), createdAt: '2026-01-01T00:00:00.000Z', context: { resumed: { activeMs: 0, at: '2026-01-01T00:09:30.000Z' } } });
    const next = await recoverExecutions(deps(now), shared);
    expect(next.resumed).to.deep.equal([]);
    expect((await repo.get('again'))?.status).to.equal('running');
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

  it('refuses a data dir that cannot be one, naming TROUPE_DATA_DIR, and makes missing levels 0700', () => {
    writeFileSync(join(dir, 'file'), 'x');
    for (const bad of [join(dir, 'file'), join(dir, 'file', 'below'), '/proc/troupe-nope', '/sys/troupe-nope']) {
      expect(() => ensureDataDir(bad), bad).to.throw(/^TROUPE_DATA_DIR .* cannot be used: /).with.property('code', 'INVALID_CONFIG');
    }
    ensureDataDir(join(dir, 'a', 'b', 'c'));
    for (const level of ['a', 'a/b', 'a/b/c']) expect(statSync(join(dir, level)).mode & 0o777, level).to.equal(0o700);
    ensureDataDir(join(dir, 'a', 'b', 'c'));
  });

  it('stops the start when TROUPE_SECRET_KEY is not the key the stored secrets were written with', async () => {
    const store = openSqliteStore(':memory:');
    try {
      await new SecretService(store, 'the-first-key-000000').checkKey(); // nothing stored: nothing to check
      await new SecretService(store, 'the-first-key-000000').put('TOKEN', 'value-1');
      await new SecretService(store, 'the-first-key-000000').checkKey();
      const wrong = await new SecretService(store, 'another-key-11111111').checkKey().then(() => null, (err: unknown) => err);
      expect(wrong).to.have.property('code', 'INVALID_CONFIG');
      expect((wrong as Error).message).to.match(/TROUPE_SECRET_KEY does not decrypt the stored secrets/);
    } finally {
      await store.close();
    }
  });

  it('prefers the environment and refuses a too-short file', () => {
    const env = loadServiceSecrets(loadConfig({ TROUPE_DATA_DIR: dir, TROUPE_ADMIN_TOKEN: 'a'.repeat(20), TROUPE_SECRET_KEY: 'b'.repeat(20) }));
    expect(env.adminToken).to.deep.equal({ value: 'a'.repeat(20), origin: 'env', path: null });
    expect(() => readFileSync(join(dir, 'admin-token'))).to.throw();
    writeFileSync(join(dir, 'admin-token'), 'short\n', { mode: 0o644 });
    expect(() => loadServiceSecrets(loadConfig({ TROUPE_DATA_DIR: dir }))).to.throw(/at least 16 characters/);
  });
});
