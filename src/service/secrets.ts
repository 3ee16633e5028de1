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

interface ValueSnapshot {
  at: number;
  values: ReadonlyMap<string, string>;
}

/** per secrets repo (one store), shared by the SecretService instances on it */
const valueSnapshots = new WeakMap<object, ValueSnapshot | Promise<ValueSnapshot>>();
/** how long the values are trusted without a change seen here (another instance may have made one) */
const VALUES_TTL_MS = 5_000;

/** how many stored secrets the start-up key check tries */
const KEY_CHECK_SAMPLE = 5;

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
    this.changed();
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
    this.changed();
  }

  /** `{{NAME}}` values for the engine, decrypted on use; `values` for redaction (see `allValues`). */
  source(): SecretSource {
    return {
      get: async (name) => {
        const blob = await this.store.secrets.get(name);
        return blob === null ? undefined : decryptSecret(this.derived(), blob, name);
      },
      values: () => this.allValues(),
    };
  }

  /**
   * Every stored secret's value, decrypted, for redaction in every run. Kept per store (every
   * SecretService on it shares it, the routes' and the engine's) and dropped by a put or a
   * delete; read again after VALUES_TTL_MS all the same, for changes made by another instance on
   * a shared store. A fresh one is returned as a map, so a run waits for nothing. A value that
   * does not decrypt (corrupted) is left out: its blocks fail when they read it.
   */
  allValues(): ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>> {
    const held = valueSnapshots.get(this.store.secrets);
    if (held !== undefined && !(held instanceof Promise) && Date.now() - held.at < VALUES_TTL_MS) return held.values;
    if (held instanceof Promise) return held.then((s) => s.values);
    const loading = this.loadValues().then(
      (snapshot) => {
        if (valueSnapshots.get(this.store.secrets) === loading) valueSnapshots.set(this.store.secrets, snapshot);
        return snapshot;
      },
      (err: unknown) => {
        if (valueSnapshots.get(this.store.secrets) === loading) valueSnapshots.delete(this.store.secrets);
        throw err;
      },
    );
    valueSnapshots.set(this.store.secrets, loading);
    return loading.then((s) => s.values);
  }

  private async loadValues(): Promise<ValueSnapshot> {
    const at = Date.now();
    const values = new Map<string, string>();
    for (const { name } of await this.store.secrets.list()) {
      const blob = await this.store.secrets.get(name);
      if (blob === null) continue;
      try {
        values.set(name, decryptSecret(this.derived(), blob, name));
      } catch {
        // corrupted: nothing to redact with, and reading it fails where it is used
      }
    }
    return { at, values };
  }

  private changed(): void {
    valueSnapshots.delete(this.store.secrets);
  }

  /**
   * INVALID_CONFIG when TROUPE_SECRET_KEY is not the key the stored secrets were written with:
   * checked at start, so a changed key stops the service with the reason rather than failing
   * every run that reads a secret with a 503. A few secrets are tried: one that decrypts proves
   * the key (another that does not is a corrupted value, reported when it is used).
   */
  async checkKey(): Promise<void> {
    const names = (await this.store.secrets.list()).slice(0, KEY_CHECK_SAMPLE).map((s) => s.name);
    if (names.length === 0) return;
    const source = this.source();
    for (const name of names) {
      try {
        await source.get(name);
        return;
      } catch {
        // the next one may decrypt
      }
    }
    throw new TroupeError('INVALID_CONFIG', 'TROUPE_SECRET_KEY does not decrypt the stored secrets: it is not the key they were stored with '
      + '(start with that key, or delete the secrets and set them again)');
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
