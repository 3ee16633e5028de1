import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, ensureStopped, root, startServe, type ServeProcess } from './serve-helpers.js';

const probe = new URL('./fixtures/module-log.mjs', import.meta.url).href;
const LOADER = /[/\\]node_modules[/\\](tsx|esbuild|@esbuild|get-tsconfig)[/\\]/;

describe('troupe serve runs the compiled build', function () {
  this.timeout(120_000);
  let dir = '';
  let proc: ServeProcess | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-compiled-'));
  });
  after(async () => {
    await ensureStopped(proc);
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads dist/ JavaScript and no tsx/esbuild module, also while it executes a workflow', async () => {
    const log = join(dir, 'modules.log');
    const data = join(dir, 'data');
    proc = await startServe(data, [], { NODE_OPTIONS: `--import ${probe}`, TROUPE_TEST_MODULE_LOG: log });
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const doc = JSON.parse(readFileSync(join(root, 'examples/hello.json'), 'utf8')) as unknown;
    const created = await call(proc.url, 'POST', '/api/workflows', { token, body: doc });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const deployed = await call(proc.url, 'POST', `/api/workflows/${created.body.id}/deploy`, { token });
    expect(deployed.status, JSON.stringify(deployed.body)).to.equal(201);
    const run = await call(proc.url, 'POST', `/api/workflows/${created.body.id}/execute`, {
      apiKey: deployed.body.apiKey.key as string,
      body: { input: { name: 'ada' } },
    });
    expect(run.status, JSON.stringify(run.body)).to.equal(200);
    await ensureStopped(proc, 'SIGTERM');

    expect(existsSync(log), 'the probe saw the process').to.equal(true);
    const lines = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
    // the probe observes: it saw the compiled CLI, the compiled runtime and a dependency load
    expect(lines.some((l) => l.includes('/dist/src/cli/index.js'))).to.equal(true);
    expect(lines.some((l) => l.includes('/dist/actors/execution.js'))).to.equal(true);
    expect(lines.some((l) => l.includes('/node_modules/koa/'))).to.equal(true);
    expect(lines.filter((l) => LOADER.test(l))).to.deep.equal([]);
    expect(lines.filter((l) => /\.[cm]?ts$/.test(l))).to.deep.equal([]);
  });
});
