import { SECRET_ENV_PREFIX } from '../../config/env-keys.js';
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
