import { expect } from 'chai';
import { blockTypeRegistry } from '../../src/blocks/index.js';

describe('blocks/agent and blocks/memory config', () => {
  const registry = blockTypeRegistry();
  const agent = registry.agent!;
  const memory = registry.memory!;
  const paths = (issues: { path: string }[]): string[] => issues.map((i) => i.path);

  it('agent: needs a model and a prompt; has success and error handles', () => {
    expect(agent.validateConfig({ model: 'gpt-4o', userPrompt: 'hi' })).to.deep.equal([]);
    expect(agent.handles({ model: 'gpt-4o', userPrompt: 'hi' })).to.deep.equal(['success', 'error']);
    expect(paths(agent.validateConfig({ userPrompt: 'hi' }))).to.deep.equal(['/model']);
    expect(paths(agent.validateConfig({ model: 'gpt-4o' }))).to.deep.equal(['/userPrompt']);
  });

  it('agent: accepts the SDK spellings prompt, system and baseURL', () => {
    expect(agent.validateConfig({ model: 'llama3', prompt: 'hi', system: 'be kind', baseURL: 'http://ollama.internal:11434/v1' })).to.deep.equal([]);
    expect(paths(agent.validateConfig({ model: 'llama3', prompt: 'hi', baseURL: 'nope' }))).to.deep.equal(['/baseURL']);
  });

  it('agent: a whole reference may stand in any spelling of a field until the run', () => {
    expect(agent.validateConfig({ model: 'm', prompt: 'p', baseURL: '<start.url>', memories: '<mem.memories>', temperature: '<start.t>' })).to.deep.equal([]);
    expect(agent.validateConfig({ model: 'm', userPrompt: 'p', responseFormat: '{"type":"object","properties":{"a":{"type":"string"}}}' })).to.deep.equal([]);
  });

  it('agent: memory settings may be references too (a union used to refuse the window as a whole invalid memory)', () => {
    expect(agent.validateConfig({ model: 'm', prompt: 'p', memory: { conversationId: '<start.cid>', window: '<start.window>' } })).to.deep.equal([]);
    expect(agent.validateConfig({ model: 'm', prompt: 'p', memory: false })).to.deep.equal([]);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', memory: { window: 'many' } }))).to.deep.equal(['/memory/window']);
    const wrong = agent.validateConfig({ model: 'm', prompt: 'p', memory: 'yes' });
    expect(paths(wrong)).to.deep.equal(['/memory']);
    expect(wrong[0]!.message).to.contain('true, false or');
  });

  it('agent: a base URL made of references is judged when it is filled in', () => {
    expect(agent.validateConfig({ model: 'm', prompt: 'p', baseUrl: '{{LLM_URL}}' })).to.deep.equal([]);
    expect(agent.validateConfig({ model: 'm', prompt: 'p', baseUrl: 'http://<start.host>:11434/v1' })).to.deep.equal([]);
  });

  it('agent: a tool may not take the response format\'s name', () => {
    const issues = agent.validateConfig({ model: 'm', prompt: 'p', tools: [{ name: 'response' }], responseFormat: { properties: {} } });
    expect(paths(issues)).to.deep.equal(['/tools/0/name']);
    const named = agent.validateConfig({ model: 'm', prompt: 'p', tools: [{ name: 'a' }, { name: 'out' }], responseFormat: '{"name":"out","schema":{}}' });
    expect(paths(named)).to.deep.equal(['/tools/1/name']);
  });

  it('agent: checks across fields run beside a field of the wrong type (they were hidden until it was fixed)', () => {
    const all = (config: Record<string, unknown>): string[] => agent.validateConfig(config).map((i) => `${i.path}: ${i.message}`);
    expect(all({ model: 'm', temperature: 'hot' })).to.deep.equal([
      '/temperature: must be a number',
      '/userPrompt: an agent needs a userPrompt (or messages)',
    ]);
    expect(all({ model: 5, prompt: 'p', tools: [{ name: 'a' }, { name: 'a', description: 5 }] })).to.have.members([
      '/model: Invalid input: expected string, received number',
      '/tools/1/description: Invalid input: expected string, received number',
      '/tools/1/name: duplicate tool name "a"',
    ]);
    expect(all({ model: 'm', prompt: 'p', stream: 'yes', tools: [{ name: 'out', code: 5 }], responseFormat: { name: 'out', schema: {} } })).to.have.members([
      '/stream: Invalid input: expected boolean, received string',
      '/tools/0/code: Invalid input: expected string, received number',
      '/tools/0/name: a tool may not have the response format\'s name ("out")',
    ]);
    // a list of the wrong type is its own issue, not also a missing prompt
    expect(paths(agent.validateConfig({ model: 'm', messages: 'hi' }))).to.deep.equal(['/messages']);
    expect(paths(agent.validateConfig({ model: 'm', messages: [], tools: 5 }))).to.deep.equal(['/tools', '/userPrompt']);
    // no object at all: its type says everything, and nothing reads its fields
    expect(paths(agent.validateConfig(null))).to.deep.equal(['']);
  });

  it('agent: checks tools, the response format, memory and the numbers', () => {
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', tools: [{ name: 'bad name!' }] }))).to.deep.equal(['/tools/0/name']);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', tools: [{ name: 't', parameters: { type: 'array' } }] }))).to.deep.equal(['/tools/0/parameters/type']);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', responseFormat: { type: 'array' } }))).to.deep.equal(['/responseFormat/type']);
    expect(agent.validateConfig({ model: 'm', prompt: 'p', responseFormat: { name: 'out', schema: { properties: { a: { type: 'string' } } } } })).to.deep.equal([]);
    expect(agent.validateConfig({ model: 'm', prompt: 'p', memory: true })).to.deep.equal([]);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', memory: { window: 0 } }))).to.deep.equal(['/memory/window']);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', temperature: 3 }))).to.deep.equal(['/temperature']);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', provider: 'gemini' }))).to.deep.equal(['/provider']);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', baseUrl: 'ftp://models.example/v1' }))).to.deep.equal(['/baseUrl']);
    expect(paths(agent.validateConfig({ model: 'm', prompt: 'p', tools: [{ name: 'a' }, { name: 'a' }] }))).to.deep.equal(['/tools/1/name']);
  });

  it('a number setting that is not one says so ("must be a number", not "received NaN")', () => {
    const issues = agent.validateConfig({ model: 'm', prompt: 'p', temperature: 'hot', maxTokens: 'many' });
    expect(issues.map((i) => [i.path, i.message])).to.deep.equal([['/temperature', 'must be a number'], ['/maxTokens', 'must be a number']]);
  });

  it('memory: an operation of four, content for add, id accepted for conversationId', () => {
    expect(memory.validateConfig({ operation: 'get', conversationId: '<start.conversationId>' })).to.deep.equal([]);
    expect(memory.validateConfig({ operation: 'getAll' })).to.deep.equal([]);
    expect(memory.validateConfig({ operation: 'delete', id: 'abc' })).to.deep.equal([]);
    expect(paths(memory.validateConfig({ operation: 'add', conversationId: 'c' }))).to.deep.equal(['/content']);
    // a literal "" or null failed every run with INVALID_CONFIG; a reference is judged when it is read
    expect(paths(memory.validateConfig({ operation: 'add', conversationId: 'c', content: '' }))).to.deep.equal(['/content']);
    expect(paths(memory.validateConfig({ operation: 'add', conversationId: 'c', content: null }))).to.deep.equal(['/content']);
    expect(memory.validateConfig({ operation: 'add', conversationId: 'c', content: '<start.note>' })).to.deep.equal([]);
    expect(paths(memory.validateConfig({ operation: 'forget' }))).to.deep.equal(['/operation']);
    // a bad limit hid the missing content; a limit known only at run time no longer shows it
    expect(paths(memory.validateConfig({ operation: 'add', limit: 'x' }))).to.deep.equal(['/limit', '/content']);
    expect(paths(memory.validateConfig({ operation: 'add', limit: '<start.limit>' }))).to.deep.equal(['/content']);
    expect(paths(memory.validateConfig(null))).to.deep.equal(['']);
    expect(memory.handles({ operation: 'get' })).to.deep.equal(['success', 'error']);
  });
});
