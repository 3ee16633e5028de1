/**
 * POST /api/executions/{id}/rerun (admin, SPEC §4.2): a new execution of a recorded one, all of
 * it or from one of its blocks, answered like execute (sync, async or stream, with execute's
 * own answering code).
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Services } from '../../service/index.js';
import type { RerunRequest, RerunService } from '../../service/rerun.js';
import { respondAccepted, respondToExecution } from '../respond.js';
import { checkBody, errorResponse, orResponseBlock, param, type RouteSpec } from '../route-spec.js';
import type { Ctx } from '../types.js';
import { executionResponses, MODE_HEADERS, requestMode } from './execute.js';

export const rerunBody = z.strictObject({
  fromBlock: z.string().min(1).optional().describe('a top-level block that ran: it and everything downstream run, the other blocks keep their recorded outputs'),
  input: z.unknown().optional().describe('the input to run on (default: the recorded input, secrets in it as ***); not with fromBlock'),
  version: z.enum(['same', 'current']).default('same').describe('"same": the version the execution ran (default); "current": the workflow\'s current version'),
  async: z.boolean().optional(),
  stream: z.boolean().optional(),
});

async function rerun(ctx: Ctx, s: Services, reruns: RerunService, logger: Logger): Promise<void> {
  const rec = await s.executions.get(param(ctx, 'id'));
  const raw = await ctx.state.readJson();
  const body = checkBody(raw === undefined ? {} : raw, rerunBody);
  const mode = requestMode(body, ctx);
  const req: RerunRequest = {
    version: body.version,
    ...(body.fromBlock === undefined ? {} : { fromBlock: body.fromBlock }),
    // `input: null` is an input (null), as in execute: only an absent key means the recorded one
    ...(Object.prototype.hasOwnProperty.call(raw ?? {}, 'input') ? { input: { value: body.input ?? null } } : {}),
  };
  // in a cluster an async plain rerun goes to the work queue (one from a block starts here: its
  // record is written with the carried logs before it runs)
  const queued = mode === 'async' && req.fromBlock === undefined && s.executions.queued;
  const prepared = await reruns.prepare(rec, req, { queued });
  if (queued) {
    respondAccepted(ctx, await s.executions.enqueue(prepared.loaded, prepared.input, prepared.trigger));
    return;
  }
  const handle = await reruns.start(prepared, { awaitRecord: mode !== 'sync' });
  await respondToExecution(ctx, handle, mode, s.executions, logger);
}

export function rerunRoutes(s: Services, reruns: RerunService, logger: Logger): RouteSpec[] {
  return [{
    method: 'post', path: '/api/executions/{id}/rerun', operationId: 'rerunExecution', tag: 'executions', auth: 'admin',
    summary: 'Run a recorded execution again as a new one (trigger { type: "rerun", of, fromBlock }), all of it or from a block',
    description: 'Without fromBlock every block runs again, on `input` when given, else on the recorded input. With fromBlock (a '
      + 'top-level block that ran), the blocks that are neither it nor downstream of it are not run again: the new record carries '
      + 'their logs over as they were, each with `carriedFrom` (the execution rerun), and fromBlock and everything downstream run. '
      + 'Answered like execute: sync (default), async or stream, by the body\'s async/stream or the headers.',
    body: { schema: rerunBody, required: false, description: 'empty: rerun everything on the recorded input and version' },
    requestHeaders: MODE_HEADERS,
    responses: orResponseBlock({
      ...executionResponses(),
      400: errorResponse('invalid JSON, body or X-Execution-Mode (INVALID_JSON, INVALID_REQUEST)'),
      401: errorResponse('no or wrong admin token (UNAUTHORIZED)'),
      404: errorResponse('unknown execution, or its workflow (version) was deleted since (NOT_FOUND)'),
      422: errorResponse('input with fromBlock, a fromBlock that is unknown, inside a container or did not run, or an execution of '
        + "troupe run (INVALID_REQUEST, details.issues); an input that does not match the starter's inputFormat (INVALID_INPUT)"),
    }),
    handler: (ctx) => rerun(ctx, s, reruns, logger),
  }];
}
