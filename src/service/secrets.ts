/**
 * Workflow secrets (SPEC §4.1, §6): values encrypted at rest with TROUPE_SECRET_KEY (AES-GCM,
 * crypto.ts) and never returned; the engine reads them through `source()`.
 */
import { TroupeError, ValidationError } from '../errors.js';
import type { SecretSource } from '../runtime/types.js';
import { decryptSecret, deriveSecretKey, encryptSecret, type SecretKey } from '../store/crypto.js';
import type { Store } from '../store/types.js';

/** the `{{NAME}}` syntax of SPEC §1.2 */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export interface SecretView {
  name: string;
  updatedAt: string;
}

export class SecretService {
  private key: SecretKey | undefined;

  constructor(private readonly store: Store, private readonly secretKey: string) {}

  /** true when the secret did not exist before */
  async put(name: string, value: string): Promise<{ created: boolean }> {
    checkName(name);
    const existed = (await this.store.secrets.get(name)) !== null;
    await this.store.secrets.put(name, encryptSecret(this.derived(), value, name));
    return { created: !existed };
  }

  async list(): Promise<SecretView[]> {
    return this.store.secrets.list();
  }

  async delete(name: string): Promise<void> {
    checkName(name);
    if (!(await this.store.secrets.delete(name))) {
      throw new TroupeError('NOT_FOUND', `secret ${name} not found`, { details: { name } });
    }
  }

  /** `{{NAME}}` values for the engine, decrypted on use. */
  source(): SecretSource {
    return {
      get: async (name) => {
        const blob = await this.store.secrets.get(name);
        return blob === null ? undefined : decryptSecret(this.derived(), blob, name);
      },
    };
  }

  // scrypt is slow on purpose: derive once, and only when a secret is actually used
  private derived(): SecretKey {
    this.key ??= deriveSecretKey(this.secretKey);
    return this.key;
  }
}

function checkName(name: string): void {
  if (!SECRET_NAME_PATTERN.test(name)) {
    throw new ValidationError('INVALID_REQUEST', 'invalid secret name', [
      { path: '/name', message: 'a secret name is a letter or "_" followed by letters, digits or "_" (at most 128)' },
    ]);
  }
}
