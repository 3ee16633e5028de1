import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { idempotencyKeyOf } from '../../src/model/block-run.js';
import { createOutboundClient } from '../../src/outbound/client.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { systemClock } from '../../src/runtime/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { forEachBus } from '../helpers/buses.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { sharedSandbox, testBlockTypes, testRegistry } from '../helpers/runtime.js';
import type { Bus } from '../../src/bus/types.js';
import type { Store } from '../../src/store/types.js';

const example = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));

function engineWith(bus: Bus, store: Store, secrets: Record<string, string> = {}): Engine {
  const http = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 1000, hostMaxInflight: 50 });
  return new Engine({
    bus,
    blockTypes: testBlockTypes,
    services: { sandbox: sharedSandbox(), clock: systemClock, http, functionTimeoutMs: 2000, functionMemoryMb: 32 },
    secrets: { get: async (n) => secrets[n] },
    executions: store.executions,
    busPrefix: 'apitest',
    executionTimeoutMs: 20_000,
  });
}

async function run(engine: Engine, doc: unknown, input: unknown) {
  const { compiled } = loadWorkflow(doc, testRegistry);
  const handle = await engine.start(compiled, { workflowId: 'api', version: 1, input, trigger: { type: 'manual' } });
  return handle.done;
}

forEachBus('API block in workflows', (getBus) => {
  let server: FaultServer;
  let store: Store;
  beforeEach(async () => {
    server = await startFaultServer();
    store = openSqliteStore(':memory:');
  });
  afterEach(async () => {
    await server.close();
    await store.close();
  });

  it('examples/api-status.json branches on <fetch.status> and takes the error path when nobody answers', async () => {
    const engine = engineWith(getBus(), store);
    server.script('/items/a%2Fb', [{ status: 200, body: { name: 'lamp', price: 12 } }]);
    server.script('/items/zz', [{ status: 404, body: { error: 'nope' } }]);
    server.script('/items/teapot', [{ status: 418, body: 'short and stout' }]);
    server.script('/items/gone', [{ reset: true }]);
    const base = server.origin;
    const found = await run(engine, example('api-status.json'), { baseUrl: base, id: 'a/b' });
    expect(found.response).to.deep.equal({ status: 200, headers: {}, data: { item: { name: 'lamp', price: 12 } } });
    expect(server.requestsTo('/items/a%2Fb')[0]?.url).to.equal('/items/a%2Fb?fields=name%2Cprice');
    expect((await run(engine, example('api-status.json'), { baseUrl: base, id: 'zz' })).response?.status).to.equal(404);
    expect((await run(engine, example('api-status.json'), { baseUrl: base, id: 'teapot' })).response?.data).to.deep.equal({ error: 'upstream answered 418' });
    const down = await run(engine, example('api-status.json'), { baseUrl: base, id: 'gone' });
    expect(down.response?.status).to.equal(503);
    expect((down.response?.data as { error: string }).error).to.equal('CONNECTION_FAILED');
    expect(server.requestsTo('/items/gone')).to.have.length(3);
    const record = await store.executions.get(down.id);
    const fetchLog = record?.logs.find((l) => l.blockId === 'fetch');
    expect(fetchLog?.status).to.equal('failed');
    expect(fetchLog?.errorHandled).to.equal(true);
    expect(fetchLog?.output).to.deep.include({ status: 0, data: null });
    expect(fetchLog?.attempts).to.equal(3);
    expect(fetchLog?.attemptLog).to.have.length(3);
    expect((fetchLog?.error as { attempts: number; attemptLog?: unknown }).attempts).to.equal(3);
    expect(fetchLog?.error).not.to.have.property('attemptLog');
  });

  it('examples/fanout-collection.json fans API calls out over a collection, results in item order', async () => {
    const engine = engineWith(getBus(), store);
    server.script('/items/1', [{ status: 200, body: { price: 5 }, delayMs: 60 }]);
    server.script('/items/2', [{ status: 200, body: { price: 7 }, delayMs: 5 }]);
    server.script('/items/3', [{ status: 404, body: {} }]);
    server.script('/items/4', [{ status: 503 }, { status: 200, body: { price: 11 } }]);
    const result = await run(engine, example('fanout-collection.json'), { baseUrl: server.origin, ids: ['1', '2', '3', '4'] });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    const out = (result.output as { result: { count: number; missing: number; total: number; rows: { id: string }[] } }).result;
    expect(out).to.deep.include({ count: 4, missing: 1, total: 23 });
    expect(out.rows.map((r) => r.id)).to.deep.equal(['1', '2', '3', '4']);
    const record = await store.executions.get(result.id);
    const retried = record?.logs.find((l) => l.blockId === 'get' && (l.iteration as { index: number } | null)?.index === 3);
    expect(retried?.attempts).to.equal(2);
    expect(retried?.attemptLog).to.have.length(2);
  });

  it('never records a secret sent in a header, even when the upstream echoes it', async () => {
    const engine = engineWith(getBus(), store, { TOKEN: 'tok/en+secret value' });
    const doc = {
      id: 'echo',
      name: 'echo',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'call', type: 'api', name: 'Call', config: { url: `${server.origin}/echo/{t}`, method: 'POST', pathParams: [{ key: 't', value: '{{TOKEN}}' }], headers: [{ key: 'Authorization', value: 'Bearer {{TOKEN}}' }], body: { token: '{{TOKEN}}' } } },
      ],
      connections: [{ from: 'start', to: 'call' }],
    };
    const result = await run(engine, doc, {});
    expect(server.requests[0]?.headers['authorization']).to.equal('Bearer tok/en+secret value');
    const record = await store.executions.get(result.id);
    const text = JSON.stringify(record);
    expect(text).not.to.contain('tok/en+secret value');
    expect(text).not.to.contain(encodeURIComponent('tok/en+secret value'));
    expect(text).to.contain('***');
  });

  it('redacts a secret as a header carries it: trimmed, its line breaks dropped', async () => {
    const engine = engineWith(getBus(), store, { PAD: '  padded-secret-42  ', WRAP: 'wrapped\nsecret-77' });
    const doc = {
      name: 'pad', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'call', type: 'api', name: 'Call', config: { url: `${server.origin}/echo-pad`, headers: [{ key: 'X-Pad', value: '{{PAD}}' }, { key: 'X-Wrap', value: '{{WRAP}}' }] } },
      ],
      connections: [{ from: 'start', to: 'call' }],
    };
    const result = await run(engine, doc, {});
    const seen = server.requestsTo('/echo-pad')[0]?.headers ?? {};
    const text = JSON.stringify(await store.executions.get(result.id));
    for (const sent of [seen['x-pad'], seen['x-wrap']]) {
      if (typeof sent === 'string' && sent !== '') expect(text, sent).not.to.contain(sent);
    }
    expect(text).not.to.contain('padded-secret-42');
  });

  it('redacts a secret echoed back as a form body and a URL query encode it', async () => {
    const secret = `my pass"wörd!(x)'~`;
    const engine = engineWith(getBus(), store, { PW: secret });
    const doc = {
      name: 'form', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        {
          id: 'call', type: 'api', name: 'Call', config: {
            url: `${server.origin}/echo-form`, method: 'POST', params: [{ key: 'pw', value: '{{PW}}' }],
            headers: [{ key: 'Content-Type', value: 'application/x-www-form-urlencoded' }], body: { password: '{{PW}}' },
          },
        },
      ],
      connections: [{ from: 'start', to: 'call' }],
    };
    const result = await run(engine, doc, {});
    const seen = server.requestsTo('/echo-form')[0];
    const sentQuery = new URL(seen?.url ?? '', server.origin).search.slice('?pw='.length);
    const sentBody = (seen?.body ?? '').slice('password='.length);
    expect(sentQuery).to.not.equal(encodeURIComponent(secret)); // the query encodes ' as well
    expect(sentBody).to.include('+'); // the form encodes a space as +
    const text = JSON.stringify(await store.executions.get(result.id));
    for (const sent of [sentQuery, sentBody]) expect(text, sent).not.to.contain(sent);
  });

  it('redacts a secret the URL parser encodes in the path and query text, and the Basic credentials of a userinfo', async () => {
    const secret = `Pass "wörd|x'^`;
    const engine = engineWith(getBus(), store, { PW: secret, PLAIN: 'plainsecretabcdef123' });
    const url = new URL(server.origin);
    const doc = {
      name: 'url', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'text', type: 'api', name: 'Text', config: { url: `${server.origin}/echo-url/{{PW}}?q={{PW}}`, retries: 0 } },
        { id: 'auth', type: 'api', name: 'Auth', config: { url: `http://u:{{PLAIN}}@${url.host}/echo-auth`, retries: 0 } },
      ],
      connections: [{ from: 'start', to: 'text' }, { from: 'start', to: 'auth' }],
    };
    const result = await run(engine, doc, {});
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    const sentUrl = server.requestsTo(`/echo-url/${new URL(`http://h/${secret}`).pathname.slice(1)}`)[0]?.url ?? '';
    const sentAuth = server.requestsTo('/echo-auth')[0]?.headers['authorization'] ?? '';
    expect(sentUrl).to.contain('|');
    expect(sentAuth).to.equal(`Basic ${Buffer.from('u:plainsecretabcdef123').toString('base64')}`);
    const text = JSON.stringify(await store.executions.get(result.id));
    const sentPath = sentUrl.slice('/echo-url/'.length, sentUrl.indexOf('?'));
    const sentQuery = sentUrl.slice(sentUrl.indexOf('?q=') + 3);
    for (const sent of [sentPath, sentQuery, sentAuth.slice('Basic '.length)]) expect(text, sent).not.to.contain(sent);
    expect(text).to.contain('Basic ***');
  });

  it('redacts a secret in a host name, which the URL parser lowercases in the error message', async () => {
    const engine = engineWith(getBus(), store, { HOST: 'PlainSecretABCdef123' });
    const doc = {
      name: 'host', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'call', type: 'api', name: 'Call', config: { url: 'http://{{HOST}}.invalid/', retries: 0 } },
      ],
      connections: [{ from: 'start', to: 'call' }],
    };
    const result = await run(engine, doc, {});
    expect(result.status).to.equal('failed');
    const text = JSON.stringify([await store.executions.get(result.id), await store.executions.listEvents(result.id), result]);
    expect(text.toLowerCase()).not.to.contain('plainsecretabcdef123');
    expect(result.error?.message).to.contain('***');
  });

  it("derives a POST's Idempotency-Key from its block run: one per execution and iteration, the same for a repeated run", async () => {
    const engine = engineWith(getBus(), store);
    const doc = {
      name: 'pay', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'l', type: 'loop', name: 'Each', config: { kind: 'forEach', items: '<start.items>' } },
        { id: 'p', type: 'api', name: 'Pay', parent: 'l', config: { url: `${server.origin}/pay`, method: 'POST', body: { item: '<loop.item>' }, retryBaseMs: 1 } },
      ],
      connections: [{ from: 'start', to: 'l' }],
    };
    server.script('/pay', [{ status: 503 }, { status: 200 }, { status: 200 }, { status: 200 }, { status: 200 }]);
    const first = await run(engine, doc, { items: ['a', 'b'] });
    expect(first.status).to.equal('completed');
    const second = await run(engine, doc, { items: ['a'] });
    expect(second.status).to.equal('completed');
    const keys = server.requestsTo('/pay').map((r) => r.headers['idempotency-key']);
    // iteration 0 was retried with its key; iteration 1 and the next execution have keys of their own
    expect(keys).to.have.length(4);
    expect(keys[0]).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(keys[1]).to.equal(keys[0]);
    expect(new Set(keys).size).to.equal(3);
    // the key names the run, so the same run repeated (after a crash resumed it) sends the same one
    expect(keys[0]).to.equal(idempotencyKeyOf(`${first.id}|root/l/0|p`));
    // a run may be repeated although the client does not retry it: retries 0 carries the key too
    const once = { ...doc, blocks: doc.blocks.map((b) => (b.id === 'p' ? { ...b, config: { ...b.config, retries: 0 } } : b)) };
    const third = await run(engine, once, { items: ['z'] });
    expect(server.requestsTo('/pay')[4]?.headers['idempotency-key']).to.equal(idempotencyKeyOf(`${third.id}|root/l/0|p`));
  });

  it('leaves a setting whose reference reads null unset, its default holding; a null url or method fails the block', async () => {
    const engine = engineWith(getBus(), store);
    const doc = (config: Record<string, unknown>) => ({
      name: 'nulls', blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'g', type: 'api', name: 'Get', config }],
      connections: [{ from: 'start', to: 'g' }],
    });
    const fromInput = { retries: '<start.retries>', timeoutMs: '<start.timeout>', retryMaxMs: '<start.max>', maxResponseBytes: '<start.bytes>', params: '<start.params>', headers: '<start.headers>' };
    // "retries" reading null was 0 retries without a word, and the other numbers failed with INVALID_CONFIG
    server.script('/defaults', [{ status: 503 }, { status: 200, body: { ok: true } }]);
    const done = await run(engine, doc({ url: `${server.origin}/defaults`, retryBaseMs: 1, ...fromInput }), {});
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output).to.deep.include({ status: 200, data: { ok: true } });
    expect(server.requestsTo('/defaults').map((r) => r.url)).to.deep.equal(['/defaults', '/defaults']);
    for (const field of ['url', 'method']) {
      const failed = await run(engine, doc({ url: `${server.origin}/defaults`, [field]: '<start.none>' }), {});
      expect(failed.status, field).to.equal('failed');
      expect(failed.error).to.deep.include({ code: 'INVALID_CONFIG', blockId: 'g' });
      expect(failed.error?.message).to.contain(`/${field}:`);
    }
    expect(server.requestsTo('/defaults')).to.have.length(2);
  });

  it("a block's log counts its whole-block attempts: run three times, failing twice, it says attempts 3", async () => {
    const engine = engineWith(getBus(), store);
    const doc = {
      name: 'retrying block', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'g', type: 'api', name: 'Get', retry: { maxAttempts: 3, backoffMs: 1 }, config: { url: `${server.origin}/twice`, method: 'GET', retries: 0 } },
      ],
      connections: [{ from: 'start', to: 'g' }],
    };
    server.script('/twice', [{ reset: true }, { reset: true }, { status: 200, body: { ok: true } }]);
    const ok = await run(engine, doc, {});
    expect(ok.status, JSON.stringify(ok.error)).to.equal('completed');
    const logs = (await store.executions.get(ok.id))?.logs.filter((l) => l.blockId === 'g') ?? [];
    expect(logs).to.have.length(1);
    expect(logs[0]).to.deep.include({ status: 'completed', attempts: 3 });
    expect(logs[0]?.attemptLog).to.have.length(3);

    // failing every time: three attempts too, the error keeping the calls of the last one (SPEC §3)
    server.script('/twice', [{ reset: true }]);
    const down = await run(engine, doc, {});
    const failedLog = (await store.executions.get(down.id))?.logs.find((l) => l.blockId === 'g');
    expect(failedLog).to.deep.include({ status: 'failed', attempts: 3 });
    expect((failedLog?.error as { code: string; attempts: number }).attempts).to.equal(1);
    expect(server.requestsTo('/twice')).to.have.length(6);
  });

  it("a container's whole-block retry runs it again, every iteration from the start, up to maxAttempts", async () => {
    const engine = engineWith(getBus(), store);
    const doc = (retry: unknown) => ({
      name: 'retrying', blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'l', type: 'loop', name: 'Each', retry, config: { kind: 'forEach', items: ['a', 'b'] } },
        { id: 'g', type: 'api', name: 'Get', parent: 'l', config: { url: `${server.origin}/flaky/<loop.item>`, method: 'GET', retries: 0 } },
      ],
      connections: [{ from: 'start', to: 'l' }],
    });
    // b's first answer is a reset (no response: the child fails the loop); the loop's second attempt gets through
    server.script('/flaky/a', [{ status: 200, body: { n: 1 } }, { status: 200, body: { n: 2 } }]);
    server.script('/flaky/b', [{ reset: true }, { status: 200, body: { n: 3 } }]);
    const { compiled } = loadWorkflow(doc({ maxAttempts: 3, backoffMs: 5 }), testRegistry);
    const handle = await engine.start(compiled, { workflowId: 'api', version: 1, input: {}, trigger: { type: 'manual' } });
    const ok = await handle.done;
    expect(ok.status, JSON.stringify(ok.error)).to.equal('completed');
    const rec = await store.executions.get(ok.id);
    const loopLog = rec?.logs.find((l) => l.blockId === 'l');
    expect(loopLog).to.deep.include({ status: 'completed', attempts: 2 });
    expect((loopLog?.output as { results: { get: { data: unknown } }[] }).results.map((r) => r.get.data)).to.deep.equal([{ n: 2 }, { n: 3 }]);
    expect(server.requestsTo('/flaky/a')).to.have.length(2);

    server.script('/flaky/b', [{ reset: true }, { reset: true }, { reset: true }]);
    server.script('/flaky/a', [{ status: 200 }, { status: 200 }, { status: 200 }]);
    const failed = await run(engine, doc({ maxAttempts: 2, backoffMs: 1 }), {});
    expect(failed.status).to.equal('failed');
    expect(failed.error).to.deep.include({ code: 'CONNECTION_FAILED', blockId: 'l' });
    const failedLog = (await store.executions.get(failed.id))?.logs.find((l) => l.blockId === 'l');
    expect(failedLog).to.deep.include({ status: 'failed', attempts: 2 });

    // the first attempt fails at the third item, the second at the first: the record keeps the
    // second attempt's child logs only, not the first attempt's later iterations
    server.script('/flaky/a', [{ status: 200 }, { reset: true }]);
    server.script('/flaky/b', [{ status: 200 }]);
    server.script('/flaky/c', [{ reset: true }]);
    const two = doc({ maxAttempts: 2, backoffMs: 1 });
    const three = { ...two, blocks: two.blocks.map((b): Record<string, unknown> => (b.id === 'l' ? { ...b, config: { kind: 'forEach', items: ['a', 'b', 'c'] } } : b)) };
    const earlier = await run(engine, three, {});
    expect(earlier.status).to.equal('failed');
    const childLogs = (await store.executions.get(earlier.id))?.logs.filter((l) => l.blockId === 'g') ?? [];
    expect(childLogs.map((l) => [(l.iteration as { index: number }).index, l.status])).to.deep.equal([[0, 'failed']]);
  });
});
