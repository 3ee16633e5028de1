import { expect } from 'chai';
import type { ExecutionStatus, Store } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { blockLog, execution } from './context.js';

const DAY = 86_400_000;
const T0 = Date.parse('2024-03-01T00:00:00.000Z');

async function seed(s: Store, id: string, status: ExecutionStatus, endedAt: string | null): Promise<void> {
  const ended = endedAt === null ? {} : { createdAt: endedAt, startedAt: endedAt, endedAt, durationMs: 0 };
  await s.executions.saveBoundary(id, {
    create: execution(id, 'wf', { status, ...ended }),
    logs: [blockLog('start', 0), blockLog('f', 1)],
    events: [
      { executionId: id, seq: 1, event: 'execution.started', data: { executionId: id }, at: '2024-01-01T00:00:00.000Z' },
      { executionId: id, seq: 2, event: 'block.completed', data: { blockId: 'f', output: { big: 'x'.repeat(200) } }, at: '2024-01-01T00:00:00.000Z' },
    ],
  });
}

const ago = (days: number): string => new Date(T0 - days * DAY).toISOString();

export function retentionContract(ctx: ContractContext): void {
  describe('executions: retention (purgeEnded)', () => {
    it('deletes ended executions older than the cutoff with their logs and events, and keeps the rest', async () => {
      const s = ctx.store();
      await seed(s, 'old-completed', 'completed', ago(40));
      await seed(s, 'old-failed', 'failed', ago(35));
      await seed(s, 'old-cancelled', 'cancelled', ago(31));
      await seed(s, 'recent', 'completed', ago(2));
      // never ended: a running or queued execution is kept whatever its age
      await seed(s, 'running', 'running', null);
      await seed(s, 'queued', 'queued', null);
      const cutoff = ago(30);
      expect(await s.executions.purgeEnded(cutoff, 100)).to.equal(3);
      for (const id of ['old-completed', 'old-failed', 'old-cancelled']) {
        expect(await s.executions.get(id), id).to.equal(null);
        expect(await s.executions.listEvents(id), id).to.deep.equal([]);
      }
      for (const id of ['recent', 'running', 'queued']) {
        const kept = await s.executions.get(id);
        expect(kept?.logs, id).to.have.length(2);
        expect(await s.executions.listEvents(id), id).to.have.length(2);
      }
      expect(await s.executions.purgeEnded(cutoff, 100)).to.equal(0);
    });

    it('takes at most `limit` per call until none is left', async () => {
      const s = ctx.store();
      for (let i = 0; i < 5; i++) await seed(s, `e${i}`, 'completed', ago(50 - i));
      expect(await s.executions.purgeEnded(ago(30), 2)).to.equal(2);
      expect((await s.executions.list('wf', { limit: 10 })).items).to.have.length(3);
      expect(await s.executions.purgeEnded(ago(30), 2)).to.equal(2);
      expect(await s.executions.purgeEnded(ago(30), 2)).to.equal(1);
      expect(await s.executions.purgeEnded(ago(30), 2)).to.equal(0);
      expect((await s.executions.list('wf', { limit: 10 })).items).to.deep.equal([]);
    });
  });
}
