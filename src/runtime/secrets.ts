import { SECRET_ENV_PREFIX } from '../../config/env-keys.js';
import type { CompiledWorkflow } from '../model/graph.js';
import { findSecretNames } from '../model/references.js';
import type { SecretSource } from './types.js';

/** `{{NAME}}` from the process environment as TROUPE_VAR_NAME (SPEC §6). */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretSource {
  return { get: async (name) => env[SECRET_ENV_PREFIX + name] };
}

/** First source that knows the name wins: the secrets API, then the environment. */
export function chainSecrets(...sources: SecretSource[]): SecretSource {
  return {
    async get(name) {
      for (const source of sources) {
        const value = await source.get(name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}

const secretNames = new WeakMap<CompiledWorkflow, string[]>();

/** The `{{NAME}}`s a compiled workflow uses, found once per compiled workflow, not per execution. */
export function secretNamesOf(workflow: CompiledWorkflow): string[] {
  let names = secretNames.get(workflow);
  if (names === undefined) {
    const found = new Set<string>(workflow.triggerSecretNames ?? []);
    for (const block of workflow.blocks.values()) for (const n of findSecretNames(block.config)) found.add(n);
    names = [...found];
    secretNames.set(workflow, names);
  }
  return names;
}

/** The values of the secrets a workflow uses that `source` knows, to redact them. */
export async function secretValuesOf(workflow: CompiledWorkflow, source: SecretSource): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const name of secretNamesOf(workflow)) {
    const value = await source.get(name);
    if (value !== undefined) found.set(name, value);
  }
  return found;
}
