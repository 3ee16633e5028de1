/**
 * The approval block through `troupe serve` (SPEC §1.1, §2.1, §4.2): a sync execute reaching an
 * approval answers 202 waiting; decided through the API (admin or the workflow's key) with data
 * checked against its inputFormat; decided through the one-time link's form; one that times out
 * into its `timeout` branch, and one without a `timeout` connection that fails APPROVAL_TIMEOUT.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';
import { approvalWorkflow, deploy, ended } from './waiting-helpers.js';

describe('approval block through troupe serve', function () {
  this.timeout(120_000);
  let proc: ServeProcess | undefined;
  let token = '';
  const dirs: string[] = [];

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-approval-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    proc = await startServe(data, [], { TROUPE_WAIT_POLL_MS: '200' });
    token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
  });
  after(async () => {
    await ensureStopped(proc);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a sync execute reaching an approval answers 202 waiting; the API decides it, with data checked against inputFormat', async () => {
    const url = proc!.url;
    const inputFormat = [{ name: 'note', type: 'string', required: true }, { name: 'amount', type: 'number' }];
    const key = await deploy(url, token, approvalWorkflow('api', { message: 'Ship release 1.2?', inputFormat }));
    const r = await call(url, 'POST', '/api/workflows/api/execute', { apiKey: key, body: { input: {} } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const id = r.body.executionId as string;
    expect(r.body).to.deep.equal({ executionId: id, statusUrl: `/api/executions/${id}`, status: 'waiting' });

    const asAdmin = await call(url, 'GET', `/api/executions/${id}`, { token });
    expect(asAdmin.body.status).to.equal('waiting');
    expect(asAdmin.body.waiting[0]).to.include({ blockId: 'ok', kind: 'approval', message: 'Ship release 1.2?' });
    expect(asAdmin.body.waiting[0].approveUrl).to.match(new RegExp(`^${url}/approve/[A-Za-z0-9_-]+$`));
    const asKey = await call(url, 'GET', `/api/executions/${id}`, { apiKey: key });
    expect(asKey.body.waiting[0], 'the link is for the admin only').to.not.have.property('approveUrl');
    expect(JSON.stringify(asAdmin.body.context)).to.not.contain(asAdmin.body.waiting[0].approveUrl.split('/').at(-1));

    const bad = await call(url, 'POST', `/api/executions/${id}/approvals/ok`, { apiKey: key, body: { decision: 'approved', data: { amount: 'lots' } } });
    expect(bad.status).to.equal(422);
    expect(bad.body.error.code).to.equal('INVALID_INPUT');
    const unknown = await call(url, 'POST', `/api/executions/${id}/approvals/start`, { token, body: { decision: 'approved' } });
    expect(unknown.status).to.equal(409);
    expect(unknown.body.error.code).to.equal('NOT_WAITING');

    const ok = await call(url, 'POST', `/api/executions/${id}/approvals/ok`, { apiKey: key, body: { decision: 'approved', data: { note: 'go', amount: 3 } } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.id).to.equal(id);
    const again = await call(url, 'POST', `/api/executions/${id}/approvals/ok`, { token, body: { decision: 'rejected' } });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('NOT_WAITING');
    const done = await ended(url, token, id);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data).to.deep.equal({ decision: 'approved', data: { note: 'go', amount: 3 }, by: 'apiKey' });
    const log = done.logs.find((l: { blockId: string }) => l.blockId === 'ok');
    expect(log.output).to.include({ decision: 'approved', decidedBy: 'apiKey' });
    expect(Date.parse(log.output.decidedAt)).to.not.be.NaN;
  });

  it('a timeout takes the timeout branch; without one the block fails with APPROVAL_TIMEOUT', async () => {
    const url = proc!.url;
    const key = await deploy(url, token, approvalWorkflow('slowpoke', { message: 'Anyone?', timeoutMs: 1500 }));
    const r = await call(url, 'POST', '/api/workflows/slowpoke/execute', { apiKey: key, body: { input: {}, async: true } });
    const done = await ended(url, token, r.body.executionId as string);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data).to.deep.equal({ decision: 'late' });
    expect(done.logs.find((l: { blockId: string }) => l.blockId === 'ok').output.decision).to.equal('timeout');

    const key2 = await deploy(url, token, approvalWorkflow('nobody', { message: 'Anyone?', timeoutMs: 1500 }, false));
    const r2 = await call(url, 'POST', '/api/workflows/nobody/execute', { apiKey: key2, body: { input: {}, async: true } });
    const failed = await ended(url, token, r2.body.executionId as string);
    expect(failed.status).to.equal('failed');
    expect(failed.error).to.include({ code: 'APPROVAL_TIMEOUT', blockId: 'ok' });
    const late = await call(url, 'POST', `/api/executions/${r2.body.executionId}/approvals/ok`, { token, body: { decision: 'approved' } });
    expect(late.status).to.equal(409);
  });
});
