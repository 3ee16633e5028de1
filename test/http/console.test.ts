/**
 * The console's server side (SPEC §8): `GET /` leads to /console/, the built files are served
 * with a strict CSP, and the admin token signs in once for an HttpOnly, SameSite=Strict session
 * that admin routes accept like the bearer token, only from the console's own pages (CSRF).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ADMIN, auth, echoWorkflow, makeHarness, type Harness } from './support.js';

const CONSOLE = { 'X-Troupe-Console': '1' };

function sessionCookie(setCookie: string[] | string | undefined): string {
  const all = Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [setCookie];
  const line = all.find((c) => c.startsWith('troupe_console='));
  if (line === undefined) throw new Error('no console cookie set');
  return line;
}

describe('http: console', () => {
  let h: Harness;
  let dir: string;
  let clock = Date.parse('2026-01-01T00:00:00Z');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-console-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>Troupe console</title>');
    await writeFile(join(dir, 'assets', 'app-1.js'), 'console.log(1)');
    h = makeHarness({ consoleDir: dir, now: () => clock });
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow()).expect(201);
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function signIn(): Promise<string> {
    const res = await h.http.post('/api/console/session').set(CONSOLE).send({ token: ADMIN }).expect(201);
    return sessionCookie(res.headers['set-cookie']).split(';')[0] as string;
  }

  it('GET / redirects to /console/, which serves the built page with a strict CSP', async () => {
    const root = await h.http.get('/').expect(302);
    expect(root.headers.location).to.equal('/console/');
    const page = await h.http.get('/console/').expect(200);
    expect(page.text).to.contain('Troupe console');
    expect(page.headers['content-security-policy']).to.contain("script-src 'self'");
    expect(page.headers['cache-control']).to.equal('no-cache');
    const js = await h.http.get('/console/assets/app-1.js').expect(200);
    expect(js.headers['content-type']).to.match(/^text\/javascript/);
    expect(js.headers['cache-control']).to.contain('immutable');
    // the app's own routes are the page; a missing file is 404
    expect((await h.http.get('/console/workflows/echo').expect(200)).text).to.contain('Troupe console');
    await h.http.get('/console/assets/missing.js').expect(404);
    await h.http.get('/console/..%2f..%2fpackage.json').expect(404);
  });

  it('signs in with the admin token: an HttpOnly, SameSite=Strict cookie on /api, 12 h by default', async () => {
    const res = await h.http.post('/api/console/session').set(CONSOLE).send({ token: ADMIN }).expect(201);
    const cookie = sessionCookie(res.headers['set-cookie']);
    expect(cookie).to.match(/httponly/i).and.to.match(/samesite=strict/i).and.to.match(/path=\/api;/i);
    expect(Date.parse(res.body.expiresAt as string) - clock).to.equal(12 * 3_600_000);
    expect(cookie).to.not.contain(ADMIN);
  });

  it('refuses a wrong token (401), no token (400) and a request not from the console page (403)', async () => {
    const wrong = await h.http.post('/api/console/session').set(CONSOLE).send({ token: 'nope' }).expect(401);
    expect(wrong.body.error.code).to.equal('UNAUTHORIZED');
    expect(wrong.headers['set-cookie']).to.equal(undefined);
    expect((await h.http.post('/api/console/session').set(CONSOLE).send({}).expect(400)).body.error.code).to.equal('INVALID_REQUEST');
    expect((await h.http.post('/api/console/session').send({ token: ADMIN }).expect(403)).body.error.code).to.equal('FORBIDDEN');
    await h.http.post('/api/console/session').set(CONSOLE).set('Origin', 'https://evil.example').send({ token: ADMIN }).expect(403);
  });

  it('the session is the admin for admin routes and execution records, only with the console header', async () => {
    const cookie = await signIn();
    const list = await h.http.get('/api/workflows').set(CONSOLE).set('Cookie', cookie).expect(200);
    expect(list.body.items.map((w: { id: string }) => w.id)).to.include('echo');
    const run = await h.http.post('/api/workflows/echo/run').set(CONSOLE).set('Cookie', cookie).send({ input: { city: 'Oslo' } });
    const executionId = run.headers['x-execution-id'] as string;
    await h.http.get(`/api/executions/${executionId}`).set(CONSOLE).set('Cookie', cookie).expect(200);
    // a page elsewhere: the cookie without the header, or with another site's marks, is no one
    await h.http.get('/api/workflows').set('Cookie', cookie).expect(401);
    await h.http.get(`/api/executions/${executionId}`).set('Cookie', cookie).expect(401);
    await h.http.get('/api/workflows').set(CONSOLE).set('Sec-Fetch-Site', 'cross-site').set('Cookie', cookie).expect(401);
    await h.http.get('/api/workflows').set(CONSOLE).set('Cookie', 'troupe_console=forged').expect(401);
    expect((await h.http.get('/api/console/session').set(CONSOLE).set('Cookie', cookie).expect(200)).body.expiresAt).to.be.a('string');
  });

  it('sign-out ends the session on the server: the same cookie is refused afterwards', async () => {
    const cookie = await signIn();
    await h.http.get('/api/workflows').set(CONSOLE).set('Cookie', cookie).expect(200);
    const out = await h.http.delete('/api/console/session').set(CONSOLE).set('Cookie', cookie).expect(204);
    expect(sessionCookie(out.headers['set-cookie'])).to.match(/expires=Thu, 01 Jan 1970/i);
    await h.http.get('/api/workflows').set(CONSOLE).set('Cookie', cookie).expect(401);
    await h.http.get('/api/console/session').set(CONSOLE).set('Cookie', cookie).expect(401);
    await h.http.delete('/api/console/session').expect(403);
  });

  it('a session ends after its lifetime', async () => {
    const cookie = await signIn();
    clock += 12 * 3_600_000 - 1;
    await h.http.get('/api/workflows').set(CONSOLE).set('Cookie', cookie).expect(200);
    clock += 1;
    await h.http.get('/api/workflows').set(CONSOLE).set('Cookie', cookie).expect(401);
  });

  it('TROUPE_CONSOLE=false serves no console and no sign-in', async () => {
    const off = makeHarness({ consoleDir: dir, config: { console: false } });
    try {
      await off.http.get('/').expect(404);
      await off.http.get('/console/').expect(404);
      await off.http.post('/api/console/session').set(CONSOLE).send({ token: ADMIN }).expect(404);
    } finally {
      await off.close();
    }
  });

  it('says how to build the console when it is not built', async () => {
    const bare = makeHarness({ consoleDir: join(dir, 'nowhere') });
    try {
      const res = await bare.http.get('/console/').expect(404);
      expect(res.body.error.message).to.contain('make setup');
    } finally {
      await bare.close();
    }
  });
});
