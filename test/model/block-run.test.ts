/**
 * Every string form of a block run is stored somewhere (record contexts, log tables, wait and
 * approval keys, the Idempotency-Key an upstream saw), so the one encoder must give exactly what
 * the separate encoders it replaced gave. Each `former*` below is the code as it was before
 * (src/runtime/execution-state.ts logKey, src/store/shared.ts iterationKey, the runKey template
 * of src/runtime/run-block.ts, src/blocks/api.ts idempotencyKeyOf, actors' nested scopes, the
 * wait, approval and workflow blocks' keys and the approval service's `root|{blockId}`),
 * compared with the encoder on literal cases and on generated iteration paths.
 */
import { hash } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import {
  blockRunKey, executionRunKey, idempotencyKeyOf, iterationKeyOf, iterationScope, localRunKey, logKey, logKeyOf, ROOT_SCOPE, runKeyOf, scopeOf,
  topLevelRunKey,
  type IterationPath,
} from '../../src/model/block-run.js';

function formerLogKey(blockId: string, iteration: IterationPath | null): string {
  let key = blockId;
  for (let at: IterationPath | undefined = iteration ?? undefined; at !== undefined; at = at.outer) key += `@${at.container}#${at.index}`;
  return key;
}

function formerSortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(formerSortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = formerSortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

function formerIterationKey(iteration: unknown): string {
  if (iteration === null || iteration === undefined) return '';
  return JSON.stringify(formerSortKeys(iteration));
}

function formerRunKey(executionId: string, runKey: string | undefined, blockId: string): string {
  return `${executionId}|${runKey ?? blockId}`;
}

function formerIdempotencyKey(runKey: string): string {
  const h = hash('sha256', `troupe-idempotency|${runKey}`, 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The wait, approval and workflow blocks' keyOf: the block's runKey without its execution id. */
function formerLocalKey(ctx: { executionId: string; runKey?: string; block: { id: string } }): string {
  const key = ctx.runKey ?? ctx.block.id;
  return key.startsWith(`${ctx.executionId}|`) ? key.slice(ctx.executionId.length + 1) : key;
}

/** How the actors built a nested scope: the execution's scope, then one step per container, outermost first. */
function formerScope(iteration: IterationPath | null): string {
  const chain: IterationPath[] = [];
  for (let at = iteration ?? undefined; at !== undefined; at = at.outer) chain.unshift(at);
  return chain.reduce((scope, at) => `${scope}/${at.container}/${at.index}`, 'root');
}

const ids = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/);
const paths: fc.Arbitrary<IterationPath | null> = fc.option(
  fc.array(fc.tuple(ids, fc.nat({ max: 999 })), { minLength: 1, maxLength: 4 }).map((steps) => {
    let path: IterationPath | undefined;
    for (const [container, index] of steps) path = path === undefined ? { container, index } : { container, index, outer: path };
    return path as IterationPath;
  }),
  { nil: null },
);

describe('block run encoder (src/model/block-run.ts)', () => {
  const nested: IterationPath = { container: 'inner', index: 2, outer: { container: 'loop', index: 0 } };

  it('gives the stored forms of a nested run', () => {
    const run = { blockId: 'b', iteration: nested };
    expect(runKeyOf(run)).to.equal('root/loop/0/inner/2|b');
    expect(runKeyOf({ blockId: 'b', iteration: null })).to.equal('root|b');
    expect(logKeyOf(run)).to.equal('b@inner#2@loop#0');
    expect(iterationKeyOf(nested)).to.equal('{"container":"inner","index":2,"outer":{"container":"loop","index":0}}');
    expect(iterationKeyOf(null)).to.equal('');
    expect(executionRunKey('ex1', runKeyOf(run), 'b')).to.equal('ex1|root/loop/0/inner/2|b');
    expect(executionRunKey('ex1', undefined, 'b')).to.equal('ex1|b');
    expect(idempotencyKeyOf('ex1|root|p')).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('equals each former encoder on any iteration path', () => {
    fc.assert(fc.property(ids, paths, fc.uuid(), (blockId, iteration, executionId) => {
      const run = { blockId, iteration };
      expect(logKeyOf(run)).to.equal(formerLogKey(blockId, iteration));
      expect(logKey(blockId, iteration)).to.equal(formerLogKey(blockId, iteration));
      expect(iterationKeyOf(iteration)).to.equal(formerIterationKey(iteration));
      expect(scopeOf(iteration)).to.equal(formerScope(iteration));
      const runKey = runKeyOf(run);
      expect(runKey).to.equal(`${formerScope(iteration)}|${blockId}`);
      expect(executionRunKey(executionId, runKey, blockId)).to.equal(formerRunKey(executionId, runKey, blockId));
      expect(idempotencyKeyOf(executionRunKey(executionId, runKey, blockId))).to.equal(formerIdempotencyKey(formerRunKey(executionId, runKey, blockId)));
      const given = executionRunKey(executionId, runKey, blockId);
      expect(localRunKey(executionId, given, blockId)).to.equal(formerLocalKey({ executionId, runKey: given, block: { id: blockId } }));
      expect(localRunKey(executionId, undefined, blockId)).to.equal(formerLocalKey({ executionId, block: { id: blockId } }));
      if (iteration === null) expect(topLevelRunKey(blockId)).to.equal(`root|${blockId}`).and.to.equal(localRunKey(executionId, given, blockId));
    }));
  });

  it('keys a stored log the same whatever the order of its iteration fields (parsed back from JSON)', () => {
    const reordered = JSON.parse('{"outer":{"index":0,"container":"loop"},"index":2,"container":"inner"}') as unknown;
    expect(iterationKeyOf(reordered)).to.equal(iterationKeyOf(nested));
    expect(iterationKeyOf(reordered)).to.equal(formerIterationKey(reordered));
  });

  it('builds a nested scope step by step as the containers do', () => {
    expect(blockRunKey(iterationScope(iterationScope(ROOT_SCOPE, 'loop', 0), 'inner', 2), 'b')).to.equal(runKeyOf({ blockId: 'b', iteration: nested }));
  });
});
