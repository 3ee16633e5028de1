/** What an agent streams, and what it does when a model misbehaves (through the engine). */
import { expect } from 'chai';
import type { ExecutionEvent } from '../../src/runtime/types.js';
import { useAgentRuntime } from '../helpers/agent-runtime.js';
import { useMockLlm } from '../helpers/mock-llm.js';
import { runWorkflow, wf } from '../helpers/runtime.js';

const SECRET = 'sk-secret-0123456789';

describe('agent streaming and model failures', function () {
  this.timeout(20_000);
  const llm = useMockLlm();
  const rt = useAgentRuntime({ secrets: { LLM_KEY: SECRET } });

  const agent = (config: Record<string, unknown> = {}): Record<string, unknown> => ({ model: 'gpt-test', baseUrl: llm.openaiUrl, apiKey: '{{LLM_KEY}}', userPrompt: 'go', ...config });
  const single = (config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const doc = wf([['start', 'starter'], ['ask', 'agent', agent(config)]], [['start', 'ask']]);
    Object.assign((doc['blocks'] as Record<string, unknown>[])[1]!, extra);
    return doc;
  };
  const chunks = (events: ExecutionEvent[]): string[] => events.filter((e) => e.type === 'chunk').map((e) => (e.data as { text: string }).text);

  it('redacts a secret the model streams back, even split over tokens', async () => {
    llm.script({ pieces: ['your key is sk-sec', 'ret-01234', '56789, keep it'] });
    const { result, events } = await runWorkflow(rt.engine, single());
    expect(chunks(events).join('')).to.equal('your key is ***, keep it');
    expect(JSON.stringify(events)).not.to.contain('sk-sec');
    expect((result.output as { content: string }).content).to.equal('your key is ***, keep it');
  });

  it('fails a stream cut off before its end (MODEL_ERROR), on both providers', async () => {
    llm.script({ pieces: ['half an '], truncate: true }, { pieces: ['half an '], truncate: true });
    const openai = await runWorkflow(rt.engine, single({ retries: 0 }));
    expect(openai.result.error).to.include({ code: 'MODEL_ERROR', blockId: 'ask' });
    const anthropic = await runWorkflow(rt.engine, single({ retries: 0, model: 'claude-test', baseUrl: llm.anthropicUrl }));
    expect(anthropic.result.error).to.include({ code: 'MODEL_ERROR', blockId: 'ask' });
  });

  it('reads a whole answer from a server that ignores `stream`, as one chunk', async () => {
    llm.script({ text: 'whole answer', ignoreStream: true }, { text: 'whole answer', ignoreStream: true });
    for (const extra of [{}, { model: 'claude-test', baseUrl: llm.anthropicUrl }]) {
      const { result, events } = await runWorkflow(rt.engine, single(extra));
      expect((result.output as { content: string }).content).to.equal('whole answer');
      expect(chunks(events)).to.deep.equal(['whole answer']);
    }
  });

  it('does not retry a block whose text already streamed (it would repeat)', async () => {
    llm.script({ pieces: ['partial '], truncate: true }, { text: 'second' });
    const { result, events } = await runWorkflow(rt.engine, single({ retries: 0 }, { retry: { maxAttempts: 3, backoffMs: 0 } }));
    expect(result.status).to.equal('failed');
    expect(chunks(events)).to.deep.equal(['partial ']);
    expect(llm.requests).to.have.length(1);
  });

  it('still retries a block that streamed nothing', async () => {
    llm.script({ status: 400, errorMessage: 'bad' }, { text: 'ok now' });
    const { result } = await runWorkflow(rt.engine, single({}, { retry: { maxAttempts: 2, backoffMs: 0 } }));
    expect(result.status).to.equal('completed');
    expect((result.output as { content: string }).content).to.equal('ok now');
  });

  it('content holds the text of every tool round, as streamed', async () => {
    llm.script({ text: 'Let me check.', toolCalls: [{ name: 'look', arguments: {} }] }, { text: 'It is 7.' });
    const tools = [{ name: 'look', code: 'return 7' }];
    const { result, events } = await runWorkflow(rt.engine, single({ tools }));
    expect((result.output as { content: string }).content).to.equal('Let me check.\n\nIt is 7.');
    expect(chunks(events).join('')).to.equal('Let me check.\n\nIt is 7.');
  });

  it('tells the model about a tool it made up, and lets it answer', async () => {
    llm.script({ toolCalls: [{ name: 'teleport', arguments: {} }] }, { text: 'sorry' });
    const { result } = await runWorkflow(rt.engine, single({ tools: [{ name: 'look', code: 'return 1' }] }));
    const out = result.output as { content: string; toolCalls: Array<{ error?: { code: string } }> };
    expect(out.content).to.equal('sorry');
    expect(out.toolCalls[0]!.error?.code).to.equal('UNKNOWN_TOOL');
    const sent = llm.requests[1]!.body['messages'] as Array<Record<string, unknown>>;
    expect(sent.at(-1)).to.deep.include({ role: 'tool', content: '{"error":"there is no tool named \\"teleport\\""}' });
  });

  it('a long Retry-After on 429 ends the call with RATE_LIMITED and the attempts', async () => {
    llm.script({ status: 429, headers: { 'retry-after': '120' } });
    const { result, events } = await runWorkflow(rt.engine, single());
    expect(result.error).to.include({ code: 'RATE_LIMITED', blockId: 'ask' });
    const log = events.find((e) => e.type === 'block.failed')!.data as { error: Record<string, unknown>; attempts: number };
    expect(log.error).to.include({ code: 'RATE_LIMITED', retryAfterMs: 120_000, attempts: 1, status: 429 });
    expect(log.attempts).to.equal(1);
  });

  it('chunks in a parallel block say which branch they come from', async () => {
    const doc = {
      id: 'par',
      name: 'par',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'fan', type: 'parallel', name: 'Fan', config: { kind: 'count', count: 2 } },
        { id: 'ask', type: 'agent', name: 'Ask', parent: 'fan', config: agent({ userPrompt: 'branch <parallel.index>' }) },
      ],
      connections: [{ from: 'start', to: 'fan' }],
    };
    const { result, events } = await runWorkflow(rt.engine, doc);
    expect(result.status).to.equal('completed');
    const seen = events.filter((e) => e.type === 'chunk').map((e) => e.data as { text: string; iteration: { index: number } | null });
    const byBranch = [0, 1].map((i) => seen.filter((c) => c.iteration?.index === i).map((c) => c.text).join(''));
    expect(byBranch).to.deep.equal(['echo: branch 0', 'echo: branch 1']);
  });

  it('a memory window that opens on an answer starts the conversation at the next question', async () => {
    const doc = single({ userPrompt: '<start.q>', memory: { conversationId: 'win', window: 3 } });
    await runWorkflow(rt.engine, doc, { q: 'one' });
    await runWorkflow(rt.engine, doc, { q: 'two' });
    expect(llm.requests[1]!.body['messages']).to.deep.equal([{ role: 'user', content: 'one' }, { role: 'assistant', content: 'echo: one' }, { role: 'user', content: 'two' }]);
    await runWorkflow(rt.engine, doc, { q: 'three' });
    // window 3 = [echo: one, two, echo: two]: the leading answer is dropped
    expect(llm.requests[2]!.body['messages']).to.deep.equal([{ role: 'user', content: 'two' }, { role: 'assistant', content: 'echo: two' }, { role: 'user', content: 'three' }]);
  });

  it('answers arguments that are not a JSON object with INVALID_ARGUMENTS', async () => {
    llm.script({ toolCalls: [{ name: 'look', arguments: [1, 2] }] }, { text: 'done' });
    const { result } = await runWorkflow(rt.engine, single({ tools: [{ name: 'look', code: 'return 1' }] }));
    expect((result.output as { toolCalls: Array<{ error?: { code: string } }> }).toolCalls[0]!.error?.code).to.equal('INVALID_ARGUMENTS');
  });

  it('keeps no empty turn in memory (an answer that was only a tool call)', async () => {
    llm.script({ toolCalls: [{ name: 'handoff', arguments: {} }] });
    await runWorkflow(rt.engine, single({ userPrompt: 'help me', tools: [{ name: 'handoff' }], memory: { conversationId: 'empty-turn' } }));
    const kept = await rt.store.memories.list('wf-test', 'empty-turn');
    expect(kept.map((m) => [m.role, m.content])).to.deep.equal([['user', 'help me']]);
  });

  it('refuses an Anthropic temperature above 1 before calling (INVALID_CONFIG)', async () => {
    const { result } = await runWorkflow(rt.engine, single({ model: 'claude-test', baseUrl: llm.anthropicUrl, temperature: 1.5 }));
    expect(result.error).to.include({ code: 'INVALID_CONFIG', blockId: 'ask' });
    expect(llm.requests).to.have.length(0);
  });

  it('router llm mode reads a route choice wrapped in a code fence', async () => {
    llm.script({ text: '```json\n{"route":"b","reasoning":"not a"}\n```' });
    const router = { mode: 'llm', prompt: 'x', model: 'gpt-test', baseUrl: llm.openaiUrl, routes: [{ id: 'a', description: 'A' }, { id: 'b', description: 'B' }] };
    const doc = wf([['start', 'starter'], ['r', 'router', router], ['fa', 'function', { code: 'return 1' }], ['fb', 'function', { code: 'return 2' }]], [['start', 'r'], ['r', 'fa', 'a'], ['r', 'fb', 'b']]);
    const { result } = await runWorkflow(rt.engine, doc);
    expect(result.output).to.deep.equal({ result: 2, stdout: '' });
  });

  it('router llm mode takes its default route when the answer names none', async () => {
    llm.script({ text: 'no idea' });
    const router = { mode: 'llm', prompt: 'x', model: 'gpt-test', baseUrl: llm.openaiUrl, routes: [{ id: 'a', description: 'A' }, { id: 'b', description: 'B' }], default: 'b' };
    const doc = wf([['start', 'starter'], ['r', 'router', router], ['fa', 'function', { code: 'return 1' }], ['fb', 'function', { code: 'return 2' }]], [['start', 'r'], ['r', 'fa', 'a'], ['r', 'fb', 'b']]);
    const { result } = await runWorkflow(rt.engine, doc);
    expect(result.status).to.equal('completed');
    expect(result.output).to.deep.equal({ result: 2, stdout: '' });
  });
});
