import { expect } from 'chai';
import type { ExecutionEvent } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { blockLog, execution, rejectsWith } from './context.js';

function ev(executionId: string, seq: number, event = 'block.started', data: unknown = { seq }): ExecutionEvent {
  return { executionId, seq, event, data, at: `2024-01-01T00:00:0${seq % 10}.000Z` };
}

export function executionsContract(ctx: ContractContext): void {
  describe('executions: records', () => {
    it('creates and reads a record with its context, CONFLICT on a duplicate id', async () => {
      const s = ctx.store();
      const rec = execution('e1', 'wf', { context: { outputs: { start: { city: 'Paris' } } } });
      const created = await s.executions.create(rec);
      expect(created).to.deep.include(rec);
      expect(typeof created.createdAt).to.equal('string');
      const got = await s.executions.get('e1');
      expect(got).to.deep.equal({ ...created, logs: [] });
      expect(await s.executions.get('nope')).to.equal(null);
      await rejectsWith(s.executions.create(execution('e1', 'wf', { status: 'running' })), 'CONFLICT');
      expect((await s.executions.get('e1'))?.status).to.equal('queued');
    });

    it('update applies only the patched fields; false for an unknown id', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      expect(await s.executions.update('e1', { status: 'running', startedAt: '2024-01-01T00:00:00.000Z' })).to.equal(true);
      expect(await s.executions.update('e1', {
        status: 'failed', endedAt: '2024-01-01T00:00:01.500Z', durationMs: 1500,
        output: { partial: [1, 2] }, error: { code: 'FUNCTION_ERROR', message: 'boom', blockId: 'f' },
      })).to.equal(true);
      const got = await s.executions.get('e1');
      expect(got).to.deep.include({
        status: 'failed', startedAt: '2024-01-01T00:00:00.000Z', endedAt: '2024-01-01T00:00:01.500Z', durationMs: 1500,
        input: { city: 'Paris' }, trigger: { type: 'api' }, output: { partial: [1, 2] },
        error: { code: 'FUNCTION_ERROR', message: 'boom', blockId: 'f' },
      });
      expect(await s.executions.update('nope', { status: 'running' })).to.equal(false);
      expect(await s.executions.get('nope')).to.equal(null);
    });
  });

  describe('executions: block boundaries', () => {
    it('returns logs ordered by order whatever the write order', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      await s.executions.saveBoundary('e1', { logs: [blockLog('c', 2), blockLog('a', 0)] });
      await s.executions.saveBoundary('e1', { logs: [blockLog('b', 1)] });
      const got = await s.executions.get('e1');
      expect(got?.logs.map((l) => l.blockId)).to.deep.equal(['a', 'b', 'c']);
      expect(got?.logs[1]).to.deep.equal(blockLog('b', 1));
    });

    it('upserts a log by block and iteration: replaced, never duplicated', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      const it0 = { container: 'loop1', index: 0 };
      await s.executions.saveBoundary('e1', { logs: [
        blockLog('f', 1, { status: 'running', endedAt: null, durationMs: null, output: null }),
        blockLog('body', 2, { iteration: it0, status: 'running' }),
        blockLog('body', 3, { iteration: { container: 'loop1', index: 1 }, status: 'running' }),
      ] });
      await s.executions.saveBoundary('e1', { logs: [
        blockLog('f', 1, { status: 'failed', error: { code: 'X', message: 'y' }, errorHandled: true, attempts: 3 }),
        // same iteration written with its keys in another order: still the same log
        blockLog('body', 2, { iteration: { index: 0, container: 'loop1' }, status: 'completed' }),
      ] });
      const logs = (await s.executions.get('e1'))?.logs ?? [];
      expect(logs.map((l) => [l.blockId, l.order, l.status])).to.deep.equal([
        ['f', 1, 'failed'], ['body', 2, 'completed'], ['body', 3, 'running'],
      ]);
      expect(logs[0]).to.deep.include({ errorHandled: true, attempts: 3, error: { code: 'X', message: 'y' } });
      expect(logs[2]?.iteration).to.deep.equal({ container: 'loop1', index: 1 });
    });

    it('drops logs by block and iteration before upserting the batch\'s logs, in this execution only', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      await s.executions.create(execution('e2'));
      const at = (index: number) => ({ container: 'loop1', index });
      const logs = [blockLog('body', 1, { iteration: at(0) }), blockLog('body', 2, { iteration: at(1) }), blockLog('body', 3, { iteration: at(2) })];
      await s.executions.saveBoundary('e1', { logs });
      await s.executions.saveBoundary('e2', { logs });
      await s.executions.saveBoundary('e1', {
        // keys in another order name the same iteration; the log written in the same batch stays
        dropLogs: [{ blockId: 'body', iteration: { index: 1, container: 'loop1' } }, { blockId: 'body', iteration: at(2) }, { blockId: 'ghost', iteration: null }],
        logs: [blockLog('body', 4, { iteration: at(2), status: 'running' })],
      });
      expect((await s.executions.get('e1'))?.logs.map((l) => [l.order, l.status])).to.deep.equal([[1, 'completed'], [4, 'running']]);
      expect((await s.executions.get('e2'))?.logs).to.have.length(3);
    });

    it('writes a guarded batch only while the record has the status and context it was read with', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1', 'wf', { status: 'running' }));
      const claim = (seen: unknown, at: string) => s.executions.saveBoundary('e1', { guard: { status: 'running', context: seen }, patch: { context: { resumed: { at } } } });
      await claim(null, 'first');
      // a second claimer read the record before the first one wrote: it must lose
      await rejectsWith(claim(null, 'second'), 'CONFLICT');
      expect((await s.executions.get('e1'))?.context).to.deep.equal({ resumed: { at: 'first' } });
      await claim({ resumed: { at: 'first' } }, 'third');
      await s.executions.update('e1', { status: 'completed' });
      await rejectsWith(claim({ resumed: { at: 'third' } }, 'fourth'), 'CONFLICT');
      expect((await s.executions.get('e1'))?.context).to.deep.equal({ resumed: { at: 'third' } });
    });

    it('stores events and lists them by seq, after a given seq, upserting a re-sent seq', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      await s.executions.create(execution('e2'));
      await s.executions.saveBoundary('e1', { events: [ev('e1', 2), ev('e1', 1)] });
      await s.executions.saveBoundary('e1', { events: [ev('e1', 3, 'block.completed', { output: { ok: true } })] });
      await s.executions.saveBoundary('e2', { events: [ev('e2', 1, 'done')] });
      await s.executions.saveBoundary('e1', { events: [ev('e1', 2, 'block.skipped', { again: true })] });
      const all = await s.executions.listEvents('e1');
      expect(all.map((e) => e.seq)).to.deep.equal([1, 2, 3]);
      expect(all[1]).to.deep.equal(ev('e1', 2, 'block.skipped', { again: true }));
      expect(all[2]?.data).to.deep.equal({ output: { ok: true } });
      expect((await s.executions.listEvents('e1', 1)).map((e) => e.seq)).to.deep.equal([2, 3]);
      expect(await s.executions.listEvents('e1', 3)).to.deep.equal([]);
      expect((await s.executions.listEvents('e2', 0)).map((e) => e.event)).to.deep.equal(['done']);
      expect(await s.executions.listEvents('none')).to.deep.equal([]);
    });

    it('applies patch, logs and events of one batch together', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      await s.executions.saveBoundary('e1', {
        patch: { status: 'running', startedAt: '2024-01-01T00:00:00.000Z', context: { states: { a: 'completed' } } },
        logs: [blockLog('a', 0)],
        events: [ev('e1', 1), ev('e1', 2, 'block.completed')],
      });
      const got = await s.executions.get('e1');
      expect(got?.status).to.equal('running');
      expect(got?.context).to.deep.equal({ states: { a: 'completed' } });
      expect(got?.logs).to.have.length(1);
      expect(await s.executions.listEvents('e1')).to.have.length(2);
    });

    it('writes nothing of a batch whose last item cannot be stored', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      await s.executions.saveBoundary('e1', { logs: [blockLog('a', 0)], events: [ev('e1', 1)] });
      const circular: Record<string, unknown> = { name: 'loop' };
      circular.self = circular;
      await rejectsWith(s.executions.saveBoundary('e1', {
        patch: { status: 'completed', output: { done: true } },
        logs: [blockLog('a', 0, { status: 'failed' }), blockLog('b', 1)],
        events: [ev('e1', 2), ev('e1', 3, 'block.completed', circular)],
      }), 'STORE_ERROR');
      const got = await s.executions.get('e1');
      expect(got?.status).to.equal('queued');
      expect(got?.output).to.equal(null);
      expect(got?.logs.map((l) => [l.blockId, l.status])).to.deep.equal([['a', 'completed']]);
      expect((await s.executions.listEvents('e1')).map((e) => e.seq)).to.deep.equal([1]);
    });

    it('rejects a malformed log with STORE_ERROR and writes nothing', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      const bad = { ...blockLog('x', 1), blockId: undefined } as unknown as ReturnType<typeof blockLog>;
      await rejectsWith(s.executions.saveBoundary('e1', { patch: { status: 'running' }, logs: [blockLog('a', 0), bad] }), 'STORE_ERROR');
      const got = await s.executions.get('e1');
      expect(got?.status).to.equal('queued');
      expect(got?.logs).to.deep.equal([]);
    });

    it('rejects a batch for an unknown execution with NOT_FOUND and writes nothing', async () => {
      const s = ctx.store();
      await rejectsWith(s.executions.saveBoundary('ghost', { logs: [blockLog('a', 0)], events: [ev('ghost', 1)] }), 'NOT_FOUND');
      expect(await s.executions.listEvents('ghost')).to.deep.equal([]);
      expect(await s.executions.get('ghost')).to.equal(null);
    });

    it('saveBoundaries writes each item alone: a bad item spoils no other', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      await s.executions.create(execution('e2'));
      const results = await s.executions.saveBoundaries([
        { id: 'e1', batch: { patch: { status: 'running' }, logs: [blockLog('a', 0)], events: [ev('e1', 1)] } },
        { id: 'ghost', batch: { logs: [blockLog('x', 0)] } },
        { id: 'e2', batch: { patch: { status: 'completed' }, events: [ev('e2', 1), ev('e2', 2)] } },
        { id: 'e2', batch: { logs: [{ ...blockLog('bad', 1), blockId: undefined as unknown as string }] } },
      ]);
      expect(results.map((r) => (r === null ? null : (r as { code?: string }).code))).to.deep.equal([null, 'NOT_FOUND', null, 'STORE_ERROR']);
      expect((await s.executions.get('e1'))?.status).to.equal('running');
      expect((await s.executions.get('e1'))?.logs.map((l) => l.blockId)).to.deep.equal(['a']);
      expect((await s.executions.get('e2'))?.status).to.equal('completed');
      expect((await s.executions.get('e2'))?.logs).to.deep.equal([]);
      expect((await s.executions.listEvents('e2')).map((e) => e.seq)).to.deep.equal([1, 2]);
      expect(await s.executions.get('ghost')).to.equal(null);
    });
    it('a batch with a record to create inserts it first; CONFLICT on an existing id writes nothing of that item', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e1'));
      const results = await s.executions.saveBoundaries([
        { id: 'e2', batch: { create: execution('e2', 'wf', { status: 'running' }), logs: [blockLog('a', 0)], events: [ev('e2', 1)] } },
        { id: 'e1', batch: { create: execution('e1', 'wf', { status: 'running' }), logs: [blockLog('x', 0)], events: [ev('e1', 1)] } },
        { id: 'e3', batch: { create: execution('other') } },
      ]);
      expect(results.map((r) => (r === null ? null : (r as { code?: string }).code))).to.deep.equal([null, 'CONFLICT', 'STORE_ERROR']);
      const e2 = await s.executions.get('e2');
      expect(e2?.status).to.equal('running');
      expect(e2?.logs.map((l) => l.blockId)).to.deep.equal(['a']);
      expect((await s.executions.listEvents('e2')).map((e) => e.seq)).to.deep.equal([1]);
      const e1 = await s.executions.get('e1');
      expect(e1?.status).to.equal('queued');
      expect(e1?.logs).to.deep.equal([]);
      expect(await s.executions.listEvents('e1')).to.deep.equal([]);
      expect(await s.executions.get('e3')).to.equal(null);
      expect(await s.executions.get('other')).to.equal(null);
    });
  });
}
