import { expect } from 'chai';
import type { ApiKeyRecord } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { rejectsWith } from './context.js';

function key(id: string, workflowId: string, hashChar: string, createdAt: string): ApiKeyRecord {
  return { id, workflowId, prefix: `trp_${hashChar.repeat(4)}`, hash: hashChar.repeat(64), createdAt, revokedAt: null };
}

export function keysAndSecretsContract(ctx: ContractContext): void {
  describe('API keys', () => {
    it('creates, finds by hash and lists by workflow oldest first', async () => {
      const s = ctx.store();
      const a = await s.apiKeys.create(key('ka', 'wf', 'a', '2024-03-01T00:00:02.000Z'));
      await s.apiKeys.create(key('kb', 'wf', 'b', '2024-03-01T00:00:01.000Z'));
      await s.apiKeys.create(key('kc', 'other', 'c', '2024-03-01T00:00:00.000Z'));
      expect(a).to.deep.include({ id: 'ka', workflowId: 'wf', prefix: 'trp_aaaa', hash: 'a'.repeat(64), revokedAt: null });
      expect(await s.apiKeys.findByHash('a'.repeat(64))).to.deep.include({ id: 'ka', workflowId: 'wf' });
      expect(await s.apiKeys.findByHash('f'.repeat(64))).to.equal(null);
      expect((await s.apiKeys.listByWorkflow('wf')).map((k) => k.id)).to.deep.equal(['kb', 'ka']);
      expect(await s.apiKeys.listByWorkflow('none')).to.deep.equal([]);
    });

    it('refuses a duplicate id or hash (CONFLICT)', async () => {
      const s = ctx.store();
      await s.apiKeys.create(key('k1', 'wf', 'a', ctx.clock.iso()));
      await rejectsWith(s.apiKeys.create(key('k1', 'wf', 'b', ctx.clock.iso())), 'CONFLICT');
      await rejectsWith(s.apiKeys.create(key('k2', 'wf', 'a', ctx.clock.iso())), 'CONFLICT');
      expect((await s.apiKeys.listByWorkflow('wf')).map((k) => k.id)).to.deep.equal(['k1']);
    });

    it('revokes only within its workflow, keeps the first revocation time, still findable', async () => {
      const s = ctx.store();
      await s.apiKeys.create(key('k1', 'wf', 'a', ctx.clock.iso()));
      expect(await s.apiKeys.revoke('other', 'k1', '2024-04-01T00:00:00.000Z'), 'key of another workflow').to.equal(false);
      expect(await s.apiKeys.revoke('wf', 'missing')).to.equal(false);
      expect((await s.apiKeys.findByHash('a'.repeat(64)))?.revokedAt).to.equal(null);
      expect(await s.apiKeys.revoke('wf', 'k1', '2024-04-01T00:00:00.000Z')).to.equal(true);
      expect(await s.apiKeys.revoke('wf', 'k1', '2024-05-01T00:00:00.000Z')).to.equal(true);
      const found = await s.apiKeys.findByHash('a'.repeat(64));
      expect(found?.revokedAt).to.equal('2024-04-01T00:00:00.000Z');
      expect((await s.apiKeys.listByWorkflow('wf'))[0]?.revokedAt).to.equal('2024-04-01T00:00:00.000Z');
    });

    it('records last use and deletes all keys of a workflow', async () => {
      const s = ctx.store();
      await s.apiKeys.create(key('k1', 'wf', 'a', ctx.clock.iso()));
      await s.apiKeys.create(key('k2', 'wf', 'b', ctx.clock.iso()));
      await s.apiKeys.create(key('k3', 'keep', 'c', ctx.clock.iso()));
      await s.apiKeys.markUsed('k1', '2024-06-01T12:00:00.000Z');
      expect((await s.apiKeys.findByHash('a'.repeat(64)))?.lastUsedAt).to.equal('2024-06-01T12:00:00.000Z');
      expect(await s.apiKeys.deleteByWorkflow('wf')).to.equal(2);
      expect(await s.apiKeys.deleteByWorkflow('wf')).to.equal(0);
      expect(await s.apiKeys.findByHash('b'.repeat(64))).to.equal(null);
      expect(await s.apiKeys.findByHash('c'.repeat(64))).to.not.equal(null);
    });
  });

  describe('secrets', () => {
    it('puts, overwrites, gets and deletes ciphertexts', async () => {
      const s = ctx.store();
      expect(await s.secrets.get('TOKEN')).to.equal(null);
      await s.secrets.put('TOKEN', 'v1.cipher-one');
      expect(await s.secrets.get('TOKEN')).to.equal('v1.cipher-one');
      await s.secrets.put('TOKEN', 'v1.cipher-two');
      expect(await s.secrets.get('TOKEN')).to.equal('v1.cipher-two');
      expect(await s.secrets.delete('TOKEN')).to.equal(true);
      expect(await s.secrets.delete('TOKEN')).to.equal(false);
      expect(await s.secrets.get('TOKEN')).to.equal(null);
    });

    it('lists names and update times only, by name, never values', async () => {
      const s = ctx.store();
      await s.secrets.put('ZETA', 'v1.zzz-cipher');
      await s.secrets.put('ALPHA', 'v1.aaa-cipher');
      const listed = await s.secrets.list();
      expect(listed.map((x) => x.name)).to.deep.equal(['ALPHA', 'ZETA']);
      for (const item of listed) {
        expect(Object.keys(item).sort()).to.deep.equal(['name', 'updatedAt']);
        expect(Number.isNaN(Date.parse(item.updatedAt))).to.equal(false);
      }
      expect(JSON.stringify(listed)).to.not.include('cipher');
    });
  });
}
