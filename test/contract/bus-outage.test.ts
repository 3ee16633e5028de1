/**
 * A NATS server going away and coming back. The client would accept a publish while it
 * reconnects and drop it once reconnected (checked against nats 2.x), so the bus refuses it
 * (BUS_UNAVAILABLE) and says it is not connected; an execution refuses to start meanwhile, and
 * everything works again once the server is back. An execution that ends during the outage has
 * its lifecycle event published once the bus is back (SPEC §5). The memory bus has no server to lose.
 */
import { expect } from 'chai';
import { connect, type NatsConnection } from 'nats';
import { NatsBus } from '../../src/bus/nats.js';
import type { BusMsg } from '../../src/bus/types.js';
import { executionEvents } from '../../src/bus/subjects.js';
import { TroupeError } from '../../src/errors.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';
import { runWorkflow, testEngine, testRegistry, wf } from '../helpers/runtime.js';

async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof TroupeError ? err.code : String(err);
  }
}

describe('bus: the NATS server goes away and comes back', function () {
  this.timeout(40_000);
  let server: NatsServerHandle | undefined;
  let bus: NatsBus | undefined;
  let outsider: NatsConnection | undefined;
  afterEach(async () => {
    await outsider?.close();
    await bus?.close();
    await server?.stop();
  });

  it('refuses publishes and execution starts while reconnecting, then works again', async () => {
    server = await startNatsServer();
    const port = Number(new URL(server.url).port);
    bus = await NatsBus.connect(server.url, { name: 'outage-test' });
    const got: BusMsg[] = [];
    bus.subscribe('outage.>', (m) => got.push(m));
    await bus.flush();
    expect(bus.connected).to.equal(true);

    await server.stop();
    await until(() => bus?.connected === false, 'the bus to see the server gone');
    expect(codeOf(() => bus?.publish('outage.a', 1))).to.equal('BUS_UNAVAILABLE');
    const engine = testEngine(bus);
    const { compiled } = loadWorkflow(wf([['start', 'starter']], []), testRegistry);
    const refused = await engine.start(compiled, { workflowId: 'wf', version: 1, input: {}, trigger: { type: 'api' } }).then(() => null, (err: unknown) => err);
    expect(refused).to.be.instanceOf(TroupeError).with.property('code', 'BUS_UNAVAILABLE');

    // past the client's default of ten reconnect attempts: it must not have given up
    await new Promise((r) => setTimeout(r, 1500));
    server = await startNatsServer({ port });
    await until(() => bus?.connected === true, 'the bus to reconnect');
    bus.publish('outage.b', 2);
    await until(() => got.length > 0, 'the message published after the reconnect');
    expect(got.map((m) => m.data)).to.deep.equal([2]);
    const { result } = await runWorkflow(engine, wf([['start', 'starter'], ['a', 'sleep', { ms: 0, value: 7 }]], [['start', 'a']]));
    expect(result.status).to.equal('completed');
  });

  it('publishes the end of an execution that ended while NATS was away once it is back, after its start and before later events', async () => {
    server = await startNatsServer();
    const port = Number(new URL(server.url).port);
    bus = await NatsBus.connect(server.url, { name: 'outage-events-test' });
    // another service, with the client's default reconnect settings (it comes back later than we do)
    outsider = await connect({ servers: server.url });
    const seen: Array<{ kind: string; data: { executionId: string; status: string } }> = [];
    outsider.subscribe(executionEvents('troupetest', '*'), {
      callback: (err, m) => {
        if (err === null) seen.push({ kind: m.subject.split('.').at(-1) as string, data: m.json() });
      },
    });
    await outsider.flush();
    const errors: unknown[] = [];
    const engine = testEngine(bus, { onError: (err) => errors.push(err) });
    const { compiled } = loadWorkflow(wf([['start', 'starter'], ['slow', 'sleep', { ms: 1500 }], ['after', 'sleep', { ms: 0 }]], [['start', 'slow'], ['slow', 'after']]), testRegistry);
    const handle = await engine.start(compiled, { workflowId: 'wf-out', version: 1, input: {}, trigger: { type: 'api' } });
    await until(() => seen.length === 1, 'execution.started');

    await server.stop();
    // the run ends while the server is away: its next publish is refused
    const result = await handle.done;
    expect(result.status).to.equal('failed');
    expect(result.error?.code).to.equal('BUS_UNAVAILABLE');
    await new Promise((r) => setTimeout(r, 500));
    expect(seen.map((e) => e.kind)).to.deep.equal(['started']);

    server = await startNatsServer({ port });
    await until(() => bus?.connected === true, 'the bus to reconnect');
    await until(() => seen.length === 2, 'the held execution.failed');
    expect(seen[1]).to.deep.include({ kind: 'failed' });
    expect(seen[1]?.data).to.include({ executionId: handle.id, status: 'failed' });
    const { result: next } = await runWorkflow(engine, wf([['start', 'starter']], []));
    await until(() => seen.length === 4, 'the next execution\'s events');
    expect(seen.map((e) => `${e.kind}:${e.data.executionId === handle.id ? 'first' : 'next'}`)).to.deep.equal([
      'started:first', 'failed:first', 'started:next', 'completed:next',
    ]);
    expect(next.status).to.equal('completed');
    expect(errors, 'nothing was lost or reported').to.deep.equal([]);
  });
});
