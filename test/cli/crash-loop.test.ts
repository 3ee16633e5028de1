/**
 * No crash loop (issue 21): a data dir holding an execution whose resumption ends the process
 * every time must not keep `troupe serve` down. Each resumption is counted in the record before
 * it starts; after TROUPE_MAX_RESUME_ATTEMPTS of them ended with the process, the execution is
 * failed with RESUME_LIMIT and its reason, and the service starts.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/load.js';
import { openRuntime } from '../../src/main.js';
import type { WorkflowDef } from '../../src/model/types.js';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'crash-loop-admin-token-0123456789';
const KEY = 'crash-loop-secret-key-0123456789';
const killOnResume = new URL('./fixtures/kill-on-resume.mjs', import.meta.url).href;

const echo = {
  id: 'echo',
  name: 'Echo',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'f', type: 'function', name: 'F', config: { code: 'return <start.x> * 2;' } },
  ],
  connections: [{ from: 'start', to: 'f' }],
} as unknown as WorkflowDef & { id: string };

describe('troupe serve: no crash loop on restart recovery', function () {
  this.timeout(240_000);
  let dir: string;
  let proc: ServeProcess | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-crashloop-'));
    // the data dir a crash left: an execution still `running`, which recovery resumes at start
    const runtime = await openRuntime(loadConfig({ TROUPE_DATA_DIR: dir, TROUPE_SECRET_KEY: KEY }));
    try {
      await runtime.store.workflows.create(echo);
      await runtime.store.executions.create({
        id: 'poison', workflowId: 'echo', version: 1, status: 'running', trigger: { type: 'api' }, input: { x: 21 },
        output: null, error: null, startedAt: new Date().toISOString(), endedAt: null, durationMs: null,
      });
    } finally {
      await runtime.close();
    }
  });
  afterEach(async () => {
    await ensureStopped(proc);
    proc = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (attempts: string | undefined): Record<string, string> => ({
    TROUPE_ADMIN_TOKEN: TOKEN,
    TROUPE_SECRET_KEY: KEY,
    ...(attempts === undefined ? {} : { TROUPE_MAX_RESUME_ATTEMPTS: attempts }),
    NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${killOnResume}`.trim(),
  });

  /** Starts serve until it stays up; returns how many starts ended with the process killed. */
  async function startUntilUp(attempts: string | undefined, most: number): Promise<number> {
    for (let deaths = 0; deaths < most; deaths += 1) {
      try {
        proc = await startServe(dir, [], env(attempts));
        return deaths;
      } catch (err) {
        // killed by the preload while resuming the execution: the next start tries again
        expect(String(err)).to.match(/exited \(SIGKILL\) before listening/);
      }
    }
    throw new Error(`troupe serve did not start in ${most} attempts`);
  }

  it('fails the execution with RESUME_LIMIT after TROUPE_MAX_RESUME_ATTEMPTS resumptions that ended the process, and starts', async () => {
    const deaths = await startUntilUp('2', 5);
    expect(deaths).to.equal(2);
    const running = proc as ServeProcess;
    const rec = await call(running.url, 'GET', '/api/executions/poison', { token: TOKEN });
    expect(rec.status).to.equal(200);
    expect(rec.body.status).to.equal('failed');
    expect(rec.body.error).to.deep.include({ code: 'RESUME_LIMIT' });
    expect(rec.body.error.message).to.contain('2 resumptions').and.to.contain('TROUPE_MAX_RESUME_ATTEMPTS');
    expect((await call(running.url, 'GET', '/healthz')).status).to.equal(200);
    // a new execution of the same workflow runs as usual on the started service
    const deployed = await call(running.url, 'POST', '/api/workflows/echo/deploy', { token: TOKEN });
    expect(deployed.status, JSON.stringify(deployed.body)).to.equal(201);
    const ok = await call(running.url, 'POST', '/api/workflows/echo/execute', { apiKey: deployed.body.apiKey.key, body: { input: { x: 2 } } });
    expect(ok.body.output).to.deep.equal({ result: 4, stdout: '' });
  });

  it('with the default limit (3), the fourth start serves', async () => {
    const deaths = await startUntilUp(undefined, 6);
    expect(deaths).to.equal(3);
    const rec = await call((proc as ServeProcess).url, 'GET', '/api/executions/poison', { token: TOKEN });
    expect(rec.body.error).to.deep.include({ code: 'RESUME_LIMIT' });
  });
});
