import { expect } from 'chai';
import { formatResult, formatSummary } from '../../src/cli/progress.js';
import type { ExecutionResult } from '../../src/runtime/types.js';

function result(over: Partial<ExecutionResult>): ExecutionResult {
  return {
    id: 'e1',
    workflowId: 'wf',
    version: 1,
    status: 'completed',
    output: null,
    error: null,
    response: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:00.042Z',
    durationMs: 42,
    ...over,
  } as ExecutionResult;
}

describe('troupe run: what goes to stdout and stderr', () => {
  it('puts only the output, as JSON, on stdout for a completed run (`| jq` reads it)', () => {
    const done = result({ output: { result: { sum: 6 }, stdout: '' } });
    expect(JSON.parse(formatResult(done))).to.deep.equal({ result: { sum: 6 }, stdout: '' });
    expect(JSON.parse(formatResult(result({ output: undefined })))).to.equal(null);
    expect(formatSummary(done)).to.equal('execution e1 completed in 42 ms\n');
  });

  it('puts the error, as JSON, on stdout for a run that failed, and says why on the summary line', () => {
    const error = { code: 'FUNCTION_ERROR', message: 'nope', blockId: 'f' };
    const failed = result({ status: 'failed', error });
    expect(JSON.parse(formatResult(failed))).to.deep.equal({ error });
    expect(formatSummary(failed)).to.equal('execution e1 failed in 42 ms: FUNCTION_ERROR: nope (block f)\n');
    const cancelled = result({ status: 'cancelled', error: { code: 'CANCELLED', message: 'execution cancelled', blockId: null } });
    expect(formatSummary(cancelled)).to.equal('execution e1 cancelled in 42 ms: CANCELLED: execution cancelled\n');
  });
});
