import { expect } from 'chai';
import { ValidationError } from '../../src/errors.js';
import { starterBlock, starterConfigSchema, validateStarterInput, type StarterConfig } from '../../src/blocks/starter.js';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { makeContext } from './context.js';

const config: StarterConfig = starterConfigSchema.parse({
  inputFormat: [
    { name: 'city', type: 'string', required: true },
    { name: 'days', type: 'number', default: 3 },
    { name: 'tags', type: 'array' },
    { name: 'meta', type: 'object' },
    { name: 'loud', type: 'boolean' },
    { name: 'anything' },
  ],
});

async function runFailure(input: unknown): Promise<ValidationError> {
  try {
    await starterBlock.run(makeContext({ config, input }));
  } catch (err) {
    expect(err).to.be.instanceOf(ValidationError);
    return err as ValidationError;
  }
  expect.fail('expected INVALID_INPUT');
}

describe('blocks/starter', () => {
  it('outputs the input, its fields spread, the trigger and the conversation id', async () => {
    const ctx = makeContext({ config, input: { city: 'Paris', extra: 1 }, trigger: { type: 'chat' }, conversationId: 'c-9' });
    const result = await starterBlock.run(ctx);
    expect(result.handles).to.deep.equal(['success']);
    expect(result.output).to.deep.equal({
      city: 'Paris',
      days: 3,
      extra: 1,
      input: { city: 'Paris', days: 3, extra: 1 },
      trigger: { type: 'chat' },
      conversationId: 'c-9',
    });
  });

  it('fills a default without sharing it between runs', async () => {
    const withObject = starterConfigSchema.parse({ inputFormat: [{ name: 'opts', type: 'object', default: { a: 1 } }] });
    const first = await starterBlock.run(makeContext({ config: withObject, input: {} }));
    (first.output.opts as Record<string, unknown>).a = 2;
    const second = await starterBlock.run(makeContext({ config: withObject, input: {} }));
    expect(second.output.opts).to.deep.equal({ a: 1 });
  });

  it('rejects a missing required field with INVALID_INPUT and a JSON pointer', async () => {
    const err = await runFailure({ days: 2 });
    expect(err.code).to.equal('INVALID_INPUT');
    expect(err.issues).to.deep.equal([{ path: '/city', message: 'city is required' }]);
    expect((err.details as { issues: unknown[] }).issues).to.have.length(1);
  });

  it('rejects wrong types without coercion, one issue per field', async () => {
    const err = await runFailure({ city: 7, days: '3', tags: {}, meta: [], loud: 'yes', anything: null });
    expect(err.issues.map((i) => i.path)).to.deep.equal(['/city', '/days', '/tags', '/meta', '/loud']);
    expect(err.issues[1]!.message).to.equal('days must be a number, got a string');
  });

  it('treats a missing input as an empty object and rejects a non-object input', async () => {
    expect((await runFailure(undefined)).issues[0]!.path).to.equal('/city');
    const err = await runFailure(['Paris']);
    expect(err.issues).to.have.length(1);
    expect(err.issues[0]!.path).to.equal('');
    expect(err.issues[0]!.message).to.match(/JSON object.*got an array/);
  });

  it('accepts anything without an inputFormat and does not spread non-objects', async () => {
    const result = await starterBlock.run(makeContext({ config: {}, input: 'hello' }));
    expect(result.output).to.deep.equal({ input: 'hello', trigger: { type: 'manual' } });
    const none = await starterBlock.run(makeContext({ config: {}, input: undefined }));
    expect(none.output.input).to.equal(null);
  });

  it('keeps input and trigger authoritative over same-named fields', async () => {
    const result = await starterBlock.run(makeContext({ config: {}, input: { trigger: 'x', input: 'y' } }));
    expect(result.output.trigger).to.deep.equal({ type: 'manual' });
    expect(result.output.input).to.deep.equal({ trigger: 'x', input: 'y' });
  });

  it('validateStarterInput returns the issues for the HTTP layer (raw config accepted)', () => {
    const raw = { inputFormat: [{ name: 'a/b', type: 'string', required: true }] };
    expect(validateStarterInput(raw, {})).to.deep.equal([{ path: '/a~1b', message: 'a/b is required' }]);
    expect(validateStarterInput(raw, { 'a/b': 'ok' })).to.deep.equal([]);
  });

  it('validates its config: duplicate names, bad types and defaults of the wrong type', () => {
    const info = blockTypeRegistry().starter!;
    const badType = info.validateConfig({ inputFormat: [{ name: 'x', type: 'text' }] });
    expect(badType.map((i) => i.path)).to.deep.equal(['/inputFormat/0/type']);
    const issues = info.validateConfig({
      inputFormat: [
        { name: 'x', type: 'string' },
        { name: 'x', type: 'number' },
        { name: 'y', type: 'number', default: 'three' },
      ],
    });
    expect(issues.map((i) => i.path)).to.deep.equal(['/inputFormat/1/name', '/inputFormat/2/default']);
    expect(info.handles({})).to.deep.equal(['success']);
  });

  it('reads fields named constructor, toString and __proto__ as data, defaults included', async () => {
    const odd = starterConfigSchema.parse({
      inputFormat: [
        { name: 'constructor', type: 'string', required: true },
        { name: 'toString', type: 'number', default: 7 },
        { name: '__proto__', type: 'object', default: { polluted: true } },
      ],
    });
    expect(validateStarterInput(odd, {})).to.deep.equal([{ path: '/constructor', message: 'constructor is required' }]);
    expect(validateStarterInput(odd, { constructor: 5 })[0]?.message).to.equal('constructor must be a string, got a number');
    const result = await starterBlock.run(makeContext({ config: odd, input: { constructor: 'c' } }));
    const input = (result.output as { input: Record<string, unknown> }).input;
    expect(JSON.parse(JSON.stringify(input))).to.deep.equal(JSON.parse('{"constructor":"c","toString":7,"__proto__":{"polluted":true}}'));
    expect(Object.getPrototypeOf(input)).to.equal(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });
});
