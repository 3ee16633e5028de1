import { expect } from 'chai';
import type { ApprovalEntry } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';

function entry(executionId: string, key: string, tokenHash: string): ApprovalEntry {
  return {
    executionId, key, blockId: key.split('|').at(-1) ?? key, workflowId: 'wf', tokenHash, message: 'Ship it? $ref and dotted.keys',
    since: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-02T00:00:00.000Z', decision: null, data: null, decidedAt: null, decidedBy: null,
  };
}

export function approvalsContract(ctx: ContractContext): void {
  describe('approvals', () => {
    it('begin stores an entry once and finds it by execution and key, and by its token hash', async () => {
      const s = ctx.store();
      const first = entry('e1', 'root|ok', 'h1');
      expect(await s.approvals.begin(first)).to.deep.equal(first);
      expect(await s.approvals.begin({ ...first, tokenHash: 'h2', message: 'other' }), 'the first wins').to.deep.equal(first);
      expect(await s.approvals.get('e1', 'root|ok')).to.deep.equal(first);
      expect(await s.approvals.findByTokenHash('h1')).to.deep.equal(first);
      expect(await s.approvals.findByTokenHash('h2')).to.equal(null);
      expect(await s.approvals.get('e1', 'root|other')).to.equal(null);
    });

    it('decide records the first decision only, with its data; it survives a reopen', async () => {
      const s = ctx.store();
      await s.approvals.begin({ ...entry('e1', 'root|ok', 'h1'), expiresAt: null });
      const d = { decision: 'approved' as const, data: { note: 'fine', n: 2 }, decidedAt: '2026-01-01T01:00:00.000Z', decidedBy: 'admin' };
      expect(await s.approvals.decide('e1', 'root|ok', d)).to.equal(true);
      expect(await s.approvals.decide('e1', 'root|ok', { ...d, decision: 'rejected' })).to.equal(false);
      expect(await s.approvals.decide('e1', 'root|missing', d)).to.equal(false);
      const reopened = await ctx.reopen();
      expect(await reopened.approvals.get('e1', 'root|ok')).to.deep.include({ decision: 'approved', data: { note: 'fine', n: 2 }, decidedAt: d.decidedAt, decidedBy: 'admin', expiresAt: null });
    });
  });
}
