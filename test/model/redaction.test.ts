import { expect } from 'chai';
import { redactError, redactFields, redactInput, redactIterationResult, redactOutput, redactSecrets, redactText } from '../../src/model/redaction.js';

// stored secrets that are ordinary words, as a probe set them: they must not reshape Troupe's own structure
const WORDS = ['completed', 'result', 'start', 'code', 'HTTP_ERROR', 'content', 'user'];

describe('model/redaction: only user data is redacted', () => {
  it('keeps a block output\'s field names, redacts its values (keys inside them too)', () => {
    const output = { result: { result: 6, 'my-result': 'completed run' }, stdout: 'the result' };
    expect(redactOutput(output, WORDS, 'function')).to.deep.equal({ result: { '***': 6, 'my-***': '*** run' }, stdout: 'the ***' });
  });

  it('keeps the values Troupe sets: an error code, a decision, the trigger, token counts, the attempt log', () => {
    const api = { data: 'completed', status: 500, headers: { 'x-result': 'start' }, error: { code: 'HTTP_ERROR', message: 'HTTP_ERROR: the server answered 500', status: 500, attempts: 2 } };
    expect(redactOutput(api, WORDS, 'api')).to.deep.equal({
      data: '***', status: 500, headers: { 'x-***': '***' }, error: { code: 'HTTP_ERROR', message: '***: the server answered 500', status: 500, attempts: 2 },
    });
    expect(redactOutput({ selectedBranch: 'completed', result: true }, WORDS, 'condition')).to.deep.equal({ selectedBranch: 'completed', result: true });
    const error = { code: 'CONNECTION_FAILED', message: 'start failed', attempts: 1, attemptLog: [{ attempt: 1, errorCode: 'HTTP_ERROR' }] };
    expect(redactError(error, WORDS)).to.deep.equal({ ...error, message: '*** failed' });
  });

  it("keeps the field names of an agent's tool calls and of memories, and their roles", () => {
    const agent = {
      content: 'user content', model: 'm', tokens: { prompt: 1, completion: 2, total: 3 },
      toolCalls: [{ id: 't1', name: 'lookup', arguments: { completed: 'start' }, result: 'completed' }],
    };
    expect(redactOutput(agent, WORDS, 'agent')).to.deep.equal({
      content: '*** ***', model: 'm', tokens: { prompt: 1, completion: 2, total: 3 },
      toolCalls: [{ id: 't1', name: 'lookup', arguments: { '***': '***' }, result: '***' }],
    });
    // a structured answer's fields are the model's JSON, spread among the agent's own
    expect(redactOutput({ content: '{}', model: 'm', 'x-completed': 'start', answer: { completed: 1 } }, WORDS, 'agent')).to.deep.equal({
      content: '{}', model: 'm', 'x-***': '***', answer: { '***': 1 },
    });
    const memory = { memories: [{ conversationId: 'c', role: 'user', content: 'completed', createdAt: 't' }], id: 'c' };
    expect(redactOutput(memory, WORDS, 'memory')).to.deep.equal({ memories: [{ conversationId: 'c', role: 'user', content: '***', createdAt: 't' }], id: 'c' });
  });

  it("redacts the starter's input fields, keys included, but not its trigger", () => {
    const trigger = { type: 'api', keyId: 'completed' };
    const output = { 'start-token': 'completed', input: { 'start-token': 'completed' }, trigger, conversationId: 'c' };
    expect(redactOutput(output, WORDS, 'starter')).to.deep.equal({ '***-token': '***', input: { '***-token': '***' }, trigger, conversationId: 'c' });
  });

  it("keeps the fields Troupe gives a chat's and a webhook's input, in the record and in the starter's output", () => {
    const words = [...WORDS, 'message', 'body'];
    const chat = { message: 'start now', conversationId: 'c-1', turn: 2, history: [{ role: 'user', content: 'completed' }] };
    const shown = { message: '*** now', conversationId: 'c-1', turn: 2, history: [{ role: 'user', content: '***' }] };
    expect(redactInput(chat, words, 'chat')).to.deep.equal(shown);
    const trigger = { type: 'chat', subdomain: 's', conversationId: 'c-1' };
    expect(redactOutput({ ...chat, input: chat, trigger }, words, 'starter')).to.deep.equal({ ...shown, input: shown, trigger });
    const hook = { body: { body: 'completed' }, headers: { 'x-start': 'a' }, query: {}, method: 'POST' };
    expect(redactInput(hook, words, 'webhook')).to.deep.equal({ body: { '***': '***' }, headers: { 'x-***': 'a' }, query: {}, method: 'POST' });
    // an execute's input is the caller's own: keys and all
    expect(redactInput({ message: 'start' }, words, 'api')).to.deep.equal({ '***': '***' });
  });

  it("keeps a container's child block names and each child's own fields, however deep", () => {
    const types: Record<string, string> = { inner: 'loop', fn: 'function', ok: 'condition' };
    const typeOf = (name: string): string | undefined => types[name];
    const iteration = { inner: { results: [{ fn: { result: 'completed', stdout: '' }, ok: { selectedBranch: 'start', result: false } }] } };
    const expected = { inner: { results: [{ fn: { result: '***', stdout: '' }, ok: { selectedBranch: 'start', result: false } }] } };
    expect(redactIterationResult(iteration, WORDS, typeOf)).to.deep.equal(expected);
    expect(redactOutput({ results: [iteration] }, WORDS, 'parallel', typeOf)).to.deep.equal({ results: [expected] });
  });

  it("keeps a config's own field names; what a reference brought in is user data", () => {
    expect(redactFields({ code: 'return 1', url: 'http://x/completed', body: { completed: 1 } }, WORDS)).to.deep.equal({
      code: 'return 1', url: 'http://x/***', body: { '***': 1 },
    });
  });

  it('leaves a "__proto__" key as data, and returns the value itself when there is nothing to redact', () => {
    const data = JSON.parse('{"__proto__": {"x": "completed"}}') as unknown;
    const out = redactSecrets(data, WORDS) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).to.deep.equal({ x: '***' });
    const output = { result: 'completed' };
    expect(redactOutput(output, [], 'function')).to.equal(output);
    expect(redactText('a completed b', WORDS)).to.equal('a *** b');
  });
});
