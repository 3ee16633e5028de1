/**
 * The several-instances benchmark's throughput workflow, on the upstream its takeover round
 * shares with the takeover test (test/cluster/holding-upstream.ts).
 */

/** start → a function block (a little work on the input) → an API block GET to the upstream → response. */
export function throughputWorkflow(port: number): unknown {
  return {
    id: 'bench-cluster',
    name: 'bench cluster',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
      { id: 'shape', type: 'function', name: 'Shape', config: { code: 'const n = <start.n>;\nreturn { n, square: n * n, tag: "n-" + n };' } },
      { id: 'upstream', type: 'api', name: 'Upstream', config: { url: `http://127.0.0.1:${port}/?n=<shape.result.n>`, method: 'GET' } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { n: '<upstream.data.n>', square: '<shape.result.square>' } } },
    ],
    connections: [
      { from: 'start', to: 'shape' },
      { from: 'shape', to: 'upstream' },
      { from: 'upstream', to: 'reply' },
    ],
  };
}
