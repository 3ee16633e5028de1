/**
 * Stored payloads are arbitrary user JSON (workflow definitions, inputs, outputs, contexts, block
 * logs, event data, webhook bodies). Keys MongoDB treats specially ('$'-prefixed, dotted, empty)
 * and `__proto__` (special to JavaScript objects) must come back exactly, as own data keys.
 */
import { expect } from 'chai';
import type { ContractContext } from './context.js';
import { blockLog, execution, workflowDef } from './context.js';

/** Built with JSON.parse: an object literal would set the prototype instead of a `__proto__` key. */
function awkward(): Record<string, unknown> {
  return JSON.parse(`{
    "$ref": "#/definitions/a", "$set": { "x": 1 }, "a.b": { "c.d": [1, { "$gt": 2 }] }, "": "empty key",
    "__proto__": { "polluted": true }, "constructor": { "prototype": 1 }, "ünï.cødé$": "\\u0000nul \\ud83d\\ude00",
    "nested": { "$where": "1", "x.y.z": null, "__proto__": [1, 2] }
  }`) as Record<string, unknown>;
}

function expectAwkward(value: unknown, where: string): void {
  expect(value, where).to.deep.equal(awkward());
  const obj = value as Record<string, unknown>;
  // still an own data key, not a prototype: nothing leaked into the object's chain
  expect(Object.prototype.hasOwnProperty.call(obj, '__proto__'), `${where}: __proto__ is an own key`).to.equal(true);
  expect(Object.getPrototypeOf(obj), `${where}: prototype untouched`).to.equal(Object.prototype);
  expect(({} as Record<string, unknown>).polluted, `${where}: Object.prototype untouched`).to.equal(undefined);
  expect(Object.keys(obj).some((k) => k === '_id'), `${where}: no _id`).to.equal(false);
}

export function userKeysContract(ctx: ContractContext): void {
  describe('user JSON keys ($, dots, __proto__) round-trip exactly', () => {
    it('through a workflow definition, and ids with dots and dollars', async () => {
      const s = ctx.store();
      const id = 'wf.$v1';
      const def = { ...workflowDef(id), variables: awkward() };
      await s.workflows.create(def);
      await s.workflows.replace(id, { ...def, variables: { ...awkward(), v: 2 } });
      const { v, ...current } = (await s.workflows.get(id))?.definition.variables as Record<string, unknown>;
      expect(v).to.equal(2);
      expectAwkward(current, 'current version');
      expectAwkward((await s.workflows.getVersion(id, 1))?.definition.variables, 'version 1');
      expect((await s.workflows.list({ limit: 10 })).items.map((w) => w.id)).to.deep.equal([id]);
    });

    it('through an execution record, its logs and its events', async () => {
      const s = ctx.store();
      await s.executions.create(execution('e.$1', 'wf.$', { trigger: awkward(), input: awkward(), context: awkward() }));
      await s.executions.saveBoundary('e.$1', {
        patch: { output: awkward(), error: awkward() },
        logs: [blockLog('$block.one', 0, { input: awkward(), output: awkward(), iteration: { container: 'loop.$', index: 0 } })],
        events: [{ executionId: 'e.$1', seq: 1, event: 'block.completed', data: awkward(), at: '2024-01-01T00:00:01.000Z' }],
      });
      const got = await s.executions.get('e.$1');
      for (const field of ['trigger', 'input', 'output', 'error', 'context'] as const) expectAwkward(got?.[field], field);
      expect(got?.logs[0]?.blockId).to.equal('$block.one');
      expectAwkward(got?.logs[0]?.input, 'log input');
      expectAwkward(got?.logs[0]?.output, 'log output');
      expectAwkward((await s.executions.listEvents('e.$1'))[0]?.data, 'event data');
      const listed = (await s.executions.list('wf.$', { limit: 10 })).items[0];
      expectAwkward(listed?.output, 'listed output');
      expect(Object.keys(listed ?? {})).not.to.include('_id');
    });

    it('through a webhook payload, and memories of a conversation id with dots and dollars', async () => {
      const s = ctx.store();
      const payload = { body: awkward(), headers: { 'x.y': '$1' }, query: { $a: 'b' }, method: 'POST' };
      await s.webhooks.accept({
        id: 'ev1', workflowId: 'wf', triggerId: 'h.$', version: 1, deliveryId: 'd.$', payload,
        receivedAt: '2024-03-01T10:00:00.000Z', status: 'pending', executionId: 'x1', announced: false,
      }, '2024-02-29T10:00:00.000Z');
      const stored = (await s.webhooks.get('ev1'))?.payload as typeof payload;
      expect(stored).to.deep.equal(payload);
      expectAwkward(stored.body, 'webhook body');
      const text = JSON.stringify(awkward());
      await s.memories.append('wf.$', 'conv.$x', [{ role: 'user', content: text }], 10);
      const [entry] = await s.memories.list('wf.$', 'conv.$x');
      expect(entry?.content).to.equal(text);
      expect(entry?.conversationId).to.equal('conv.$x');
      expect(Object.keys(entry ?? {})).to.deep.equal(['conversationId', 'seq', 'role', 'content', 'createdAt']);
    });
  });
}
