import { TroupeError } from '../errors.js';
import { evaluateExpression } from './condition.js';
import { routerConfigSchema, type RouterConfig, type RouterRulesConfig } from './router-config.js';
import { chooseRoute } from './router-llm.js';
import { isPlainObject } from './schemas.js';
import type { BlockType } from './types.js';

export { routerConfigSchema, type RouterConfig, type RouterLlmConfig, type RouterRulesConfig } from './router-config.js';

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
