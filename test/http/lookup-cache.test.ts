/**
 * Execute reads API keys and deployments through a per-instance cache (src/service/lookup-cache.ts).
 * These tests run two instances on one store: what one changes, the other must honour.
 */
import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { LOOKUP_TTL_MS } from '../../src/service/lookup-cache.js';
import { auth, deployed, echoWorkflow, makeHarness, otherProcess, type Harness } from './support.js';

type Client = Harness['http'];

function execute(client: Client, id: string, key: string) {
  return client.post(`/api/workflows/${id}/execute`).set('X-API-Key', key).send({ city: 'Oslo' });
}

describe('http: key and deployment lookups across instances', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('a revoke, an undeploy and a delete on one instance apply at once on another (bus message)', async () => {
    const { key, keyId } = await deployed(h, echoWorkflow('d'));
    const other = otherProcess(h);
    // the other instance has both lookups cached after these
    expect((await execute(other, 'd', key)).status).to.equal(201);
    expect((await execute(other, 'd', key)).status).to.equal(201);

    await h.http.delete(`/api/workflows/d/keys/${keyId}`).set(auth).expect(204);
    const revoked = await execute(other, 'd', key);
    expect(revoked.status).to.equal(401);
    expect(revoked.body.error.code).to.equal('UNAUTHORIZED');

    const second = (await h.http.post('/api/workflows/d/keys').set(auth).expect(201)).body.key as string;
    expect((await execute(other, 'd', second)).status).to.equal(201);
    await h.http.delete('/api/workflows/d/deploy').set(auth).expect(204);
    const undeployed = await execute(other, 'd', second);
    expect(undeployed.status).to.equal(403);
    expect(undeployed.body.error.code).to.equal('NOT_DEPLOYED');

    await h.http.post('/api/workflows/d/deploy').set(auth).expect(201);
    expect((await execute(other, 'd', second)).status).to.equal(201);
    await h.http.delete('/api/workflows/d').set(auth).expect(204);
    expect((await execute(other, 'd', second)).status).to.equal(404);
  });

  it('a redeploy of a new version on one instance is what another instance executes next', async () => {
    const { key } = await deployed(h, echoWorkflow('d'));
    const other = otherProcess(h);
    expect((await execute(other, 'd', key)).body).to.deep.equal({ city: 'Oslo', v: 1 });
    const v2 = echoWorkflow('d');
    (v2['blocks'] as { config: { data: { v: number } } }[])[1]!.config.data.v = 2;
    await h.http.put('/api/workflows/d').set(auth).send(v2).expect(200);
    await h.http.post('/api/workflows/d/deploy').set(auth).expect(201);
    expect((await execute(other, 'd', key)).body).to.deep.equal({ city: 'Oslo', v: 2 });
  });

  it('an instance that missed the message trusts what it cached for at most the TTL', async () => {
    const { key, keyId } = await deployed(h, echoWorkflow('d'));
    let now = Date.now();
    const cutOff = otherProcess(h, { bus: new MemoryBus(), now: () => now });
    expect((await execute(cutOff, 'd', key)).status).to.equal(201);
    await h.http.delete(`/api/workflows/d/keys/${keyId}`).set(auth).expect(204);
    now += LOOKUP_TTL_MS;
    expect((await execute(cutOff, 'd', key)).status).to.equal(401);
  });
});
