import { expect } from 'chai';
import type { ExecutionRecord, ExecutionStatus, Store } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { blockLog, execution, rejectsWith, workflowDef } from './context.js';

const STATUSES: ExecutionStatus[] = ['completed', 'failed', 'running'];

async function pageAll(s: Store, workflowId: string, limit: number, status?: ExecutionStatus): Promise<ExecutionRecord[]> {
  const out: ExecutionRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await s.executions.list(workflowId, { limit, cursor, ...(status ? { status } : {}) });
    expect(page.items.length).to.be.at.most(limit);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

export function historyContract(ctx: ContractContext): void {
  describe('executions: history and recovery', () => {
    it('lists newest first, filters by status and pages with no duplicate and no gap', async () => {
      const s = ctx.store();
      // three share one creation time: the id breaks the tie, so pages stay stable
      const tie = '2024-01-01T12:00:00.000Z';
      for (let i = 0; i < 23; i++) {
        const extra = { status: STATUSES[i % 3] as ExecutionStatus, context: { big: i }, ...(i >= 10 && i < 13 ? { createdAt: tie } : {}) };
        await s.executions.create(execution(`e${String(i).padStart(2, '0')}`, 'wf', extra));
      }
      await s.executions.create(execution('other', 'wf2'));
      const all = await pageAll(s, 'wf', 5);
      expect(all).to.have.length(23);
      expect(new Set(all.map((e) => e.id)).size).to.equal(23);
      for (let i = 1; i < all.length; i++) {
        const [prev, cur] = [all[i - 1] as ExecutionRecord, all[i] as ExecutionRecord];
        const newerFirst = (prev.createdAt as string) > (cur.createdAt as string) || (prev.createdAt === cur.createdAt && prev.id > cur.id);
        expect(newerFirst, `${prev.id} before ${cur.id}`).to.equal(true);
      }
      expect(all.every((e) => e.context === undefined), 'lists leave the context out').to.equal(true);
      const failed = await pageAll(s, 'wf', 2, 'failed');
      expect(failed.map((e) => e.id)).to.deep.equal(all.filter((e) => e.status === 'failed').map((e) => e.id));
      expect(failed).to.have.length(8);
      expect((await s.executions.list('wf', { limit: 100, status: 'cancelled' })).items).to.deep.equal([]);
      await rejectsWith(s.executions.list('wf', { limit: 5, cursor: 'bogus' }), 'INVALID_REQUEST');
    });

    it('lists only the records created since a given time when asked', async () => {
      const s = ctx.store();
      for (const [id, createdAt] of [['a', '2024-01-01T00:00:00.000Z'], ['b', '2024-01-02T00:00:00.000Z'], ['c', '2024-01-03T00:00:00.000Z']] as const) {
        await s.executions.create(execution(id, 'wf', { createdAt }));
      }
      const since = await s.executions.list('wf', { limit: 10, since: '2024-01-02T00:00:00.000Z' });
      expect(since.items.map((e) => e.id)).to.deep.equal(['c', 'b']);
      const paged = await s.executions.list('wf', { limit: 1, since: '2024-01-02T00:00:00.000Z' });
      const next = await s.executions.list('wf', { limit: 1, since: '2024-01-02T00:00:00.000Z', cursor: paged.nextCursor });
      expect([...paged.items, ...next.items].map((e) => e.id)).to.deep.equal(['c', 'b']);
      expect(next.nextCursor).to.equal(null);
    });

    it('keeps paging correctly while new executions arrive', async () => {
      const s = ctx.store();
      for (let i = 0; i < 10; i++) await s.executions.create(execution(`old${i}`, 'wf'));
      const first = await s.executions.list('wf', { limit: 4 });
      for (let i = 0; i < 5; i++) await s.executions.create(execution(`new${i}`, 'wf'));
      const rest: string[] = [];
      let cursor = first.nextCursor;
      while (cursor !== null) {
        const page = await s.executions.list('wf', { limit: 4, cursor });
        rest.push(...page.items.map((e) => e.id));
        cursor = page.nextCursor;
      }
      const seen = [...first.items.map((e) => e.id), ...rest];
      expect(seen).to.deep.equal(['old9', 'old8', 'old7', 'old6', 'old5', 'old4', 'old3', 'old2', 'old1', 'old0']);
      expect((await s.executions.list('wf', { limit: 1 })).items[0]?.id).to.equal('new4');
    });

    it('lists executions by status oldest first across workflows, up to the limit', async () => {
      const s = ctx.store();
      await s.executions.create(execution('q1', 'a', { status: 'queued' }));
      await s.executions.create(execution('r1', 'b', { status: 'running' }));
      await s.executions.create(execution('c1', 'a', { status: 'completed' }));
      await s.executions.create(execution('r2', 'a', { status: 'running', context: { resumeFrom: 'x' } }));
      const found = await s.executions.listByStatus(['running', 'queued'], 10);
      expect(found.map((e) => e.id)).to.deep.equal(['q1', 'r1', 'r2']);
      expect(found[2]?.context, 'recovery needs the context').to.deep.equal({ resumeFrom: 'x' });
      const first = await s.executions.listByStatus(['running', 'queued'], 2);
      expect(first.map((e) => e.id)).to.deep.equal(['q1', 'r1']);
      // past the last one seen, whether or not the ones before still have these statuses
      const last = first[1];
      const next = await s.executions.listByStatus(['running', 'queued'], 2, { createdAt: last?.createdAt ?? '', id: last?.id ?? '' });
      expect(next.map((e) => e.id)).to.deep.equal(['r2']);
      expect(await s.executions.listByStatus([], 10)).to.deep.equal([]);
    });
  });

  describe('persistence and health', () => {
    it('keeps everything across close and reopen', async () => {
      let s = ctx.store();
      await s.workflows.create(workflowDef('wf'));
      await s.workflows.replace('wf', workflowDef('wf', 'v2'));
      await s.deployments.put({ workflowId: 'wf', version: 2, deployedAt: ctx.clock.iso() });
      await s.apiKeys.create({ id: 'k', workflowId: 'wf', prefix: 'trp_abcd', hash: 'd'.repeat(64), createdAt: ctx.clock.iso(), revokedAt: null });
      await s.secrets.put('TOKEN', 'v1.cipher');
      await s.executions.create(execution('e1', 'wf'));
      await s.executions.saveBoundary('e1', { patch: { status: 'completed' }, logs: [blockLog('a', 0)], events: [{ executionId: 'e1', seq: 1, event: 'done', data: {}, at: ctx.clock.iso() }] });

      s = await ctx.reopen();
      expect((await s.workflows.get('wf'))?.definition.name).to.equal('v2');
      expect((await s.workflows.getVersion('wf', 1))?.version).to.equal(1);
      expect((await s.deployments.get('wf'))?.version).to.equal(2);
      expect((await s.apiKeys.findByHash('d'.repeat(64)))?.id).to.equal('k');
      expect(await s.secrets.get('TOKEN')).to.equal('v1.cipher');
      const e = await s.executions.get('e1');
      expect(e?.status).to.equal('completed');
      expect(e?.logs).to.deep.equal([blockLog('a', 0)]);
      expect(await s.executions.listEvents('e1')).to.have.length(1);
    });

    it('ping resolves while the store is open', async () => {
      await ctx.store().ping();
    });
  });
}
