/**
 * `troupe serve` (child process) prints where the console is and serves it at `/` (SPEC §8);
 * TROUPE_CONSOLE=false serves no console and prints no such line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';

async function printed(p: ServeProcess, pattern: RegExp): Promise<RegExpExecArray> {
  for (let i = 0; i < 100; i++) {
    const m = pattern.exec(p.stdout());
    if (m !== null) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not printed: ${pattern}\nstdout: ${p.stdout()}`);
}

describe('troupe serve: the console', function () {
  this.timeout(90_000);
  let dir = '';
  let proc: ServeProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-serve-console-'));
  });
  afterEach(async () => {
    await ensureStopped(proc);
    proc = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the console URL and where the admin token is, and serves the console at /', async () => {
    proc = await startServe(join(dir, 'data'));
    const m = await printed(proc, /console: open (http:\/\/\S+)\/ and sign in with the admin token in (\S+)/);
    expect(m[1]).to.equal(proc.url);
    expect(m[2]).to.equal(join(dir, 'data', 'admin-token'));
    const root = await fetch(`${proc.url}/`, { redirect: 'manual' });
    expect(root.status).to.equal(302);
    expect(root.headers.get('location')).to.equal('/console/');
    const page = await fetch(`${proc.url}/console/`);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.contain('<div id="root">');
  });

  it('TROUPE_CONSOLE=false: no console line, and / is not found', async () => {
    proc = await startServe(join(dir, 'data'), [], { TROUPE_CONSOLE: 'false' });
    await new Promise((r) => setTimeout(r, 300));
    expect(proc.stdout()).to.not.contain('console:');
    expect((await fetch(`${proc.url}/`, { redirect: 'manual' })).status).to.equal(404);
  });
});
