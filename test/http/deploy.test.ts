import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { hashApiKey } from '../../src/service/keys.js';
import { auth, deployed, echoWorkflow, makeHarness, sleepWorkflow, type Harness } from './support.js';

function execute(h: Harness, id: string, key: string, input: unknown = { city: 'Oslo' }) {
  return h.http.post(`/api/workflows/${id}/execute`).set('X-API-Key', key).send(input as object);
}

describe('http: deployments and API keys', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('deploys: 201 with the pinned version, endpoint and a trp_ key of at least 128 bits, shown once', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('d')).expect(201);
    const res = await h.http.post('/api/workflows/d/deploy').set(auth).expect(201);
    expect(res.body.deployment).to.include({ version: 1, endpoint: '/api/workflows/d/execute' });
    expect(Date.parse(res.body.deployment.deployedAt as string)).to.be.a('number').and.not.NaN;
    const { id, key, prefix } = res.body.apiKey as { id: string; key: string; prefix: string };
    expect(key).to.match(/^trp_[A-Za-z0-9_-]+$/);
    expect(Buffer.from(key.slice(4), 'base64url').length * 8).to.be.at.least(128);
    expect(key.startsWith(prefix)).to.equal(true);
    expect(prefix.length).to.be.below(key.length / 2);
    const list = await h.http.get('/api/workflows/d/keys').set(auth).expect(200);
    expect(list.body.nextCursor).to.equal(null);
    expect(list.body.items).to.have.length(1);
    expect(list.body.items[0]).to.have.keys('id', 'prefix', 'createdAt', 'revokedAt', 'lastUsedAt');
    expect(list.body.items[0]).to.include({ id, prefix, revokedAt: null });
    expect(JSON.stringify(list.body)).to.not.include(key.slice(prefix.length));
    expect(JSON.stringify(list.body)).to.not.include(hashApiKey(key));
  });

  it('stores keys only as their sha256 hash', async () => {
    const { key } = await deployed(h, echoWorkflow('d'));
    const [rec] = await h.store.apiKeys.listByWorkflow('d');
    expect(rec?.hash).to.equal(hashApiKey(key));
    expect(JSON.stringify(rec)).to.not.include(key.slice(10));
  });

  it('deploy, undeploy and keys answer 404 for an unknown workflow', async () => {
    await h.http.post('/api/workflows/nope/deploy').set(auth).expect(404);
    await h.http.delete('/api/workflows/nope/deploy').set(auth).expect(404);
    await h.http.post('/api/workflows/nope/keys').set(auth).expect(404);
    await h.http.get('/api/workflows/nope/keys').set(auth).expect(404);
    await h.http.delete('/api/workflows/nope/keys/key_1').set(auth).expect(404);
  });

  it('undeploy makes execute answer 403 NOT_DEPLOYED; keys survive undeploy and redeploy until revoked', async () => {
    const first = await deployed(h, echoWorkflow('d'));
    expect((await execute(h, 'd', first.key)).status).to.equal(201);
    await h.http.delete('/api/workflows/d/deploy').set(auth).expect(204);
    await h.http.delete('/api/workflows/d/deploy').set(auth).expect(204);
    const undeployed = await execute(h, 'd', first.key);
    expect(undeployed.status).to.equal(403);
    expect(undeployed.body.error.code).to.equal('NOT_DEPLOYED');
    const again = await h.http.post('/api/workflows/d/deploy').set(auth).expect(201);
    const second = again.body.apiKey.key as string;
    expect(second).to.not.equal(first.key);
    expect((await execute(h, 'd', first.key)).status).to.equal(201);
    expect((await execute(h, 'd', second)).status).to.equal(201);
    await h.http.delete(`/api/workflows/d/keys/${first.keyId}`).set(auth).expect(204);
    const revoked = await execute(h, 'd', first.key);
    expect(revoked.status).to.equal(401);
    expect(revoked.body.error.code).to.equal('UNAUTHORIZED');
    expect((await execute(h, 'd', second)).status).to.equal(201);
    const keys = await h.http.get('/api/workflows/d/keys').set(auth).expect(200);
    const byId = new Map((keys.body.items as { id: string; revokedAt: string | null }[]).map((k) => [k.id, k.revokedAt]));
    expect(byId.get(first.keyId)).to.be.a('string');
    expect([...byId.values()].filter((v) => v === null)).to.have.length(1);
  });

  it('adds keys (shown once) and revokes them; unknown keys are 404', async () => {
    await deployed(h, echoWorkflow('d'));
    const added = await h.http.post('/api/workflows/d/keys').set(auth).expect(201);
    expect(added.body).to.have.keys('id', 'key', 'prefix', 'createdAt');
    expect((await execute(h, 'd', added.body.key as string)).status).to.equal(201);
    await h.http.delete(`/api/workflows/d/keys/${added.body.id as string}`).set(auth).expect(204);
    expect((await execute(h, 'd', added.body.key as string)).status).to.equal(401);
    await h.http.delete('/api/workflows/d/keys/key_unknown').set(auth).expect(404);
  });

  it('pages the key list with limit and cursor, oldest first; a bad limit or cursor is 400', async () => {
    await deployed(h, echoWorkflow('d'));
    for (let i = 0; i < 4; i++) await h.http.post('/api/workflows/d/keys').set(auth).expect(201);
    const all = (await h.http.get('/api/workflows/d/keys').set(auth).expect(200)).body.items.map((k: { id: string }) => k.id);
    expect(all).to.have.length(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await h.http.get('/api/workflows/d/keys').query({ limit: 2, ...(cursor ? { cursor } : {}) }).set(auth).expect(200);
      expect(res.body.items.length).to.be.at.most(2);
      seen.push(...res.body.items.map((k: { id: string }) => k.id));
      cursor = res.body.nextCursor as string | null;
    } while (cursor !== null);
    expect(seen).to.deep.equal(all);
    for (const query of [{ limit: 'abc' }, { limit: 0 }, { cursor: 'not-a-cursor' }]) {
      const bad = await h.http.get('/api/workflows/d/keys').query(query).set(auth);
      expect([bad.status, bad.body.error.code], JSON.stringify(query)).to.deep.equal([400, 'INVALID_REQUEST']);
    }
  });

  it('a deployment pins its version: editing changes nothing until deployed again', async () => {
    const { key } = await deployed(h, echoWorkflow('pin'));
    const v2 = echoWorkflow('pin');
    (v2['blocks'] as { config: { data: { v: number } } }[])[1]!.config.data.v = 2;
    await h.http.put('/api/workflows/pin').set(auth).send(v2).expect(200);
    expect((await execute(h, 'pin', key)).body).to.deep.equal({ city: 'Oslo', v: 1 });
    const run = await h.http.post('/api/workflows/pin/run').set(auth).send({ city: 'Oslo' });
    expect(run.body).to.deep.equal({ city: 'Oslo', v: 2 });
    const redeploy = await h.http.post('/api/workflows/pin/deploy').set(auth).expect(201);
    expect(redeploy.body.deployment.version).to.equal(2);
    expect((await execute(h, 'pin', key)).body).to.deep.equal({ city: 'Oslo', v: 2 });
    const rec = await h.http.get(`/api/executions/${(await execute(h, 'pin', key)).headers['x-execution-id'] as string}`).set(auth);
    expect(rec.body.version).to.equal(2);
  });
});

describe('http: secrets', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('sets (201, then 200), lists names only, deletes (204, then 404)', async () => {
    const created = await h.http.put('/api/secrets/API_TOKEN').set(auth).send({ value: 'hunter2-value' });
    expect(created.status).to.equal(201);
    expect(created.body).to.deep.equal({ name: 'API_TOKEN', created: true });
    const replaced = await h.http.put('/api/secrets/API_TOKEN').set(auth).send({ value: 'hunter3-value' });
    expect(replaced.status).to.equal(200);
    await h.http.put('/api/secrets/OTHER').set(auth).send({ value: 'v' }).expect(201);
    const list = await h.http.get('/api/secrets').set(auth).expect(200);
    expect(list.body.items.map((s: { name: string }) => s.name)).to.deep.equal(['API_TOKEN', 'OTHER']);
    expect(list.body.items[0]).to.have.keys('name', 'updatedAt');
    expect(JSON.stringify(list.body)).to.not.include('hunter');
    await h.http.delete('/api/secrets/OTHER').set(auth).expect(204);
    await h.http.delete('/api/secrets/OTHER').set(auth).expect(404);
  });

  it("redacts every stored secret's value in records, also where the workflow does not name it", async () => {
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('plain')).expect(201);
    const run = async (city: string): Promise<string> => {
      const res = await h.http.post('/api/workflows/plain/run').set(auth).send({ city }).expect(201);
      const rec = await h.http.get(`/api/executions/${res.headers['x-execution-id'] as string}`).set(auth).expect(200);
      return JSON.stringify(rec.body);
    };
    expect(await run('unnamed-secret-42')).to.include('unnamed-secret-42');
    await h.http.put('/api/secrets/UNNAMED').set(auth).send({ value: 'unnamed-secret-42' }).expect(201);
    await h.http.put('/api/secrets/TINY').set(auth).send({ value: 'abc' }).expect(201);
    const text = await run('unnamed-secret-42');
    expect(text).to.not.include('unnamed-secret-42');
    expect(text).to.include('***');
    // too short to redact where it is not named: it would blank unrelated text
    expect(await run('abc')).to.include('"abc"');
    await h.http.delete('/api/secrets/UNNAMED').set(auth).expect(204);
    expect(await run('unnamed-secret-42'), 'a deleted secret is no longer one').to.include('unnamed-secret-42');
  });

  it('pages the names with limit and cursor; a bad limit is 400', async () => {
    for (const name of ['C', 'A', 'B']) await h.http.put(`/api/secrets/${name}`).set(auth).send({ value: 'secret-value' }).expect(201);
    const first = await h.http.get('/api/secrets?limit=2').set(auth).expect(200);
    expect(first.body.items.map((s: { name: string }) => s.name)).to.deep.equal(['A', 'B']);
    const rest = await h.http.get('/api/secrets').query({ limit: 2, cursor: first.body.nextCursor as string }).set(auth).expect(200);
    expect([rest.body.items.map((s: { name: string }) => s.name), rest.body.nextCursor]).to.deep.equal([['C'], null]);
    const bad = await h.http.get('/api/secrets?limit=abc').set(auth);
    expect([bad.status, bad.body.error.code]).to.deep.equal([400, 'INVALID_REQUEST']);
  });

  it('rejects bad names and bodies with 400 INVALID_REQUEST; needs the admin token', async () => {
    for (const [name, body] of [['bad-name', { value: 'x' }], ['OK', { value: '' }], ['OK', { value: 3 }], ['OK', {}]] as const) {
      const res = await h.http.put(`/api/secrets/${name}`).set(auth).send(body);
      expect(res.status, JSON.stringify([name, body])).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_REQUEST');
    }
    await h.http.put('/api/secrets/OK').send({ value: 'x' }).expect(401);
    await h.http.get('/api/secrets').expect(401);
    await h.http.delete('/api/secrets/OK').expect(401);
  });

  it('feeds {{NAME}} in executions, redacted in what is recorded', async () => {
    const { key } = await deployed(h, sleepWorkflow('uses', 0, 'token={{API_TOKEN}}'));
    const missing = await execute(h, 'uses', key, {});
    expect(missing.status).to.equal(500);
    expect(missing.body.error).to.include({ code: 'MISSING_SECRET', blockId: 'nap' });
    await h.http.put('/api/secrets/API_TOKEN').set(auth).send({ value: 's3cr3t-value-42' }).expect(201);
    const ok = await execute(h, 'uses', key, {});
    expect(ok.status).to.equal(200);
    expect(ok.body.output).to.deep.equal({ value: 'token=***' });
    const rec = await h.http.get(`/api/executions/${ok.body.executionId as string}`).set(auth).expect(200);
    expect(JSON.stringify(rec.body)).to.not.include('s3cr3t-value-42');
  });
});

describe('http: nothing secret in the database file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-http-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function fileBytes(file: string): Buffer {
    return Buffer.concat([file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
  }

  it('neither an API key nor a secret value can be read from the SQLite file', async () => {
    const file = join(dir, 'troupe.db');
    const h = makeHarness({ dbPath: file });
    const { key } = await deployed(h, echoWorkflow('d'));
    const extra = (await h.http.post('/api/workflows/d/keys').set(auth).expect(201)).body.key as string;
    const secret = 'sk-live-9f8e7d6c5b4a39281706';
    await h.http.put('/api/secrets/STRIPE').set(auth).send({ value: secret }).expect(201);
    expect((await execute(h, 'd', key)).status).to.equal(201);
    const check = (bytes: Buffer): void => {
      expect(bytes.includes(hashApiKey(key)), 'sanity: the hash is in the file').to.equal(true);
      for (const k of [key, extra]) {
        expect(bytes.includes(k)).to.equal(false);
        expect(bytes.includes(k.slice(10))).to.equal(false);
      }
      expect(bytes.includes(secret)).to.equal(false);
      expect(bytes.includes(secret.slice(8))).to.equal(false);
    };
    check(fileBytes(file));
    await h.close();
    check(fileBytes(file));
  });
});
