/**
 * Takeover time after a SIGKILL (SPEC §9, target ≤ 15 s lease included): sync executions are
 * started on one instance (a sync execution runs where its request arrived) and held there by
 * the upstream's /hold; once every one of them is in its API call the instance is SIGKILLed.
 * An execution is taken over when another instance, having found its lease expired, resumed it
 * and runs its API block again (the same block run: the same Idempotency-Key arrives again at
 * the upstream, which answers it at once); it is completed when the record says so.
 */
import type { ServeProcess } from '../../test/cli/serve-helpers.js';
import { call } from '../../test/cli/serve-helpers.js';
import { TOKEN } from '../../test/cluster/support.js';
import type { HoldingUpstream } from '../../test/cluster/holding-upstream.js';

export interface TakeoverRound {
  victim: string;
  executions: number;
  /** ms from the SIGKILL to each held execution's API call arriving again from another instance */
  takeoverMs: number[];
  /** ms from the SIGKILL until every one of them was recorded completed */
  completedMs: number;
  /** takeovers counted by each survivor's /metrics (troupe_cluster_takeovers, since its start) */
  takenBy: Record<string, number>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`takeover benchmark: ${what} not within ${ms} ms`);
    await sleep(50);
  }
}

export async function completedCount(url: string, workflowId: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const q: string = `/api/executions?workflowId=${workflowId}&status=completed&limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const page = await call(url, 'GET', q, { token: TOKEN });
    if (page.status !== 200) throw new Error(`listing executions: ${page.status} ${JSON.stringify(page.body)}`);
    count += (page.body.items as unknown[]).length;
    cursor = page.body.nextCursor as string | null;
  } while (cursor !== null);
  return count;
}

async function takeoversOf(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^troupe_cluster_takeovers (\d+)/m.exec(text)?.[1] ?? 0);
}

export interface RoundSpec {
  victim: ServeProcess & { name: string };
  survivors: readonly (ServeProcess & { name: string })[];
  upstream: HoldingUpstream;
  apiKey: string;
  workflowId: string;
  /** the executions' inputs `n` (distinct across rounds) */
  inputs: readonly number[];
  /** executions of the workflow completed before this round */
  completedBefore: number;
}

/** One round: hold `inputs.length` executions on the victim, SIGKILL it, time their takeover and completion. */
export async function takeoverRound(spec: RoundSpec): Promise<TakeoverRound> {
  const { victim, survivors, upstream, inputs } = spec;
  const before = await Promise.all(survivors.map((s) => takeoversOf(s.url)));
  for (const n of inputs) {
    // its answer never comes (the victim dies holding it): only its start matters
    void call(victim.url, 'POST', `/api/workflows/${spec.workflowId}/execute`, { apiKey: spec.apiKey, body: { input: { n } } }).catch(() => undefined);
  }
  await until('the held calls on the victim', 60_000, () => (inputs.every((n) => upstream.held.has(n)) ? true : undefined));
  const killedAt = Date.now();
  victim.child.kill('SIGKILL');
  await victim.exited;
  const takeoverMs = await until('every held execution taken over', 120_000, () => {
    const times = inputs.map((n) => upstream.held.get(n)?.repeatAt);
    return times.every((t) => t !== undefined) ? times.map((t) => (t as number) - killedAt) : undefined;
  });
  const target = spec.completedBefore + inputs.length;
  const survivor = survivors[0] as ServeProcess;
  await until('every held execution completed', 120_000, async () => ((await completedCount(survivor.url, spec.workflowId)) >= target ? true : undefined));
  const completedMs = Date.now() - killedAt;
  const after = await Promise.all(survivors.map((s) => takeoversOf(s.url)));
  const takenBy = Object.fromEntries(survivors.map((s, i) => [s.name, (after[i] ?? 0) - (before[i] ?? 0)]));
  return { victim: victim.name, executions: inputs.length, takeoverMs, completedMs, takenBy };
}
