import type { BlockResult, BlockRunContext, BlockServices, BlockType, TriggerInfo } from '../blocks/types.js';
import { TroupeError, errorInfo, toTroupeError, type ErrorInfo } from '../errors.js';
import type { CompiledBlock } from '../model/graph.js';
import {
  bindCode,
  findSecretNames,
  maskSecretPlaceholders,
  redactSecrets,
  resolveConfig,
  resolveValue,
  type ReferenceScope,
} from '../model/references.js';

/** Everything one block run needs; built by the block actor from its inputs. */
export interface BlockRunInput {
  executionId: string;
  workflowId: string;
  block: CompiledBlock;
  type: BlockType<any>;
  scope: ReferenceScope;
  /** secrets of this execution, resolved once at start (absent name = unknown secret) */
  secrets: ReadonlyMap<string, string>;
  input: unknown;
  trigger: TriggerInfo;
  conversationId?: string;
  services: BlockServices;
  emitChunk(text: string): void;
}

export type BlockOutcome =
  | {
      kind: 'completed';
      output: Record<string, unknown>;
      handles: string[];
      input: unknown;
      attempts: number;
      errorHandled: boolean;
      /** a failure turned into output `{ error }` on the error connection */
      fromFailure?: boolean;
      attemptLog?: unknown[];
    }
  | { kind: 'failed'; error: ErrorInfo; input: unknown; attempts: number; attemptLog?: unknown[] };

/**
 * What redaction looks for: each secret value, and its percent-encoded form (a secret placed in
 * a URL may come back encoded).
 */
export function redactionValues(secrets: ReadonlyMap<string, string>): string[] {
  const out = new Set<string>();
  for (const value of secrets.values()) {
    if (value === '') continue;
    out.add(value);
    out.add(encodeURIComponent(value));
  }
  return [...out];
}

/** Runs one block: resolve config, run with timeout and whole-block retry, redact. Never throws. */
export async function runBlock(run: BlockRunInput, signal: AbortSignal): Promise<BlockOutcome> {
  const secretValues = redactionValues(run.secrets);
  let recordedInput: unknown = null;
  let attempts = 0;
  try {
    const prepared = prepareConfig(run);
    recordedInput = prepared.recorded;
    const ctx = makeContext(run, prepared.config, signal);
    const maxAttempts = Math.max(1, run.block.retry?.maxAttempts ?? 1);
    for (;;) {
      attempts += 1;
      try {
        const result = await withTimeout(run, ctx, signal);
        return completed(run, result, recordedInput, attempts, secretValues);
      } catch (err) {
        if (signal.aborted || attempts >= maxAttempts || isPermanent(err)) throw err;
        const backoff = (run.block.retry?.backoffMs ?? 0) * 2 ** (attempts - 1);
        await run.services.clock.sleep(backoff, signal);
      }
    }
  } catch (err) {
    return failed(redactSecrets(errorInfo(err), secretValues) as ErrorInfo, recordedInput, attempts);
  }
}

function completed(run: BlockRunInput, result: BlockResult, input: unknown, attempts: number, secretValues: string[]): BlockOutcome {
  const output = redactSecrets(result.output, secretValues) as Record<string, unknown>;
  const errorHandled = run.block.hasErrorConnection && result.handles.includes('error');
  const attemptLog = result.attemptLog === undefined ? {} : { attemptLog: redactSecrets(result.attemptLog, secretValues) as unknown[] };
  return { kind: 'completed', output, handles: result.handles, input, attempts: result.attempts ?? attempts, errorHandled, ...attemptLog };
}

/**
 * A block that retries on its own (API block) reports its attempts in the error details: the
 * count stays in the error (SPEC §3), the per-attempt detail moves to the log's attemptLog.
 */
function failed(info: ErrorInfo, input: unknown, runs: number): BlockOutcome {
  const { attemptLog, ...error } = info;
  const attempts = typeof error['attempts'] === 'number' ? error['attempts'] : Math.max(runs, 1);
  return { kind: 'failed', error, input, attempts, ...(Array.isArray(attemptLog) ? { attemptLog: attemptLog as unknown[] } : {}) };
}

/** Input validation and cancellation are not worth retrying: the next attempt fails the same way. */
function isPermanent(err: unknown): boolean {
  const code = toTroupeError(err).code;
  return code === 'INVALID_INPUT' || code === 'INVALID_CONFIG' || code === 'MISSING_SECRET' || code === 'CANCELLED';
}

export interface PreparedConfig {
  config: unknown;
  /** what the log records as the block's input: placeholders and secret values masked */
  recorded: unknown;
}

type ConfigSource = Pick<BlockRunInput, 'block' | 'scope' | 'secrets'> & {
  type: { configSchema: BlockType<any>['configSchema']; codeFields?: readonly string[] };
};

/**
 * References and secrets resolved in one pass everywhere but in code fields (so a `{{NAME}}`
 * arriving inside referenced data is never expanded); a copy with secrets masked is kept for the record.
 */
export function prepareConfig(run: ConfigSource): PreparedConfig {
  const codeFields = run.type.codeFields ?? [];
  const raw = run.block.config;
  for (const name of findSecretNames(withoutKeys(raw, codeFields))) {
    if (!run.secrets.has(name)) throw new TroupeError('MISSING_SECRET', `secret {{${name}}} is not set`, { details: { name } });
  }
  const resolved = resolveConfig(raw, { ...run.scope, secrets: run.secrets }, codeFields);
  const shown = resolveConfig(raw, run.scope, codeFields);
  const parsed = run.type.configSchema.safeParse(resolved);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: '/' + i.path.map(String).join('/'), message: i.message }));
    throw new TroupeError('INVALID_CONFIG', `block "${run.block.name}" has an invalid configuration after resolving references`, {
      details: { issues },
    });
  }
  const recorded = redactSecrets(maskSecretPlaceholders(shown), redactionValues(run.secrets));
  return { config: parsed.data, recorded };
}

function withoutKeys(obj: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  if (keys.length === 0) return obj;
  return Object.fromEntries(Object.entries(obj).filter(([k]) => !keys.includes(k)));
}

function makeContext(run: BlockRunInput, config: unknown, signal: AbortSignal): BlockRunContext<any> {
  return {
    executionId: run.executionId,
    workflowId: run.workflowId,
    block: { id: run.block.id, name: run.block.name, type: run.block.type },
    config,
    input: run.input,
    trigger: run.trigger,
    ...(run.conversationId === undefined ? {} : { conversationId: run.conversationId }),
    bindCode: (source: string) => bindCode(source, run.scope),
    resolve: (value: unknown) => resolveValue(value, run.scope),
    hasErrorConnection: run.block.hasErrorConnection,
    signal,
    services: run.services,
    emitChunk: run.emitChunk,
  };
}

/** The block's own `timeoutMs` bounds each attempt; the execution's signal bounds everything. */
async function withTimeout(run: BlockRunInput, ctx: BlockRunContext<any>, signal: AbortSignal): Promise<BlockResult> {
  if (signal.aborted) throw new TroupeError('CANCELLED', 'block cancelled');
  const timeoutMs = run.block.timeoutMs;
  if (timeoutMs === undefined) return run.type.run(ctx);
  const attempt = new AbortController();
  const onAbort = (): void => attempt.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new TroupeError('BLOCK_TIMEOUT', `block "${run.block.name}" exceeded its ${timeoutMs} ms time limit`, { retryable: true });
      attempt.abort(err);
      reject(err);
    }, timeoutMs);
  });
  try {
    return await Promise.race([run.type.run({ ...ctx, signal: attempt.signal }), timeout]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
