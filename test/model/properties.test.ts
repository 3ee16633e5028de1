import { expect } from 'chai';
import fc from 'fast-check';
import { compileWorkflow, type CompiledWorkflow } from '../../src/model/graph.js';
import { planActivation, type PlannedState } from '../../src/model/plan.js';
import { activatedConnections, decideReadiness, startDecision, type InputState } from '../../src/model/readiness.js';
import type { BlockDef, ConnectionDef, WorkflowDef } from '../../src/model/types.js';
import { validateWorkflow } from '../../src/model/validate.js';
import { registry } from './fixtures.js';

const HANDLES: Record<string, string[]> = { function: ['success', 'error'], condition: ['b0', 'b1', 'else', 'error'] };

interface Scenario {
  def: WorkflowDef;
  chosen: Record<string, string[]>;
  seed: number;
}

/** Random DAG: block 0 is the starter; every edge goes from a lower to a higher index. */
const scenario: fc.Arbitrary<Scenario> = fc
  .integer({ min: 2, max: 30 })
  .chain((n) =>
    fc.record({
      n: fc.constant(n),
      types: fc.array(fc.constantFrom('function', 'condition'), { minLength: n, maxLength: n }),
      edges: fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1), fc.nat(3)), { maxLength: n * 3 }),
      picks: fc.array(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), { minLength: n, maxLength: n }),
      seed: fc.integer(),
    }),
  )
  .map(({ n, types, edges, picks, seed }) => {
    const blocks: BlockDef[] = [{ id: 'b0', type: 'starter', name: 'Start', config: {} }];
    for (let i = 1; i < n; i++) {
      const type = types[i] ?? 'function';
      const config = type === 'condition' ? { branches: [{ id: 'b0', expression: 'x' }, { id: 'b1', expression: 'y' }], else: true } : { code: 'return 1' };
      blocks.push({ id: `b${i}`, type, name: `Block ${i}`, config });
    }
    const handlesOf = (i: number): string[] => (i === 0 ? ['success'] : (HANDLES[blocks[i]?.type ?? 'function'] ?? []));
    const connections: ConnectionDef[] = [];
    for (const [x, y, h] of edges) {
      const [from, to] = [Math.min(x, y), Math.max(x, y)];
      if (from === to || to === 0) continue;
      const hs = handlesOf(from);
      connections.push({ from: `b${from}`, to: `b${to}`, handle: hs[h % hs.length] ?? 'success' });
    }
    const chosen: Record<string, string[]> = {};
    blocks.forEach((b, i) => {
      chosen[b.id] = handlesOf(i).filter((_, k) => picks[i]?.[k] === true);
    });
    return { def: { name: 'random', blocks, connections }, chosen, seed };
  });

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Actor-style simulation: messages delivered in a random order, decisions from readiness.ts. */
function simulate(c: CompiledWorkflow, chosen: Record<string, string[]>, seed: number): Map<string, PlannedState> {
  const random = rng(seed);
  const inputs = new Map([...c.blocks.values()].map((b) => [b.id, new Map(b.incoming.map((x) => [x.index, 'pending' as InputState]))]));
  const result = new Map<string, PlannedState>();
  const mail: { to: string; index: number; active: boolean }[] = [];
  const settle = (id: string, ran: boolean): void => {
    if (result.has(id)) throw new Error(`${id} settled twice`);
    result.set(id, ran ? 'ran' : 'skipped');
    const { active, inactive } = activatedConnections(c.blocks.get(id)!, ran ? (chosen[id] ?? []) : []);
    for (const x of active) mail.push({ to: x.to, index: x.index, active: true });
    for (const x of inactive) mail.push({ to: x.to, index: x.index, active: false });
  };
  for (const id of c.order) {
    const first = startDecision(c, id);
    if (first !== 'wait') settle(id, first === 'run');
  }
  while (mail.length > 0) {
    const [msg] = mail.splice(Math.floor(random() * mail.length), 1);
    const states = inputs.get(msg!.to)!;
    states.set(msg!.index, msg!.active ? 'active' : 'inactive');
    const decision = decideReadiness([...states.values()]);
    if (decision !== 'wait') settle(msg!.to, decision === 'run');
  }
  return result;
}

describe('model properties over random DAGs', () => {
  it('validation accepts every acyclic graph and compile keeps every block', () => {
    fc.assert(
      fc.property(scenario, ({ def }) => {
        const result = validateWorkflow(def, registry);
        expect(result.ok, JSON.stringify(result)).to.equal(true);
        const c = compileWorkflow(def, registry);
        expect(c.order).to.have.length(def.blocks.length);
        expect(c.connections).to.have.length(def.connections.length);
      }),
      { numRuns: 200 },
    );
  });

  it('planActivation gives each block one state: ran iff starter or reached by an activated connection from a block that ran', () => {
    fc.assert(
      fc.property(scenario, ({ def, chosen }) => {
        const c = compileWorkflow(def, registry);
        const plan = planActivation(c, (id) => chosen[id] ?? []);
        expect([...plan.keys()].sort()).to.deep.equal([...c.order].sort());
        for (const block of c.blocks.values()) {
          const reached = block.incoming.some((x) => plan.get(x.from) === 'ran' && (chosen[x.from] ?? []).includes(x.handle));
          expect(plan.get(block.id)).to.equal(block.id === c.starterId || reached ? 'ran' : 'skipped');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('readiness decisions in any message order settle every block once and agree with the oracle', () => {
    fc.assert(
      fc.property(scenario, fc.integer(), ({ def, chosen, seed }, seed2) => {
        const c = compileWorkflow(def, registry);
        const plan = planActivation(c, (id) => chosen[id] ?? []);
        const first = simulate(c, chosen, seed);
        expect(Object.fromEntries(first)).to.deep.equal(Object.fromEntries(plan));
        expect(Object.fromEntries(simulate(c, chosen, seed2))).to.deep.equal(Object.fromEntries(first));
      }),
      { numRuns: 300 },
    );
  });

  it('validation rejects the graph once a back edge closes a cycle, at that connection', () => {
    fc.assert(
      fc.property(scenario, fc.nat(), ({ def }, pick) => {
        const candidates = def.connections.filter((x) => x.from !== 'b0');
        fc.pre(candidates.length > 0);
        const edge = candidates[pick % candidates.length]!;
        const cyclic: WorkflowDef = { ...def, connections: [...def.connections, { from: edge.to, to: edge.from, handle: 'error' }] };
        const result = validateWorkflow(cyclic, registry);
        expect(result.ok).to.equal(false);
        if (!result.ok) expect(result.issues.map((i) => i.path)).to.deep.equal([`/connections/${def.connections.length}`]);
      }),
      { numRuns: 200 },
    );
  });

  it('carry sets only name ancestors of the source (or the source) that some downstream block reads', () => {
    fc.assert(
      fc.property(scenario, fc.array(fc.tuple(fc.nat(29), fc.nat(29)), { maxLength: 20 }), ({ def }, refs) => {
        const n = def.blocks.length;
        for (const [reader, read] of refs) {
          const block = def.blocks[(reader % (n - 1)) + 1]!;
          if (block.type === 'function') block.config = { code: `${String(block.config['code'])}; <block ${(read % (n - 1)) + 1}.result>` };
        }
        const c = compileWorkflow(def, registry);
        for (const conn of c.connections) {
          const sources = new Set(upstream(c, conn.from));
          const readers = downstream(c, conn.to);
          const expected = [...c.blocks.values()]
            .filter((b) => sources.has(b.id) && readers.some((r) => c.blocks.get(r)!.references.includes(b.normName)))
            .map((b) => b.normName);
          expect(c.carry.get(conn.index)).to.deep.equal(expected);
        }
      }),
      { numRuns: 150 },
    );
  });
});

function upstream(c: CompiledWorkflow, id: string): string[] {
  const out = new Set([id]);
  const stack = [id];
  while (stack.length) for (const x of c.blocks.get(stack.pop()!)!.incoming) if (!out.has(x.from)) out.add(x.from) && stack.push(x.from);
  return [...out];
}

function downstream(c: CompiledWorkflow, id: string): string[] {
  const out = new Set([id]);
  const stack = [id];
  while (stack.length) for (const x of c.blocks.get(stack.pop()!)!.outgoing) if (!out.has(x.to)) out.add(x.to) && stack.push(x.to);
  return [...out];
}
