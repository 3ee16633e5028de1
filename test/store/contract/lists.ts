/** The lists the console reads: a workflow's versions, and executions across workflows with filters. */
import { expect } from 'chai';
import type { ExecutionQuery, ExecutionRecord, Store } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { execution, rejectsWith, workflowDef } from './context.js';

async function pageAll(s: Store, query: Omit<ExecutionQuery, 'cursor'>): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await s.executions.listAll({ ...query, cursor });
    expect(page.items.length).to.be.at.most(query.limit);
    out.push(...page.items.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

/** Twelve executions of three workflows, one per hour of 2024-01-01 from 00:00, by trigger and status in turn. */
async function seed(s: Store): Promise<ExecutionRecord[]> {
  const triggers = [{ type: 'manual' }, { type: 'api', keyId: 'k1' }, { type: 'webhook', triggerId: 'hook' }, { type: 'rerun', of: 'x', fromBlock: null }];
  const statuses = ['completed', 'failed', 'running'] as const;
  const recs: ExecutionRecord[] = [];
  for (let i = 0; i < 12; i++) {
    const rec = execution(`e${String(i).padStart(2, '0')}`, `wf${i % 3}`, {
      status: statuses[i % 3], trigger: triggers[i % 4], context: { i }, createdAt: `2024-01-01T${String(i).padStart(2, '0')}:00:00.000Z`,
    });
    recs.push(await s.executions.create(rec));
  }
  return recs;
}

export function listsContract(ctx: ContractContext): void {
  describe('versions list', () => {
    it('lists every stored version newest first, paged, with when each was written', async () => {
      const s = ctx.store();
      const v1 = await s.workflows.create(workflowDef('w', 'one'));
      const written = [v1.updatedAt];
      for (const name of ['two', 'three', 'four', 'five']) written.push((await s.workflows.replace('w', { ...workflowDef('w'), name }))?.updatedAt ?? '');
      const first = await s.workflows.listVersions('w', { limit: 2 });
      expect(first.items).to.deep.equal([{ version: 5, createdAt: written[4] }, { version: 4, createdAt: written[3] }]);
      const second = await s.workflows.listVersions('w', { limit: 2, cursor: first.nextCursor });
      expect(second.items.map((v) => v.version)).to.deep.equal([3, 2]);
      const third = await s.workflows.listVersions('w', { limit: 2, cursor: second.nextCursor });
      expect(third).to.deep.equal({ items: [{ version: 1, createdAt: v1.updatedAt }], nextCursor: null });
      expect((await s.workflows.listVersions('w', { limit: 5 })).nextCursor, 'an exact last page has no next').to.equal(null);
    });

    it('answers an empty page for an unknown workflow and refuses a foreign cursor', async () => {
      const s = ctx.store();
      expect(await s.workflows.listVersions('ghost', { limit: 10 })).to.deep.equal({ items: [], nextCursor: null });
      await s.workflows.create(workflowDef('w'));
      await rejectsWith(s.workflows.listVersions('w', { limit: 5, cursor: 'bogus' }), 'INVALID_REQUEST');
      const executionCursor = Buffer.from(JSON.stringify(['2024-01-01T00:00:00.000Z', 'e1'])).toString('base64url');
      await rejectsWith(s.workflows.listVersions('w', { limit: 5, cursor: executionCursor }), 'INVALID_REQUEST');
      const notAVersion = Buffer.from(JSON.stringify(['1.5'])).toString('base64url');
      await rejectsWith(s.workflows.listVersions('w', { limit: 5, cursor: notAVersion }), 'INVALID_REQUEST');
    });

    it('forgets the versions of a deleted workflow', async () => {
      const s = ctx.store();
      await s.workflows.create(workflowDef('w'));
      await s.workflows.replace('w', workflowDef('w'));
      await s.workflows.delete('w');
      await s.workflows.create(workflowDef('w'));
      expect((await s.workflows.listVersions('w', { limit: 10 })).items.map((v) => v.version)).to.deep.equal([1]);
    });
  });

  describe('executions across workflows', () => {
    it('lists every workflow newest first, without contexts, paged with no duplicate and no gap', async () => {
      const s = ctx.store();
      await seed(s);
      const ids = await pageAll(s, { limit: 5 });
      expect(ids).to.deep.equal(Array.from({ length: 12 }, (_, i) => `e${String(11 - i).padStart(2, '0')}`));
      const page = await s.executions.listAll({ limit: 3 });
      expect(page.items.every((e) => e.context === undefined)).to.equal(true);
      expect(page.items[0]).to.deep.include({ id: 'e11', workflowId: 'wf2', status: 'running', trigger: { type: 'rerun', of: 'x', fromBlock: null } });
    });

    it('filters by workflow, status, trigger type and creation time, together', async () => {
      const s = ctx.store();
      await seed(s);
      expect(await pageAll(s, { limit: 2, workflowId: 'wf1' })).to.deep.equal(['e10', 'e07', 'e04', 'e01']);
      expect(await pageAll(s, { limit: 2, status: 'failed' })).to.deep.equal(['e10', 'e07', 'e04', 'e01']);
      expect(await pageAll(s, { limit: 2, triggerType: 'webhook' })).to.deep.equal(['e10', 'e06', 'e02']);
      expect(await pageAll(s, { limit: 2, triggerType: 'api' })).to.deep.equal(['e09', 'e05', 'e01']);
      expect(await pageAll(s, { limit: 10, triggerType: 'schedule' })).to.deep.equal([]);
      // since inclusive, until exclusive
      expect(await pageAll(s, { limit: 2, since: '2024-01-01T03:00:00.000Z', until: '2024-01-01T06:00:00.000Z' })).to.deep.equal(['e05', 'e04', 'e03']);
      expect(await pageAll(s, { limit: 10, since: '2024-01-01T03:00:00Z', until: '2024-01-01T06:00:00+00:00' })).to.deep.equal(['e05', 'e04', 'e03']);
      const all = { limit: 1, workflowId: 'wf1', status: 'failed' as const, triggerType: 'manual', since: '2024-01-01T01:00:00.000Z' };
      expect(await pageAll(s, all)).to.deep.equal(['e04']);
      await rejectsWith(s.executions.listAll({ limit: 5, cursor: 'bogus' }), 'INVALID_REQUEST');
    });

    it('filters by the trigger type a record was patched to', async () => {
      const s = ctx.store();
      await s.executions.create(execution('a', 'wf', { trigger: { type: 'manual' } }));
      await s.executions.update('a', { trigger: { type: 'schedule', triggerId: 'nightly' } });
      expect((await s.executions.listAll({ limit: 5, triggerType: 'schedule' })).items.map((e) => e.id)).to.deep.equal(['a']);
      expect((await s.executions.listAll({ limit: 5, triggerType: 'manual' })).items).to.deep.equal([]);
    });
  });
}
