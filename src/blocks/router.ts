import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { evaluateExpression } from './condition.js';
import { modelSettingsShape } from './model-settings.js';
import { chooseRoute } from './router-llm.js';
import { EVERY_ISSUE, checkHandleIds, expressionText, handleIdSchema, idsOf, isPlainObject } from './schemas.js';
import type { BlockType } from './types.js';

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

/**
 * Equality of JSON data: strict for primitives (no coercion: "3" does not equal 3), by value for
 * arrays (in order) and objects (same keys, any order).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && jsonEqual(a[key], b[key]));
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export function selectRoute(config: RouterRulesConfig, value: unknown): { selectedRoute: string; reasoning: string } {
  const match = config.routes.find((route) => jsonEqual(value, route.equals ?? null));
  if (match !== undefined) return { selectedRoute: match.id, reasoning: `value ${preview(value)} matched route '${match.id}'` };
  if (config.default !== undefined) {
    return { selectedRoute: config.default, reasoning: `value ${preview(value)} matched no route; took the default route '${config.default}'` };
  }
  throw new TroupeError('NO_ROUTE', `value ${preview(value)} matched no route and the router has no default route`);
}

export const routerBlock: BlockType<RouterConfig> = {
  type: 'router',
  configSchema: routerConfigSchema,
  codeFields: ['value'],
  literalFields: ['mode'],
  handles: (config) => [...config.routes.map((r) => r.id), 'error'],
  async run(ctx) {
    const config = ctx.config;
    if (config.mode === 'llm') {
      const decision = await chooseRoute(ctx, config);
      return { output: decision, handles: [decision.selectedRoute] };
    }
    const value = await evaluateExpression(ctx, config.value, 'router value', { field: 'value' });
    const decision = selectRoute(config, value);
    return { output: decision, handles: [decision.selectedRoute] };
  },
};
