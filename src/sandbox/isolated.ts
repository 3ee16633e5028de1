import { availableParallelism } from 'node:os';
import type { Reference } from 'isolated-vm';
import { TroupeError, type ErrorCode } from '../errors.js';
import { MAX_JSON_DEPTH, jsonTextNestsTooDeep } from '../model/json.js';
import { IsolatePool, cancelled, type IsolateSlot } from './pool.js';
import { RESERVED_NAMES } from './realm.js';
import type { Realm } from './slot.js';
import { CODE_FILENAME, UserSyntaxError, cachedUserSource, userLine, type RunnerKind } from './source.js';
import type { FunctionResult, Sandbox, SandboxCaller, SandboxLimits } from './types.js';

/** isolated-vm refuses memory limits below 8 MB. */
const MIN_MEMORY_MB = 8;

export interface IsolatedVmSandboxOptions {
  /** isolates per memory limit that compute at once (each runs one call at a time, on its own thread) */
  poolSize?: number;
  /** isolates a pool may hold when calls sleep on timers (default 32) */
  maxIsolates?: number;
  /** isolates one workflow may hold at once (default a quarter of maxIsolates, at least poolSize) */
  perCaller?: number;
  /** idle time after which isolates beyond the pool size are disposed (default 2000 ms) */
  idleMs?: number;
  /**
   * Extra time the host waits past the limit before it disposes the isolate, which is how any
   * call past its limit is stopped (disposing costs a new isolate, ~2 ms, and its realms).
   */
  graceMs?: number;
}

type Kind = RunnerKind;

interface Envelope {
  r?: unknown;
  e?: { name: string; message: string; line?: number };
  o: string[];
}

/**
 * User code in V8 isolates (isolated-vm): no host objects exist in the isolate, user code runs on
 * the isolate's thread (a runaway loop never blocks the host event loop), and each caller's calls
 * run in a hardened realm of their own whose intrinsics and global are frozen before any user
 * code exists, so nothing a call does is visible to the next one. See docs/sandbox.md.
 */
export class IsolatedVmSandbox implements Sandbox {
  private readonly pools = new Map<number, IsolatePool>();
  private readonly poolSize: number;
  private readonly maxIsolates: number;
  private readonly perCaller: number;
  private readonly idleMs: number;
  private readonly graceMs: number;
  private disposed = false;

  constructor(options: IsolatedVmSandboxOptions = {}) {
    this.poolSize = Math.max(1, options.poolSize ?? Math.min(4, availableParallelism()));
    this.maxIsolates = Math.max(this.poolSize, options.maxIsolates ?? 32);
    this.perCaller = Math.min(this.maxIsolates, Math.max(1, options.perCaller ?? Math.max(this.poolSize, Math.floor(this.maxIsolates / 4))));
    this.idleMs = Math.max(0, options.idleMs ?? 2000);
    this.graceMs = Math.max(0, options.graceMs ?? 50);
  }

  async runFunction(code: string, bindings: Record<string, unknown>, limits: SandboxLimits): Promise<FunctionResult> {
    const envelope = await this.run('function', code, bindings, limits);
    return { result: envelope.r ?? null, stdout: envelope.o.join('\n') };
  }

  async evaluate(expression: string, bindings: Record<string, unknown>, limits: SandboxLimits): Promise<unknown> {
    const envelope = await this.run('expression', expression, bindings, limits);
    return envelope.r ?? null;
  }

  /** isolates alive across the pools (for the pool's tests and the RSS measurements) */
  get isolates(): number {
    let n = 0;
    for (const pool of this.pools.values()) n += pool.isolates;
    return n;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
  }

  private async run(kind: Kind, code: string, bindings: Record<string, unknown>, limits: SandboxLimits): Promise<Envelope> {
    if (this.disposed) throw new TroupeError('INTERNAL', 'the sandbox has been disposed');
    if (limits.signal?.aborted === true) throw cancelled();
    const names = Object.keys(bindings);
    const refused = names.find((name) => RESERVED_NAMES.has(name));
    if (refused !== undefined) throw new TroupeError(userErrorCode(kind), `binding name "${refused}" is not allowed (it would shadow a global)`);
    const user = userCode(kind, code, names);
    const valuesJson = serializeBindings(kind, names, bindings);
    const pool = this.pool(Math.max(MIN_MEMORY_MB, Math.ceil(limits.memoryMb)));
    const caller = callerKey(limits.caller);
    const slot = await pool.acquire(caller, limits.signal);
    try {
      const text = await this.execute(slot, caller, kind, user.source, valuesJson, limits);
      return unwrap(kind, text, JSON.parse(text) as Envelope, code, limits);
    } catch (err) {
      // dispose() stops running calls by disposing their isolates: say so rather than "memory"
      if (this.disposed) throw new TroupeError('INTERNAL', 'the sandbox has been disposed', { cause: err });
      throw err;
    } finally {
      pool.release(slot);
    }
  }

  /** One call on one slot, with every failure translated to a Troupe code. */
  private async execute(slot: IsolateSlot, caller: string | undefined, kind: Kind, source: string, valuesJson: string, limits: SandboxLimits): Promise<string> {
    const timeoutMs = Math.max(1, Math.ceil(limits.timeoutMs));
    let realm: Realm | undefined;
    let keep = false;
    try {
      realm = await slot.realm(caller);
      const factory: Reference = await slot.factory(realm, source, CODE_FILENAME, -1);
      if (limits.signal?.aborted === true) throw cancelled();
      const started = Date.now();
      // One thread round trip per call: the realm's runner makes the call's console, timers and
      // binding values, calls the user's function and serializes its outcome there. No
      // isolated-vm `timeout`: it starts a watchdog per call, which measured 30-35 µs of a
      // 65 µs call; the host timer in race() bounds the call instead, disposing the isolate
      // (its other realms are rebuilt on demand), a cost paid only by calls that hit the limit.
      const run = realm.call.apply(undefined, [factory.derefInto(), valuesJson], {
        result: { promise: true, copy: true },
      }) as unknown as Promise<string>;
      // a call with no caller leaves its realm behind: the next one is made now, off the path
      if (caller === undefined) slot.prewarm();
      const text = await this.race(slot, kind, run, timeoutMs, limits);
      // an answer that arrives past the limit (the host was too busy to notice in time) is late
      if (Date.now() - started > timeoutMs + this.graceMs) throw limitError(kind, 'FUNCTION_TIMEOUT', limits);
      keep = caller !== undefined;
      return text;
    } catch (err) {
      throw translate(kind, err, slot, limits);
    } finally {
      // a realm whose call hit a limit or failed in the runner, or a single-use one, goes
      if (realm !== undefined && !keep && slot.alive) slot.dropRealm(caller, realm);
    }
  }
  /** The run raced with the host's timer for the limit and with the abort signal. */
  private async race(slot: IsolateSlot, kind: Kind, run: Promise<string>, timeoutMs: number, limits: SandboxLimits): Promise<string> {
    // The loser of the race must never surface as an unhandled rejection.
    run.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(limitError(kind, 'FUNCTION_TIMEOUT', limits)), timeoutMs + this.graceMs);
      onAbort = () => reject(cancelled());
      limits.signal?.addEventListener('abort', onAbort, { once: true });
    });
    // isolated-vm rejects a call whose promise was collected (nothing could ever settle it: a
    // `new Promise(() => {})` awaited, then a collection): that is a promise that never settles,
    // so it ends the way one does, at the time limit
    const settles = run.catch((err: unknown) => {
      if (err instanceof Error && /Promise was abandoned/.test(err.message)) return new Promise<never>(() => undefined);
      throw err;
    });
    try {
      return await Promise.race([settles, guard]);
    } catch (err) {
      // Only disposal can stop code the isolate is still running (or a promise that never settles).
      if (err instanceof TroupeError) slot.kill();
      throw err;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) limits.signal?.removeEventListener('abort', onAbort);
    }
  }

  private pool(memoryMb: number): IsolatePool {
    let pool = this.pools.get(memoryMb);
    if (pool === undefined) {
      pool = new IsolatePool(memoryMb, { size: this.poolSize, maxIsolates: this.maxIsolates, perCaller: this.perCaller, idleMs: this.idleMs });
      this.pools.set(memoryMb, pool);
    }
    return pool;
  }
}

function callerKey(caller: SandboxCaller | undefined): string | undefined {
  if (caller === undefined) return undefined;
  return caller.version === undefined ? caller.workflowId : `${caller.workflowId}@${caller.version}`;
}

/** The checked source; a syntax error is the user's, with their line. */
function userCode(kind: Kind, code: string, names: readonly string[]): { source: string } {
  try {
    return cachedUserSource(kind, code, names);
  } catch (err) {
    if (!(err instanceof UserSyntaxError)) throw err;
    const line = err.line;
    throw new TroupeError(userErrorCode(kind), `SyntaxError: ${err.message}`, line === undefined ? {} : { details: { line } });
  }
}

function serializeBindings(kind: Kind, names: readonly string[], bindings: Record<string, unknown>): string {
  const values = names.map((name) => (bindings[name] === undefined ? null : bindings[name]));
  try {
    return JSON.stringify(values);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new TroupeError(userErrorCode(kind), `a bound value is not JSON-serializable: ${reason}`);
  }
}

function unwrap(kind: Kind, json: string, envelope: Envelope, code: string, limits: SandboxLimits): Envelope {
  if (envelope.e === undefined && jsonTextNestsTooDeep(json, envelope.r)) {
    // the walks over outputs (references, redaction, records) would run out of stack
    throw new TroupeError(userErrorCode(kind), `the result nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (envelope.e === undefined) return envelope;
  const { name, message } = envelope.e;
  // V8 refuses an ArrayBuffer past the isolate's limit with a catchable RangeError: uncaught, it
  // is the memory limit like any other allocation past it
  if (name === 'RangeError' && message === 'Array buffer allocation failed') throw limitError(kind, 'FUNCTION_MEMORY', limits);
  const line = userLine(envelope.e.line, code);
  const text = name === 'Error' || name === 'SerializationError' || name === 'BindingError' ? message : `${name}: ${message}`;
  const details: Record<string, unknown> = {};
  if (line !== undefined) details.line = line;
  if (envelope.o.length > 0) details.stdout = envelope.o.join('\n');
  // the message is what the code threw, so `<block.error.message>` reads as the author wrote it;
  // the line travels beside it (`error.line`)
  throw new TroupeError(userErrorCode(kind), text, Object.keys(details).length > 0 ? { details } : {});
}

function userErrorCode(kind: Kind): ErrorCode {
  return kind === 'function' ? 'FUNCTION_ERROR' : 'EXPRESSION_ERROR';
}

/** Maps what isolated-vm throws from the host side (limits, disposal) to Troupe codes. */
function translate(kind: Kind, err: unknown, slot: IsolateSlot, limits: SandboxLimits): TroupeError {
  if (err instanceof TroupeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/memory limit/i.test(message)) {
    slot.kill();
    return limitError(kind, 'FUNCTION_MEMORY', limits);
  }
  if (/timed out/i.test(message)) return limitError(kind, 'FUNCTION_TIMEOUT', limits);
  if (!slot.alive) {
    // disposed for a reason isolated-vm did not name: treat it as the memory guard, the only
    // thing besides us that disposes isolates
    return limitError(kind, 'FUNCTION_MEMORY', limits);
  }
  return new TroupeError(userErrorCode(kind), message, { cause: err });
}

function limitError(kind: Kind, code: 'FUNCTION_TIMEOUT' | 'FUNCTION_MEMORY', limits: SandboxLimits): TroupeError {
  const what = kind === 'function' ? 'function' : 'expression';
  return code === 'FUNCTION_TIMEOUT'
    ? new TroupeError(code, `${what} exceeded its ${Math.ceil(limits.timeoutMs)} ms time limit`)
    : new TroupeError(code, `${what} exceeded its ${Math.max(MIN_MEMORY_MB, Math.ceil(limits.memoryMb))} MiB memory limit`);
}
