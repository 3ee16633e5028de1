/** The agent and the llm router on the NATS bus: block messages over a real nats-server, tokens still streamed. */
import { expect } from 'chai';
import { useAgentRuntime } from '../helpers/agent-runtime.js';
import { useMockLlm } from '../helpers/mock-llm.js';
import { runWorkflow, statusesByName, wf } from '../helpers/runtime.js';

describe('agent and llm router over NATS', function () {
  this.timeout(30_000);
  const llm = useMockLlm();
  const rt = useAgentRuntime({ bus: 'nats' });

  it('routes by the model, then streams the answer of the chosen agent', async () => {
    llm.script({ toolCalls: [{ name: 'route_choice', arguments: { route: 'help', reasoning: 'a question' } }] }, { pieces: ['Sure, ', 'here.'] });
    const doc = wf(
      [
        ['start', 'starter'],
        ['triage', 'router', { mode: 'llm', prompt: '<start.q>', model: 'claude-test', baseUrl: llm.anthropicUrl, routes: [{ id: 'help', description: 'questions' }, { id: 'spam', description: 'junk' }] }],
        ['answer', 'agent', { model: 'gpt-test', baseUrl: llm.openaiUrl, userPrompt: '<start.q>', memory: { conversationId: 'n-1' } }],
        ['drop', 'function', { code: 'return null' }],
      ],
      [['start', 'triage'], ['triage', 'answer', 'help'], ['triage', 'drop', 'spam']],
    );
    const { result, events } = await runWorkflow(rt.engine, doc, { q: 'how?' });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(statusesByName(events)).to.include({ triage: 'completed', answer: 'completed', drop: 'skipped' });
    expect(events.filter((e) => e.type === 'chunk').map((e) => (e.data as { text: string }).text).join('')).to.equal('Sure, here.');
    expect((await rt.store.memories.list('wf-test', 'n-1')).map((m) => m.content)).to.deep.equal(['how?', 'Sure, here.']);
  });
});
