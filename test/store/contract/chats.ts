import { expect } from 'chai';
import type { ChatCode, ChatDeployment, ChatMessage, ChatSession, Conversation } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { rejectsWith, workflowDef } from './context.js';

const T0 = '2024-03-01T10:00:00.000Z';
const T1 = '2024-03-01T10:05:00.000Z';
const T2 = '2024-03-01T10:10:00.000Z';

function chat(workflowId: string, subdomain: string, extra: Partial<ChatDeployment> = {}): ChatDeployment {
  return {
    workflowId,
    subdomain,
    auth: { mode: 'email', allowedEmails: ['a@example.com', '@corp.test'] },
    branding: { title: `Chat ${workflowId}`, welcomeMessage: 'Hi! $ref and dotted.keys stay as they are' },
    output: { block: 'agent', path: 'content' },
    createdAt: T0,
    updatedAt: T0,
    ...extra,
  };
}

function message(content: string, role: ChatMessage['role'] = 'user', at = T1): ChatMessage {
  return role === 'assistant' ? { role, content, at, executionId: `x-${content}` } : { role, content, at };
}

function conversation(id: string, workflowId = 'wf', messages: ChatMessage[] = []): Conversation {
  return { id, workflowId, subdomain: 'support', owner: 'a@example.com', messages, createdAt: T0, updatedAt: T0 };
}

function code(email: string, codeHash = 'h1', subdomain = 'support', client = 'c1'): ChatCode {
  return { subdomain, email, client, codeHash, expiresAt: T2, attempts: 0 };
}

function session(idHash: string, workflowId = 'wf', expiresAt = T2): ChatSession {
  return { idHash, workflowId, subdomain: 'support', email: 'a@example.com', expiresAt };
}

export function chatsContract(ctx: ContractContext): void {
  describe('chats', () => {
    it('keeps a conversation\'s token hash and replaces it; false for an unknown conversation', async () => {
      const s = ctx.store();
      await s.chats.put(chat('wf', 'support'));
      const created = await s.chats.createConversation({ ...conversation('c1'), tokenHash: 't1' });
      expect(created.tokenHash).to.equal('t1');
      expect((await s.chats.getConversation('c1'))?.tokenHash).to.equal('t1');
      expect(await s.chats.setConversationToken('c1', 't2')).to.equal(true);
      expect(await s.chats.getConversation('c1')).to.deep.equal({ ...conversation('c1'), tokenHash: 't2' });
      expect(await s.chats.setConversationToken('nope', 't2')).to.equal(false);
      await s.chats.createConversation(conversation('c2'));
      expect(await s.chats.getConversation('c2'), 'none given: none kept').to.deep.equal(conversation('c2'));
    });

    it('stores sessions by id hash, ends one on delete, drops expired ones on a put and all of a deleted chat', async () => {
      const s = ctx.store();
      await s.chats.put(chat('wf', 'support'));
      await s.chats.put(chat('other', 'sales'));
      await s.chats.putSession(session('s1', 'wf', T1), T0);
      await s.chats.putSession({ ...session('s2', 'wf'), email: null }, T0);
      await s.chats.putSession({ ...session('s3', 'other'), subdomain: 'sales' }, T0);
      expect(await s.chats.getSession('s1')).to.deep.equal(session('s1', 'wf', T1));
      expect(await s.chats.getSession('s2')).to.deep.equal({ ...session('s2', 'wf'), email: null });
      expect(await s.chats.deleteSession('s2')).to.equal(true);
      expect(await s.chats.deleteSession('s2')).to.equal(false);
      expect(await s.chats.getSession('s2')).to.equal(null);
      await s.chats.putSession(session('s4', 'wf'), T2);
      expect(await s.chats.getSession('s1'), 'expired before the put: dropped').to.equal(null);
      expect(await s.chats.getSession('s4')).to.deep.equal(session('s4', 'wf'));
      expect(await s.chats.delete('wf')).to.equal(true);
      expect(await s.chats.getSession('s4'), 'a deleted chat ends its sessions').to.equal(null);
      expect(await s.chats.getSession('s3')).to.not.equal(null);
      const reopened = await ctx.reopen();
      expect(await reopened.chats.getSession('s3'), 'sessions survive a reopen').to.deep.equal({ ...session('s3', 'other'), subdomain: 'sales' });
    });

    it('puts a chat, finds it by workflow and by subdomain, replaces it keeping createdAt', async () => {
      const s = ctx.store();
      expect(await s.chats.getByWorkflow('wf')).to.equal(null);
      expect(await s.chats.getBySubdomain('support')).to.equal(null);
      const first = await s.chats.put(chat('wf', 'support'));
      expect(first).to.deep.equal({ chat: chat('wf', 'support'), created: true });
      expect(await s.chats.getByWorkflow('wf')).to.deep.equal(chat('wf', 'support'));
      expect(await s.chats.getBySubdomain('support')).to.deep.equal(chat('wf', 'support'));
      const next = chat('wf', 'help', { auth: { mode: 'password', passwordHash: 'scrypt$s$h' }, branding: { title: 'Help' }, createdAt: T2, updatedAt: T2 });
      delete next.output;
      const replaced = await s.chats.put(next);
      expect(replaced.created).to.equal(false);
      expect(replaced.chat, 'createdAt kept, the rest replaced').to.deep.equal({ ...next, createdAt: T0 });
      expect(await s.chats.getByWorkflow('wf')).to.deep.equal({ ...next, createdAt: T0 });
      expect(await s.chats.getBySubdomain('support'), 'its old subdomain is free').to.equal(null);
      expect((await s.chats.getBySubdomain('help'))?.workflowId).to.equal('wf');
    });

    it('refuses a subdomain another workflow holds (CONFLICT, nothing written)', async () => {
      const s = ctx.store();
      await s.chats.put(chat('wf', 'support'));
      const err = await rejectsWith(s.chats.put(chat('other', 'support')), 'CONFLICT');
      expect(err.details).to.deep.include({ subdomain: 'support' });
      expect(await s.chats.getByWorkflow('other'), 'nothing of a refused put is written').to.equal(null);
      await s.chats.put(chat('other', 'sales'));
      await rejectsWith(s.chats.put(chat('other', 'support', { updatedAt: T1 })), 'CONFLICT');
      expect(await s.chats.getByWorkflow('other'), 'a refused replace keeps the chat as it was').to.deep.equal(chat('other', 'sales'));
      expect((await s.chats.getBySubdomain('support'))?.workflowId).to.equal('wf');
      expect(await s.chats.delete('wf')).to.equal(true);
      expect((await s.chats.put(chat('other', 'support'))).created, 'a freed subdomain can be taken').to.equal(false);
    });

    it('creates conversations, refuses a duplicate id, appends messages in order', async () => {
      const s = ctx.store();
      const created = await s.chats.createConversation(conversation('c1', 'wf', [message('hello')]));
      expect(created).to.deep.equal(conversation('c1', 'wf', [message('hello')]));
      const err = await rejectsWith(s.chats.createConversation(conversation('c1')), 'CONFLICT');
      expect(err.details).to.deep.include({ id: 'c1' });
      expect(await s.chats.getConversation('missing')).to.equal(null);
      expect(await s.chats.appendMessages('c1', [message('hi there', 'assistant'), message('thanks', 'user', T2)], T2)).to.equal(true);
      expect(await s.chats.appendMessages('c1', [message('you are welcome', 'assistant', T2)], T2)).to.equal(true);
      expect(await s.chats.getConversation('c1')).to.deep.equal({
        ...conversation('c1'),
        messages: [message('hello'), message('hi there', 'assistant'), message('thanks', 'user', T2), message('you are welcome', 'assistant', T2)],
        updatedAt: T2,
      });
      expect(await s.chats.appendMessages('missing', [message('x')], T2)).to.equal(false);
      expect(await s.chats.getConversation('missing'), 'an append to nothing creates nothing').to.equal(null);
    });

    it('appends concurrently without losing or interleaving a batch', async () => {
      const s = ctx.store();
      await s.chats.createConversation(conversation('c1'));
      const batches = Array.from({ length: 8 }, (_, i) => [message(`q${i}`), message(`a${i}`, 'assistant')]);
      const results = await Promise.all(batches.map((b) => s.chats.appendMessages('c1', b, T1)));
      expect(results.every((r) => r)).to.equal(true);
      const contents = (await s.chats.getConversation('c1'))?.messages.map((m) => m.content) ?? [];
      expect(contents).to.have.length(16);
      for (let i = 0; i < contents.length; i += 2) {
        expect(contents[i + 1], 'each batch stays together, in order').to.equal(`a${(contents[i] ?? '').slice(1)}`);
      }
    });

    it('keeps one sign-in code per subdomain and email, counts attempts, deletes it', async () => {
      const s = ctx.store();
      await s.chats.put(chat('wf', 'support'));
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.equal(null);
      expect(await s.chats.countAttempt('support', 'a@example.com', 'c1'), 'no code: 0').to.equal(0);
      expect(await s.chats.getCode('support', 'a@example.com', 'c1'), 'counting creates nothing').to.equal(null);
      await s.chats.putCode(code('a@example.com'));
      await s.chats.putCode(code('b@example.com', 'hb'));
      expect(await s.chats.countAttempt('support', 'a@example.com', 'c1')).to.equal(1);
      expect(await s.chats.countAttempt('support', 'a@example.com', 'c1')).to.equal(2);
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.deep.equal({ ...code('a@example.com'), attempts: 2 });
      await s.chats.putCode(code('a@example.com', 'h2'));
      expect(await s.chats.getCode('support', 'a@example.com', 'c1'), 'a new code replaces the earlier one').to.deep.equal(code('a@example.com', 'h2'));
      expect(await s.chats.getCode('other', 'a@example.com', 'c1'), 'codes are per subdomain').to.equal(null);
      await s.chats.putCode(code('a@example.com', 'h3', 'support', 'c2'));
      expect(await s.chats.getCode('support', 'a@example.com', 'c2'), 'and per client').to.deep.equal(code('a@example.com', 'h3', 'support', 'c2'));
      expect(await s.chats.countAttempt('support', 'a@example.com', 'c2')).to.equal(1);
      expect(await s.chats.getCode('support', 'a@example.com', 'c1'), 'another client\'s code is untouched').to.deep.equal(code('a@example.com', 'h2'));
      await s.chats.deleteCode('support', 'a@example.com', 'c2');
      await s.chats.deleteCode('support', 'a@example.com', 'c1');
      await s.chats.deleteCode('support', 'a@example.com', 'c1');
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.equal(null);
      expect(await s.chats.getCode('support', 'b@example.com', 'c1')).to.deep.equal(code('b@example.com', 'hb'));
    });

    it('deletes a chat with its conversations and codes; false when there was none', async () => {
      const s = ctx.store();
      await s.chats.put(chat('wf', 'support'));
      await s.chats.put(chat('other', 'sales'));
      await s.chats.createConversation(conversation('c1', 'wf', [message('hello')]));
      await s.chats.createConversation({ ...conversation('c2', 'other'), subdomain: 'sales' });
      await s.chats.putCode(code('a@example.com'));
      await s.chats.putCode(code('a@example.com', 'h', 'sales'));
      expect(await s.chats.delete('wf')).to.equal(true);
      expect(await s.chats.delete('wf')).to.equal(false);
      expect(await s.chats.delete('never')).to.equal(false);
      expect(await s.chats.getByWorkflow('wf')).to.equal(null);
      expect(await s.chats.getBySubdomain('support')).to.equal(null);
      expect(await s.chats.getConversation('c1')).to.equal(null);
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.equal(null);
      expect(await s.chats.getByWorkflow('other'), 'other chats are untouched').to.not.equal(null);
      expect(await s.chats.getConversation('c2')).to.not.equal(null);
      expect(await s.chats.getCode('sales', 'a@example.com', 'c1')).to.not.equal(null);
      await s.chats.createConversation(conversation('c1'));
      expect((await s.chats.getConversation('c1'))?.messages, 'a reused id starts empty').to.deep.equal([]);
    });

    it('drops the codes of a subdomain a chat leaves, so they never sign in to the next holder', async () => {
      const s = ctx.store();
      await s.chats.put(chat('wf', 'support'));
      await s.chats.putCode(code('a@example.com'));
      await s.chats.put(chat('wf', 'help'));
      await s.chats.put(chat('other', 'support'));
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.equal(null);
    });

    it('keeps chats, conversations and codes across a reopen; deleting the workflow removes them', async () => {
      await ctx.store().workflows.create(workflowDef('wf'));
      await ctx.store().chats.put(chat('wf', 'support'));
      await ctx.store().chats.createConversation(conversation('c1', 'wf', [message('hello')]));
      await ctx.store().chats.appendMessages('c1', [message('hi', 'assistant')], T1);
      await ctx.store().chats.putCode(code('a@example.com'));
      await ctx.store().chats.countAttempt('support', 'a@example.com', 'c1');
      await ctx.store().chats.putSession(session('s1'), T0);
      const s = await ctx.reopen();
      expect(await s.chats.getBySubdomain('support')).to.deep.equal(chat('wf', 'support'));
      expect(await s.chats.getConversation('c1')).to.deep.equal({ ...conversation('c1', 'wf', [message('hello'), message('hi', 'assistant')]), updatedAt: T1 });
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.deep.equal({ ...code('a@example.com'), attempts: 1 });
      expect(await s.workflows.delete('wf')).to.equal(true);
      expect(await s.chats.getByWorkflow('wf')).to.equal(null);
      expect(await s.chats.getBySubdomain('support')).to.equal(null);
      expect(await s.chats.getConversation('c1')).to.equal(null);
      expect(await s.chats.getCode('support', 'a@example.com', 'c1')).to.equal(null);
      expect(await s.chats.getSession('s1')).to.equal(null);
      expect((await s.chats.put(chat('next', 'support'))).created, 'the subdomain is free again').to.equal(true);
    });
  });
}
