import { capabilitiesOf } from '../model/capabilities.js';
import type { BlockResult, BlockRunContext, BlockServices, BlockType, TriggerInfo, WaitingInfo } from '../blocks/types.js';
import { TroupeError, errorInfo, toTroupeError, type ErrorInfo } from '../errors.js';
import { executionRunKey } from '../model/block-run.js';
import type { CompiledBlock } from '../model/graph.js';
import { someString } from '../model/json.js';
import { isLimitCode } from '../model/limits.js';
import {
  bindCode,
  findSecretNames,
  findSecretTokens,
  maskSecretPlaceholders,
  resolveConfig,
  resolveValue,
  StreamRedactor,
  type ReferenceScope,
} from '../model/references.js';
import { redactError, redactFields, redactOutput, type TypeOfName } from '../model/redaction.js';
import { redactionValues } from '../model/secret-forms.js';

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
  /** the block's place in the execution (its inbox key: scope and block id), naming its run */
  runKey?: string;
  services: BlockServices;
  emitChunk(text: string): void;
  /**
   * Hears the recorded input (resolved config, secrets masked) once it is known, before the
   * block's work starts: a block cancelled mid-run keeps it in its log (its outcome never comes).
   */
  onPrepared?(recorded: unknown): void;
  /** the block is waiting (see BlockRunContext.onWaiting) */
  onWaiting?(info: WaitingInfo): void;
  /** a container's: the types of the children its results name, whose own fields redaction keeps */
  childTypes?: TypeOfName;
}

/**
 * A failure whose error is already what the log records: a container's, which is one of its
 * children's (their own attempts already counted in their logs). One attempt of the container,
 * its error kept as it is; `repeats` when the config alone decided it, so a retry would only
 * repeat it.
 */
export class ReportedFailure extends Error {
  constructor(readonly info: ErrorInfo, readonly repeats: boolean) {
    super(info.message);
    this.name = 'ReportedFailure';
  }
}

function infoOf(err: unknown): ErrorInfo {
  return err instanceof ReportedFailure ? err.info : errorInfo(err);
}

export type BlockOutcome =
  | {
      kind: 'completed';
      /** what is recorded (logs, context, events, the final output): secret values as *** */
      output: Record<string, unknown>;
      /**
       * The output as the block produced it, for the blocks downstream, when the execution has
       * secrets (redaction may have changed it). Redaction is for what is recorded: the data a
       * workflow computes on stays true, so an input or a response that happens to hold a secret's
       * value is not altered under the blocks that read it.
       */
      live?: Record<string, unknown>;
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
 * How a block run learns that its scope has ended: `aborted` without making a signal, `signal`
 * (made on first use) for what needs one (actors/cancel-scope.ts).
 */
export interface Cancellation {
  readonly aborted: boolean;
  readonly signal: AbortSignal;
}

/**
 * Runs one block: resolve config, run with timeout and whole-block retry, redact. Never throws.
 * The outcome's `attempts` counts every attempt the block made: each whole-block attempt, or the
 * calls it made itself when it retries on its own (API block), summed over the whole-block ones.
 */
export async function runBlock(run: BlockRunInput, cancel: Cancellation): Promise<BlockOutcome> {
  const secretValues = redactionValues(run.secrets);
  let recordedInput: unknown = null;
  const tally: Tally = { attempts: 0, log: [] };
  const chunks: Chunks = { values: secretValues, sink: undefined };
  try {
    const prepared = prepareConfig(run);
    recordedInput = prepared.recorded;
    run.onPrepared?.(recordedInput);
    const ctx = new RunContext(run, prepared.config, cancel, chunks);
    const maxAttempts = Math.max(1, run.block.retry?.maxAttempts ?? 1);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result = await withTimeout(run, ctx, cancel);
        chunks.sink?.flush();
        tally.attempts += result.attempts ?? 1;
        if (result.attemptLog !== undefined) tally.log.push(...result.attemptLog);
        return completed(run, result, recordedInput, tally, secretValues);
      } catch (err) {
        // a retry would stream its text again after what the reader already saw
        const streamed = chunks.sink !== undefined;
        countFailure(tally, err);
        if (cancel.aborted || attempt >= maxAttempts || isPermanent(err) || streamed) throw err;
        await run.services.clock.sleep(retryBackoffMs(run.block, attempt), cancel.signal);
      }
    }
  } catch (err) {
    chunks.sink?.flush();
    const info = redactError(infoOf(err), secretValues);
    return err instanceof ReportedFailure ? { kind: 'failed', error: info, input: recordedInput, attempts: Math.max(tally.attempts, 1) } : failed(info, recordedInput, tally);
  }
}

/** The attempts a block run has made so far, and the per-attempt detail of those that keep one. */
interface Tally {
  attempts: number;
  log: unknown[];
}

/** A failed attempt counts the calls its error says it made (API block), else one. */
function countFailure(tally: Tally, err: unknown): void {
  if (err instanceof ReportedFailure) {
    tally.attempts += 1;
    return;
  }
  const info = errorInfo(err);
  tally.attempts += typeof info['attempts'] === 'number' ? info['attempts'] : 1;
  const log = info['attemptLog'];
  if (Array.isArray(log)) tally.log.push(...(log as unknown[]));
}

/** Where a block's streamed text goes: redacted (a secret split over pieces too), created on the first piece. */
interface Chunks {
  values: readonly string[];
  sink: StreamRedactor | undefined;
}

function completed(run: BlockRunInput, result: BlockResult, input: unknown, tally: Tally, secretValues: string[]): BlockOutcome {
  const output = redactOutput(result.output, secretValues, run.block.type, run.childTypes);
  const errorHandled = run.block.hasErrorConnection && result.handles.includes('error');
  // not redacted: the attempts' numbers, statuses and error codes are Troupe's (AttemptInfo)
  const attemptLog = tally.log.length === 0 ? {} : { attemptLog: tally.log };
  const outcome: BlockOutcome = { kind: 'completed', output, handles: result.handles, input, attempts: tally.attempts, errorHandled, ...attemptLog };
  // set, not spread: this runs for every block, and most executions have no secret
  if (secretValues.length > 0) outcome.live = result.output;
  return outcome;
}

/**
 * A block that retries on its own (API block) reports its attempts in the error details: that
 * count stays in the error (SPEC §3), the per-attempt detail moves to the log's attemptLog.
 */
function failed(info: ErrorInfo, input: unknown, tally: Tally): BlockOutcome {
  const { attemptLog: _detail, ...error } = info;
  const attemptLog = tally.log.length === 0 ? {} : { attemptLog: tally.log };
  return { kind: 'failed', error, input, attempts: Math.max(tally.attempts, 1), ...attemptLog };
}

/** Input validation and cancellation are not worth retrying: the next attempt fails the same way. */
function isPermanent(err: unknown): boolean {
  if (err instanceof ReportedFailure) return err.repeats || isPermanentCode(err.info.code);
  return isPermanentCode(toTroupeError(err).code);
}

/** The wait after a block's attempt `attempt` failed: its `retry.backoffMs`, doubled each time. */
export function retryBackoffMs(block: Pick<CompiledBlock, 'retry'>, attempt: number): number {
  return (block.retry?.backoffMs ?? 0) * 2 ** (attempt - 1);
}

/** Failures a whole-block retry would only repeat: bad input or config, a missing secret, a cancel, an execution limit. */
export function isPermanentCode(code: string): boolean {
  return code === 'INVALID_INPUT' || code === 'INVALID_CONFIG' || code === 'MISSING_SECRET' || code === 'CANCELLED' || isLimitCode(code);
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
 * A config with no reference and no secret outside its code fields resolves to itself: it is
 * parsed once per compiled block and shared (frozen) by every run, which saves the two
 * resolution passes, the schema parse and the masking copy on every block of every execution.
 */
const staticConfigs = new WeakMap<object, PreparedConfig | null>();

function isStaticConfig(config: Record<string, unknown>, codeFields: readonly string[]): boolean {
  for (const [key, value] of Object.entries(config)) {
    if (codeFields.includes(key)) continue;
    if (someString(value, (text) => text.includes('<') || text.includes('{{'))) return false;
  }
  return true;
}

/**
 * References and secrets resolved in one pass everywhere but in code fields (so a `{{NAME}}`
 * arriving inside referenced data is never expanded); a copy with secrets masked is kept for the record.
 */
export function prepareConfig(run: ConfigSource): PreparedConfig {
  const cached = staticConfigs.get(run.block);
  if (cached !== undefined && cached !== null) return cached;
  const codeFields = run.type.codeFields ?? [];
  const raw = run.block.config;
  if (cached === undefined && isStaticConfig(raw, codeFields)) {
    const parsed = parseConfig(run, resolveConfig(raw, run.scope, codeFields));
    const prepared = deepFreeze({ config: parsed, recorded: resolveConfig(raw, run.scope, codeFields) });
    staticConfigs.set(run.block, prepared);
    return prepared;
  }
  if (cached === undefined) staticConfigs.set(run.block, null);
  const names = secretNamesOf(run.block, raw, codeFields);
  requireSecrets(names, run.secrets);
  const values = redactionValues(run.secrets);
  if (names.length === 0) {
    // no `{{NAME}}` of its own: the run's and the record's resolution are the same pass
    const resolved = resolveConfig(raw, run.scope, codeFields);
    const shown = holdsSecretPlaceholder(resolved) ? maskSecretPlaceholders(resolved) : resolved;
    return { config: parseConfig(run, resolved), recorded: redactFields(shown, values) };
  }
  const resolved = resolveConfig(raw, { ...run.scope, secrets: run.secrets }, codeFields);
  const shown = resolveConfig(raw, run.scope, codeFields);
  const recorded = redactFields(maskSecretPlaceholders(shown), values);
  return { config: parseConfig(run, resolved), recorded };
}

/** The `{{NAME}}`s of a block's config outside its code fields: found once per compiled block. */
const configSecretNames = new WeakMap<object, string[]>();

function secretNamesOf(block: object, raw: Record<string, unknown>, codeFields: readonly string[]): string[] {
  let names = configSecretNames.get(block);
  if (names === undefined) {
    names = findSecretNames(withoutKeys(raw, codeFields));
    configSecretNames.set(block, names);
  }
  return names;
}

/** Walks the resolved config, referenced data included, on every run: no path per value (someString). */
function holdsSecretPlaceholder(value: unknown): boolean {
  return someString(value, isSecretPlaceholderText);
}

function isSecretPlaceholderText(text: string): boolean {
  return text.includes('{{') && findSecretTokens(text).length > 0;
}

function parseConfig(run: ConfigSource, resolved: Record<string, unknown>): unknown {
  const parsed = run.type.configSchema.safeParse(resolved);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: '/' + i.path.map(String).join('/'), message: i.message }));
  const said = issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join('; ');
  throw new TroupeError('INVALID_CONFIG', `block "${run.block.name}" has an invalid configuration after resolving references (${said})`, {
    details: { issues },
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

function withoutKeys(obj: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  if (keys.length === 0) return obj;
  return Object.fromEntries(Object.entries(obj).filter(([k]) => !keys.includes(k)));
}

/**
 * What a block's run sees (BlockRunContext), one per block run. A class, not an object literal:
 * a literal with a getter (`signal`) and three closures is built by the runtime in dictionary
 * mode (~1 µs per block run and ~1.4 KB here, and every read of it a hash lookup); a class
 * instance is a fast object with its methods on the prototype. The methods read `this`, so a
 * block calls them on the context (`ctx.bindCode(...)`), as every block type does.
 */
class RunContext implements BlockRunContext<any> {
  readonly executionId: string;
  readonly workflowId: string;
  readonly block: { id: string; name: string; type: string };
  readonly input: unknown;
  readonly trigger: TriggerInfo;
  readonly hasErrorConnection: boolean;
  readonly runKey: string;
  readonly services: BlockServices;
  conversationId?: string;
  onWaiting?: (info: WaitingInfo) => void;
  connectedHandles?: readonly string[];

  constructor(
    private readonly run: BlockRunInput,
    readonly config: unknown,
    private readonly cancel: Cancellation,
    private readonly chunks: Chunks,
    /** an attempt's own signal (the block's time limit), else the execution's, made on first use */
    private readonly attemptSignal?: AbortSignal,
  ) {
    this.executionId = run.executionId;
    this.workflowId = run.workflowId;
    this.block = { id: run.block.id, name: run.block.name, type: run.block.type };
    this.input = run.input;
    this.trigger = run.trigger;
    this.hasErrorConnection = run.block.hasErrorConnection;
    this.runKey = executionRunKey(run.executionId, run.runKey, run.block.id);
    this.services = run.services;
    if (run.conversationId !== undefined) this.conversationId = run.conversationId;
    if (run.onWaiting !== undefined) this.onWaiting = run.onWaiting;
    if (capabilitiesOf(run.block.type).readsConnections) this.connectedHandles = run.block.outgoing.map((c) => c.handle);
  }

  // made when the block asks for it (see Cancellation)
  get signal(): AbortSignal {
    return this.attemptSignal ?? this.cancel.signal;
  }

  bindCode(source: string): { source: string; bindings: Record<string, unknown> } {
    return bindCodeWithSecrets(source, this.run);
  }

  resolve(value: unknown): unknown {
    return resolveValue(value, this.run.scope);
  }

  emitChunk(text: string): void {
    this.chunks.sink ??= new StreamRedactor(this.chunks.values, this.run.emitChunk);
    this.chunks.sink.write(text);
  }

  /** The same context for one attempt bounded by the block's time limit: `signal` is the attempt's. */
  withSignal(signal: AbortSignal): RunContext {
    return new RunContext(this.run, this.config, this.cancel, this.chunks, signal);
  }
}

/** An unknown `{{NAME}}` fails the block (SPEC §6). */
function requireSecrets(names: readonly string[], secrets: ReadonlyMap<string, string>): void {
  for (const name of names) {
    if (!secrets.has(name)) throw new TroupeError('MISSING_SECRET', `secret {{${name}}} is not set`, { details: { name } });
  }
}

/**
 * `{{NAME}}` in code reads the secret like anywhere in a config (SPEC §1.2), bound as a value
 * as references are, never pasted as source; an unknown name is MISSING_SECRET (SPEC §6).
 */
function bindCodeWithSecrets(source: string, run: BlockRunInput): { source: string; bindings: Record<string, unknown> } {
  if (!source.includes('{{')) return bindCode(source, run.scope);
  requireSecrets(findSecretNames(source), run.secrets);
  return bindCode(source, { ...run.scope, secrets: run.secrets });
}

/** The block's own `timeoutMs` bounds each attempt (a timer on the services' clock); the execution's signal bounds everything. */
async function withTimeout(run: BlockRunInput, ctx: RunContext, cancel: Cancellation): Promise<BlockResult> {
  if (cancel.aborted) throw new TroupeError('CANCELLED', 'block cancelled');
  const timeoutMs = run.block.timeoutMs;
  if (timeoutMs === undefined) return run.type.run(ctx);
  const signal = cancel.signal;
  const attempt = new AbortController();
  const onAbort = (): void => attempt.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let cancelTimer: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    cancelTimer = run.services.clock.setTimer(timeoutMs, () => {
      const err = new TroupeError('BLOCK_TIMEOUT', `block "${run.block.name}" exceeded its ${timeoutMs} ms time limit`, { retryable: true });
      attempt.abort(err);
      reject(err);
    });
  });
  try {
    return await Promise.race([run.type.run(ctx.withSignal(attempt.signal)), timeout]);
  } finally {
    cancelTimer?.();
    signal.removeEventListener('abort', onAbort);
  }
}
