import { z } from 'zod';
import { localRunKey } from '../model/block-run.js';
import { TroupeError } from '../errors.js';
import { starterConfigSchema } from './starter.js';
import type { ApprovalState, BlockResult, BlockRunContext, BlockType } from './types.js';

/** How often an approval kept in memory looks for its decision (a parked one is woken instead). */
const DECISION_POLL_MS = 1000;

export const approvalConfigSchema = z.object({
  message: z.string(),
  inputFormat: starterConfigSchema.shape.inputFormat,
  timeoutMs: z.number().int().positive().optional(),
  notify: z.object({ url: z.string().min(1), headers: z.record(z.string(), z.string()).optional() }).optional(),
});

export type ApprovalConfig = z.infer<typeof approvalConfigSchema>;

function keyOf(ctx: BlockRunContext<ApprovalConfig>): string {
  return localRunKey(ctx.executionId, ctx.runKey, ctx.block.id);
}

function outcome(ctx: BlockRunContext<ApprovalConfig>, state: ApprovalState): BlockResult {
  const decision = state.decision ?? 'timeout';
  if (decision === 'timeout' && !(ctx.connectedHandles ?? []).includes('timeout')) {
    throw new TroupeError('APPROVAL_TIMEOUT', `block "${ctx.block.name}": no decision within ${ctx.config.timeoutMs ?? 0} ms`);
  }
  return { output: { decision, data: state.data ?? null, decidedAt: state.decidedAt, decidedBy: state.decidedBy }, handles: [decision] };
}

/**
 * Tells `notify.url` where to decide, once, through the API block's outbound client (its address
 * policy, retries and redaction). A notification that fails does not fail the approval: the
 * link is in the record for the admin, and the API decides as well.
 */
async function notify(ctx: BlockRunContext<ApprovalConfig>, approveUrl: string, expiresAt: string | null): Promise<void> {
  const target = ctx.config.notify;
  const http = ctx.services.http;
  if (target === undefined || http === undefined) return;
  const body = { executionId: ctx.executionId, workflowId: ctx.workflowId, blockId: ctx.block.id, message: ctx.config.message, approveUrl, expiresAt };
  await http.send({
    url: target.url, method: 'POST', headers: { 'Content-Type': 'application/json', ...(target.headers ?? {}) }, body,
    timeoutMs: 10_000, retries: 3, retryBaseMs: 500, retryMaxMs: 5000, maxResponseBytes: 64 * 1024,
    idempotencyKey: `${ctx.executionId}|${keyOf(ctx)}|notify`,
  }, ctx.signal).catch(() => undefined);
}

/**
 * A person decides (SPEC §1.1, §2.1; docs/waiting.md). The approval is stored first; a run that
 * starts again (the execution was woken by the decision or the timeout, or resumed after a
 * crash) finds it, and the decision if there is one.
 */
export const approvalBlock: BlockType<ApprovalConfig> = {
  type: 'approval',
  configSchema: approvalConfigSchema,
  literalFields: ['inputFormat'],
  handles: () => ['approved', 'rejected', 'timeout', 'error'],
  async run(ctx) {
    const port = ctx.services.approvals;
    if (port === undefined) throw new TroupeError('NOT_IMPLEMENTED', 'approval blocks run in troupe serve, which decides them');
    const clock = ctx.services.clock;
    const key = keyOf(ctx);
    const now = clock.now();
    const expiresAt = ctx.config.timeoutMs === undefined ? null : new Date(now + ctx.config.timeoutMs).toISOString();
    const begun = await port.begin({ executionId: ctx.executionId, key, blockId: ctx.block.id, workflowId: ctx.workflowId, message: ctx.config.message, since: new Date(now).toISOString(), expiresAt });
    let state = begun.state;
    if (state.decision === null) {
      ctx.onWaiting?.({ kind: 'approval', since: state.since, message: ctx.config.message, ...(state.expiresAt === null ? {} : { until: state.expiresAt }) });
      if (begun.created) await notify(ctx, begun.approveUrl, state.expiresAt);
    }
    while (state.decision === null) {
      const left = state.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(state.expiresAt) - clock.now();
      if (left <= 0 && (await port.timeOut(ctx.executionId, key, new Date(clock.now()).toISOString()))) {
        state = { ...state, decision: 'timeout', decidedAt: new Date(clock.now()).toISOString(), decidedBy: null };
        break;
      }
      if (left > 0) await clock.sleep(Math.min(DECISION_POLL_MS, left), ctx.signal);
      state = (await port.get(ctx.executionId, key)) ?? state;
    }
    await port.settled(ctx.executionId, key);
    return outcome(ctx, state);
  },
};
