import { expect } from 'chai';
import type { MemoryEntry, MemoryRole } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { rejectsWith, workflowDef } from './context.js';

type Message = { role: MemoryRole; content: string };

function msg(content: string, role: MemoryRole = 'user'): Message {
  return { role, content };
}

/** `n` messages named `${prefix}1..n`, alternating user and assistant */
function msgs(prefix: string, n: number): Message[] {
  return Array.from({ length: n }, (_, i) => msg(`${prefix}${i + 1}`, i % 2 === 0 ? 'user' : 'assistant'));
}

const seqs = (entries: readonly MemoryEntry[]): number[] => entries.map((e) => e.seq);
const contents = (entries: readonly MemoryEntry[]): string[] => entries.map((e) => e.content);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export function memoriesContract(ctx: ContractContext): void {
  describe('memories', () => {
    it('appends in order with seqs from 1 and a createdAt; list returns them oldest first', async () => {
      const s = ctx.store();
      expect(await s.memories.list('wf', 'c1')).to.deep.equal([]);
      const at = ctx.clock.iso();
      const first = await s.memories.append('wf', 'c1', [msg('be brief', 'system'), msg('hello'), msg('hi! $ref and dotted.keys', 'assistant')], 100);
      expect(first).to.deep.equal([
        { conversationId: 'c1', seq: 1, role: 'system', content: 'be brief', createdAt: at },
        { conversationId: 'c1', seq: 2, role: 'user', content: 'hello', createdAt: at },
        { conversationId: 'c1', seq: 3, role: 'assistant', content: 'hi! $ref and dotted.keys', createdAt: at },
      ]);
      const second = await s.memories.append('wf', 'c1', [msg('more')], 100);
      expect(seqs(second)).to.deep.equal([4]);
      expect((second[0]?.createdAt ?? '') > at, 'a later append has a later createdAt').to.equal(true);
      expect(await s.memories.list('wf', 'c1')).to.deep.equal([...first, ...second]);
      expect(await s.memories.append('wf', 'c1', [], 100), 'an empty append stores nothing').to.deep.equal([]);
      expect(seqs(await s.memories.list('wf', 'c1'))).to.deep.equal([1, 2, 3, 4]);
    });

    it('lists the newest `limit` entries, oldest first', async () => {
      const s = ctx.store();
      await s.memories.append('wf', 'c1', msgs('m', 5), 100);
      await s.memories.append('wf', 'c1', msgs('n', 2), 100);
      const two = await s.memories.list('wf', 'c1', 2);
      expect(contents(two)).to.deep.equal(['n1', 'n2']);
      expect(seqs(two)).to.deep.equal([6, 7]);
      expect(seqs(await s.memories.list('wf', 'c1', 4))).to.deep.equal([4, 5, 6, 7]);
      expect(contents(await s.memories.list('wf', 'c1', 50))).to.deep.equal(['m1', 'm2', 'm3', 'm4', 'm5', 'n1', 'n2']);
      expect(await s.memories.list('wf', 'c1', 0)).to.deep.equal([]);
      expect(await s.memories.list('wf', 'missing', 3)).to.deep.equal([]);
    });

    it('keeps the newest `keep` entries; seqs go on increasing after trims', async () => {
      const s = ctx.store();
      await s.memories.append('wf', 'c1', msgs('a', 3), 5);
      await s.memories.append('wf', 'c1', msgs('b', 4), 5);
      const list = await s.memories.list('wf', 'c1');
      expect(seqs(list)).to.deep.equal([3, 4, 5, 6, 7]);
      expect(contents(list)).to.deep.equal(['a3', 'b1', 'b2', 'b3', 'b4']);
      const next = await s.memories.append('wf', 'c1', [msg('c1')], 2);
      expect(seqs(next)).to.deep.equal([8]);
      expect(seqs(await s.memories.list('wf', 'c1')), 'a smaller keep trims further').to.deep.equal([7, 8]);
      const over = await s.memories.append('wf', 'c1', msgs('d', 4), 3);
      expect(seqs(over), 'only what was kept is returned').to.deep.equal([10, 11, 12]);
      expect(contents(await s.memories.list('wf', 'c1'))).to.deep.equal(['d2', 'd3', 'd4']);
      expect(seqs(await s.memories.append('wf', 'c1', [msg('e')], 10))).to.deep.equal([13]);
      expect(seqs(await s.memories.list('wf', 'c1'))).to.deep.equal([10, 11, 12, 13]);
    });

    it('keeps conversations and workflows apart', async () => {
      const s = ctx.store();
      await s.memories.append('wf', 'c1', msgs('wf-c1-', 2), 10);
      await s.memories.append('wf', 'c2', msgs('wf-c2-', 3), 10);
      await s.memories.append('other', 'c1', msgs('other-c1-', 1), 10);
      await s.memories.append('wf', 'c1', [msg('wf-c1-3')], 1);
      expect(contents(await s.memories.list('wf', 'c1'))).to.deep.equal(['wf-c1-3']);
      expect(seqs(await s.memories.list('wf', 'c2')), 'a trim touches one conversation').to.deep.equal([1, 2, 3]);
      expect(contents(await s.memories.list('other', 'c1'))).to.deep.equal(['other-c1-1']);
      expect(seqs(await s.memories.append('other', 'c1', [msg('x')], 10)), 'seqs are per workflow and conversation').to.deep.equal([2]);
      expect(await s.memories.list('wf', 'c3')).to.deep.equal([]);
    });

    it('listAll returns a workflow\'s entries by conversation id then seq, at most `limit`', async () => {
      const s = ctx.store();
      await s.memories.append('wf', 'b', msgs('b', 2), 10);
      await s.memories.append('wf', 'a', msgs('a', 2), 10);
      await s.memories.append('other', 'a0', msgs('x', 2), 10);
      await s.memories.append('wf', 'c', msgs('c', 1), 10);
      await s.memories.append('wf', 'a', [msg('a3')], 10);
      const all = await s.memories.listAll('wf', 100);
      expect(all.map((e) => `${e.conversationId}:${e.seq}:${e.content}`)).to.deep.equal(['a:1:a1', 'a:2:a2', 'a:3:a3', 'b:1:b1', 'b:2:b2', 'c:1:c1']);
      expect(all[0]).to.have.keys('conversationId', 'seq', 'role', 'content', 'createdAt');
      expect((await s.memories.listAll('wf', 4)).map((e) => `${e.conversationId}:${e.seq}`), 'capped across conversations').to.deep.equal(['a:1', 'a:2', 'a:3', 'b:1']);
      expect((await s.memories.listAll('wf', 3)).map((e) => e.conversationId)).to.deep.equal(['a', 'a', 'a']);
      expect(await s.memories.listAll('wf', 0)).to.deep.equal([]);
      expect(await s.memories.listAll('none', 10)).to.deep.equal([]);
    });

    it('delete forgets a conversation and returns how many entries it had; seqs are not reused', async () => {
      const s = ctx.store();
      await s.memories.append('wf', 'c1', msgs('m', 4), 3);
      await s.memories.append('wf', 'c2', msgs('m', 2), 10);
      expect(await s.memories.delete('wf', 'c1')).to.equal(3);
      expect(await s.memories.list('wf', 'c1')).to.deep.equal([]);
      expect(await s.memories.delete('wf', 'c1')).to.equal(0);
      expect(await s.memories.delete('wf', 'never')).to.equal(0);
      expect(await s.memories.delete('other', 'c2'), 'the conversation of another workflow').to.equal(0);
      expect(seqs(await s.memories.list('wf', 'c2'))).to.deep.equal([1, 2]);
      expect(seqs(await s.memories.append('wf', 'c1', [msg('again')], 10)), 'after a delete, seqs go on').to.deep.equal([5]);
      expect((await s.memories.listAll('wf', 10)).map((e) => `${e.conversationId}:${e.seq}`)).to.deep.equal(['c1:5', 'c2:1', 'c2:2']);
    });

    it('deleteWorkflow forgets every conversation of one workflow, and so does deleting the workflow', async () => {
      const s = ctx.store();
      await s.memories.append('wf', 'c1', msgs('m', 2), 10);
      await s.memories.append('wf', 'c2', msgs('m', 3), 10);
      await s.memories.append('other', 'c1', msgs('m', 1), 10);
      expect(await s.memories.deleteWorkflow('wf')).to.equal(5);
      expect(await s.memories.listAll('wf', 10)).to.deep.equal([]);
      expect(await s.memories.deleteWorkflow('wf')).to.equal(0);
      expect(seqs(await s.memories.list('other', 'c1'))).to.deep.equal([1]);

      await s.workflows.create(workflowDef('other'));
      await s.workflows.create(workflowDef('stays'));
      await s.memories.append('stays', 'c1', msgs('m', 2), 10);
      expect(await s.workflows.delete('other')).to.equal(true);
      expect(await s.memories.listAll('other', 10)).to.deep.equal([]);
      expect(seqs(await s.memories.append('other', 'c1', [msg('new')], 10)), 'a re-created workflow starts over').to.deep.equal([1]);
      expect(seqs(await s.memories.list('stays', 'c1'))).to.deep.equal([1, 2]);
    });

    it('keeps memories across a reopen', async () => {
      const stored = await ctx.store().memories.append('wf', 'c1', msgs('m', 3), 10);
      await ctx.store().memories.append('wf', 'c1', [msg('n')], 3);
      const s = await ctx.reopen();
      const list = await s.memories.list('wf', 'c1');
      expect(list.slice(0, 2)).to.deep.equal(stored.slice(1));
      expect(seqs(list)).to.deep.equal([2, 3, 4]);
      expect(seqs(await s.memories.append('wf', 'c1', [msg('o')], 3))).to.deep.equal([5]);
    });

    it('appends concurrently without losing, sharing or interleaving seqs', async () => {
      const s = ctx.store();
      const batches = Array.from({ length: 8 }, (_, i) => [msg(`q${i}`), msg(`a${i}`, 'assistant')]);
      const results = await Promise.all(batches.map((b) => s.memories.append('wf', 'c1', b, 100)));
      for (const [i, r] of results.entries()) {
        expect(contents(r)).to.deep.equal([`q${i}`, `a${i}`]);
        expect((r[1]?.seq ?? 0) - (r[0]?.seq ?? 0), 'a batch has consecutive seqs').to.equal(1);
      }
      expect(results.flatMap(seqs).sort((a, b) => a - b)).to.deep.equal(range(1, 16));
      const list = await s.memories.list('wf', 'c1');
      expect(seqs(list)).to.deep.equal(range(1, 16));
      for (let i = 0; i < list.length; i += 2) {
        expect(list[i + 1]?.content, 'each batch stays together, in order').to.equal(`a${(list[i]?.content ?? '').slice(1)}`);
      }
    });

    it('keeps only the newest `keep` entries after concurrent appends', async () => {
      const s = ctx.store();
      await Promise.all(Array.from({ length: 8 }, (_, i) => s.memories.append('wf', 'c1', [msg(`q${i}`), msg(`a${i}`, 'assistant')], 3)));
      expect(seqs(await s.memories.list('wf', 'c1'))).to.deep.equal([14, 15, 16]);
      expect(seqs(await s.memories.listAll('wf', 100))).to.deep.equal([14, 15, 16]);
    });

    it('refuses a message with an unknown role or no content, writing nothing', async () => {
      const s = ctx.store();
      const bad = [msg('ok'), { role: 'tool', content: 'x' } as unknown as Message];
      await rejectsWith(s.memories.append('wf', 'c1', bad, 10), 'STORE_ERROR');
      await rejectsWith(s.memories.append('wf', 'c1', [{ role: 'user' } as unknown as Message], 10), 'STORE_ERROR');
      expect(await s.memories.list('wf', 'c1')).to.deep.equal([]);
      expect(seqs(await s.memories.append('wf', 'c1', [msg('first')], 10))).to.deep.equal([1]);
    });
  });
}
