/**
 * The console (SPEC §8) in Chromium through the real app: sign in, the graph, an issue shown at
 * its block, a new version, two versions compared, a run from the input form watched live, a
 * block's input and output with the secret as ***, a rerun from a block, a rollback, sign-out.
 * Each step leaves a screenshot in test-output/console-screenshots/.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN, auth } from '../http/support.js';
import { resetProbe } from '../helpers/runtime.js';
import { startConsole, until, type ConsoleRig } from './console-support.js';

const SECRET = 's3cr3t-value-for-the-console';

const WORKFLOW = {
  id: 'greeter',
  name: 'Greeter',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'city', type: 'string', required: true }] } },
    { id: 'prep', type: 'sleep', name: 'Prep', config: { ms: 0, value: 'prepared' } },
    { id: 'rounds', type: 'loop', name: 'Rounds', config: { kind: 'for', iterations: 2 } },
    { id: 'tick', type: 'sleep', name: 'Tick', parent: 'rounds', config: { ms: 100 } },
    { id: 'nap', type: 'sleep', name: 'Nap', config: { ms: 1500 } },
    { id: 'old', type: 'sleep', name: 'Old', enabled: false, config: { ms: 0 } },
    { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { city: '<start.city>', prep: '<prep.value>', auth: 'Bearer {{TOKEN}}' } } },
  ],
  connections: [
    { from: 'start', to: 'prep' }, { from: 'prep', to: 'rounds' }, { from: 'rounds', to: 'nap' }, { from: 'nap', to: 'reply' },
  ],
};

/** The definition as the editor would hold it after a person's edit. */
function edited(change: (w: typeof WORKFLOW) => void): string {
  const copy = structuredClone(WORKFLOW);
  change(copy);
  return JSON.stringify(copy, null, 2);
}

async function replaceEditorText(page: Page, text: string): Promise<void> {
  await page.click('.json-editor .cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"] [data-block-id="${id}"]`);

describe('browser: the console', function () {
  this.timeout(90_000);
  let rig: ConsoleRig;
  let page: Page;
  let firstExecution = '';

  before(async () => {
    rig = await startConsole();
    page = rig.page;
    await rig.h.http.put('/api/secrets/TOKEN').set(auth).send({ value: SECRET }).expect(201);
    await rig.h.http.post('/api/workflows').set(auth).send(WORKFLOW).expect(201);
  });
  after(async () => {
    await rig?.close();
  });
  afterEach(function () {
    // a script error anywhere fails the step it happened in
    expect(rig.problems, 'errors in the page').to.deep.equal([]);
  });

  it('GET / leads to the sign-in; a wrong token says where the right one is; the admin token signs in', async () => {
    await page.goto(`${rig.base}/`);
    expect(new URL(page.url()).pathname).to.equal('/console/');
    await rig.shot('01-sign-in');
    await page.fill('#token', 'not-the-token');
    await page.click('#signin-submit');
    expect(await page.locator('#signin-error').textContent()).to.contain('TROUPE_ADMIN_TOKEN');
    await page.fill('#token', ADMIN);
    await page.press('#token', 'Enter');
    await page.locator('a.workflow-link', { hasText: 'Greeter' }).waitFor();
    expect(page.url()).to.not.contain(ADMIN);
    const cookies = await rig.browser.context.cookies(`${rig.base}/api/workflows`);
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).to.deep.equal([['troupe_console', true, 'Strict']]);
    await page.fill('#workflow-search', 'gree');
    expect(await page.locator('a.workflow-link').allTextContents()).to.deep.equal(['Greeter']);
    await page.fill('#workflow-search', 'nothing like it');
    await page.locator('.empty').waitFor();
    await rig.shot('02-workflows');
    await page.fill('#workflow-search', '');
  });

  it('opens a workflow and shows its blocks on the graph: the loop around its child, the disabled block marked', async () => {
    await page.click('a.workflow-link');
    await node(page, 'reply').waitFor();
    for (const id of ['start', 'prep', 'rounds', 'tick', 'nap', 'old', 'reply']) expect(await node(page, id).count(), id).to.equal(1);
    const loop = await page.locator('.react-flow__node[data-id="rounds"]').boundingBox();
    const child = await page.locator('.react-flow__node[data-id="tick"]').boundingBox();
    expect(child!.x).to.be.greaterThan(loop!.x);
    expect(child!.x + child!.width).to.be.lessThan(loop!.x + loop!.width);
    const start = await page.locator('.react-flow__node[data-id="start"]').boundingBox();
    const reply = await page.locator('.react-flow__node[data-id="reply"]').boundingBox();
    expect(reply!.x, 'left to right').to.be.greaterThan(start!.x);
    expect(await node(page, 'old').getAttribute('class')).to.contain('disabled');
    await rig.shot('03-graph');
    await page.emulateMedia({ colorScheme: 'dark' });
    await rig.shot('03-graph-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('breaks the definition: the issue shows in the editor and on its block; then saves version 2', async () => {
    await page.click('#tab-edit');
    await page.locator('.json-editor .cm-content').waitFor();
    await replaceEditorText(page, edited((w) => { (w.blocks[6]!.config.data as Record<string, string>).city = '<nosuch.city>'; }));
    await page.click('#save');
    await node(page, 'reply').and(page.locator('.has-issue')).waitFor();
    expect(await page.locator('#save-status').textContent()).to.contain('issue');
    await page.locator('.json-editor .cm-lintRange-error').first().waitFor();
    expect(await page.locator('.issues').textContent()).to.contain('/blocks/6');
    await rig.shot('04-definition-issue');

    await replaceEditorText(page, edited((w) => { w.blocks[4]!.config.ms = 1200; }));
    await page.click('#save');
    await until(() => page.locator('#save-status').textContent(), (t) => t === 'Saved as version 2.', 'the save');
    await until(() => page.locator('#current-version').textContent(), (t) => t === 'version 2', 'version 2 in the title');
    expect(await page.locator('.has-issue').count()).to.equal(0);
  });

  it('compares versions 1 and 2 side by side', async () => {
    await page.click('#tab-versions');
    await page.locator('tr[data-version="2"]').waitFor();
    await page.selectOption('#compare-left', '1');
    await page.selectOption('#compare-right', '2');
    await page.click('#compare');
    await page.locator('.cm-mergeView').waitFor();
    expect(await page.locator('.cm-mergeView .cm-changedLine').count()).to.be.greaterThan(0);
    expect(await page.locator('.cm-mergeView').textContent()).to.contain('1200');
    await rig.shot('05-compare-versions');
  });

  it('runs from the input form and shows the blocks changing state live', async () => {
    await page.click('#tab-run');
    await page.fill('#input-city', 'Oslo');
    await rig.shot('06-run-form');
    await page.click('#run');
    await page.locator('#execution-status').waitFor();
    firstExecution = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    const seen = new Set<string>();
    await until(async () => {
      const s = await node(page, 'nap').getAttribute('data-status').catch(() => null);
      if (s) seen.add(s);
      if (s === 'running' && !seen.has('shot')) {
        seen.add('shot');
        await rig.shot('07-run-live');
      }
      return s;
    }, (s) => s === 'completed', 'Nap to complete', 600);
    expect([...seen]).to.include('running');
    await until(() => page.locator('#execution-status').getAttribute('data-status'), (s) => s === 'completed', 'the run to complete');
    expect(await node(page, 'prep').getAttribute('data-status')).to.equal('completed');
    expect(await page.locator('.timeline .bar[data-block-id="tick"]').count(), 'one bar per iteration').to.equal(2);
  });

  it('lists executions across workflows, filtered, with new ones appearing live', async () => {
    await page.goto(`${rig.base}/console/#/executions`);
    await page.locator('a.execution-link', { hasText: firstExecution }).waitFor();
    const before = await page.locator('a.execution-link').count();
    const run = await rig.h.http.post('/api/workflows/greeter/run').set(auth).send({ input: { city: 'Lima' } }).expect(200);
    const fresh = run.headers['x-execution-id'] as string;
    await page.locator('a.execution-link', { hasText: fresh }).waitFor();
    expect(await page.locator('a.execution-link').count()).to.equal(before + 1);
    await rig.shot('08-executions');
    await page.selectOption('#filter-status', 'failed');
    await page.locator('.empty', { hasText: 'No execution matches' }).waitFor();
    await page.selectOption('#filter-status', '');
    await page.locator('a.execution-link', { hasText: fresh }).waitFor();
  });

  it("opens the execution and shows a block's input and output, the secret as *** (a block chosen with the keyboard)", async () => {
    await page.locator('a.execution-link', { hasText: firstExecution }).click();
    await node(page, 'reply').waitFor();
    await page.focus('.react-flow__node[data-id="reply"]');
    await page.keyboard.press('Enter');
    await page.locator('#inspector .json-view').first().waitFor();
    const shown = await page.locator('#inspector .json-view').evaluateAll((els) => els.map((e) => e.getAttribute('data-json') ?? ''));
    expect(shown.join('\n')).to.contain('Bearer ***').and.to.contain('Oslo').and.not.contain(SECRET);
    expect(await page.locator('#inspector').textContent()).to.not.contain(SECRET);
    await rig.shot('09-execution-inspector');
  });

  it('reruns from a block: the blocks before it are not run again', async () => {
    const probe = resetProbe();
    await node(page, 'nap').click();
    const before = page.url();
    await page.click('#rerun-from');
    // the new execution's page opens (or the page says why not)
    await until(async () => page.url() !== before || (await page.locator('#execution-note').count()) > 0, (moved) => moved, 'the rerun to start');
    const note = page.locator('#execution-note');
    expect(page.url(), (await note.count()) > 0 ? ((await note.textContent()) ?? '') : '').to.not.equal(before);
    await until(() => page.locator('#execution-status').getAttribute('data-status').catch(() => null), (s) => s === 'completed', 'the rerun to complete');
    expect(await page.locator('.summary').textContent()).to.contain('from block nap');
    expect(probe.runs['Nap']).to.equal(1);
    expect(probe.runs['Prep'], 'Prep is not run again').to.equal(undefined);
    expect(probe.runs['Tick'], 'the loop is not run again').to.equal(undefined);
    await node(page, 'prep').click();
    expect(await page.locator('#inspector .carried').textContent()).to.contain('not run again');
    await rig.shot('10-rerun-from-block');
  });

  it('rolls back to version 1', async () => {
    await page.goto(`${rig.base}/console/#/workflows/greeter/versions`);
    await page.click('#deploy-current');
    await until(() => page.locator('#deploy-status').textContent(), (t) => (t ?? '').startsWith('Deployed'), 'the deploy');
    await page.locator('tr[data-version="1"] .deploy-version').click();
    await until(() => page.locator('tr[data-version="1"] .pill').count(), (n) => n === 1, 'version 1 deployed');
    expect(await page.locator('tr[data-version="2"] .pill').count()).to.equal(0);
    const run = await rig.h.http.post('/api/workflows/greeter/execute').set('X-API-Key', await page.locator('#new-key').textContent() ?? '').send({ city: 'Rome' });
    expect(run.status).to.equal(200);
    await rig.shot('11-rollback');
  });

  it('shows the deployment (endpoint, keys) and the secrets by name only', async () => {
    await page.goto(`${rig.base}/console/#/workflows/greeter/deploy`);
    expect(await page.locator('#endpoint').textContent()).to.contain('/api/workflows/greeter/execute');
    await page.click('#add-key');
    expect(await page.locator('#fresh-key').textContent()).to.match(/^trp_/);
    await rig.shot('12-deployment');
    await page.click('nav[aria-label="Main"] a:has-text("Secrets")');
    await page.locator('table[aria-label="Secrets"] code', { hasText: 'TOKEN' }).waitFor();
    expect(await page.content()).to.not.contain(SECRET);
    await rig.shot('13-secrets');
  });

  it('signs out: the session ends on the server', async () => {
    await page.click('#sign-out');
    await page.locator('#token').waitFor();
    const status = await page.evaluate(() => fetch('/api/workflows', { headers: { 'X-Troupe-Console': '1' } }).then((r) => r.status));
    expect(status).to.equal(401);
    await page.reload();
    await page.locator('#token').waitFor();
    await rig.shot('14-signed-out');
  });
});
