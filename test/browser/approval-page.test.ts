/**
 * The approval link in a real browser (SPEC §2.1): `troupe serve` POSTs the notification to
 * `notify.url` (a local receiver; private addresses allowed for the test), Chromium opens the
 * `approveUrl` it carries, fills the inputFormat field and approves; the execution resumes and
 * takes the `approved` branch with the data. The link then works no more.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvalWorkflow, deploy, ended, until } from '../cli/waiting-helpers.js';
import { call, ensureStopped, startServe, type ServeProcess } from '../cli/serve-helpers.js';
import { launchBrowser, type TestBrowser } from './support.js';

describe('approval link page in Chromium', function () {
  this.timeout(120_000);
  let proc: ServeProcess | undefined;
  let browser: TestBrowser | undefined;
  let receiver: http.Server | undefined;
  const dirs: string[] = [];

  after(async () => {
    await browser?.close();
    await ensureStopped(proc);
    receiver?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the notified link shows the message and form; approving resumes the execution with the data; the link then fails', async () => {
    const notes: { headers: http.IncomingHttpHeaders; body: any }[] = [];
    receiver = http.createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => {
        notes.push({ headers: req.headers, body: JSON.parse(text) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r));
    const notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const dir = mkdtempSync(join(tmpdir(), 'troupe-approval-page-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    proc = await startServe(data, [], { TROUPE_WAIT_POLL_MS: '200', TROUPE_ALLOW_PRIVATE_NETWORK: 'true', TROUPE_VAR_HOOK_TOKEN: 'hook-secret-123' });
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const doc = approvalWorkflow('page', {
      message: 'Refund <b>order</b> 42?',
      inputFormat: [{ name: 'note', type: 'string', required: true, description: 'why' }],
      notify: { url: notifyUrl, headers: { Authorization: 'Bearer {{HOOK_TOKEN}}' } },
    });
    const key = await deploy(proc.url, token, doc);
    const r = await call(proc.url, 'POST', '/api/workflows/page/execute', { apiKey: key, body: { input: {} } });
    expect(r.status).to.equal(202);
    const id = r.body.executionId as string;

    const note = await until(async () => notes[0] ?? null, 10_000, 'the notification');
    expect(note.headers.authorization).to.equal('Bearer hook-secret-123');
    expect(note.body).to.include({ executionId: id, workflowId: 'page', blockId: 'ok', message: 'Refund <b>order</b> 42?', expiresAt: null });
    const approveUrl = note.body.approveUrl as string;
    expect(approveUrl.startsWith(`${proc.url}/approve/`)).to.equal(true);

    browser = await launchBrowser();
    const page = await browser.newPage();
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(approveUrl);
    expect(await page.textContent('.message')).to.equal('Refund <b>order</b> 42?');
    expect(await page.locator('b').count(), 'the message is text, not HTML').to.equal(0);
    await page.fill('input[name="note"]', 'customer was double charged');
    await Promise.all([page.waitForNavigation(), page.click('button.approve')]);
    expect(await page.textContent('h1')).to.equal('Approved');

    const done = await ended(proc.url, token, id);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data).to.deep.equal({ decision: 'approved', data: { note: 'customer was double charged' }, by: 'link' });

    const reuse = await page.goto(approveUrl);
    expect(reuse?.status()).to.equal(404);
    expect(await page.textContent('h1')).to.equal('Link not valid');
    // the notification's secret header is redacted in what is recorded
    const rec = await call(proc.url, 'GET', `/api/executions/${id}`, { token });
    expect(JSON.stringify(rec.body)).to.not.contain('hook-secret-123');
  });
});
