import { z } from 'zod';
import { collectionLike, countLike } from './loop.js';
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

export const parallelBlock: ContainerType<ParallelConfig> = {
  type: 'parallel',
  container: true,
  configSchema: parallelConfigSchema,
  handles: () => ['success', 'error'],
  literalFields: ['kind'],
};
