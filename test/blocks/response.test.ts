import { expect } from 'chai';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { responseBlock, responseConfigSchema, responseStatus, type ResponseConfig } from '../../src/blocks/response.js';
import { TroupeError } from '../../src/errors.js';
import { makeContext } from './context.js';

const run = (raw: unknown) => responseBlock.run(makeContext({ config: responseConfigSchema.parse(raw) as ResponseConfig }));

async function failure(raw: unknown): Promise<TroupeError> {
  try {
    await run(raw);
  } catch (err) {
    expect(err).to.be.instanceOf(TroupeError);
    return err as TroupeError;
  }
  expect.fail('expected a failure');
}

describe('blocks/response', () => {
  it('outputs status, headers and data and activates no handle', async () => {
    const result = await run({ status: 201, headers: { 'X-Id': 'abc' }, data: { ok: true } });
    expect(result).to.deep.equal({ output: { status: 201, headers: { 'X-Id': 'abc' }, data: { ok: true } }, handles: [] });
  });

  it('defaults to 200, no headers and null data', async () => {
    expect((await run({})).output).to.deep.equal({ status: 200, headers: {}, data: null });
  });

  it('accepts a resolved status given as numeric text and headers as key/value pairs', async () => {
    const result = await run({ status: '404', headers: [{ key: 'Retry-After', value: 30 }, { key: 'X-Meta', value: { a: 1 } }, { key: 'X-Gone', value: null }] });
    expect(result.output.status).to.equal(404);
    expect(result.output.headers).to.deep.equal({ 'Retry-After': '30', 'X-Meta': '{"a":1}' });
  });

  it('answers 200 for a status that reads null (a reference to a missing field): it failed with INVALID_CONFIG', async () => {
    expect((await run({ status: null, data: 'ok' })).output).to.deep.equal({ status: 200, headers: {}, data: 'ok' });
  });

  it('refuses a status outside 200-599 or not a number after resolution', async () => {
    // what the schema lets through is a status or null; responseStatus still guards its input
    for (const status of [false, 0, 700, { code: 201 }]) {
      expect(() => responseStatus(status), JSON.stringify(status)).to.throw(TroupeError, /status must be an integer from 200 to 599/);
    }
    // text that is no status is refused by the schema itself: when the workflow is saved, or
    // (through the runtime's parse, INVALID_CONFIG) when a reference resolved to it
    for (const status of ['700', 'abc', '2.5']) {
      const parsed = responseConfigSchema.safeParse({ status });
      expect(parsed.success).to.equal(false);
      expect(parsed.error?.issues[0]?.message).to.match(/status must be an integer from 200 to 599/);
    }
    expect(responseConfigSchema.safeParse({ status: '<api.status>' }).success).to.equal(true);
    expect(responseConfigSchema.safeParse({ status: 99 }).success).to.equal(false);
    expect(responseConfigSchema.safeParse({ status: 101 }).success).to.equal(false);
    expect(responseConfigSchema.safeParse({ status: '100' }).success).to.equal(false);
    expect(responseConfigSchema.safeParse({ status: 200.5 }).success).to.equal(false);
  });

  it('refuses header values with line breaks and invalid header names', async () => {
    // the resolved config as the runtime hands it over (references in it made these values)
    const runRaw = (headers: ResponseConfig['headers']) => responseBlock.run(makeContext({ config: { headers } }));
    const refused = async (headers: ResponseConfig['headers']): Promise<string> => {
      const err = await runRaw(headers).then(() => expect.fail('expected a failure'), (e: unknown) => e);
      expect(err).to.be.instanceOf(TroupeError);
      expect((err as TroupeError).code).to.equal('INVALID_CONFIG');
      return (err as TroupeError).message;
    };
    expect(await refused({ 'X-A': 'ok\r\nSet-Cookie: evil=1' })).to.match(/line break/);
    expect(await refused({ 'Bad Name': 'x' })).to.match(/not a valid HTTP header name/);
    for (const value of ['é☃', 'a\u0007b', '\u{1F600}']) {
      expect(await refused({ 'X-A': value })).to.match(/cannot carry/);
    }
    expect((await run({ headers: { 'X-A': 'café\tok' } })).output.headers).to.deep.equal({ 'X-A': 'café\tok' });
  });

  it('refuses literal headers HTTP cannot carry when the workflow is saved, at the offending member', () => {
    const info = blockTypeRegistry().response!;
    const issues = info.validateConfig({
      headers: { 'Bad Name': 'x', 'X-A': 'a\nb', 'X-B': '☃', 'X/C': 'x', '': 'x', 'X-Ok': 'café', 'X-Ref': '<api.data>', 'X-Obj': { a: '<api.data>' } },
    });
    expect(issues.map((i) => i.path)).to.deep.equal(['/headers/Bad Name', '/headers/X-A', '/headers/X-B', '/headers/X~1C', '/headers/']);
    expect(issues[0]?.message).to.match(/not a valid HTTP header name/);
    expect(issues[1]?.message).to.match(/line break/);
    const rows = info.validateConfig({ headers: [{ key: 'ok', value: 'x\ry' }, { key: 'a b', value: 1 }, { key: '<start.h>', value: 'x' }] });
    expect(rows.map((i) => i.path)).to.deep.equal(['/headers/0/value', '/headers/1/key']);
  });

  it('has no outgoing handles and validates its config', () => {
    const info = blockTypeRegistry().response!;
    expect(info.handles({})).to.deep.equal([]);
    expect(info.validateConfig({ status: '<api.status>', data: '<api.data>' })).to.deep.equal([]);
    expect(info.validateConfig({ status: 1000 }).map((i) => i.path)).to.deep.equal(['/status']);
    expect(info.validateConfig({ headers: [{ key: '', value: 'x' }] }).map((i) => i.path)).to.deep.equal(['/headers/0/key']);
  });
});
