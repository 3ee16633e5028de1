import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { blockLog, execution } from '../store/contract/context.js';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';

const DAY = 86_400_000;

async function seed(dataDir: string): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const store = openSqliteStore(join(dataDir, 'troupe.db'));
  try {
    for (const [id, daysAgo, status] of [['old', 40, 'completed'], ['old-failed', 12, 'failed'], ['recent', 2, 'completed'], ['old-running', 40, 'running']] as const) {
      const at = new Date(Date.now() - daysAgo * DAY).toISOString();
      const ended = status === 'running' ? {} : { endedAt: at, durationMs: 1 };
      await store.executions.saveBoundary(id, {
        create: execution(id, 'wf', { status, createdAt: at, startedAt: at, ...ended }),
        logs: [blockLog('start', 0)],
        events: [{ executionId: id, seq: 1, event: 'block.started', data: { blockId: 'start' }, at }],
      });
    }
  } finally {
    await store.close();
  }
}

describe('troupe serve: execution retention', function () {
  this.timeout(120_000);
  let dir = '';
  let proc: ServeProcess | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-serve-retention-'));
  });
  after(async () => {
    await ensureStopped(proc);
    rmSync(dir, { recursive: true, force: true });
  });

  it('deletes, at start, executions that ended more than TROUPE_EXECUTION_RETENTION_DAYS ago', async () => {
    const data = join(dir, 'data');
    await seed(data);
    proc = await startServe(data, [], { TROUPE_EXECUTION_RETENTION_DAYS: '10' });
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const status = async (id: string): Promise<number> => (await call(proc!.url, 'GET', `/api/executions/${id}`, { token })).status;
    const deadline = Date.now() + 30_000;
    while ((await status('old')) !== 404 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await status('old')).to.equal(404);
    expect(await status('old-failed')).to.equal(404);
    expect(await status('recent')).to.equal(200);
    // it had not ended: restart recovery ends it now, so it is recent, whenever it started
    expect(await status('old-running')).to.equal(200);
  });
});
