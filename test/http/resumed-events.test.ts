/**
 * A resumed run's events continue the stored numbering: restart recovery resumes an execution
 * under its id, and a client following its events (SSE) while it runs again gets the events of
 * the interrupted run from the store, then the live ones, numbered on without a gap or a repeat,
 * the same numbers a replay from the store gives once it has ended.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { recoverExecutions } from '../../src/server/recovery.js';
import { testRegistry } from '../helpers/runtime.js';
import { auth, deployed, makeHarness, readSse, waitFor, type Harness } from './support.js';

const workflow = {
  id: 'nap', name: 'Nap',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'a', type: 'function', name: 'A', config: { code: 'return 7;' } },
    // how long b sleeps comes from a secret: long before the crash, short after it
    { id: 'b', type: 'sleep', name: 'B', config: { ms: '{{NAP_MS}}', value: '<a.result>' } },
    { id: 'r', type: 'response', name: 'R', config: { status: 200, data: { b: '<b.value>' } } },
  ],
  connections: [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'r' }],
};

describe('http: the events of an execution resumed by restart recovery', function () {
  this.timeout(30_000);
  let dir: string;
  let first: Harness | undefined;
  let second: Harness | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resumed-events-'));
  });
  afterEach(async () => {
    await second?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams the stored events then the live ones, numbered on (no restart at 1, no repeat)', async () => {
    const dbPath = join(dir, 'troupe.db');
    first = makeHarness({ dbPath });
    await first.http.put('/api/secrets/NAP_MS').set(auth).send({ value: '60000' }).expect(201);
    const { key } = await deployed(first, workflow);
    const started = await first.http.post('/api/workflows/nap/execute').set('X-API-Key', key).send({ input: {}, async: true }).expect(202);
    const id = started.body.executionId as string;
    const store = first.store;
    await waitFor(() => store.executions.get(id), (rec) => rec?.logs.some((l) => l.blockId === 'b' && l.status === 'running') === true);
    await waitFor(() => store.executions.listEvents(id), (evs) => evs.some((e) => e.event === 'block.started' && (e.data as { blockId?: string }).blockId === 'b'));
    const before = await store.executions.listEvents(id);
    // the crash: the process's store goes away mid-run, then its engine (nothing more is written)
    await first.store.close();
    first.engine.cancel(id);
    await first.bus.close();

    second = makeHarness({ dbPath });
    await second.http.put('/api/secrets/NAP_MS').set(auth).send({ value: '1500' }).expect(200);
    const executions = second.services.executions;
    const report = await recoverExecutions(
      { store: second.store, engine: second.engine, registry: testRegistry, logger: pino({ level: 'silent' }), start: (c, req) => executions.launch(c, req) },
      { mode: 'exclusive', staleAfterMs: 1, executionTimeoutMs: 20_000 },
    );
    expect(report.resumed).to.deep.equal([id]);
    expect(executions.live.has(id), 'the resumed run is live here').to.equal(true);
    const live = await readSse(second.http.get(`/api/executions/${id}/events`).set(auth));
    const ids = live.events.map((e) => e.id);
    expect(ids, 'numbered 1, 2, 3... across the resumption').to.deep.equal(ids.map((_, i) => i + 1));
    expect(live.events.at(-1)?.event).to.equal('done');
    expect(ids.length, 'the stored events and the resumed run\'s own').to.be.above(before.length);
    expect(live.events.slice(0, before.length).map((e) => e.event)).to.deep.equal(before.map((e) => e.event));

    const s = second.store;
    await waitFor(() => s.executions.get(id), (rec) => rec?.status === 'completed');
    const stored = await s.executions.listEvents(id);
    expect(stored.map((e) => [e.seq, e.event]), 'the store has the numbers the live stream gave').to.deep.equal(live.events.map((e) => [e.id, e.event]));
    const replayed = await readSse(second.http.get(`/api/executions/${id}/events`).set(auth));
    expect(replayed.events.map((e) => [e.id, e.event])).to.deep.equal(live.events.map((e) => [e.id, e.event]));
  });
});
