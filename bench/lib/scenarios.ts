/**
 * The peer benchmark's scenarios as Troupe workflows (SPEC §1): S1 starter → response, S2 + an
 * API block to a local upstream, S3f ten chained function blocks, S4 eight function blocks fanned
 * out and joined by a function. Shared by `make bench` (stored bytes per execution) and `make
 * bench-peers` (throughput against Node-RED), so both measure the same workflows.
 */

export type ScenarioKey = 's1' | 's2' | 's3f' | 's4';
export const SCENARIOS: readonly ScenarioKey[] = ['s1', 's2', 's3f', 's4'];

/** every scenario's request input */
export const SCENARIO_INPUT = { n: 42, msg: 'hello' };

type Block = { id: string; type: string; name: string; config: Record<string, unknown> };

const start: Block = { id: 'start', type: 'starter', name: 'Start', config: {} };
const respond = (data: unknown): Block => ({ id: 'respond', type: 'response', name: 'Respond', config: { status: 200, data } });
const fn = (id: string, code: string): Block => ({ id, type: 'function', name: id, config: { code } });
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

function workflow(key: ScenarioKey, blocks: Block[], edges?: [string, string][]): Record<string, unknown> {
  const chain = blocks.slice(1).map((b, i): [string, string] => [(blocks[i] as Block).id, b.id]);
  return { id: `bench-${key}`, name: `bench ${key}`, blocks, connections: (edges ?? chain).map(([from, to]) => ({ from, to })) };
}

/** The four workflows; S2's API block calls `http://127.0.0.1:{upstreamPort}/?n=42`. */
export function scenarioWorkflows(upstreamPort: number): Record<ScenarioKey, Record<string, unknown>> {
  const chain = range(10).map((k) => fn(`f${k}`, `return { ...${k === 1 ? '<start.input>' : `<f${k - 1}.result>`}, f${k}: ${k} };`));
  const branches = range(8).map((k) => fn(`b${k}`, 'return <start.n>;'));
  const join = fn('join', `return { ${range(8).map((k) => `b${k}: <b${k}.result>`).join(', ')} };`);
  return {
    s1: workflow('s1', [start, respond('<start.input>')]),
    s2: workflow('s2', [
      start,
      { id: 'upstream', type: 'api', name: 'Upstream', config: { url: `http://127.0.0.1:${upstreamPort}/?n=<start.n>`, method: 'GET' } },
      respond('<upstream.data>'),
    ]),
    s3f: workflow('s3f', [start, ...chain, respond('<f10.result>')]),
    s4: workflow('s4', [start, ...branches, join, respond('<join.result>')], [
      ...range(8).flatMap((k): [string, string][] => [['start', `b${k}`], [`b${k}`, 'join']]),
      ['join', 'respond'],
    ]),
  };
}
