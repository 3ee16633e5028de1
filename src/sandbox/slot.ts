import ivm from 'isolated-vm';
import { REALM_SOURCE } from './realm.js';

/** Longest wait a timer may ask for (setTimeout's own limit). */
const MAX_SLEEP_MS = 2 ** 31 - 1;
/** Compiled scripts kept per isolate: a block's code is compiled once per isolate, not per call. */
const SCRIPT_CACHE_SIZE = 256;
/**
 * Realms (contexts) one isolate keeps, one per caller; the least recently used goes first. A
 * hardened realm holds ~300 KB of the isolate's heap, which counts against the calls' memory
 * limit: one realm per 4 MiB of it keeps them under a tenth, between 2 and 32.
 */
const realmsPerIsolate = (memoryMb: number): number => Math.min(32, Math.max(2, Math.floor(memoryMb / 4)));
/** User functions (factories) one realm keeps, one per code text. */
const FACTORIES_PER_REALM = 64;
/**
 * A call with a pending timer counts as asleep (its isolate's thread free for another call) only
 * once its isolate has been seen idle over this window, and only while it has used less than
 * AWAKE_CPU_NS since: a call that leaves a timer pending and computes stays a computing call.
 */
const SLEEP_PROBE_MS = 20;
const AWAKE_CPU_NS = 5_000_000n;

/** A hardened context and the function that runs one call in it. */
export interface Realm {
  context: ivm.Context;
  call: ivm.Reference<(factory: unknown, valuesJson: string) => Promise<string>>;
  /** the user function factory of each code text, compiled in this realm once */
  factories: Map<string, ivm.Reference>;
}

/**
 * One isolate, used by one call at a time, holding one realm per caller (workflow). isolated-vm
 * runs an isolate on one thread, so concurrent calls on it would only queue inside the native
 * layer; queueing them in the pool instead bounds what a disposal (timeout, abort, memory
 * blow-up) can take down to the running call.
 */
export class IsolateSlot {
  private isolate: ivm.Isolate | undefined;
  private readonly realms = new Map<string, Promise<Realm>>();
  /** a realm for a call that names no caller, made ahead of time and used once */
  private spare: Promise<Realm> | undefined;
  private readonly scripts = new Map<string, ivm.Script>();
  /** the running call's pending timers */
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly pendingSleeps = new Set<() => void>();
  /** isolate CPU time when the running call was last seen asleep (undefined: not seen asleep) */
  private cpuAtSleep: bigint | undefined;
  private probe: NodeJS.Timeout | undefined;
  /**
   * The host's timer, handed to each realm once, as a closure argument of its setup script (never
   * a global): the only host capability user code gets, through the runner, and it can only wait.
   */
  private readonly sleepRef = new ivm.Reference((ms: unknown) => this.sleep(ms));
  /** told when the running call is seen asleep (the pool may then add an isolate) */
  onSleep: (() => void) | undefined;
  /** the caller whose call runs now, for the pool's fair share */
  owner: string | undefined;

  constructor(private readonly memoryMb: number) {}

  /** The running call waits on a timer and its isolate's thread is idle. */
  get asleep(): boolean {
    if (this.timers.size === 0 || this.cpuAtSleep === undefined || !this.alive) return false;
    return this.cpu() - this.cpuAtSleep < AWAKE_CPU_NS;
  }

  /** The call is over: timers it left pending never fire. */
  endCall(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const settle of this.pendingSleeps) settle();
    this.pendingSleeps.clear();
    clearTimeout(this.probe);
    this.probe = undefined;
    this.cpuAtSleep = undefined;
    this.owner = undefined;
  }

  private sleep(ms: unknown): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.timers.delete(timer);
        this.pendingSleeps.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(Math.max(0, Number(ms) || 0), MAX_SLEEP_MS));
      timer.unref();
      this.timers.add(timer);
      // settled when the call ends, so the realm keeps no promise of an ended call
      this.pendingSleeps.add(done);
      this.watchSleep();
    });
  }

  /** Checks, a moment after a timer was set, that the isolate really went idle. */
  private watchSleep(): void {
    if (this.probe !== undefined) return;
    const before = this.cpu();
    this.probe = setTimeout(() => {
      this.probe = undefined;
      if (this.timers.size === 0 || !this.alive) return;
      const now = this.cpu();
      // under a quarter of the window on the isolate's thread: it waits, it does not compute
      if (now - before < BigInt(SLEEP_PROBE_MS * 250_000)) {
        this.cpuAtSleep = now;
        this.onSleep?.();
      } else {
        this.watchSleep();
      }
    }, SLEEP_PROBE_MS);
    this.probe.unref();
  }

  private cpu(): bigint {
    try {
      return this.isolate?.cpuTime ?? 0n;
    } catch {
      return 0n;
    }
  }

  get alive(): boolean {
    return this.isolate !== undefined && !this.isolate.isDisposed;
  }

  hasRealm(key: string): boolean {
    return this.realms.has(key);
  }

  /** The realm of this caller (made on first use), or a single-use one when there is no caller. */
  async realm(key: string | undefined): Promise<Realm> {
    if (key === undefined) {
      const spare = this.spare;
      this.spare = undefined;
      return (await spare?.catch(() => undefined)) ?? this.newRealm();
    }
    let found = this.realms.get(key);
    if (found !== undefined) {
      this.realms.delete(key);
    } else {
      const made = this.newRealm();
      // a realm that could not be made is not kept: the next call tries again
      made.catch(() => {
        if (this.realms.get(key) === made) this.realms.delete(key);
      });
      found = made;
      if (this.realms.size >= realmsPerIsolate(this.memoryMb)) this.dropOldestRealm();
    }
    // the map's order is the eviction order
    this.realms.set(key, found);
    return await found;
  }

  /** A realm whose call hit a limit or failed in the runner is not used again. */
  dropRealm(key: string | undefined, realm: Realm): void {
    if (key !== undefined) this.realms.delete(key);
    releaseRealm(realm);
  }

  /** Builds the next single-use realm while the host does other work. */
  prewarm(): void {
    if (!this.alive || this.spare !== undefined) return;
    const spare = this.newRealm();
    spare.catch(() => undefined);
    this.spare = spare;
  }

  private async newRealm(): Promise<Realm> {
    const context = await this.live().createContext();
    const call = (await context.evalClosure(REALM_SOURCE, [this.sleepRef], { result: { reference: true } })) as Realm['call'];
    return { context, call, factories: new Map() };
  }

  /** The user function factory of this source in this realm, compiled and run once per realm. */
  async factory(realm: Realm, source: string, filename: string, lineOffset: number): Promise<ivm.Reference> {
    const cached = realm.factories.get(source);
    if (cached !== undefined) return cached;
    const script = await this.script(source, filename, lineOffset);
    const factory = (await script.run(realm.context, { reference: true, timeout: 1000 })) as ivm.Reference;
    if (realm.factories.size >= FACTORIES_PER_REALM) {
      const oldest = realm.factories.keys().next();
      if (oldest.done !== true) {
        realm.factories.get(oldest.value)?.release();
        realm.factories.delete(oldest.value);
      }
    }
    realm.factories.set(source, factory);
    return factory;
  }

  /** The compiled script for this source, from the cache when the same code ran before. */
  private async script(source: string, filename: string, lineOffset: number): Promise<ivm.Script> {
    const cached = this.scripts.get(source);
    if (cached !== undefined) {
      this.scripts.delete(source);
      this.scripts.set(source, cached);
      return cached;
    }
    const isolate = this.live();
    const script = await isolate.compileScript(source, { filename, lineOffset });
    if (isolate !== this.isolate) return script;
    this.scripts.set(source, script);
    if (this.scripts.size > SCRIPT_CACHE_SIZE) {
      const oldest = this.scripts.keys().next();
      if (oldest.done !== true) {
        tryRelease(this.scripts.get(oldest.value));
        this.scripts.delete(oldest.value);
      }
    }
    return script;
  }

  /** Throws the isolate away (a runaway call, idle past the pool's size, or dispose). */
  kill(): void {
    const isolate = this.isolate;
    this.isolate = undefined;
    this.spare = undefined;
    this.realms.clear();
    this.scripts.clear();
    if (isolate !== undefined && !isolate.isDisposed) {
      try {
        isolate.dispose();
      } catch {
        // already disposed by isolated-vm itself (memory limit)
      }
    }
  }

  private dropOldestRealm(): void {
    const oldest = this.realms.keys().next();
    if (oldest.done === true) return;
    const realm = this.realms.get(oldest.value);
    this.realms.delete(oldest.value);
    realm?.then(releaseRealm, () => undefined).catch(() => undefined);
  }

  private live(): ivm.Isolate {
    if (this.isolate === undefined || this.isolate.isDisposed) {
      this.spare = undefined;
      this.realms.clear();
      this.scripts.clear();
      this.isolate = new ivm.Isolate({ memoryLimit: this.memoryMb });
    }
    return this.isolate;
  }
}

function releaseRealm(realm: Realm): void {
  for (const factory of realm.factories.values()) tryRelease(factory);
  realm.factories.clear();
  tryRelease(realm.call);
  tryRelease(realm.context);
}

function tryRelease(thing: { release(): void } | undefined): void {
  try {
    thing?.release();
  } catch {
    // released with its isolate already
  }
}
