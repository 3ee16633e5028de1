import { z } from 'zod';
import { localRunKey } from '../model/block-run.js';
import { TroupeError } from '../errors.js';
import { DAY_MS, DEFAULT_MAX_WAIT_DAYS, parseUntil, waitDue, type WaitDue } from '../model/wait.js';
import { isWholePlaceholder } from '../model/ref-parse.js';
import type { BlockRunContext, BlockType } from './types.js';

/**
 * The longest wait a saved workflow may name (TROUPE_MAX_WAIT_DAYS). Process-wide because the
 * block types are: the service sets it at start (setMaxWaitDays); a run checks against its
 * services' `maxWaitMs` too.
 */
let maxWaitMs = DEFAULT_MAX_WAIT_DAYS * DAY_MS;

export function setMaxWaitDays(days: number): void {
  maxWaitMs = days * DAY_MS;
}

const literal = (v: unknown): boolean => !(typeof v === 'string' && isWholePlaceholder(v));

export const waitConfigSchema = z
  .object({
    duration: z.union([z.number().nonnegative(), z.string().min(1)]).optional(),
    until: z.string().min(1).optional(),
  })
  .superRefine((c, ctx) => {
    if ((c.duration === undefined) === (c.until === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a wait names either `duration` or `until`', path: [] });
      return;
    }
    // a value known only at run time is checked when the block runs
    const field = c.duration !== undefined ? 'duration' : 'until';
    if (!literal(c[field])) return;
    // What does not depend on the time: a readable duration within the longest wait, a readable
    // date. How far off an `until` is depends on when it is read: the save checks it against the
    // wall clock (validateSaved), a run against its engine's clock (run), so that the config
    // parse a run makes reads no clock of its own.
    const problem = field === 'duration' || parseUntil(c.until) === null ? problemOf(waitDue(c, 0, maxWaitMs)) : null;
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, path: [field] });
  });

function problemOf(due: WaitDue): string | null {
  return 'problem' in due ? due.problem : null;
}

export type WaitConfig = z.infer<typeof waitConfigSchema>;

/** The block run's name within its execution (scope and block id), the wait's key in the store. */
function waitKey(ctx: BlockRunContext<WaitConfig>): string {
  return localRunKey(ctx.executionId, ctx.runKey, ctx.block.id);
}

/**
 * Pauses its path until the due time (SPEC §1.1, §2.1; docs/waiting.md). The due time is stored
 * first: when the run starts again (the execution parked and was woken, or a crash resumed it)
 * the block finds the due time it had and waits only what is left of it.
 */
export const waitBlock: BlockType<WaitConfig> = {
  type: 'wait',
  configSchema: waitConfigSchema,
  handles: () => ['success', 'error'],
  validateSaved(config) {
    if (typeof config.until !== 'string' || !literal(config.until)) return [];
    // a save is checked against the wall clock: it is no run, and has no engine's clock to ask
    const due = waitDue({ until: config.until }, Date.now(), maxWaitMs);
    return 'problem' in due ? [{ path: ['until'], message: due.problem }] : [];
  },
  async run(ctx) {
    const clock = ctx.services.clock;
    const now = clock.now();
    const due = waitDue(ctx.config, now, ctx.services.maxWaitMs ?? maxWaitMs, true);
    if ('problem' in due) throw new TroupeError('INVALID_CONFIG', `block "${ctx.block.name}": ${due.problem}`);
    const key = waitKey(ctx);
    const planned = { executionId: ctx.executionId, key, workflowId: ctx.workflowId, since: new Date(now).toISOString(), dueAt: new Date(due.dueAt).toISOString() };
    const stored = ctx.services.waits === undefined ? planned : await ctx.services.waits.begin(planned);
    const dueAt = Date.parse(stored.dueAt);
    ctx.onWaiting?.({ kind: 'wait', since: stored.since, until: stored.dueAt });
    if (dueAt > clock.now()) await clock.sleep(dueAt - clock.now(), ctx.signal);
    const resumedAt = clock.now();
    await ctx.services.waits?.delete(ctx.executionId, key);
    return { output: { waitedMs: Math.max(0, resumedAt - Date.parse(stored.since)), resumedAt: new Date(resumedAt).toISOString() }, handles: ['success'] };
  },
};
