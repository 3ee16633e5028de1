/**
 * A pending approval in the console (SPEC §2.1, §8) in Chromium against `troupe serve` (approval
 * blocks run only in a served service): the waiting execution in the list's `waiting` filter, its
 * approval block `waiting` on the graph with the message, a required field left empty explained
 * (422 INVALID_INPUT), a decision someone else made first explained (409 NOT_WAITING), then
 * Approve with the inputFormat field from the execution page: the run resumes and completes on
 * its `approved` path, decided by the admin. Screenshots go to test-output/console-screenshots/.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Page, Route } from 'playwright-core';
import { approvalWorkflow, deploy, ended } from '../cli/waiting-helpers.js';
import { call, ensureStopped, startServe, type ServeProcess } from '../cli/serve-helpers.js';
import { SCREENSHOTS, until } from './console-support.js';
import { launchBrowser, type TestBrowser } from './support.js';

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"] [data-block-id="${id}"]`);

describe('browser: deciding an approval in the console', function () {
  this.timeout(120_000);
  let proc: ServeProcess | undefined;
  let browser: TestBrowser | undefined;
  let page: Page;
  let token = '';
  let apiKey = '';
  const problems: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'troupe-console-approval-'));
  const shot = (name: string): Promise<unknown> => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const execute = async (): Promise<string> => {
    const r = await call(proc!.url, 'POST', '/api/workflows/ship/execute', { apiKey, body: { input: {} } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    expect(r.body.status).to.equal('waiting');
    return r.body.executionId as string;
  };

  before(async () => {
    proc = await startServe(join(dir, 'data'), [], { TROUPE_WAIT_POLL_MS: '200' });
    token = readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim();
    apiKey = await deploy(proc.url, token, approvalWorkflow('ship', {
      message: 'Ship release 7?',
      inputFormat: [{ name: 'note', type: 'string', required: true, description: 'why' }],
    }, false));
    await deploy(proc.url, token, {
      id: 'later', name: 'Later',
      blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'nap', type: 'wait', name: 'Nap', config: { duration: 'PT1H' } }],
      connections: [{ from: 'start', to: 'nap' }],
    });
    browser = await launchBrowser();
    page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => problems.push(err.message));
    await page.goto(`${proc.url}/console/`);
    await page.fill('#token', token);
    await page.press('#token', 'Enter');
    await page.locator('a.workflow-link').first().waitFor();
  });
  after(async () => {
    await browser?.close();
    await ensureStopped(proc);
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    expect(problems, 'errors in the page').to.deep.equal([]);
  });

  it('a parked wait: waiting on the graph and the timeline, its bar dashed on to its until; no decision offered', async () => {
    const r = await call(proc!.url, 'POST', '/api/workflows/later/run', { token, body: { input: {} } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    await page.goto(`${proc!.url}/console/#/executions/${r.body.executionId as string}`);
    await until(() => node(page, 'nap').getAttribute('data-status'), (s) => s === 'waiting', 'the wait block waiting on the graph');
    expect(await page.locator('#waiting .waiting-entry[data-block-id="nap"]').getAttribute('data-kind')).to.equal('wait');
    expect(await page.locator('#waiting .waiting-entry').textContent()).to.contain('until');
    expect(await page.locator('.timeline .bar[data-block-id="nap"] .bar-due').count(), 'the dashed part up to until').to.equal(1);
    expect(await page.locator('#waiting button').count(), 'a wait is not decided').to.equal(0);
    await shot('25-execution-wait-until');
  });

  it('a decision made elsewhere first: the console says the block no longer waits (NOT_WAITING)', async () => {
    const id = await execute();
    await page.goto(`${proc!.url}/console/#/executions/${id}`);
    await page.locator('#waiting button.reject').waitFor();
    await page.click('#waiting button.reject');
    expect(await page.locator('#approval-ok-problem').textContent(), 'the required field, left empty (422)').to.contain('/data/note');
    await shot('24-approval-invalid');
    // the page reads the record again every second: held back, it still offers the decision
    const held: Route[] = [];
    const pattern = `**/api/executions/${id}`;
    await page.route(pattern, (route) => (route.request().method() === 'GET' ? void held.push(route) : route.continue()));
    const other = await call(proc!.url, 'POST', `/api/executions/${id}/approvals/ok`, { token, body: { decision: 'rejected', data: { note: 'not today' } } });
    expect(other.status).to.equal(200);
    await page.click('#waiting button.reject');
    await until(() => page.locator('#execution-note').textContent(), (t) => t?.includes('no longer waits') === true, 'the 409 explained');
    for (const r of held) await r.continue();
    await page.unroute(pattern);
    await until(() => page.locator('#execution-status').getAttribute('data-status'), (s) => s === 'completed', 'the rejected run ending');
    expect((await ended(proc!.url, token, id)).output.data).to.deep.equal({ decision: 'rejected' });
  });

  it('the waiting execution is listed as waiting; its block waits on the graph; Approve with the field completes it', async () => {
    const id = await execute();
    await page.goto(`${proc!.url}/console/#/executions`);
    await page.selectOption('#filter-status', 'waiting');
    const row = page.locator(`tr[data-status="waiting"]`, { has: page.locator(`a[href$="${id}"]`) });
    await row.waitFor();
    // both counts of one rendering: the list refreshes itself every 2 s, and two separate reads could straddle a refresh
    const statuses = await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
    expect(statuses.length, 'only waiting executions').to.equal(statuses.filter((st) => st === 'waiting').length);
    await shot('20-executions-waiting');

    await row.locator('a.execution-link').click();
    await until(() => node(page, 'ok').getAttribute('data-status'), (s) => s === 'waiting', 'the approval block waiting on the graph');
    expect(await page.locator('#execution-status').getAttribute('data-status')).to.equal('waiting');
    expect(await page.locator('.legend').textContent()).to.contain('waiting');
    expect(await page.locator('#waiting .waiting-message').textContent()).to.equal('Ship release 7?');
    expect(await page.locator('#waiting .waiting-entry[data-block-id="ok"]').getAttribute('data-kind')).to.equal('approval');
    expect(await page.locator('.timeline .bar[data-block-id="ok"]').count(), 'the waiting bar on the timeline').to.equal(1);
    await shot('21-execution-waiting');

    await page.fill('#approval-ok-note', 'all checks green');
    await shot('22-approval-form');
    await page.click('#waiting button.approve');
    await until(() => page.locator('#execution-note').textContent(), (t) => t?.startsWith('Approved ok') === true, 'the answer');
    await until(() => page.locator('#execution-status').getAttribute('data-status'), (s) => s === 'completed', 'the execution completing in the page');
    await until(() => node(page, 'ok').getAttribute('data-status'), (s) => s === 'completed', 'the approval block completed on the graph');
    expect(await page.locator('#waiting').count(), 'nothing waits any more').to.equal(0);
    await shot('23-execution-approved');

    const done = await ended(proc!.url, token, id);
    expect(done.status).to.equal('completed');
    expect(done.output.data).to.deep.equal({ decision: 'approved', data: { note: 'all checks green' }, by: 'admin' });
  });
});
