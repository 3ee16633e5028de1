/**
 * The chaos test's schedule check (issue 25: "no schedule due time fired twice or was lost"). A
 * workflow with a per-second schedule (`catchUp: "last"`, `overlap: "allow"`) is deployed while
 * instances are SIGKILLed; afterwards its stored executions are compared with when each
 * instance led the scheduler (its "leads" log line, to its kill or its "lost" line).
 *
 * The rule checked is the documented one (SPEC §4.5 and §9, docs/http.md "Downtime"):
 * - no due time fires twice, ever;
 * - every due time that fell while an instance led fires (late is fine): none is lost;
 * - due times that fell while no instance led (the leader was killed and its lease had not
 *   expired yet) were missed and go by catchUp: with "last" the latest of them fires when the
 *   next leader takes over, so each leaderless stretch must show that one catch-up fire.
 *
 * Allowances, each for a reason:
 * - the window's first second: the deployment instant is stamped by the server before the test
 *   reads the answer, and whether the second holding it fires depends on where in it it fell
 *   (the deployment instant itself fires, what comes before it never does);
 * - the window's last second: a leader may be in the middle of the tick that claims it when the
 *   window closes, and the check must not depend on that race;
 * - the last KILL_MARGIN_MS of a killed leader's term: its tick for a second runs just after the
 *   second begins, later on this loaded machine; a due time it had not ticked for when it was
 *   killed fell, for the scheduler, while no one led (missed, not lost);
 * - a leader killed within FIRST_TICK_MS of its start may have died before its first tick,
 *   which fires the catch-up: its term counts as leaderless (what it did fire still counts for
 *   "twice").
 *
 * With a kill every 3 s in turn and a lease expiring after 10 s, most leaders die within
 * seconds of taking over, so much of the window is leaderless: the test prints how many due
 * times had to fire and how many failovers were caught up.
 */
import { call, type ServeProcess } from '../cli/serve-helpers.js';
import { deploy, eventually, TOKEN } from '../cluster/support.js';

const SECOND = 1_000;
/** the end of a killed leader's term whose due times may be missed rather than fired */
export const KILL_MARGIN_MS = 3_000;
/**
 * a leader killed sooner than this after it began may have died before its first tick (which
 * runs as it begins, and fires the catch-up): for the scheduler it never led
 */
export const FIRST_TICK_MS = 2_000;

export const WORKFLOW_ID = 'chaos-ticks';

/** A workflow that fires every second and ends at once. */
export const ticksWorkflow = {
  id: WORKFLOW_ID,
  name: 'Chaos ticks',
  triggers: [{ type: 'schedule', id: 'every', cron: '* * * * * *', overlap: 'allow', catchUp: 'last', input: {} }],
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { ok: true } } },
  ],
  connections: [{ from: 'start', to: 'reply' }],
};

/** When one instance led the scheduler; `to` null: it still leads. */
export interface Term {
  from: number;
  to: number | null;
  /** ended by a SIGKILL (its last moments may not have ticked) */
  killed: boolean;
}

export interface ScheduleVerdict {
  /** due times fired more than once */
  twice: string[];
  /** due times that fell while an instance led and never fired */
  lost: string[];
  /** leaderless stretches [from, to] without their catch-up fire */
  noCatchUp: [string, string][];
  /** due times in the window */
  checked: number;
  /** of those, the ones that fell while an instance led and had to fire */
  required: number;
  /** leaderless stretches found (each a leader's death and the next one's takeover) */
  failovers: number;
}

/** The pure check: fired due times (ms) against the leaders' terms within [from, to]. */
export function checkFires(fired: number[], terms: Term[], window: { from: number; to: number }): ScheduleVerdict {
  const counts = new Map<number, number>();
  for (const d of fired) counts.set(d, (counts.get(d) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([d]) => iso(d));
  // the first whole second after the deployment and the window's last one are not checked
  const first = Math.floor(window.from / SECOND) * SECOND + 2 * SECOND;
  const last = Math.floor(window.to / SECOND) * SECOND - SECOND;
  const led = ledStretches(terms);
  const lost: string[] = [];
  let checked = 0;
  let required = 0;
  for (let d = first; d <= last; d += SECOND) {
    checked += 1;
    if (!led.some((t) => d > t.from && d <= t.sure)) continue;
    required += 1;
    if (!counts.has(d)) lost.push(iso(d));
  }
  const stretches = leaderless(led, first, last);
  const noCatchUp = stretches
    // the next leader fires the latest due time before its start; the dead one fired none after its end
    .filter(([from, to]) => !fired.some((d) => d > from && d <= to))
    .map(([from, to]): [string, string] => [iso(from), iso(to)]);
  return { twice, lost, noCatchUp, checked, required, failovers: stretches.length };
}

interface Led {
  from: number;
  /** when it stopped leading (infinity: it still leads) */
  to: number;
  /** up to when every due time must have fired: its last moments may not have ticked */
  sure: number;
}

/** The terms in which the leader had time for its first tick; one killed before that led, for the scheduler, never. */
function ledStretches(terms: Term[]): Led[] {
  return terms
    .map((t) => (t.to === null ? { from: t.from, to: Number.POSITIVE_INFINITY, sure: Number.POSITIVE_INFINITY } : { from: t.from, to: t.to, sure: t.to - KILL_MARGIN_MS }))
    .filter((t) => t.to - t.from >= FIRST_TICK_MS)
    .sort((a, b) => a.from - b.from);
}

/** The stretches within [first, last] that no term covers and that a later term ends: (end of the last leader, start of the next). */
function leaderless(led: Led[], first: number, last: number): [number, number][] {
  const out: [number, number][] = [];
  let coveredTo = first;
  for (const t of led) {
    if (t.from > coveredTo && t.from <= last) out.push([coveredTo, t.from]);
    coveredTo = Math.max(coveredTo, t.to);
  }
  return out;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** An instance's terms as leader, from its log lines and, when it was SIGKILLed, its kill time. */
export function termsOf(p: ServeProcess, killedAt: number | undefined): Term[] {
  const terms: Term[] = [];
  for (const line of (p.stdout() + '\n' + p.stderr()).split('\n')) {
    let entry: { msg?: unknown; time?: unknown };
    try {
      entry = JSON.parse(line) as { msg?: unknown; time?: unknown };
    } catch {
      continue;
    }
    if (typeof entry.time !== 'number') continue;
    if (entry.msg === 'this instance leads the scheduler') terms.push({ from: entry.time, to: null, killed: false });
    const open = terms.at(-1);
    if (entry.msg === 'lost the scheduler leader lease: this instance stops scheduling' && open !== undefined && open.to === null) open.to = entry.time;
  }
  const open = terms.at(-1);
  if (killedAt !== undefined && open !== undefined && open.to === null) Object.assign(open, { to: killedAt, killed: true });
  return terms;
}

/** The schedule of the chaos test: deployed during the kills, checked after them. */
export class ScheduleWatch {
  private readonly procs: ServeProcess[] = [];
  private readonly kills = new Map<ServeProcess, number>();

  private constructor(readonly deployedAt: number) {}

  static async deploy(url: string): Promise<ScheduleWatch> {
    await deploy(url, ticksWorkflow);
    return new ScheduleWatch(Date.now());
  }

  /** an instance whose log tells when it led */
  watch(p: ServeProcess): ServeProcess {
    this.procs.push(p);
    return p;
  }

  /** call just before SIGKILLing `p`: its term (if it led) ends here */
  killing(p: ServeProcess): void {
    this.kills.set(p, Date.now());
  }

  /**
   * Undeploys the schedule (no fire after `end`), waits for its runs to end and checks them:
   * every fire of the window completed, none twice, none lost, each failover caught up.
   */
  async check(url: string, end: number): Promise<ScheduleVerdict & { notCompleted: string[] }> {
    const undeployed = await call(url, 'DELETE', `/api/workflows/${WORKFLOW_ID}/deploy`, { token: TOKEN });
    if (undeployed.status >= 300) throw new Error(`undeploy: ${undeployed.status} ${JSON.stringify(undeployed.body)}`);
    const runs = await eventually('every scheduled run ended', 120_000, async () => {
      const all = await fires(url);
      return all.some((r) => r.status === 'queued' || r.status === 'running') ? undefined : all;
    });
    const inWindow = runs.filter((r) => r.dueAt >= this.deployedAt && r.dueAt <= end);
    const terms = this.procs.flatMap((p) => termsOf(p, this.kills.get(p)));
    const verdict = checkFires(runs.map((r) => r.dueAt), terms, { from: this.deployedAt, to: end });
    return { ...verdict, notCompleted: inWindow.filter((r) => r.status !== 'completed').map((r) => `${iso(r.dueAt)} ${r.status}`) };
  }
}

/** The schedule's stored executions: due time (ms) and status. */
async function fires(url: string): Promise<{ dueAt: number; status: string }[]> {
  const out: { dueAt: number; status: string }[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(url, 'GET', `/api/executions?workflowId=${WORKFLOW_ID}&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`, { token: TOKEN });
    if (page.status !== 200) throw new Error(`executions: ${page.status} ${JSON.stringify(page.body)}`);
    for (const r of page.body.items as { trigger: { dueAt: string }; status: string }[]) out.push({ dueAt: Date.parse(r.trigger.dueAt), status: r.status });
    cursor = page.body.nextCursor as string | null;
  } while (cursor !== null);
  return out;
}
