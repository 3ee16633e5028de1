/** What can be checked of the MongoDB adapter without a server (the contract needs MONGODB_URL). */
import { expect } from 'chai';
import { dbNameFromUrl, openMongoStore } from '../../src/store/mongo/index.js';
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
});
