/**
 * POST /webhooks/{path} (SPEC §4.3): no admin token or API key; the provider's signature is the
 * credential. Checked in order: 413 body size, 404 unknown path or undeployed workflow, 401
 * signature, 400 body, 422 input, 503 capacity (sync only); then 202 or, in sync mode, the
 * execution's answer as execute gives it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Services } from '../../service/index.js';
import { respondToExecution } from '../respond.js';
import { errorResponse, orResponseBlock, param, type RouteSpec } from '../route-spec.js';
import { syncAnswerSchema, syncResultSchema, webhookAcceptedSchema } from '../schemas.js';
import type { Ctx } from '../types.js';

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

async function receive(ctx: Ctx, s: Services, logger: Logger): Promise<void> {
  const rawBody = await ctx.state.readBody();
  const outcome = await s.webhooks.receive({
    path: param(ctx, 'path'),
    rawBody,
    headers: flatHeaders(ctx.req.headers),
    query: { ...ctx.query },
    method: ctx.method,
  });
  if (outcome.mode === 'challenge') {
    ctx.body = { challenge: outcome.challenge };
    return;
  }
  if (outcome.mode === 'sync') {
    await respondToExecution(ctx, outcome.handle, 'sync', s.executions, logger);
    return;
  }
  ctx.set('X-Execution-Id', outcome.executionId);
  ctx.status = 202;
  ctx.body = { eventId: outcome.eventId, duplicate: outcome.duplicate };
}

export function webhookRoutes(s: Services, logger: Logger): RouteSpec[] {
  return [
    {
      method: 'post', path: '/webhooks/{path}', routerPath: '/webhooks/*path', operationId: 'receiveWebhook', tag: 'webhooks', auth: 'none',
      summary: "A webhook trigger of a deployed workflow (the path may span segments, e.g. 'github/push')",
      description: 'Signature by provider: generic `X-Signature: sha256=<hex HMAC of the raw body>` (with `X-Signature-Timestamp: <unix seconds>`, '
        + 'the HMAC of `<timestamp>.<raw body>`, refused outside 5 minutes; required by `requireTimestamp`), GitHub `X-Hub-Signature-256`, '
        + 'Stripe `Stripe-Signature` and Slack `X-Slack-Signature` (5-minute tolerance). The event is stored and announced on the bus '
        + 'before the answer; a delivery id seen within 24 h (`X-GitHub-Delivery`, the Stripe event id, the Slack `event_id`, '
        + '`Idempotency-Key`, `X-Delivery-Id`) is acknowledged with `duplicate: true` and starts nothing.',
      body: { schema: z.unknown(), required: false, description: 'What the provider sends: JSON, form fields or text (decoded by Content-Type); signed as raw bytes' },
      responses: orResponseBlock({
        200: {
          description: 'responseMode sync (or a Slack url_verification: `{ challenge }`): as execute (the result envelope, or the response block\'s answer)',
          schema: syncAnswerSchema('the data a response block set, or { challenge }'), headers: ['X-Execution-Id'],
        },
        202: { description: 'accepted (stored durably), or a duplicate delivery', schema: webhookAcceptedSchema, headers: ['X-Execution-Id'] },
        400: errorResponse('a JSON body that does not parse (INVALID_JSON)'),
        401: errorResponse('bad or missing signature (UNAUTHORIZED); nothing is started'),
        404: errorResponse('unknown path, or its workflow is not deployed (NOT_FOUND)'),
        413: errorResponse('body over the size limit (PAYLOAD_TOO_LARGE)'),
        422: errorResponse("the input does not match the starter's inputFormat (INVALID_INPUT)"),
        500: { description: 'sync: the execution failed (as execute); or the webhook\'s secret is not set (MISSING_SECRET)', schema: syncResultSchema },
        503: errorResponse('sync mode, no capacity (OVERLOADED)', ['Retry-After']),
        504: { description: 'sync: the execution exceeded its time limit', schema: syncResultSchema },
        default: { description: 'sync, when a response block ran: the status, headers and data it set', schema: z.unknown(), headers: ['X-Execution-Id'] },
      }),
      handler: (ctx) => receive(ctx, s, logger),
    },
  ];
}
