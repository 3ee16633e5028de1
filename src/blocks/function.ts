import { z } from 'zod';
import type { BlockType } from './types.js';

export const functionConfigSchema = z.object({ code: z.string() });

export type FunctionConfig = z.infer<typeof functionConfigSchema>;

/** User JavaScript (a function body) in the sandbox; references in the code are bound as values. */
export const functionBlock: BlockType<FunctionConfig> = {
  type: 'function',
  configSchema: functionConfigSchema,
  codeFields: ['code'],
  handles: () => ['success', 'error'],
  async run(ctx) {
    const { source, bindings } = ctx.bindCode(ctx.config.code);
    const { result, stdout } = await ctx.services.sandbox.runFunction(source, bindings, {
      timeoutMs: ctx.services.functionTimeoutMs,
      memoryMb: ctx.services.functionMemoryMb,
      signal: ctx.signal,
      // calls of one workflow share a hardened realm (compiled code, no state); never another's
      caller: { workflowId: ctx.workflowId },
    });
    return { output: { result, stdout }, handles: ['success'] };
  },
};
