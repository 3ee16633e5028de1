/** Pure helpers of the MongoDB adapter, checked without a server. */
import { expect } from 'chai';
import { TroupeError } from '../../src/errors.js';
import { guarded } from '../../src/store/shared.js';
import { boundaryWrites } from '../../src/store/mongo/execution-docs.js';
import { checkDocumentSize, classifyMongoError, isDocumentTooLarge, MAX_DOCUMENT_BYTES } from '../../src/store/mongo/errors.js';
import { purgeFilter } from '../../src/store/mongo/schedules.js';
import { blockLog, execution, rejectsWith } from './contract/context.js';

const big = (bytes: number): string => 'x'.repeat(bytes);

describe('store: mongodb document size limit', () => {
  it('refuses a document above 16 MiB before writing, as a STORE_ERROR that is not retryable', () => {
    expect(() => checkDocumentSize({ body: big(1024) }, 'small')).not.to.throw();
    try {
      checkDocumentSize({ body: big(MAX_DOCUMENT_BYTES) }, 'the log of block a');
      expect.fail('expected a throw');
    } catch (err) {
      expect(err).to.be.instanceOf(TroupeError);
      expect((err as TroupeError).code).to.equal('STORE_ERROR');
      expect((err as TroupeError).retryable).to.equal(false);
      expect((err as TroupeError).details).to.deep.include({ reason: 'DOCUMENT_TOO_LARGE', limit: MAX_DOCUMENT_BYTES });
      expect((err as TroupeError).message).to.contain('the log of block a');
    }
  });

  it('counts UTF-8 bytes, not characters', () => {
    // 6 MiB characters of 3 bytes each: 18 MiB as BSON
    expect(() => checkDocumentSize({ s: '€'.repeat(6 * 1024 * 1024) }, 'euros')).to.throw(TroupeError);
  });

  it('checks every document of a boundary before any write: one too large log refuses the batch', () => {
    const ok = boundaryWrites('e1', { create: execution('e1'), logs: [blockLog('a', 0)], events: [] }, () => '2024-01-01T00:00:00.000Z');
    expect(ok.created?._id).to.equal('e1');
    expect(ok.logOps).to.have.length(1);
    const huge = blockLog('b', 1, { output: big(MAX_DOCUMENT_BYTES) });
    expect(() => boundaryWrites('e1', { logs: [blockLog('a', 0), huge] }, () => '2024-01-01T00:00:00.000Z')).to.throw(/block b of execution e1/);
    expect(() => boundaryWrites('e1', { patch: { context: { out: big(MAX_DOCUMENT_BYTES) } } }, () => '2024-01-01T00:00:00.000Z')).to.throw(/update of execution e1/);
  });

  it('names the server\'s and the driver\'s too-large errors, and nothing else', () => {
    expect(isDocumentTooLarge({ code: 10334, message: 'BSONObj size: 17000000 (0x1036640) is invalid' })).to.equal(true);
    expect(isDocumentTooLarge({ code: 17419, message: 'Resulting document after update is larger than 16777216' })).to.equal(true);
    expect(isDocumentTooLarge({ code: 2, message: 'object to insert too large. size in bytes: 16777300, max size: 16777216' })).to.equal(true);
    expect(isDocumentTooLarge(new Error('Document is larger than the maximum size 16777216'))).to.equal(true);
    expect(isDocumentTooLarge({ code: 11000, message: 'E11000 duplicate key error' })).to.equal(false);
    expect(isDocumentTooLarge(new Error('connection 3 to 127.0.0.1:27017 closed'))).to.equal(false);
    expect(classifyMongoError(new Error('connect ECONNREFUSED'), 'x.y')).to.equal(null);
    expect(classifyMongoError({ code: 10334, message: 'BSONObj size' }, 'executions.update')?.retryable).to.equal(false);
  });

  it('guarded uses the adapter\'s classification first, then the default retryable STORE_ERROR', async () => {
    class Repo {
      async tooLarge(): Promise<void> {
        throw Object.assign(new Error('Resulting document after update is larger than 16777216'), { code: 17419 });
      }
      async down(): Promise<void> {
        throw new Error('server selection timed out');
      }
    }
    const repo = guarded(new Repo(), 'repo', classifyMongoError);
    expect((await rejectsWith(repo.tooLarge(), 'STORE_ERROR')).retryable).to.equal(false);
    expect((await rejectsWith(repo.down(), 'STORE_ERROR')).retryable).to.equal(true);
  });
});

describe('store: mongodb schedule fire purge filter', () => {
  const scope = { workflowId: 'wf', triggerId: 't', cutoff: '2024-03-02T00:00:00.000Z' };

  it('keeps the newest fire and the last run, drops skipped fires after the last run', () => {
    expect(purgeFilter({ ...scope, newestDueAt: '2024-03-01T10:10:00.000Z', lastRunDueAt: '2024-03-01T10:00:00.000Z' })).to.deep.equal({
      workflowId: 'wf', triggerId: 't', outcome: { $ne: 'claimed' },
      dueAt: { $lt: '2024-03-01T10:10:00.000Z' },
      $or: [{ executionId: null }, { dueAt: { $lt: '2024-03-01T10:00:00.000Z' } }],
    });
  });

  it('cuts at the cutoff when the newest fire is later, and keeps only skipped ones in play without a run', () => {
    expect(purgeFilter({ ...scope, newestDueAt: '2024-03-05T00:00:00.000Z', lastRunDueAt: null })).to.deep.equal({
      workflowId: 'wf', triggerId: 't', outcome: { $ne: 'claimed' }, dueAt: { $lt: scope.cutoff }, $or: [{ executionId: null }],
    });
  });
});
