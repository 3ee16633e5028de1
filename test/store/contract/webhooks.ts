import { expect } from 'chai';
import type { WebhookEvent } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { rejectsWith, workflowDef } from './context.js';

function event(id: string, receivedAt: string, deliveryId: string | null = null, workflowId = 'wf'): WebhookEvent {
  return {
    id,
    workflowId,
    triggerId: 'hook',
    version: 2,
    deliveryId,
    payload: { body: { n: id }, headers: { 'x-a': '1' }, query: {}, method: 'POST' },
    receivedAt,
    status: 'pending',
    executionId: `x-${id}`,
    announced: false,
  };
}

const DAY_AGO = '2024-02-29T12:00:00.000Z';

export function webhooksContract(ctx: ContractContext): void {
  describe('webhooks', () => {
    it('routes a path to one workflow, replaces its routes, refuses a path of another (CONFLICT)', async () => {
      const s = ctx.store();
      await s.webhooks.putRoutes('wf', [{ path: 'a/b', triggerId: 'h1' }, { path: 'c', triggerId: 'h2' }]);
      expect(await s.webhooks.findRoute('a/b')).to.deep.equal({ path: 'a/b', workflowId: 'wf', triggerId: 'h1' });
      const err = await rejectsWith(s.webhooks.putRoutes('other', [{ path: 'x', triggerId: 'h' }, { path: 'c', triggerId: 'h' }]), 'CONFLICT');
      expect(err.details).to.deep.include({ path: 'c', workflowId: 'wf' });
      expect(await s.webhooks.findRoute('x'), 'nothing of a refused put is written').to.equal(null);
      await s.webhooks.putRoutes('wf', [{ path: 'c', triggerId: 'h3' }]);
      expect(await s.webhooks.findRoute('a/b')).to.equal(null);
      expect(await s.webhooks.findRoute('c')).to.deep.equal({ path: 'c', workflowId: 'wf', triggerId: 'h3' });
      expect(await s.webhooks.deleteRoutes('wf')).to.equal(1);
      expect(await s.webhooks.findRoute('c')).to.equal(null);
      await s.webhooks.putRoutes('other', [{ path: 'c', triggerId: 'h' }]);
      expect((await s.webhooks.findRoute('c'))?.workflowId).to.equal('other');
    });

    it('accepts events, de-duplicates a delivery id within the window only', async () => {
      const s = ctx.store();
      const first = await s.webhooks.accept(event('e1', '2024-03-01T10:00:00.000Z', 'd1'), DAY_AGO);
      expect(first.duplicate).to.equal(false);
      expect(first.event).to.deep.include({ id: 'e1', status: 'pending', executionId: 'x-e1', deliveryId: 'd1', version: 2 });
      const again = await s.webhooks.accept(event('e2', '2024-03-01T11:00:00.000Z', 'd1'), DAY_AGO);
      expect(again.duplicate).to.equal(true);
      expect(again.event.id).to.equal('e1');
      expect(await s.webhooks.get('e2'), 'a duplicate writes nothing').to.equal(null);
      const later = await s.webhooks.accept(event('e3', '2024-03-02T11:00:00.000Z', 'd1'), '2024-03-01T11:00:00.000Z');
      expect(later.duplicate, 'the earlier one is outside the window').to.equal(false);
      const otherWf = await s.webhooks.accept(event('e4', '2024-03-01T11:00:00.000Z', 'd1', 'wf2'), DAY_AGO);
      expect(otherWf.duplicate, 'delivery ids are per workflow and trigger').to.equal(false);
      const noId = await s.webhooks.accept(event('e5', '2024-03-01T11:00:00.000Z'), DAY_AGO);
      const noId2 = await s.webhooks.accept(event('e6', '2024-03-01T11:00:00.000Z'), DAY_AGO);
      expect([noId.duplicate, noId2.duplicate]).to.deep.equal([false, false]);
      expect((await s.webhooks.get('e5'))?.payload).to.deep.equal({ body: { n: 'e5' }, headers: { 'x-a': '1' }, query: {}, method: 'POST' });
    });

    it('accepts one of several concurrent deliveries with the same id; the others get that event as duplicates', async () => {
      const s = ctx.store();
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => s.webhooks.accept(event(`c${i}`, `2024-03-01T10:00:0${i}.000Z`, 'same'), DAY_AGO)));
      const accepted = results.filter((r) => !r.duplicate);
      expect(accepted).to.have.length(1);
      const winner = accepted[0]?.event.id as string;
      expect(results.map((r) => r.event.id)).to.deep.equal(results.map(() => winner));
      expect((await s.webhooks.get(winner))?.status).to.equal('pending');
      const stored = await Promise.all(results.map((_, i) => s.webhooks.get(`c${i}`)));
      expect(stored.filter((e) => e !== null).map((e) => e?.id), 'only the winner is stored').to.deep.equal([winner]);
      expect((await s.webhooks.listPending('2024-03-02T00:00:00.000Z', 10)).map((e) => e.id)).to.deep.equal([winner]);
    });

    it('marks a pending event started once, lists pending oldest first, purges old started ones', async () => {
      const s = ctx.store();
      await s.webhooks.accept(event('e2', '2024-03-01T10:00:02.000Z'), DAY_AGO);
      await s.webhooks.accept(event('e1', '2024-03-01T10:00:01.000Z'), DAY_AGO);
      await s.webhooks.accept(event('e3', '2024-03-01T10:00:09.000Z'), DAY_AGO);
      expect((await s.webhooks.listPending('2024-03-01T10:00:05.000Z', 10)).map((e) => e.id)).to.deep.equal(['e1', 'e2']);
      expect(await s.webhooks.markStarted('e1')).to.equal(true);
      expect(await s.webhooks.markStarted('e1'), 'already started').to.equal(false);
      expect(await s.webhooks.markStarted('missing')).to.equal(false);
      expect(await s.webhooks.get('e1')).to.deep.include({ status: 'started', executionId: 'x-e1' });
      expect((await s.webhooks.listPending('2024-03-02T00:00:00.000Z', 10)).map((e) => e.id)).to.deep.equal(['e2', 'e3']);
      expect(await s.webhooks.purgeStarted('2024-03-01T10:00:05.000Z')).to.equal(1);
      expect(await s.webhooks.get('e1')).to.equal(null);
      expect(await s.webhooks.get('e2'), 'pending events are never purged').to.not.equal(null);
    });

    it('lists events not yet announced, oldest first, until marked', async () => {
      const s = ctx.store();
      await s.webhooks.accept(event('e2', '2024-03-01T10:00:02.000Z'), DAY_AGO);
      await s.webhooks.accept(event('e1', '2024-03-01T10:00:01.000Z'), DAY_AGO);
      await s.webhooks.accept({ ...event('e3', '2024-03-01T10:00:03.000Z'), announced: true }, DAY_AGO);
      expect((await s.webhooks.listUnannounced('2024-03-02T00:00:00.000Z', 10)).map((e) => e.id)).to.deep.equal(['e1', 'e2']);
      expect((await s.webhooks.listUnannounced('2024-03-01T10:00:01.500Z', 10)).map((e) => e.id)).to.deep.equal(['e1']);
      await s.webhooks.markAnnounced('e1');
      expect((await s.webhooks.get('e1'))?.announced).to.equal(true);
      expect((await s.webhooks.listUnannounced('2024-03-02T00:00:00.000Z', 10)).map((e) => e.id)).to.deep.equal(['e2']);
    });

    it('keeps events and routes across a reopen, and deleting the workflow removes them', async () => {
      await ctx.store().workflows.create(workflowDef('wf'));
      await ctx.store().webhooks.putRoutes('wf', [{ path: 'p', triggerId: 'hook' }]);
      await ctx.store().webhooks.accept(event('e1', '2024-03-01T10:00:00.000Z', 'd1'), DAY_AGO);
      const s = await ctx.reopen();
      expect(await s.webhooks.findRoute('p')).to.not.equal(null);
      expect(await s.webhooks.get('e1')).to.not.equal(null);
      expect(await s.workflows.delete('wf')).to.equal(true);
      expect(await s.webhooks.findRoute('p')).to.equal(null);
      expect(await s.webhooks.get('e1')).to.equal(null);
      const fresh = await s.webhooks.accept(event('e9', '2024-03-01T10:00:01.000Z', 'd1'), DAY_AGO);
      expect(fresh.duplicate, 'a deleted workflow leaves no delivery ids behind').to.equal(false);
    });
  });
}
