/**
 * A rerun from a block whose process dies mid-run is resumed by restart recovery like any
 * execution: its carried-over blocks stay carried over (not run, their logs kept), and the
 * blocks it had still to run run.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { recoverExecutions } from '../../src/server/recovery.js';
import { resetProbe, testRegistry } from '../helpers/runtime.js';
import { auth, makeHarness, waitFor, type Harness } from './support.js';

const workflow = {
  id: 'nap', name: 'Nap',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'a', type: 'function', name: 'A', config: { code: 'return Math.random();' } },
    { id: 'side', type: 'sleep', name: 'Side', config: { ms: 0 } },
    // how long b sleeps comes from a secret, so that the run after the crash need not wait
    { id: 'b', type: 'sleep', name: 'B', config: { ms: '{{NAP_MS}}', value: '<a.result>' } },
    { id: 'r', type: 'response', name: 'R', config: { status: 200, data: { a: '<a.result>', b: '<b.value>' } } },
  ],
  connections: [{ from: 'start', to: 'a' }, { from: 'start', to: 'side' }, { from: 'a', to: 'b' }, { from: 'b', to: 'r' }, { from: 'side', to: 'r' }],
};

describe('http: rerun interrupted by a crash', function () {
  this.timeout(30_000);
  let dir: string;
  let first: Harness | undefined;
  let second: Harness | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-rerun-'));
  });
  afterEach(async () => {
    await second?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resumes with the carried-over blocks kept and the rest run', async () => {
    const dbPath = join(dir, 'troupe.db');
    first = makeHarness({ dbPath });
    await first.http.put('/api/secrets/NAP_MS').set(auth).send({ value: '0' }).expect(201);
    await first.http.post('/api/workflows').set(auth).send(workflow).expect(201);
    const original = await first.http.post('/api/workflows/nap/run').set(auth).send({}).expect(200);
    const originalId = original.headers['x-execution-id'] as string;
    await first.http.put('/api/secrets/NAP_MS').set(auth).send({ value: '60000' }).expect(200);
    const started = await first.http.post(`/api/executions/${originalId}/rerun`).set(auth).send({ fromBlock: 'b', async: true }).expect(202);
    const id = started.body.executionId as string;
    const store = first.store;
    await waitFor(() => store.executions.get(id), (rec) => rec?.logs.some((l) => l.blockId === 'b' && l.status === 'running') === true);
    // the crash: the process's store goes away mid-run, then its engine (nothing more is written)
    await first.store.close();
    first.engine.cancel(id);
    await first.bus.close();

    second = makeHarness({ dbPath });
    await second.http.put('/api/secrets/NAP_MS').set(auth).send({ value: '0' }).expect(200);
    const probe = resetProbe();
    const report = await recoverExecutions(
      { store: second.store, engine: second.engine, registry: testRegistry, logger: pino({ level: 'silent' }) },
      { mode: 'exclusive', staleAfterMs: 1, executionTimeoutMs: 20_000 },
    );
    expect(report.resumed).to.deep.equal([id]);
    const s = second.store;
    const rec = await waitFor(() => s.executions.get(id), (r) => r?.status === 'completed');
    expect(rec?.status).to.equal('completed');
    expect(probe.runs, 'only b ran again (side stayed carried over)').to.deep.equal({ B: 1 });
    expect(rec?.output).to.deep.include({ status: 200, data: { a: original.body.a, b: original.body.a } });
    expect(rec?.logs.filter((l) => l.carriedFrom === originalId).map((l) => l.blockId).sort()).to.deep.equal(['a', 'side', 'start']);
    expect(rec?.logs.filter((l) => l.carriedFrom === undefined).map((l) => [l.blockId, l.status])).to.deep.equal([['b', 'completed'], ['r', 'completed']]);
  });
});
