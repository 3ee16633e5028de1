import { availableParallelism } from 'node:os';
import type { Context, Script } from 'isolated-vm';
import { TroupeError, type ErrorCode } from '../errors.js';
import { MAX_JSON_DEPTH, jsonTextNestsTooDeep } from '../model/json.js';
import { IsolatePool, SLEEP_GLOBAL, cancelled, type IsolateSlot } from './pool.js';
import { ARGS_GLOBAL, CODE_FILENAME, cachedRunnerSource, type RunnerKind } from './runner.js';
import type { FunctionResult, Sandbox, SandboxLimits } from './types.js';

/** isolated-vm refuses memory limits below 8 MB. */
const MIN_MEMORY_MB = 8;

export interface IsolatedVmSandboxOptions {
  /** isolates per memory limit (each runs one call at a time, on its own thread) */
  poolSize?: number;
  /**
   * Extra time the host waits past the limit before it disposes the isolate itself. isolated-vm's
   * own timeout stops synchronous code and microtasks cleanly; the host timer is the backstop for
   * promises that never settle, and disposing an isolate costs a new one (~2 ms).
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
 * the isolate's thread (a runaway loop never blocks the host event loop), and every call gets a
 * fresh Context, so nothing a call does is visible to the next one. See docs/sandbox.md.
 */
export class IsolatedVmSandbox implements Sandbox {
  private readonly pools = new Map<number, IsolatePool>();
  private readonly poolSize: number;
  private readonly graceMs: number;
  private disposed = false;

  constructor(options: IsolatedVmSandboxOptions = {}) {
    this.poolSize = Math.max(1, options.poolSize ?? Math.min(4, availableParallelism()));
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

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
  }

  private async run(kind: Kind, code: string, bindings: Record<string, unknown>, limits: SandboxLimits): Promise<Envelope> {
    if (this.disposed) throw new TroupeError('INTERNAL', 'the sandbox has been disposed');
    if (limits.signal?.aborted === true) throw cancelled();
    const bindingsJson = serializeBindings(kind, bindings);
    const pool = this.pool(Math.max(MIN_MEMORY_MB, Math.ceil(limits.memoryMb)));
    const slot = await pool.acquire(limits.signal);
    try {
      const text = await this.execute(slot, kind, code, bindingsJson, limits);
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
  private async execute(slot: IsolateSlot, kind: Kind, code: string, bindingsJson: string, limits: SandboxLimits): Promise<string> {
    const timeoutMs = Math.max(1, Math.ceil(limits.timeoutMs));
    const { source, lineOffset } = cachedRunnerSource(kind, code);
    let context: Context | undefined;
    try {
      const script = await compile(slot, kind, { source, lineOffset, code }, limits);
      context = await slot.takeContext();
      if (limits.signal?.aborted === true) throw cancelled();
      // Not a synchronous set: that takes the isolate lock on the host thread, which measurably
      // stalled the event loop between blocks. Not an awaited one either: isolated-vm runs an
      // isolate's asynchronous calls in the order they were queued, so the run below sees the
      // global, and the call costs one thread round trip instead of two (~176 µs instead of
      // ~330 µs measured for set + run).
      context.global.setIgnored(ARGS_GLOBAL, bindingsJson);
      // queued the same way (a set awaited at context creation cost every call a round trip)
      if (kind === 'function') context.global.setIgnored(SLEEP_GLOBAL, slot.sleepRef);
      const run = script.run(context, { timeout: timeoutMs, promise: true, copy: true }) as unknown as Promise<string>;
      // The next call's context is queued right behind this run: the isolate builds it as soon as
      // the run ends, and the host pays the hand-off now, while it would wait anyway, not between
      // this result and the next block.
      slot.prewarm();
      return await this.race(slot, kind, run, timeoutMs, limits);
    } catch (err) {
      throw translate(kind, err, slot, limits);
    } finally {
      if (context !== undefined) releaseContext(context, slot);
    }
  }

  /** The isolate's own timeout, raced with a host timer and the abort signal. */
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
    try {
      return await Promise.race([run, guard]);
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
      pool = new IsolatePool(memoryMb, this.poolSize);
      this.pools.set(memoryMb, pool);
    }
    return pool;
  }
}

async function compile(slot: IsolateSlot, kind: Kind, built: { source: string; lineOffset: number; code: string }, limits: SandboxLimits): Promise<Script> {
  try {
    return await slot.script(built.source, CODE_FILENAME, built.lineOffset);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw translate(kind, err, slot, limits);
    // isolated-vm appends " [file:line:column]" to compile errors
    const match = /\s*\[troupe-code\.js:(\d+):\d+\]$/.exec(err.message);
    const message = match === null ? err.message : err.message.slice(0, match.index);
    const line = userLine(match === null ? undefined : Number(match[1]), built.code);
    throw new TroupeError(userErrorCode(kind), `SyntaxError: ${message}`, line === undefined ? {} : { details: { line } });
  }
}

function releaseContext(context: Context, slot: IsolateSlot): void {
  if (!slot.alive) return;
  try {
    context.release();
  } catch {
    // the isolate went away under us; nothing left to free
  }
}

function serializeBindings(kind: Kind, bindings: Record<string, unknown>): string {
  const plain: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(bindings)) plain[name] = value === undefined ? null : value;
  try {
    return JSON.stringify(plain);
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

/**
 * The line only when it is one of the user's: V8 sometimes places an error thrown by a one-line
 * expression at the runner's call site (seen: "line 44" for `undefinedVar.x`), which is no line
 * of theirs and would send them looking in the wrong place.
 */
function userLine(line: number | undefined, code: string): number | undefined {
  if (line === undefined) return undefined;
  // V8 counts these as line terminators too
  const lines = code.split(/\r\n|[\n\r\u2028\u2029]/).length;
  return line <= lines ? line : undefined;
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
