/**
 * One contract for every Store adapter: always against SQLite (a fresh file per test) and
 * PostgreSQL (a database of this run, a fresh schema per test; no server is a failure, see
 * test/store/postgres-db.ts), and against MongoDB when MONGODB_URL is set (a fresh database per
 * test, dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { openMongoStore } from '../../src/store/mongo/index.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { TestClock } from '../store/contract/context.js';
import { createTestDatabase } from '../store/postgres-db.js';
import type { TestDatabase } from '../store/postgres-db.js';
import type { ContractContext, MakeHarness, StoreHarness } from '../store/contract/context.js';
import { chatsContract } from '../store/contract/chats.js';
import { executionsContract } from '../store/contract/executions.js';
import { historyContract } from '../store/contract/history.js';
import { keysAndSecretsContract } from '../store/contract/keys-secrets.js';
import { listsContract } from '../store/contract/lists.js';
import { memoriesContract } from '../store/contract/memories.js';
import { retentionContract } from '../store/contract/retention.js';
import { schedulesContract } from '../store/contract/schedules.js';
import { userKeysContract } from '../store/contract/user-keys.js';
import { webhooksContract } from '../store/contract/webhooks.js';
import { workflowsContract } from '../store/contract/workflows.js';
import { waitsContract } from '../store/contract/waits.js';
import { approvalsContract } from '../store/contract/approvals.js';

export function storeContract(name: string, makeHarness: MakeHarness): void {
  describe(`store contract: ${name}`, function () {
    let harness: StoreHarness | undefined;
    let current: Store | undefined;
    let clock = new TestClock();

    const ctx: ContractContext = {
      store: () => {
        if (!current) throw new Error('store not open');
        return current;
      },
      reopen: async () => {
        await current?.close();
        current = await (harness as StoreHarness).open(clock.now);
        return current;
      },
      get clock() {
        return clock;
      },
    };

    beforeEach(async () => {
      clock = new TestClock();
      harness = await makeHarness();
      current = await harness.open(clock.now);
    });

    afterEach(async () => {
      await current?.close();
      await harness?.destroy();
      current = undefined;
      harness = undefined;
    });

    workflowsContract(ctx);
    keysAndSecretsContract(ctx);
    executionsContract(ctx);
    historyContract(ctx);
    webhooksContract(ctx);
    schedulesContract(ctx);
    chatsContract(ctx);
    memoriesContract(ctx);
    retentionContract(ctx);
    userKeysContract(ctx);
    listsContract(ctx);
    waitsContract(ctx);
    approvalsContract(ctx);
  });
}

storeContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-store-'));
  const file = join(dir, 'troupe.db');
  return {
    open: async (now) => openSqliteStore(file, { now }),
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

// the execution writes of a file go through a writer thread by default; this runs them inline
storeContract('sqlite (writes on the calling thread)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-store-'));
  const file = join(dir, 'troupe.db');
  return {
    open: async (now) => openSqliteStore(file, { now, writerThread: false }),
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('store contract on PostgreSQL', function () {
  let db: TestDatabase | undefined;
  before(async function () {
    this.timeout(30_000);
    db = await createTestDatabase('troupe_contract');
  });
  after(async function () {
    this.timeout(30_000);
    await db?.drop();
  });
  storeContract('postgres', async () => {
    if (db === undefined) throw new Error('the test database was not created');
    const url = await db.schemaUrl();
    return {
      open: async (now) => openPostgresStore(url, { now }),
      // the schema goes with the database at the end
      destroy: async () => undefined,
    };
  });
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  let n = 0;
  storeContract('mongodb', async () => {
    const dbName = `troupe_contract_${runId}_${n++}`;
    return {
      open: async (now) => openMongoStore(mongoUrl, dbName, { now }),
      destroy: async () => {
        const client = await MongoClient.connect(mongoUrl);
        try {
          await client.db(dbName).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  });
} else {
  describe('store contract: mongodb', function () {
    before(function () {
      process.stderr.write('MongoDB store contract suite: skipped (MONGODB_URL not set)\n');
      this.skip();
    });
    it('runs the whole store contract against MongoDB (set MONGODB_URL)', () => {
      throw new Error('unreachable: the suite is skipped without MONGODB_URL');
    });
  });
}
