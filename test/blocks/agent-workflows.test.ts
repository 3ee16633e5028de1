/** Agent, memory and llm-router blocks run through the engine against a scripted model server. */
import { expect } from 'chai';
import { useAgentRuntime } from '../helpers/agent-runtime.js';
import { useMockLlm } from '../helpers/mock-llm.js';
import { runWorkflow, statusesByName, wf } from '../helpers/runtime.js';

describe('agent, memory and llm router blocks in workflows', function () {
  this.timeout(20_000);
  const llm = useMockLlm();
  const rt = useAgentRuntime({ secrets: { LLM_KEY: 'sk-secret-123' } });

  const agent = (config: Record<string, unknown>): Record<string, unknown> => ({ model: 'gpt-test', baseUrl: llm.openaiUrl, apiKey: '{{LLM_KEY}}', ...config });

  it('answers with content, model, tokens and toolCalls, streams chunks, and hides the key', async () => {
    llm.script({ pieces: ['Hello ', 'Ada'] });
    const doc = wf([['start', 'starter'], ['ask', 'agent', agent({ systemPrompt: 'greet', userPrompt: 'Greet <start.name>' })]], [['start', 'ask']]);
    const { result, events } = await runWorkflow(rt.engine, doc, { name: 'Ada' });
    expect(result.status).to.equal('completed');
    expect(result.output).to.deep.equal({ content: 'Hello Ada', model: 'gpt-test-served', tokens: { prompt: 11, completion: 7, total: 18 }, toolCalls: [] });
    expect(events.filter((e) => e.type === 'chunk').map((e) => (e.data as { text: string }).text)).to.deep.equal(['Hello ', 'Ada']);
    const sent = llm.requests[0]!;
    expect(sent.headers['authorization']).to.equal('Bearer sk-secret-123');
    expect(sent.body['messages']).to.deep.equal([{ role: 'system', content: 'greet' }, { role: 'user', content: 'Greet Ada' }]);
    expect(JSON.stringify(events)).not.to.contain('sk-secret-123');
  });

  it('adds the fields of a structured response and fails one that does not match (INVALID_MODEL_OUTPUT)', async () => {
    const responseFormat = { type: 'object', properties: { sentiment: { type: 'string' }, score: { type: 'number' } }, required: ['sentiment', 'score'] };
    llm.script({ text: '{"sentiment":"good","score":0.9}' }, { text: '{"sentiment":"good"}' });
    const doc = wf([['start', 'starter'], ['rate', 'agent', agent({ userPrompt: 'rate it', responseFormat })]], [['start', 'rate']]);
    const ok = await runWorkflow(rt.engine, doc);
    expect(ok.result.output).to.include({ sentiment: 'good', score: 0.9, content: '{"sentiment":"good","score":0.9}' });
    expect(ok.events.some((e) => e.type === 'chunk')).to.equal(false);
    const bad = await runWorkflow(rt.engine, doc);
    expect(bad.result.status).to.equal('failed');
    expect(bad.result.error?.code).to.equal('INVALID_MODEL_OUTPUT');
  });

  it('runs tools with code in the sandbox and hands their results back to the model', async () => {
    llm.script({ toolCalls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { text: 'The sum is 42' });
    const tools = [{ name: 'add', description: 'adds', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, code: 'return args.a + args.b + <start.bonus>' }];
    const doc = wf([['start', 'starter'], ['calc', 'agent', agent({ userPrompt: 'add', tools })]], [['start', 'calc']]);
    const { result } = await runWorkflow(rt.engine, doc, { bonus: 0 });
    expect(result.status).to.equal('completed');
    const out = result.output as { content: string; toolCalls: unknown[]; tokens: { total: number } };
    expect(out.content).to.equal('The sum is 42');
    expect(out.toolCalls).to.deep.equal([{ id: 'call_0', name: 'add', arguments: { a: 2, b: 40 }, result: 42 }]);
    expect(out.tokens.total).to.equal(36);
    const second = llm.requests[1]!.body['messages'] as Array<Record<string, unknown>>;
    expect(second[second.length - 1]).to.deep.equal({ role: 'tool', tool_call_id: 'call_0', content: '42' });
  });

  it('sends tool parameters as an object schema even when the author left out "type": "object"', async () => {
    llm.script({ text: 'no call' });
    const tools = [{ name: 'look', parameters: { properties: { q: { type: 'string' } } } }, { name: 'ping' }];
    const doc = wf([['start', 'starter'], ['ask', 'agent', agent({ userPrompt: 'hi', tools })]], [['start', 'ask']]);
    await runWorkflow(rt.engine, doc);
    const sent = llm.requests[0]!.body['tools'] as Array<{ function: { parameters: unknown } }>;
    expect(sent.map((t) => t.function.parameters)).to.deep.equal([
      { type: 'object', properties: { q: { type: 'string' } } },
      { type: 'object', properties: {} },
    ]);
  });

  it('returns the calls of tools without code for the workflow to act on', async () => {
    llm.script({ toolCalls: [{ name: 'refund', arguments: { order: 'A1' } }] });
    const doc = wf([['start', 'starter'], ['act', 'agent', agent({ userPrompt: 'help', tools: [{ name: 'refund' }] })]], [['start', 'act']]);
    const { result } = await runWorkflow(rt.engine, doc);
    expect((result.output as { toolCalls: unknown[] }).toolCalls).to.deep.equal([{ id: 'call_0', name: 'refund', arguments: { order: 'A1' } }]);
  });

  it('remembers a conversation across executions with memory', async () => {
    const doc = wf([['start', 'starter'], ['chat', 'agent', agent({ userPrompt: '<start.text>', memory: { conversationId: '<start.conv>' } })]], [['start', 'chat']]);
    await runWorkflow(rt.engine, doc, { conv: 'c-1', text: 'my name is Ada' });
    await runWorkflow(rt.engine, doc, { conv: 'c-1', text: 'what is my name?' });
    await runWorkflow(rt.engine, doc, { conv: 'c-2', text: 'hi' });
    expect(llm.requests[1]!.body['messages']).to.deep.equal([
      { role: 'user', content: 'my name is Ada' },
      { role: 'assistant', content: 'echo: my name is Ada' },
      { role: 'user', content: 'what is my name?' },
    ]);
    expect(llm.requests[2]!.body['messages']).to.deep.equal([{ role: 'user', content: 'hi' }]);
  });

  it('takes the memory window from a reference', async () => {
    const doc = wf([['start', 'starter'], ['chat', 'agent', agent({ userPrompt: '<start.text>', memory: { conversationId: 'w-1', window: '<start.window>' } })]], [['start', 'chat']]);
    await runWorkflow(rt.engine, doc, { window: 20, text: 'one' });
    await runWorkflow(rt.engine, doc, { window: 20, text: 'two' });
    const { result } = await runWorkflow(rt.engine, doc, { window: 2, text: 'three' });
    expect(result.status).to.equal('completed');
    expect(llm.requests[2]!.body['messages']).to.deep.equal([
      { role: 'user', content: 'two' },
      { role: 'assistant', content: 'echo: two' },
      { role: 'user', content: 'three' },
    ]);
  });

  it('takes earlier turns from a memory block through `memories` (the other spelling of messages)', async () => {
    const doc = wf(
      [['start', 'starter'], ['mem', 'memory', { operation: 'add', conversationId: 'alias-1', content: 'remember 7' }], ['ask', 'agent', agent({ prompt: 'which number?', memories: '<mem.memories>', system: 'short', baseURL: llm.openaiUrl })]],
      [['start', 'mem'], ['mem', 'ask']],
    );
    const { result } = await runWorkflow(rt.engine, doc);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(llm.requests[0]!.body['messages']).to.deep.equal([{ role: 'system', content: 'short' }, { role: 'user', content: 'remember 7' }, { role: 'user', content: 'which number?' }]);
  });

  it('takes its whole conversation from a memory block: `messages: "<mem.memories>"` and no prompt of its own', async () => {
    for (const field of ['messages', 'memories']) {
      const doc = wf(
        [['start', 'starter'], ['mem', 'memory', { operation: 'add', conversationId: `only-${field}`, content: 'what is 6 x 7?' }], ['ask', 'agent', agent({ [field]: '<mem.memories>' })]],
        [['start', 'mem'], ['mem', 'ask']],
      );
      const { result } = await runWorkflow(rt.engine, doc);
      expect(result.status, JSON.stringify(result.error)).to.equal('completed');
      expect(llm.requests.at(-1)!.body['messages']).to.deep.equal([{ role: 'user', content: 'what is 6 x 7?' }]);
    }
  });

  it('fails an agent call the provider refuses, or takes its error path', async () => {
    llm.script({ status: 401, errorMessage: 'invalid key' }, { status: 401, errorMessage: 'invalid key' });
    const failing = wf([['start', 'starter'], ['ask', 'agent', agent({ userPrompt: 'x' })]], [['start', 'ask']]);
    const failed = await runWorkflow(rt.engine, failing);
    expect(failed.result.error).to.include({ code: 'MODEL_ERROR', blockId: 'ask' });
    const handled = wf(
      [['start', 'starter'], ['ask', 'agent', agent({ userPrompt: 'x' })], ['fallback', 'response', { data: { said: '<ask.error.code>' } }]],
      [['start', 'ask'], ['ask', 'fallback', 'error']],
    );
    const { result } = await runWorkflow(rt.engine, handled);
    expect(result.status).to.equal('completed');
    expect(result.response?.data).to.deep.equal({ said: 'MODEL_ERROR' });
  });

  it('memory block: add, get, getAll and delete by conversationId', async () => {
    const mem = (id: string, config: Record<string, unknown>): [string, string, Record<string, unknown>] => [id, 'memory', { conversationId: '<start.conv>', ...config }];
    const doc = wf(
      [['start', 'starter'], mem('a1', { operation: 'add', content: 'first' }), mem('a2', { operation: 'add', role: 'assistant', content: { n: 2 } }), mem('g', { operation: 'get' }), mem('all', { operation: 'getAll' }), mem('d', { operation: 'delete' }), mem('after', { operation: 'get' })],
      [['start', 'a1'], ['a1', 'a2'], ['a2', 'g'], ['g', 'all'], ['all', 'd'], ['d', 'after']],
    );
    const { result, events } = await runWorkflow(rt.engine, doc, { conv: 'm-1' });
    expect(result.status).to.equal('completed');
    const outputs = Object.fromEntries(events.filter((e) => e.type === 'block.completed').map((e) => [(e.data as { blockId: string }).blockId, (e.data as { output: any }).output]));
    expect(outputs['g'].id).to.equal('m-1');
    expect(outputs['g'].memories.map((m: any) => [m.role, m.content])).to.deep.equal([['user', 'first'], ['assistant', '{"n":2}']]);
    expect(outputs['all'].id).to.equal(null);
    expect(outputs['all'].memories.filter((m: any) => m.conversationId === 'm-1')).to.have.length(2);
    expect(outputs['d']).to.deep.include({ id: 'm-1', memories: [], deleted: 2 });
    expect(outputs['after'].memories).to.deep.equal([]);
  });

  it('leaves a setting whose reference reads null unset: its default holds (null used to become 0)', async () => {
    const settings = { temperature: '<start.temperature>', maxTokens: '<start.max>', retries: '<start.retries>', maxToolRounds: '<start.rounds>', stream: '<start.stream>' };
    const doc = wf(
      [['start', 'starter'], ['ask', 'agent', agent({ userPrompt: 'hi', ...settings, memory: '<start.memory>' })], ['m', 'memory', { operation: 'add', conversationId: 'n-1', role: '<start.role>', limit: '<start.limit>', content: 'kept' }]],
      [['start', 'ask'], ['ask', 'm']],
    );
    const { result, events } = await runWorkflow(rt.engine, doc, {});
    expect(result.status).to.equal('completed');
    expect(llm.requests[0]!.body).not.to.have.any.keys('temperature', 'max_tokens');
    expect(events.some((e) => e.type === 'chunk')).to.equal(true);
    expect((result.output as { memories: Array<{ role: string }> }).memories.map((m) => m.role)).to.deep.equal(['user']);
  });

  it('memory block without a conversationId outside a chat fails with INVALID_CONFIG', async () => {
    const doc = wf([['start', 'starter'], ['m', 'memory', { operation: 'get' }]], [['start', 'm']]);
    const { result } = await runWorkflow(rt.engine, doc);
    expect(result.error).to.include({ code: 'INVALID_CONFIG', blockId: 'm' });
  });

  describe('router in llm mode', () => {
    const router = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      mode: 'llm',
      prompt: 'Ticket: <start.text>',
      routes: [{ id: 'billing', description: 'money questions' }, { id: 'tech', description: 'bugs' }],
      model: 'claude-test',
      baseUrl: llm.anthropicUrl,
      ...extra,
    });
    const doc = (): Record<string, unknown> =>
      wf(
        [['start', 'starter'], ['route', 'router', router()], ['pay', 'function', { code: 'return "pay"' }], ['fix', 'function', { code: 'return "fix"' }]],
        [['start', 'route'], ['route', 'pay', 'billing'], ['route', 'fix', 'tech']],
      );

    it('takes the route the model picks, with its reasoning', async () => {
      llm.script({ toolCalls: [{ name: 'route_choice', arguments: { route: 'tech', reasoning: 'a crash is a bug' } }] });
      const { result, events } = await runWorkflow(rt.engine, doc(), { text: 'the app crashes' });
      expect(result.status).to.equal('completed');
      expect(statusesByName(events)).to.include({ route: 'completed', fix: 'completed', pay: 'skipped' });
      const routed = events.find((e) => e.type === 'block.completed' && e.data.blockId === 'route');
      expect((routed?.data as { output: unknown }).output).to.deep.equal({ selectedRoute: 'tech', reasoning: 'a crash is a bug' });
      expect(llm.requests[0]!.body['system']).to.contain('billing: money questions');
    });

    it('reads an answer in words that JSON also parses (a quoted id) as words', async () => {
      llm.script({ text: '"billing"' });
      const { result, events } = await runWorkflow(rt.engine, doc(), { text: 'my invoice' });
      expect(result.status).to.equal('completed');
      expect(statusesByName(events)).to.include({ route: 'completed', pay: 'completed', fix: 'skipped' });
    });

    it('fails with NO_ROUTE when the answer names no route', async () => {
      llm.script({ toolCalls: [{ name: 'route_choice', arguments: { route: 'sales', reasoning: '?' } }] });
      const { result } = await runWorkflow(rt.engine, doc(), { text: 'hello' });
      expect(result.error).to.include({ code: 'NO_ROUTE', blockId: 'route' });
    });
  });
});
