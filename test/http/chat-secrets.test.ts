import { expect } from 'chai';
import { auth, makeHarness, parseSse, type Harness } from './support.js';

/** A visitor pastes a stored secret's value into a chat: the history keeps it redacted, for good. */
describe('http: chat history and secrets', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  const SECRET = 'sk-live-0123456789abcdef';

  function send(body: Record<string, unknown>) {
    return h.http.post('/api/chat/vault/messages').send(body).buffer(true).parse((res, cb) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => cb(null, text));
    });
  }

  it("stores the visitor's message with secret values as ***; the run that answers it reads it as typed", async () => {
    await h.http.put('/api/secrets/STRIPE').set(auth).send({ value: SECRET }).expect(201);
    const doc = {
      id: 'vault',
      name: 'Vault',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        // what the run computes on is true data: it can tell the key it was given is the right length
        { id: 'fn', type: 'function', name: 'Fn', config: { code: 'return `${<start.message>.length} chars; before: ${JSON.stringify(<start.history>)}`' } },
      ],
      connections: [{ from: 'start', to: 'fn' }],
    };
    await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
    await h.http.post('/api/workflows/vault/deploy').set(auth).expect(201);
    await h.http.put('/api/workflows/vault/chat').set(auth).send({ subdomain: 'vault', auth: { mode: 'public' }, branding: { title: 'Vault' } }).expect(201);

    const message = `my key is ${SECRET}`;
    const first = parseSse((await send({ message }).expect(200)).body as string);
    const { conversationId, conversationToken } = first.at(-1)?.data as { conversationId: string; conversationToken: string };
    expect((first[0]?.data as { text: string }).text).to.equal(`${message.length} chars; before: []`);
    const second = parseSse((await send({ message: 'and now?', conversationId, conversationToken }).expect(200)).body as string);
    expect((second[0]?.data as { text: string }).text).to.contain('my key is ***').and.not.contain(SECRET);

    const stored = await h.store.chats.getConversation(conversationId);
    expect(stored?.messages[0]).to.deep.include({ role: 'user', content: 'my key is ***' });
    expect(JSON.stringify(stored)).to.not.contain(SECRET);
  });
});
