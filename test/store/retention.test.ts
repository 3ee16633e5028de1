import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Clock } from '../../src/blocks/types.js';
import { RetentionJob } from '../../src/service/retention.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { blockLog, execution } from './contract/context.js';

const DAY = 86_400_000;
const NOW = Date.parse('2025-06-01T00:00:00.000Z');
const quiet = { info: () => undefined, warn: () => undefined };

/** A clock at NOW whose waits end at once, or (blocking) only when aborted; it counts them. */
function testClock(blocking = false): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => NOW,
    setTimer: () => {
      throw new Error('retention waits by sleeping, never by a timer');
    },
    sleep: (ms, signal) => {
      sleeps.push(ms);
      if (!blocking) return Promise.resolve();
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
    },
  };
}

async function seed(store: Store, id: string, endedDaysAgo: number): Promise<void> {
  const endedAt = new Date(NOW - endedDaysAgo * DAY).toISOString();
  const big = { text: 'lorem ipsum '.repeat(400) };
  await store.executions.saveBoundary(id, {
    create: execution(id, 'wf', { status: 'completed', createdAt: endedAt, startedAt: endedAt, endedAt, durationMs: 1, output: big }),
    logs: [blockLog('start', 0, { output: big }), blockLog('f', 1, { input: big, output: big })],
    events: [{ executionId: id, seq: 1, event: 'block.completed', data: big, at: endedAt }],
  });
}

describe('execution retention (SQLite file)', function () {
  this.timeout(60_000);
  let dir = '';
  let file = '';

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-retention-'));
    file = join(dir, 'troupe.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('deletes executions that ended before the retention with their logs and events, keeps recent ones, and the file shrinks', async () => {
    let store = openSqliteStore(file);
    for (let i = 0; i < 300; i++) await seed(store, `old-${String(i).padStart(3, '0')}`, 40 + (i % 20));
    for (let i = 0; i < 20; i++) await seed(store, `new-${i}`, i % 5);
    await store.close();
    const before = statSync(file).size;

    store = openSqliteStore(file);
    const clock = testClock();
    const job = new RetentionJob({ executions: store.executions, clock, logger: quiet }, { retentionDays: 30, batchSize: 50, pauseMs: 7 });
    expect(await job.purge()).to.equal(300);
    // 300 in batches of 50: a pause (through the clock) after each full batch
    expect(clock.sleeps).to.deep.equal([7, 7, 7, 7, 7, 7]);
    expect(await store.executions.get('old-000')).to.equal(null);
    expect(await store.executions.listEvents('old-299')).to.deep.equal([]);
    const kept = await store.executions.get('new-3');
    expect(kept?.logs).to.have.length(2);
    expect(await store.executions.listEvents('new-3')).to.have.length(1);
    expect((await store.executions.list('wf', { limit: 1000 })).items).to.have.length(20);
    await store.close();

    const after = statSync(file).size;
    expect(after, `file ${before} → ${after} bytes`).to.be.below(before * 0.2);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('freelist_count', { simple: true })).to.equal(0);
    } finally {
      db.close();
    }
  });

  it('switches a database made before auto_vacuum to incremental once, keeping its data', async () => {
    const old = new Database(file);
    old.exec('CREATE TABLE leftover (x TEXT)');
    old.close();
    let store = openSqliteStore(file);
    await seed(store, 'e1', 1);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('auto_vacuum', { simple: true })).to.equal(2);
    } finally {
      db.close();
    }
    store = openSqliteStore(file);
    expect(await store.executions.get('e1')).to.not.equal(null);
    await store.close();
  });

  it('runs at start and every interval through the clock until stopped; 0 days keeps everything', async () => {
    const store = openSqliteStore(file);
    try {
      await seed(store, 'old', 45);
      const off = new RetentionJob({ executions: store.executions, clock: testClock(), logger: quiet }, { retentionDays: 0 });
      off.start();
      expect(await off.purge()).to.equal(0);
      await off.stop();
      expect(await store.executions.get('old')).to.not.equal(null);

      const clock = testClock(true);
      const job = new RetentionJob({ executions: store.executions, clock, logger: quiet }, { retentionDays: 30, intervalMs: 3_600_000 });
      job.start();
      for (let i = 0; i < 100 && clock.sleeps.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(clock.sleeps).to.deep.equal([3_600_000]);
      expect(await store.executions.get('old')).to.equal(null);
      await job.stop();
    } finally {
      await store.close();
    }
  });
});
