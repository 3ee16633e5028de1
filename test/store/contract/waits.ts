import { expect } from 'chai';
import type { WaitEntry } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';

function entry(executionId: string, key: string, dueAt: string, since = '2026-01-01T00:00:00.000Z'): WaitEntry {
  return { executionId, key, workflowId: 'wf', since, dueAt };
}

export function waitsContract(ctx: ContractContext): void {
  describe('waits', () => {
    it('begin stores an entry once: a second begin of the same block run returns the first', async () => {
      const s = ctx.store();
      const first = entry('e1', 'root|w', '2026-01-02T00:00:00.000Z');
      expect(await s.waits.begin(first)).to.deep.equal(first);
      const again = await s.waits.begin(entry('e1', 'root|w', '2026-05-05T00:00:00.000Z', '2026-05-01T00:00:00.000Z'));
      expect(again, 'the due time survives the block running again').to.deep.equal(first);
      expect(await s.waits.listByExecution('e1')).to.deep.equal([first]);
    });

    it('due lists the entries due by a time, earliest first, within the limit', async () => {
      const s = ctx.store();
      await s.waits.begin(entry('e2', 'root|b', '2026-01-03T00:00:00.000Z'));
      await s.waits.begin(entry('e1', 'root|a', '2026-01-02T00:00:00.000Z'));
      await s.waits.begin(entry('e3', 'root|c', '2026-02-01T00:00:00.000Z'));
      await s.waits.begin(entry('e0', 'root|d', '2026-01-03T00:00:00.000Z'));
      const due = await s.waits.due('2026-01-03T00:00:00.000Z', 10);
      expect(due.map((e) => e.executionId)).to.deep.equal(['e1', 'e0', 'e2']);
      expect((await s.waits.due('2026-01-03T00:00:00.000Z', 2)).map((e) => e.executionId)).to.deep.equal(['e1', 'e0']);
      expect(await s.waits.due('2025-12-31T00:00:00.000Z', 10)).to.deep.equal([]);
    });

    it('delete removes one entry or every entry of an execution, and survives a reopen', async () => {
      const s = ctx.store();
      await s.waits.begin(entry('e1', 'root|a', '2026-01-02T00:00:00.000Z'));
      await s.waits.begin(entry('e1', 'root|b', '2026-01-02T00:00:00.000Z'));
      await s.waits.begin(entry('e2', 'root|a', '2026-01-02T00:00:00.000Z'));
      expect(await s.waits.delete('e1', 'root|a')).to.equal(1);
      expect(await s.waits.delete('e1', 'root|a')).to.equal(0);
      expect((await s.waits.listByExecution('e1')).map((e) => e.key)).to.deep.equal(['root|b']);
      const reopened = await ctx.reopen();
      expect(await reopened.waits.delete('e1')).to.equal(1);
      expect(await reopened.waits.listByExecution('e1')).to.deep.equal([]);
      expect((await reopened.waits.listByExecution('e2')).map((e) => e.key)).to.deep.equal(['root|a']);
    });
  });
}
