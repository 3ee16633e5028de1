import { z } from 'zod';
import { LIMIT_SETTINGS, type ExecutionLimits } from '../model/limits.js';
import { collectionLike, countIssue, countLike, itemsIssue } from './loop.js';
import { EVERY_ISSUE } from './schemas.js';
import type { ContainerType } from './types.js';

export const parallelConfigSchema = z
  .object({
    kind: z.enum(['count', 'collection']),
    count: countLike.optional(),
    items: collectionLike.optional(),
    concurrency: z.number().int().min(1).max(10_000).default(20),
  })
  .superRefine((c, ctx) => {
    if (c.kind === 'count' && c.count === undefined) ctx.addIssue({ code: 'custom', path: ['count'], message: 'a "count" parallel needs count' });
    if (c.kind === 'collection' && c.items === undefined) ctx.addIssue({ code: 'custom', path: ['items'], message: 'a "collection" parallel needs items' });
  }, EVERY_ISSUE);

export type ParallelConfig = z.infer<typeof parallelConfigSchema>;

function parallelLimitIssues(config: Record<string, unknown>, limits: ExecutionLimits): { path: string; message: string }[] {
  const issues = [...itemsIssue(config['items'], '/items', limits)];
  if (config['kind'] === 'count') issues.push(...countIssue(config['count'], '/count', limits));
  const concurrency = config['concurrency'];
  if (typeof concurrency === 'number' && concurrency > limits.maxLiveBranches) {
    const message = `${concurrency} is more than the ${limits.maxLiveBranches} iterations and branches an execution may run at once (${LIMIT_SETTINGS.maxLiveBranches})`;
    issues.push({ path: '/concurrency', message });
  }
  return issues;
}

export const parallelBlock: ContainerType<ParallelConfig> = {
  type: 'parallel',
  container: true,
  configSchema: parallelConfigSchema,
  handles: () => ['success', 'error'],
  literalFields: ['kind'],
  limitIssues: parallelLimitIssues,
};
