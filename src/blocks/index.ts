import type { BlockTypeInfo, BlockTypeRegistry } from '../model/types.js';
import { apiBlock } from './api.js';
import { conditionBlock } from './condition.js';
import { functionBlock } from './function.js';
import { loopBlock } from './loop.js';
import { parallelBlock } from './parallel.js';
import { responseBlock } from './response.js';
import { routerBlock } from './router.js';
import { zodIssues } from './schemas.js';
import { starterBlock } from './starter.js';
import type { AnyBlockType } from './types.js';

export { apiBlock, conditionBlock, functionBlock, loopBlock, parallelBlock, responseBlock, routerBlock, starterBlock };
export { validateStarterInput, checkStarterInput } from './starter.js';

/** Every block type by its `type` name: runnable ones and containers (run by container actors). */
export const blockTypes: Record<string, AnyBlockType> = {
  starter: starterBlock,
  api: apiBlock,
  function: functionBlock,
  condition: conditionBlock,
  router: routerBlock,
  response: responseBlock,
  loop: loopBlock,
  parallel: parallelBlock,
};

/** What the pure model needs to validate workflows: the block types seen through BlockTypeInfo. */
export function blockTypeRegistry(types: Readonly<Record<string, AnyBlockType>> = blockTypes): BlockTypeRegistry {
  const registry: Record<string, BlockTypeInfo> = {};
  for (const [name, type] of Object.entries(types)) registry[name] = blockTypeInfo(type);
  return Object.freeze(registry);
}

function blockTypeInfo(type: AnyBlockType): BlockTypeInfo {
  const info: BlockTypeInfo = {
    validateConfig(config) {
      const parsed = type.configSchema.safeParse(config);
      return parsed.success ? [] : zodIssues(parsed.error);
    },
    handles(config) {
      // handles() expects a parsed config (defaults applied); an invalid one has none to offer
      const parsed = type.configSchema.safeParse(config);
      return parsed.success ? type.handles(parsed.data) : [];
    },
  };
  if (type.codeFields !== undefined) info.codeFields = type.codeFields;
  return info;
}
