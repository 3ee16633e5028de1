import { z } from 'zod';
import { TroupeError, toTroupeError } from '../errors.js';
import { evaluateInProcess } from '../model/expression/index.js';
import { EVERY_ISSUE, checkHandleIds, expressionSchema, handleIdSchema, idsOf } from './schemas.js';
import type { BlockRunContext, BlockType } from './types.js';

export const conditionConfigSchema = z
  .object({
    branches: z
      .array(z.object({ id: handleIdSchema, expression: expressionSchema }))
      .min(1, 'a condition needs at least one branch'),
    else: z.boolean().optional(),
  })
  .superRefine((config, ctx) => checkHandleIds(idsOf(config.branches), ctx, 'branches', ['else', 'error']), EVERY_ISSUE);

export type ConditionConfig = z.infer<typeof conditionConfigSchema>;

/**
 * Evaluates an author's expression (condition branch, router value) with its references bound
 * as values: in-process when it is in the subset that gives the sandbox's answer exactly
 * (docs/expressions.md), else in the sandbox. Expression errors name where they come from (`label`).
 */
export async function evaluateExpression(
  ctx: BlockRunContext<unknown>,
  expression: string,
  label: string,
  where: Record<string, unknown>,
): Promise<unknown> {
  const { source, bindings } = ctx.bindCode(expression);
  const quick = ctx.signal.aborted ? undefined : evaluateInProcess(source, bindings);
  if (quick?.done === true) return quick.value;
  try {
    return await ctx.services.sandbox.evaluate(source, bindings, {
      timeoutMs: ctx.services.functionTimeoutMs,
      memoryMb: ctx.services.functionMemoryMb,
      signal: ctx.signal,
      caller: { workflowId: ctx.workflowId },
    });
  } catch (err) {
    const e = toTroupeError(err);
    if (e.code !== 'EXPRESSION_ERROR') throw e;
    const details = e.details !== null && typeof e.details === 'object' ? e.details : {};
    throw new TroupeError('EXPRESSION_ERROR', `${label}: ${e.message}`, { details: { ...details, ...where }, cause: e });
  }
}

/** Ordered boolean expressions: the first truthy branch wins, then `else`, else nothing. */
export const conditionBlock: BlockType<ConditionConfig> = {
  type: 'condition',
  configSchema: conditionConfigSchema,
  codeFields: ['branches'],
  // `else` adds a handle, which connections must be able to name when the workflow is saved
  literalFields: ['else'],
  handles: (config) => [...config.branches.map((b) => b.id), ...(config.else === true ? ['else'] : []), 'error'],
  async run(ctx) {
    for (const branch of ctx.config.branches) {
      const value = await evaluateExpression(ctx, branch.expression, `branch "${branch.id}"`, { branch: branch.id });
      if (value) return { output: { selectedBranch: branch.id, result: true }, handles: [branch.id] };
    }
    if (ctx.config.else === true) return { output: { selectedBranch: 'else', result: false }, handles: ['else'] };
    return { output: { selectedBranch: null, result: false }, handles: [] };
  },
};
