/** What can be checked of the MongoDB adapter without a server (the contract needs MONGODB_URL). */
import { expect } from 'chai';
import { executionDoc, patchFields, triggerTypeFilter } from '../../src/store/mongo/execution-docs.js';
import { dbNameFromUrl, openMongoStore } from '../../src/store/mongo/index.js';
import { execution } from './contract/context.js';
import { rejectsWith } from './contract/context.js';

describe('store: mongodb adapter without a server', () => {
  it('takes the database name from the URL path when there is one', () => {
    expect(dbNameFromUrl('mongodb://localhost:27017/troupe_prod?replicaSet=rs0')).to.equal('troupe_prod');
    expect(dbNameFromUrl('mongodb://u:p@h1:1,h2:2/app')).to.equal('app');
    expect(dbNameFromUrl('mongodb+srv://cluster.example.net/?retryWrites=true')).to.equal(undefined);
    expect(dbNameFromUrl('mongodb://localhost:27017')).to.equal(undefined);
  });

  it('rejects with STORE_ERROR when no server answers, and for a malformed URL', async function () {
    this.timeout(15_000);
    const err = await rejectsWith(openMongoStore('mongodb://127.0.0.1:1/x', undefined, { serverSelectionTimeoutMS: 300 }), 'STORE_ERROR');
    expect(err.retryable).to.equal(true);
    await rejectsWith(openMongoStore('mongodb://'), 'STORE_ERROR');
  });

  it('keeps the trigger type beside its JSON, and matches records written before it by the start of that JSON', () => {
    expect(executionDoc(execution('e', 'wf', { trigger: { type: 'rerun', of: 'x' } }), '2024-01-01T00:00:00.000Z').triggerType).to.equal('rerun');
    expect(executionDoc(execution('e', 'wf', { trigger: null }), '2024-01-01T00:00:00.000Z').triggerType).to.equal(null);
    expect(patchFields({ trigger: { type: 'schedule' } }).triggerType).to.equal('schedule');
    expect(patchFields({ status: 'failed' })).to.not.have.property('triggerType');
    const filter = triggerTypeFilter('a.i') as { $or: [unknown, { trigger: { $regex: string } }] };
    const older = new RegExp(filter.$or[1].trigger.$regex);
    expect(older.test(JSON.stringify({ type: 'a.i', keyId: 'k' }))).to.equal(true);
    expect(older.test(JSON.stringify({ type: 'a.i' }))).to.equal(true);
    expect(older.test(JSON.stringify({ type: 'aXi' })), 'the dot is not a wildcard').to.equal(false);
    expect(older.test(JSON.stringify({ type: 'a.ii' }))).to.equal(false);
    expect(older.test(JSON.stringify({ other: 1, type: 'a.i' }))).to.equal(false);
  });
});
