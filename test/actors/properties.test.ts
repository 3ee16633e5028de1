/**
 * Property-based tests of the actor runtime against the pure oracle (src/model/plan.ts): random
 * DAGs of `pick` blocks whose chosen handles are random. Every block must end exactly once
 * (completed or skipped), be skipped iff no active connection reaches it, and repeated runs must
 * give identical results.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { planActivation } from '../../src/model/plan.js';
import type { ExecutionEvent } from '../../src/runtime/types.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { forEachBus } from '../helpers/buses.js';
import { runWorkflow, testEngine, testRegistry } from '../helpers/runtime.js';

const HANDLES = ['a', 'b', 'c'];

interface Graph {
  size: number;
  edges: [number, number, string][];
  choices: string[][];
}

/** Blocks 0..n-1 in topological order (0 = starter); edges only go forward, so it is a DAG. */
const graphArb = fc.integer({ min: 2, max: 14 }).chain((size) =>
  fc.record({
    size: fc.constant(size),
    edges: fc.uniqueArray(
      fc.tuple(fc.integer({ min: 0, max: size - 2 }), fc.integer({ min: 1, max: size - 1 }), fc.constantFrom(...HANDLES)).filter(([a, b]) => a < b),
      { maxLength: size * 2, selector: ([a, b, h]) => `${a}-${b}-${h}` },
    ),
    choices: fc.array(fc.subarray(HANDLES), { minLength: size, maxLength: size }),
  }),
);

function toDoc(g: Graph): Record<string, unknown> {
  const blocks = Array.from({ length: g.size }, (_, i) =>
    i === 0
      ? { id: 'b0', type: 'starter', name: 'Start', config: {} }
      : { id: `b${i}`, type: 'pick', name: `b${i}`, config: { handles: HANDLES, choose: g.choices[i] ?? [] } },
  );
  // the starter only has `success`: its edges use that handle
  const connections = g.edges.map(([from, to, handle]) => (from === 0 ? { from: `b${from}`, to: `b${to}` } : { from: `b${from}`, to: `b${to}`, handle }));
  return { id: 'prop', name: 'prop', blocks, connections };
}

function settledStates(events: ExecutionEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of events) {
    if (e.type === 'block.completed' || e.type === 'block.failed' || e.type === 'block.skipped') {
      out.set(e.data.blockId, [...(out.get(e.data.blockId) ?? []), e.data.status]);
    }
  }
  return out;
}

forEachBus('runtime properties over random DAGs', (getBus, kind) => {
  it('every block ends exactly once, skipped iff no active connection reaches it, same result on a rerun', async function () {
    this.timeout(120_000);
    const engine = testEngine(getBus());
    await fc.assert(
      fc.asyncProperty(graphArb, async (g) => {
        const doc = toDoc(g);
        const { compiled } = loadWorkflow(doc, testRegistry);
        const expected = planActivation(compiled, (id) => (id === 'b0' ? ['success'] : (g.choices[Number(id.slice(1))] ?? [])));
        const first = await runWorkflow(engine, doc);
        expect(first.result.status).to.equal('completed');
        const states = settledStates(first.events);
        for (let i = 0; i < g.size; i++) {
          const id = `b${i}`;
          const seen = states.get(id) ?? [];
          expect(seen, `${id} settled ${seen.length} times`).to.have.length(1);
          expect(seen[0]).to.equal(expected.get(id) === 'ran' ? 'completed' : 'skipped');
        }
        const second = await runWorkflow(engine, doc);
        expect(second.result.output).to.deep.equal(first.result.output);
        expect(settledStates(second.events)).to.deep.equal(states);
      }),
      { numRuns: kind === 'memory' ? 60 : 20 },
    );
  });
});
