import { expect } from 'chai';
import { createModelClient } from '../../src/providers/index.js';
import type { ModelRequest, ProviderName } from '../../src/providers/types.js';
import { TroupeError } from '../../src/errors.js';
import { useMockLlm } from '../helpers/mock-llm.js';

describe('model providers against a scripted server', function () {
  this.timeout(15_000);
  const llm = useMockLlm();
  const client = createModelClient({ allowPrivateNetwork: true, allowHosts: [] });
  const signal = new AbortController().signal;
  after(() => client.close());

  const request = (provider: ProviderName, extra: Partial<ModelRequest> = {}): ModelRequest => ({
    provider,
    baseUrl: provider === 'openai' ? llm.openaiUrl : llm.anthropicUrl,
    apiKey: 'sk-test',
    model: provider === 'openai' ? 'gpt-test' : 'claude-test',
    system: 'be brief',
    messages: [{ role: 'user', content: 'hello' }],
    timeoutMs: 5000,
    retries: 2,
    ...extra,
  });

  for (const provider of ['openai', 'anthropic'] as const) {
    describe(provider, () => {
      it('answers a whole (non-streamed) call with content, model and tokens', async () => {
        llm.script({ text: 'hi there' });
        const answer = await client.complete(request(provider), signal);
        expect(answer.content).to.equal('hi there');
        expect(answer.model).to.match(/-served$/);
        expect(answer.tokens).to.deep.equal({ prompt: 11, completion: 7, total: 18 });
        expect(answer.toolCalls).to.deep.equal([]);
        const seen = llm.requests[0]!;
        if (provider === 'openai') {
          expect(seen.path).to.equal('/v1/chat/completions');
          expect(seen.headers['authorization']).to.equal('Bearer sk-test');
          expect(seen.body['messages']).to.deep.equal([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }]);
        } else {
          expect(seen.path).to.equal('/v1/messages');
          expect(seen.headers['x-api-key']).to.equal('sk-test');
          expect(seen.headers['anthropic-version']).to.equal('2023-06-01');
          expect(seen.body['system']).to.equal('be brief');
          expect(seen.body['max_tokens']).to.equal(4096);
        }
      });

      it('streams tokens in order and gathers the whole text and the usage', async () => {
        llm.script({ pieces: ['one ', 'two ', 'three'] });
        const tokens: string[] = [];
        const answer = await client.complete(request(provider), signal, (t) => tokens.push(t));
        expect(tokens).to.deep.equal(['one ', 'two ', 'three']);
        expect(answer.content).to.equal('one two three');
        expect(answer.tokens.total).to.equal(18);
        expect(llm.requests[0]!.body['stream']).to.equal(true);
      });

      it('assembles tool calls streamed in pieces', async () => {
        llm.script({ toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo', days: 3 } }] });
        const answer = await client.complete(request(provider, { tools: [{ name: 'lookup', parameters: { type: 'object' } }] }), signal, () => undefined);
        expect(answer.toolCalls).to.have.length(1);
        expect(answer.toolCalls[0]).to.include({ name: 'lookup' });
        expect(answer.toolCalls[0]!.arguments).to.deep.equal({ city: 'Oslo', days: 3 });
      });

      it('asks for structured output in the provider\'s way', async () => {
        const schema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
        if (provider === 'openai') llm.script({ text: '{"n":4}' });
        else llm.script({ toolCalls: [{ name: 'result', arguments: { n: 4 } }] });
        const answer = await client.complete(request(provider, { responseSchema: { name: 'result', schema } }), signal);
        expect(JSON.parse(answer.content)).to.deep.equal({ n: 4 });
        expect(answer.toolCalls).to.deep.equal([]);
        const body = llm.requests[0]!.body;
        if (provider === 'openai') expect(body['response_format']).to.deep.equal({ type: 'json_schema', json_schema: { name: 'result', schema } });
        else expect(body['tool_choice']).to.deep.equal({ type: 'tool', name: 'result' });
      });

      it('retries a 429 (honouring Retry-After) and a 5xx, then answers', async () => {
        llm.script({ status: 429, headers: { 'retry-after': '0' } }, { status: 503 }, { text: 'finally' });
        const answer = await client.complete(request(provider), signal);
        expect(answer.content).to.equal('finally');
        expect(llm.requests).to.have.length(3);
      });

      it('fails a 401 at once with MODEL_ERROR and the provider\'s message', async () => {
        llm.script({ status: 401, errorMessage: 'bad key' });
        const err = await client.complete(request(provider), signal).then(() => null, (e: unknown) => e);
        expect(err).to.be.instanceOf(TroupeError);
        expect((err as TroupeError).code).to.equal('MODEL_ERROR');
        expect((err as TroupeError).message).to.contain('401').and.contain('bad key');
        expect(llm.requests).to.have.length(1);
      });
    });
  }

  it('gives up after the retries with the last error', async () => {
    llm.script({ status: 500 }, { status: 500 }, { status: 500 });
    const err = (await client.complete(request('openai', { retries: 1 }), signal).catch((e: unknown) => e)) as TroupeError;
    expect(err.code).to.equal('MODEL_ERROR');
    expect(llm.requests).to.have.length(2);
  });

  it('times out a call that does not answer (HTTP_TIMEOUT)', async () => {
    llm.script({ text: 'late', delayMs: 1500 });
    const err = (await client.complete(request('openai', { timeoutMs: 200, retries: 0 }), signal).catch((e: unknown) => e)) as TroupeError;
    expect(err.code).to.equal('HTTP_TIMEOUT');
  });

  it('does not retry a stream that broke off after tokens went out', async () => {
    llm.script({ pieces: ['a ', 'b ', 'c'], pieceDelayMs: 300 }, { text: 'second try' });
    const tokens: string[] = [];
    const err = (await client.complete(request('openai', { timeoutMs: 450, retries: 2 }), signal, (t) => tokens.push(t)).catch((e: unknown) => e)) as TroupeError;
    expect(err.code).to.equal('HTTP_TIMEOUT');
    expect(tokens.length).to.be.greaterThan(0);
    expect(llm.requests).to.have.length(1);
  });

  it('stops a call when its signal is aborted (CANCELLED)', async () => {
    llm.script({ text: 'slow', delayMs: 2000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = (await client.complete(request('anthropic'), controller.signal).catch((e: unknown) => e)) as TroupeError;
    expect(err.code).to.equal('CANCELLED');
  });

  it('refuses a loopback base URL unless private networks are allowed (BLOCKED_ADDRESS)', async () => {
    const strict = createModelClient({ allowPrivateNetwork: false, allowHosts: [] });
    try {
      const err = (await strict.complete(request('openai', { baseUrl: llm.openaiUrl.replace('127.0.0.1', 'localhost') }), signal).catch((e: unknown) => e)) as TroupeError;
      expect(err.code).to.equal('BLOCKED_ADDRESS');
      const literal = (await strict.complete(request('anthropic'), signal).catch((e: unknown) => e)) as TroupeError;
      expect(literal.code).to.equal('BLOCKED_ADDRESS');
      expect(llm.requests).to.have.length(0);
    } finally {
      strict.close();
    }
  });
});

describe('model providers: what real servers do', function () {
  this.timeout(15_000);
  const llm = useMockLlm();
  const client = createModelClient({ allowPrivateNetwork: true, allowHosts: [] });
  const signal = new AbortController().signal;
  after(() => client.close());
  const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
    provider: 'openai', baseUrl: llm.openaiUrl, model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], timeoutMs: 5000, retries: 2, ...extra,
  });

  it('keeps tool calls apart when a server streams each whole at index 0 (Ollama)', async () => {
    llm.script({ toolCalls: [{ name: 'w', arguments: { p: 'x' } }, { name: 'w', arguments: { p: 'y' } }], sameIndex: true });
    const answer = await client.complete(request(), signal, () => undefined);
    expect(answer.toolCalls.map((c) => [c.id, c.name, c.arguments])).to.deep.equal([['call_0', 'w', { p: 'x' }], ['call_1', 'w', { p: 'y' }]]);
  });

  it('retries a call whose connection dropped after the headers, before any token', async () => {
    llm.script({ resetAfterHeaders: true }, { pieces: ['fine'] }, { resetAfterHeaders: true }, { text: 'whole' });
    expect((await client.complete(request(), signal, () => undefined)).content).to.equal('fine');
    expect((await client.complete(request(), signal)).content).to.equal('whole');
    expect(llm.requests).to.have.length(4);
  });

  it('reports an error event inside a stream with the provider\'s message', async () => {
    llm.script({ pieces: ['so far '], streamError: 'server overloaded' });
    const err = (await client.complete(request(), signal, () => undefined).catch((e: unknown) => e)) as TroupeError;
    expect(err.code).to.equal('MODEL_ERROR');
    expect(err.message).to.contain('server overloaded');
    expect(err.details).to.deep.include({ attempts: 1 });
  });

  it('reuses its connection across streamed calls', async () => {
    const before = llm.connections();
    for (let i = 0; i < 3; i++) llm.script({ pieces: ['a ', 'b'] });
    for (let i = 0; i < 3; i++) await client.complete(request(), signal, () => undefined);
    expect(llm.connections() - before).to.be.at.most(1);
  });
});

describe('model providers: process defaults (OPENAI_* / ANTHROPIC_* variables)', function () {
  this.timeout(15_000);
  const llm = useMockLlm();
  let client: ReturnType<typeof createModelClient>;
  const signal = new AbortController().signal;
  before(() => {
    client = createModelClient({
      allowPrivateNetwork: true,
      allowHosts: [],
      defaults: { openai: { apiKey: 'sk-process-key', baseUrl: llm.openaiUrl }, anthropic: { apiKey: 'sk-ant-process', baseUrl: llm.anthropicUrl } },
    });
  });
  after(() => client.close());
  const base = { messages: [{ role: 'user' as const, content: 'hi' }], timeoutMs: 5000, retries: 0 };

  it('a request naming no server goes to the default one with the process key', async () => {
    await client.complete({ ...base, provider: 'openai', model: 'gpt-test' }, signal);
    await client.complete({ ...base, provider: 'anthropic', model: 'claude-test' }, signal);
    expect(llm.requests[0]!.headers['authorization']).to.equal('Bearer sk-process-key');
    expect(llm.requests[1]!.headers['x-api-key']).to.equal('sk-ant-process');
  });

  it('a request naming its own server never gets the process key', async () => {
    await client.complete({ ...base, provider: 'openai', model: 'gpt-test', baseUrl: llm.openaiUrl }, signal);
    expect(llm.requests[0]!.headers['authorization']).to.equal(undefined);
  });

  it('hides the key in a provider error that quotes it', async () => {
    llm.script({ status: 401, errorMessage: 'Incorrect API key provided: sk-process-key.' });
    const err = (await client.complete({ ...base, provider: 'openai', model: 'gpt-test' }, signal).catch((e: unknown) => e)) as TroupeError;
    expect(err.message).to.contain('Incorrect API key provided: ***.');
    expect(err.message).not.to.contain('sk-process-key');
  });
});

describe('model providers: a call to the providers\' own APIs without a key', function () {
  const looked: string[] = [];
  // a lookup that never answers a real address: nothing may leave the machine in a test
  const client = createModelClient({
    allowPrivateNetwork: false,
    allowHosts: [],
    lookup: (host) => {
      looked.push(host);
      return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    },
  });
  const signal = new AbortController().signal;
  after(() => client.close());
  beforeEach(() => {
    looked.length = 0;
  });
  const base = { messages: [{ role: 'user' as const, content: 'hi' }], timeoutMs: 5000, retries: 0 };

  it('fails with MISSING_SECRET before sending, naming how to give one', async () => {
    for (const [provider, model, variable] of [['openai', 'gpt-test', 'OPENAI_API_KEY'], ['anthropic', 'claude-test', 'ANTHROPIC_API_KEY']] as const) {
      const err = (await client.complete({ ...base, provider, model }, signal).catch((e: unknown) => e)) as TroupeError;
      expect(err.code).to.equal('MISSING_SECRET');
      expect(err.message).to.contain(variable).and.contain('apiKey');
    }
    const named = (await client.complete({ ...base, provider: 'openai', model: 'gpt-test', baseUrl: 'https://API.openai.com/v1/' }, signal).catch((e: unknown) => e)) as TroupeError;
    expect(named.code).to.equal('MISSING_SECRET');
    expect(looked).to.deep.equal([]);
  });

  it('still calls a server of one\'s own without a key (local models need none)', async () => {
    const err = (await client.complete({ ...base, provider: 'openai', model: 'llama', baseUrl: 'http://ollama.invalid:11434/v1' }, signal).catch((e: unknown) => e)) as TroupeError;
    expect(err.code).not.to.equal('MISSING_SECRET');
    expect(looked).to.deep.equal(['ollama.invalid']);
  });
});
