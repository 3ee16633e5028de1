/**
 * The router's config, in a module of its own so the llm mode (router-llm.ts) can name its type
 * without importing the block that calls it.
 */
import { z } from 'zod';
import { modelSettingsShape } from './model-settings.js';
import { EVERY_ISSUE, checkHandleIds, expressionText, handleIdSchema, idsOf, isPlainObject } from './schemas.js';

const RESERVED_ROUTE_IDS = ['error'];

/**
 * A route of rules mode. `equals` is required: a route written without it is more likely an
 * unfinished row, or a catch-all, than one meant to match null, and zod's own word for a missing
 * unknown ("expected nonoptional") told nobody what to write. `"equals": null` matches null.
 */
const ruleRouteSchema = z.object({
  id: handleIdSchema,
  equals: z.unknown().refine((v) => v !== undefined, 'a route needs "equals": the value it matches (null matches a missing value; "default" names the route taken when none matches)'),
});

/**
 * Route ids and `default`. Runs when another field has the wrong type too (EVERY_ISSUE), so it
 * reads the config as it came: a `routes` that is no list has no ids to hold `default` against.
 */
function checkRoutes(config: { routes?: unknown; default?: unknown }, ctx: z.RefinementCtx): void {
  if (!Array.isArray(config.routes)) return;
  const ids = idsOf(config.routes);
  checkHandleIds(ids, ctx, 'routes', RESERVED_ROUTE_IDS);
  const fallback = config.default;
  if (typeof fallback === 'string' && !ids.includes(fallback)) {
    ctx.addIssue({ code: 'custom', path: ['default'], message: `default names no route: "${fallback}"` });
  }
}

const rulesSchema = z
  .object({
    mode: z.literal('rules'),
    // evaluated like a condition's expression: a blank one could only fail every run
    value: expressionText('a value (expression or reference) is required'),
    routes: z.array(ruleRouteSchema).min(1, 'a router needs at least one route'),
    default: z.string().optional(),
  })
  .superRefine(checkRoutes, EVERY_ISSUE);

/** llm mode: a model reads the prompt and picks a route by its description (router-llm.ts). */
const llmSchema = z
  .object({
    mode: z.literal('llm'),
    prompt: z.unknown().refine((p) => p !== undefined && p !== '', 'a prompt is required'),
    routes: z.array(z.object({ id: handleIdSchema, description: z.string() })).min(1, 'a router needs at least one route'),
    /** taken when the answer names no route; without one that is NO_ROUTE (SPEC §1.1) */
    default: z.string().optional(),
    ...modelSettingsShape,
  })
  .superRefine(checkRoutes, EVERY_ISSUE);

/** `mode` defaults to "rules", so the union is decided on a config that always has one. */
export const routerConfigSchema = z.preprocess(
  (config) => (isPlainObject(config) && config.mode === undefined ? { ...config, mode: 'rules' } : config),
  z.discriminatedUnion('mode', [rulesSchema, llmSchema]),
);

export type RouterConfig = z.infer<typeof routerConfigSchema>;
export type RouterRulesConfig = z.infer<typeof rulesSchema>;
export type RouterLlmConfig = z.output<typeof llmSchema>;
