import { z } from 'zod';
import { collectionItems } from '../model/iteration.js';
import { LIMIT_SETTINGS, type ExecutionLimits } from '../model/limits.js';
import { hasPlaceholder } from '../model/ref-parse.js';
import { EVERY_ISSUE, expressionSchema } from './schemas.js';
import type { ContainerType } from './types.js';

/** A count may be a number or a reference that resolves to one (a whole reference keeps its type). */
export const countLike = z.union([
  z.number().int().min(0),
  z.string().refine((s) => hasPlaceholder(s) || /^\s*\d+\s*$/.test(s), 'a count is a whole number ≥ 0 or a reference'),
]);

/**
 * A collection (forEach `items`, parallel `items`): an array, an object, a JSON string holding
 * one, or text with a reference or `{{NAME}}` (its value is known at run time and checked then).
 * A number, a boolean or other text is refused where it is written, not when the block runs.
 */
export const collectionLike = z.unknown().superRefine((value, ctx) => {
  if (typeof value === 'string' && hasPlaceholder(value)) return;
  const items = collectionItems(value);
  if (!items.ok) ctx.addIssue({ code: 'custom', message: `${items.message} (or a reference to one)` });
});

export const loopConfigSchema = z
  .object({
    kind: z.enum(['for', 'forEach', 'while', 'doWhile']),
    iterations: countLike.optional(),
    items: collectionLike.optional(),
    condition: expressionSchema.optional(),
    maxIterations: z.number().int().min(1).max(1_000_000).default(1000),
  })
  .superRefine((c, ctx) => {
    if (c.kind === 'for' && c.iterations === undefined) ctx.addIssue({ code: 'custom', path: ['iterations'], message: 'a "for" loop needs iterations' });
    if (c.kind === 'forEach' && c.items === undefined) ctx.addIssue({ code: 'custom', path: ['items'], message: 'a "forEach" loop needs items' });
    if ((c.kind === 'while' || c.kind === 'doWhile') && c.condition === undefined) {
      ctx.addIssue({ code: 'custom', path: ['condition'], message: `a "${c.kind}" loop needs a condition` });
    }
  }, EVERY_ISSUE);

export type LoopConfig = z.infer<typeof loopConfigSchema>;

type LimitIssue = { path: string; message: string };

/** A count written as a number (or digits) above the iterations a container may run; a reference is checked at run time. */
export function countIssue(value: unknown, path: string, limits: ExecutionLimits): LimitIssue[] {
  const count = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : null;
  if (count === null || count <= limits.maxIterations) return [];
  return [{ path, message: `${count} is more than the ${limits.maxIterations} iterations a loop or parallel may run (${LIMIT_SETTINGS.maxIterations})` }];
}

/** A collection written out in the workflow with more items than a container may run. */
export function itemsIssue(value: unknown, path: string, limits: ExecutionLimits): LimitIssue[] {
  if (value === undefined || (typeof value === 'string' && hasPlaceholder(value))) return [];
  const items = collectionItems(value);
  if (!items.ok || items.items.length <= limits.maxIterations) return [];
  return [{ path, message: `${items.items.length} items are more than the ${limits.maxIterations} iterations a loop or parallel may run (${LIMIT_SETTINGS.maxIterations})` }];
}

function loopLimitIssues(config: Record<string, unknown>, limits: ExecutionLimits): LimitIssue[] {
  const issues = [...itemsIssue(config['items'], '/items', limits)];
  if (config['kind'] === 'for') issues.push(...countIssue(config['iterations'], '/iterations', limits));
  // a while loop's cap: left at its default, it is the smaller of the two
  if (config['maxIterations'] !== undefined) issues.push(...countIssue(config['maxIterations'], '/maxIterations', limits));
  return issues;
}

export const loopBlock: ContainerType<LoopConfig> = {
  type: 'loop',
  container: true,
  configSchema: loopConfigSchema,
  handles: () => ['success', 'error'],
  codeFields: ['condition'],
  literalFields: ['kind'],
  limitIssues: loopLimitIssues,
};
