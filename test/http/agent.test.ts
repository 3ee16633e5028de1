/** The agent block through the real app: streamed tokens on execute and in a chat, with memory. */
import { expect } from 'chai';
import { useMockLlm } from '../helpers/mock-llm.js';
import { auth, deployed, makeHarness, readSse, type Harness } from './support.js';

describe('http: agent blocks', function () {
  this.timeout(15_000);
  let h: Harness;
  const llm = useMockLlm();
  beforeEach(async () => {
    h = makeHarness();
    await h.http.put('/api/secrets/LLM_KEY').set(auth).send({ value: 'sk-live-abcdef' }).expect(201);
  });
  afterEach(() => h.close());

  const workflow = (id: string, agent: Record<string, unknown>): Record<string, unknown> => ({
    id,
    name: id,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'ask', type: 'agent', name: 'Ask', config: { model: 'gpt-test', baseUrl: llm.openaiUrl, apiKey: '{{LLM_KEY}}', ...agent } },
    ],
    connections: [{ from: 'start', to: 'ask' }],
  });

  it('execute in stream mode sends each token as event: chunk, then done with the answer', async () => {
    llm.script({ pieces: ['Bonjour ', 'Lyon'], pieceDelayMs: 5 });
    const { key } = await deployed(h, workflow('greet', { userPrompt: 'Greet <start.city>' }));
    const { events } = await readSse(h.http.post('/api/workflows/greet/execute').set('X-API-Key', key).send({ input: { city: 'Lyon' }, stream: true }));
    const chunks = events.filter((e) => e.event === 'chunk').map((e) => e.data as { blockId: string; text: string });
    expect(chunks).to.deep.equal([{ blockId: 'ask', text: 'Bonjour ', iteration: null }, { blockId: 'ask', text: 'Lyon', iteration: null }]);
    const done = events.at(-1)!;
    expect(done.event).to.equal('done');
    expect(done.data).to.deep.include({ success: true });
    expect((done.data as { output: { content: string } }).output.content).to.equal('Bonjour Lyon');
    const record = await h.http.get(`/api/executions/${(done.data as { executionId: string }).executionId}`).set(auth).expect(200);
    expect(JSON.stringify(record.body)).not.to.contain('sk-live-abcdef');
    expect(llm.requests[0]!.headers['authorization']).to.equal('Bearer sk-live-abcdef');
  });

  it('a chat with an agent streams its tokens and remembers the conversation (memory: true)', async () => {
    await h.http.post('/api/workflows').set(auth).send(workflow('bot', { userPrompt: '<start.message>', memory: true })).expect(201);
    await h.http.post('/api/workflows/bot/deploy').set(auth).expect(201);
    await h.http.put('/api/workflows/bot/chat').set(auth).send({ subdomain: 'bot', auth: { mode: 'public' }, branding: { title: 'Bot' } }).expect(201);
    const first = await readSse(h.http.post('/api/chat/bot/messages').send({ message: 'I am Ada' }));
    expect(first.events.filter((e) => e.event === 'chunk').map((e) => (e.data as { text: string }).text).join('')).to.equal('echo: I am Ada');
    const done = first.events.at(-1)!.data as { conversationId: string; conversationToken: string };
    const second = await readSse(h.http.post('/api/chat/bot/messages')
      .send({ message: 'who am I?', conversationId: done.conversationId, conversationToken: done.conversationToken }));
    expect(second.events.at(-1)!.event).to.equal('done');
    expect(llm.requests[1]!.body['messages']).to.deep.equal([
      { role: 'user', content: 'I am Ada' },
      { role: 'assistant', content: 'echo: I am Ada' },
      { role: 'user', content: 'who am I?' },
    ]);
    const remembered = await h.store.memories.list('bot', done.conversationId);
    expect(remembered.map((m) => m.content)).to.deep.equal(['I am Ada', 'echo: I am Ada', 'who am I?', 'echo: who am I?']);
  });

  it('saving a workflow checks agent and memory configs (422 with the paths)', async () => {
    const bad = {
      id: 'bad',
      name: 'bad',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'ask', type: 'agent', name: 'Ask', config: { userPrompt: 'hi' } },
        { id: 'mem', type: 'memory', name: 'Mem', config: { operation: 'remember' } },
      ],
      connections: [{ from: 'start', to: 'ask' }, { from: 'ask', to: 'mem' }],
    };
    const res = await h.http.post('/api/workflows').set(auth).send(bad).expect(422);
    const paths = JSON.stringify(res.body.error.details);
    expect(paths).to.contain('/blocks/1/config/model');
    expect(paths).to.contain('/blocks/2/config/operation');
  });
});
