/** Shared by the waiting tests (wait, approval): a workflow with an approval, deploy, poll until ended. */
import { expect } from 'chai';
import { call } from './serve-helpers.js';

export function approvalWorkflow(id: string, approval: Record<string, unknown>, withTimeout = true): unknown {
  return {
    id,
    name: `Approval ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'ok', type: 'approval', name: 'Review', config: approval },
      { id: 'yes', type: 'response', name: 'Yes', config: { status: 200, data: { decision: '<review.decision>', data: '<review.data>', by: '<review.decidedBy>' } } },
      { id: 'no', type: 'response', name: 'No', config: { status: 200, data: { decision: '<review.decision>' } } },
      ...(withTimeout ? [{ id: 'late', type: 'response', name: 'Late', config: { status: 200, data: { decision: 'late' } } }] : []),
    ],
    connections: [
      { from: 'start', to: 'ok' },
      { from: 'ok', handle: 'approved', to: 'yes' },
      { from: 'ok', handle: 'rejected', to: 'no' },
      ...(withTimeout ? [{ from: 'ok', handle: 'timeout', to: 'late' }] : []),
    ],
  };
}

export async function deploy(url: string, token: string, doc: unknown): Promise<string> {
  const created = await call(url, 'POST', '/api/workflows', { token, body: doc });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const deployed = await call(url, 'POST', `/api/workflows/${created.body.id}/deploy`, { token });
  expect(deployed.status).to.equal(201);
  return deployed.body.apiKey.key as string;
}

export async function until<T>(probe: () => Promise<T | null>, boundMs: number, what: string): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const got = await probe();
    if (got !== null) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function ended(url: string, token: string, id: string): Promise<any> {
  return until(async () => {
    const rec = await call(url, 'GET', `/api/executions/${id}`, { token });
    return rec.body.status === 'waiting' || rec.body.status === 'running' ? null : rec.body;
  }, 60_000, `execution ${id} to end`);
}

