/**
 * A retried chat message (its client's messageId sent again, e.g. after a lost connection) is
 * the same turn: it answers with the turn it began and stores nothing twice; the messages of one
 * conversation are answered one at a time, in arrival order (its session actor).
 */
import { expect } from 'chai';
import { auth, makeHarness, type Harness } from './support.js';

function parseDone(text: string): any {
  const data = /event: done\ndata: (.*)\n/.exec(text)?.[1];
  return data === undefined ? null : JSON.parse(data);
}

describe('http: chat retries and turn order', () => {
  let h: Harness;
  beforeEach(async () => {
    h = makeHarness({});
    const wf = {
      id: 'r', name: 'Retry',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'echo', type: 'function', name: 'Echo', config: { code: 'return `echo: ${<start.message>} (${<start.history>.length})`;' } },
      ],
      connections: [{ from: 'start', to: 'echo' }],
    };
    await h.http.post('/api/workflows').set(auth).send(wf).expect(201);
    await h.http.post('/api/workflows/r/deploy').set(auth).expect(201);
    await h.http.put('/api/workflows/r/chat').set(auth).send({ subdomain: 'retry', auth: { mode: 'public' }, branding: { title: 'R' } }).expect(201);
  });
  afterEach(() => h.close());

  function send(body: Record<string, unknown>) {
    return h.http.post('/api/chat/retry/messages').send(body).buffer(true).parse((res, cb) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => cb(null, text));
    });
  }

  it('answers a repeated messageId with the turn it began, storing it once', async () => {
    const first = parseDone((await send({ message: 'one', messageId: 'a1' }).expect(200)).body);
    const more = { conversationId: first.conversationId, conversationToken: first.conversationToken };
    const again = parseDone((await send({ message: 'one', messageId: 'a1', ...more }).expect(200)).body);
    expect(again.executionId).to.equal(first.executionId);
    expect(again.output.result).to.equal('echo: one (0)');
    const second = parseDone((await send({ message: 'two', messageId: 'a2', ...more }).expect(200)).body);
    expect(second.executionId).to.not.equal(first.executionId);
    // without its token a retry sees nothing of the conversation
    const foreign = await send({ message: 'one', messageId: 'a1', conversationId: first.conversationId });
    expect(foreign.status).to.equal(403);
    const stored = await h.store.chats.getConversation(first.conversationId);
    expect(stored?.messages.map((m) => [m.role, m.content])).to.deep.equal([
      ['user', 'one'], ['assistant', 'echo: one (0)'], ['user', 'two'], ['assistant', 'echo: two (2)'],
    ]);
  });

  it('answers the messages of one conversation one at a time, in arrival order', async () => {
    const first = parseDone((await send({ message: 'm0' }).expect(200)).body);
    const more = { conversationId: first.conversationId, conversationToken: first.conversationToken };
    const answers = await Promise.all([1, 2, 3, 4].map((i) => send({ message: `m${i}`, ...more }).expect(200)));
    const outputs = answers.map((a) => parseDone(a.body).output.result);
    // whatever order they arrived in, each saw the turns before it answered
    expect(outputs.map((o: string) => /\((\d+)\)$/.exec(o)?.[1]).sort()).to.deep.equal(['2', '4', '6', '8']);
    const stored = await h.store.chats.getConversation(first.conversationId);
    const roles = stored?.messages.map((m) => m.role);
    expect(roles).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    // each answer saw every earlier turn: the history grew by two each time
    expect(stored?.messages.filter((m) => m.role === 'assistant').map((m) => /\((\d+)\)$/.exec(m.content)?.[1])).to.deep.equal(['0', '2', '4', '6', '8']);
  });
});
