import { expect } from 'chai';
import type { ContractContext } from './context.js';
import { execution, rejectsWith, workflowDef } from './context.js';

export function workflowsContract(ctx: ContractContext): void {
  describe('workflows', () => {
    it('creates version 1 and reads it back', async () => {
      const created = await ctx.store().workflows.create(workflowDef('weather'));
      expect(created.id).to.equal('weather');
      expect(created.version).to.equal(1);
      expect(created.createdAt).to.equal(created.updatedAt);
      expect(created.definition).to.deep.equal(workflowDef('weather'));
      expect(await ctx.store().workflows.get('weather')).to.deep.equal(created);
      expect(await ctx.store().workflows.getVersion('weather', 1)).to.deep.equal(created);
      expect(await ctx.store().workflows.get('nope')).to.equal(null);
    });

    it('refuses a second workflow with the same id (CONFLICT) and keeps the first', async () => {
      await ctx.store().workflows.create(workflowDef('dup', 'First'));
      await rejectsWith(ctx.store().workflows.create(workflowDef('dup', 'Second')), 'CONFLICT');
      expect((await ctx.store().workflows.get('dup'))?.definition.name).to.equal('First');
    });

    it('replace increments the version and keeps every older version readable', async () => {
      const v1 = await ctx.store().workflows.create(workflowDef('w', 'one'));
      const v2 = await ctx.store().workflows.replace('w', { ...workflowDef('ignored'), name: 'two' });
      const v3 = await ctx.store().workflows.replace('w', { ...workflowDef('w'), name: 'three' });
      expect(v2?.version).to.equal(2);
      expect(v3?.version).to.equal(3);
      expect(v2?.definition.id, 'the stored id wins over the body').to.equal('w');
      expect(v3?.createdAt).to.equal(v1.createdAt);
      expect((v3?.updatedAt ?? '') > v1.updatedAt).to.equal(true);
      const current = await ctx.store().workflows.get('w');
      expect(current?.version).to.equal(3);
      expect(current?.definition.name).to.equal('three');
      expect((await ctx.store().workflows.getVersion('w', 1))?.definition.name).to.equal('one');
      const old = await ctx.store().workflows.getVersion('w', 2);
      expect(old).to.deep.include({ id: 'w', version: 2, createdAt: v1.createdAt, updatedAt: v2?.updatedAt });
      expect(old?.definition.name).to.equal('two');
      expect(await ctx.store().workflows.getVersion('w', 4)).to.equal(null);
      expect(await ctx.store().workflows.getVersion('other', 1)).to.equal(null);
    });

    it('replace of an unknown workflow answers null and creates nothing', async () => {
      expect(await ctx.store().workflows.replace('ghost', workflowDef('ghost'))).to.equal(null);
      expect(await ctx.store().workflows.get('ghost')).to.equal(null);
    });

    it('lists by id with cursor pagination: every workflow once, current versions', async () => {
      const ids = Array.from({ length: 11 }, (_, i) => `wf-${String(i).padStart(2, '0')}`);
      for (const id of [...ids].reverse()) await ctx.store().workflows.create(workflowDef(id));
      await ctx.store().workflows.replace('wf-03', workflowDef('wf-03', 'edited'));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await ctx.store().workflows.list({ limit: 4, cursor });
        expect(page.items.length).to.be.at.most(4);
        seen.push(...page.items.map((w) => w.id));
        const edited = page.items.find((w) => w.id === 'wf-03');
        if (edited) expect(edited.version).to.equal(2);
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== null);
      expect(seen).to.deep.equal(ids);
      expect(pages).to.equal(3);
      const exact = await ctx.store().workflows.list({ limit: 11 });
      expect(exact.items).to.have.length(11);
      expect(exact.nextCursor, 'a page that ends the list has no cursor').to.equal(null);
      await rejectsWith(ctx.store().workflows.list({ limit: 2, cursor: 'not-a-cursor' }), 'INVALID_REQUEST');
    });

    it('delete removes versions, deployment and keys but keeps executions', async () => {
      const s = ctx.store();
      await s.workflows.create(workflowDef('gone'));
      await s.workflows.replace('gone', workflowDef('gone'));
      await s.workflows.create(workflowDef('stays'));
      await s.deployments.put({ workflowId: 'gone', version: 2, deployedAt: ctx.clock.iso() });
      await s.deployments.put({ workflowId: 'stays', version: 1, deployedAt: ctx.clock.iso() });
      await s.apiKeys.create({ id: 'k1', workflowId: 'gone', prefix: 'trp_aaaa', hash: 'a'.repeat(64), createdAt: ctx.clock.iso(), revokedAt: null });
      await s.apiKeys.create({ id: 'k2', workflowId: 'stays', prefix: 'trp_bbbb', hash: 'b'.repeat(64), createdAt: ctx.clock.iso(), revokedAt: null });
      await s.executions.create(execution('e1', 'gone'));

      expect(await s.workflows.delete('gone')).to.equal(true);
      expect(await s.workflows.get('gone')).to.equal(null);
      expect(await s.workflows.getVersion('gone', 1)).to.equal(null);
      expect(await s.deployments.get('gone')).to.equal(null);
      expect(await s.apiKeys.findByHash('a'.repeat(64))).to.equal(null);
      expect(await s.apiKeys.listByWorkflow('gone')).to.deep.equal([]);
      expect((await s.executions.get('e1'))?.workflowId, 'history is kept').to.equal('gone');
      expect(await s.deployments.get('stays')).to.not.equal(null);
      expect(await s.apiKeys.findByHash('b'.repeat(64))).to.not.equal(null);
      expect(await s.workflows.delete('gone')).to.equal(false);

      const again = await s.workflows.create(workflowDef('gone'));
      expect(again.version, 'a re-created workflow starts over').to.equal(1);
      expect(await s.workflows.getVersion('gone', 2)).to.equal(null);
    });
  });

  describe('deployments', () => {
    it('put pins a version, replaces the previous deployment, get and delete', async () => {
      const s = ctx.store();
      expect(await s.deployments.get('wf')).to.equal(null);
      const first = await s.deployments.put({ workflowId: 'wf', version: 1, deployedAt: '2024-02-01T10:00:00.000Z', endpoint: '/api/workflows/wf/execute' });
      expect(first).to.deep.equal({ workflowId: 'wf', version: 1, deployedAt: '2024-02-01T10:00:00.000Z', endpoint: '/api/workflows/wf/execute' });
      expect(await s.deployments.get('wf')).to.deep.equal(first);
      await s.deployments.put({ workflowId: 'wf', version: 3, deployedAt: '2024-02-02T10:00:00.000Z' });
      expect(await s.deployments.get('wf')).to.deep.equal({ workflowId: 'wf', version: 3, deployedAt: '2024-02-02T10:00:00.000Z' });
      expect(await s.deployments.delete('wf')).to.equal(true);
      expect(await s.deployments.delete('wf')).to.equal(false);
      expect(await s.deployments.get('wf')).to.equal(null);
    });
  });
}
