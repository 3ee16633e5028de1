/**
 * Chaos (SPEC §9, issue 25): three instances on one NATS and one PostgreSQL database of the
 * test's own, a bounded load of async executions whose API blocks call a local upstream, and
 * every 3 s one instance SIGKILLed and started again, for 45 s. Then every execution that got
 * a 202 is completed, none is left running, no block run's API call was applied twice, and a
 * per-second schedule fired no due time twice and lost none (schedule-check.ts). For the calls,
 * the upstream honours Idempotency-Key (a repeat of a key is answered from its first answer)
 * and counts what it applies per execution input, so a block run again under a new run (a new
 * key) would show as a second application. Meanwhile a visitor speaks to a chat throughout
 * (chat-check.ts): its conversation keeps every turn once, in order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { call, type ServeProcess } from '../cli/serve-helpers.js';
import { deploy, eventually, startTestCluster, TOKEN, type TestCluster } from '../cluster/support.js';
import { ScheduleWatch } from './schedule-check.js';
import { checkHistory, deployChat, talkThroughout } from './chat-check.js';

const CHAOS_MS = 45_000;
const KILL_EVERY_MS = 3_000;
const POST_EVERY_MS = 400;
const SLOW_MS = 1_000;

interface Upstream {
  url: string;
  /** applications by `path n` */
  applied: Map<string, number>;
  /** calls that repeated a key already applied */
  repeats: number;
  close(): Promise<void>;
}

/** POST /first and /slow with `{ n }`: applies once per Idempotency-Key, /slow answers after SLOW_MS. */
async function idempotentUpstream(): Promise<Upstream> {
  const answers = new Map<string, string>();
  const state: Upstream = { url: '', applied: new Map(), repeats: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const key = `${path} ${String(req.headers['idempotency-key'] ?? '')}`;
      let answer = answers.get(key);
      if (answer === undefined) {
        const n = (JSON.parse(body || '{}') as { n?: unknown }).n;
        const applied = `${path} ${String(n)}`;
        state.applied.set(applied, (state.applied.get(applied) ?? 0) + 1);
        answer = JSON.stringify({ path, n });
        answers.set(key, answer);
      } else state.repeats += 1;
      const send = (): void => {
        res.setHeader('content-type', 'application/json');
        res.end(answer);
      };
      if (path === '/slow') setTimeout(send, SLOW_MS).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return state;
}

function workflow(upstream: string): unknown {
  return {
    id: 'chaos',
    name: 'Chaos',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
      { id: 'first', type: 'api', name: 'First', config: { url: `${upstream}/first`, method: 'POST', body: { n: '<start.n>' } } },
      { id: 'slow', type: 'api', name: 'Slow', config: { url: `${upstream}/slow`, method: 'POST', body: { n: '<start.n>' }, timeoutMs: 30_000 } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { first: '<first.data.n>', slow: '<slow.data.n>' } } },
    ],
    connections: [
      { from: 'start', to: 'first' },
      { from: 'first', to: 'slow' },
      { from: 'slow', to: 'reply' },
    ],
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('chaos: three instances, one SIGKILLed every 3 s under load (child processes)', function () {
  this.timeout(300_000);
  let cluster: TestCluster;
  let upstream: Upstream;

  before(async () => {
    cluster = await startTestCluster();
    upstream = await idempotentUpstream();
  });

  after(async () => {
    await cluster?.close();
    await upstream?.close();
  });

  it('completes every accepted execution, leaves none running, applies no block call twice and keeps every chat turn once, in order', async () => {
    const names = ['c1', 'c2', 'c3'];
    const live = new Map<string, ServeProcess>();
    for (const name of names) live.set(name, await cluster.serve(name));
    const apiKey = await deploy((live.get('c1') as ServeProcess).url, workflow(upstream.url));
    // a per-second schedule fires throughout the kills (schedule-check.ts)
    const schedule = await ScheduleWatch.deploy((live.get('c1') as ServeProcess).url);
    for (const p of live.values()) schedule.watch(p);
    await deployChat((live.get('c1') as ServeProcess).url);
    const accepted = new Map<string, number>();
    const end = Date.now() + CHAOS_MS;
    const chat = talkThroughout(() => [...live.values()].map((p) => p.url), end);
    let n = 0;
    const load = (async () => {
      while (Date.now() < end) {
        const targets = [...live.values()];
        const target = targets[n % Math.max(1, targets.length)];
        if (target !== undefined) {
          const input = { n };
          // a request to an instance killed meanwhile gets no 202: it does not count
          const ack = await call(target.url, 'POST', '/api/workflows/chaos/execute', { apiKey, body: { input, async: true } }).catch(() => null);
          if (ack?.status === 202) accepted.set(ack.body.executionId as string, n);
          n += 1;
        }
        await sleep(POST_EVERY_MS);
      }
    })();
    let round = 0;
    const restarts: Promise<unknown>[] = [];
    while (Date.now() < end - KILL_EVERY_MS) {
      await sleep(KILL_EVERY_MS);
      const name = names[round++ % names.length] as string;
      const victim = live.get(name);
      if (victim === undefined) continue;
      live.delete(name);
      schedule.killing(victim);
      victim.child.kill('SIGKILL');
      await victim.exited;
      // started again under its own id, in the background: the kills go on meanwhile
      restarts.push(cluster.serve(name).then((p) => live.set(name, schedule.watch(p))));
    }
    await load;
    await Promise.all(restarts);
    await chat.finished;
    const survivor = await eventually('an instance up', 30_000, async () => [...live.values()][0]);
    const fires = await schedule.check(survivor.url, end);
    expect(fires.twice, 'schedule due times fired twice').to.deep.equal([]);
    expect(fires.lost, 'schedule due times lost while an instance led').to.deep.equal([]);
    expect(fires.noCatchUp, 'leaderless stretches without their catchUp "last" fire').to.deep.equal([]);
    expect(fires.notCompleted, 'scheduled runs not completed').to.deep.equal([]);
    expect(fires.checked, 'due times in the window').to.be.above(30);
    expect(accepted.size, 'executions accepted').to.be.above(20);
    const unfinished = await eventually('every accepted execution ended', 120_000, async () => {
      const left: string[] = [];
      for (const id of accepted.keys()) {
        const rec = (await call(survivor.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
        if (rec.status === 'queued' || rec.status === 'running') left.push(id);
      }
      return left.length === 0 ? left : undefined;
    });
    expect(unfinished).to.deep.equal([]);
    for (const [id, input] of accepted) {
      const rec = (await call(survivor.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
      expect(rec.status, `${id}: ${JSON.stringify(rec.error)}`).to.equal('completed');
      expect(rec.output.data).to.deep.equal({ first: input, slow: input });
    }
    for (const input of accepted.values()) {
      expect(upstream.applied.get(`/first ${input}`), `/first of ${input}`).to.equal(1);
      expect(upstream.applied.get(`/slow ${input}`), `/slow of ${input}`).to.equal(1);
    }
    // nothing of the run is left running anywhere (its queue included)
    const running = await call(survivor.url, 'GET', '/api/executions?status=running&limit=10', { token: TOKEN });
    expect(running.body.items).to.deep.equal([]);
    await checkHistory(cluster.db.url, chat);
    console.log(`      chaos: ${accepted.size} accepted, ${round} kills, ${upstream.repeats} repeated calls answered by their key, schedule: ${fires.checked} due times, ${fires.required} of them while an instance led, ${fires.failovers} failovers caught up; chat: ${chat.turns()} turns, ${chat.retries()} retried (${JSON.stringify([...chat.failures()])})`);
  });
});
