/**
 * The scheduler actor (SPEC §4.5, §9; docs/architecture.md "Scheduler actor"): one per cluster,
 * and one per service on its own. Its states are its lifecycle: a `follower` tries to take the
 * leader lease every renewal period; the `leading` one fires due times just after each whole
 * second and renews the lease meanwhile, in parallel; one whose renewal finds the lease taken
 * (a pause longer than the expiry) is `deposed` and lets its tick in progress end before it
 * follows again; a stop steps down (the tick ends, the lease is released, so another instance
 * leads at once). What it fires and how a due time is claimed once are the ports' (the schedule
 * service); the lease is a port with two adapters: `soleLeader` here for one process, the
 * JetStream key-value lease in a cluster (src/server/cluster/scheduler-lease.ts).
 */
import type { Logger } from 'pino';
import { createActor, fromPromise, setup, toPromise } from 'xstate';
import type { ActorOptions, AnyActorLogic } from 'xstate';
import { delayToNextTick, SCHEDULER_TICK_MS } from '../src/model/scheduler.js';

/** The leader lease: who may fire. */
export interface LeaderLeasePort {
  /** takes the lease when it is free, released or expired; true when this instance now leads */
  acquire(): Promise<boolean>;
  /** renews the lease this instance holds; false when another instance took it meanwhile */
  renew(): Promise<boolean>;
  /** gives the lease up (when held), so that another instance leads at once */
  release(): Promise<void>;
}

/** One process is the whole service: it always leads. */
export const soleLeader: LeaderLeasePort = {
  acquire: () => Promise.resolve(true),
  renew: () => Promise.resolve(true),
  release: () => Promise.resolve(),
};

export interface SchedulerPorts {
  lease: LeaderLeasePort;
  /** a term begins: due times no one handled before now are judged from here (catchUp) */
  activate(): void;
  /** fires what is due up to now (claims in the store, starts or queues the runs) */
  tick(): Promise<number>;
  /** a term ends: no new claims; resolves once a tick in progress has ended */
  deactivate(): Promise<void>;
  now(): number;
  /** how often the lease is renewed, and a follower tries to take it */
  renewMs: number;
  logger: Logger;
}

interface SchedulerContext {
  ports: SchedulerPorts;
}

type SchedulerEvent = { type: 'STOP' };

const schedulerMachine = setup({
  types: {} as { context: SchedulerContext; input: SchedulerPorts; events: SchedulerEvent },
  actors: {
    acquire: fromPromise<boolean, SchedulerPorts>(({ input }) => input.lease.acquire()),
    renew: fromPromise<boolean, SchedulerPorts>(({ input }) => input.lease.renew()),
    tick: fromPromise<number, SchedulerPorts>(({ input }) => input.tick()),
    stepDown: fromPromise<void, { ports: SchedulerPorts; release: boolean }>(async ({ input }) => {
      await input.ports.deactivate();
      if (input.release) await input.ports.lease.release();
    }),
  },
  delays: {
    renewal: ({ context }) => context.ports.renewMs,
    nextTick: ({ context }) => delayToNextTick(context.ports.now(), SCHEDULER_TICK_MS),
  },
  actions: {
    activate: ({ context }) => {
      context.ports.activate();
      // a change of leader is worth an operator's eye; one process leading alone is not
      if (context.ports.lease === soleLeader) context.ports.logger.info('this instance leads the scheduler');
      else context.ports.logger.warn('this instance leads the scheduler');
    },
    logError: ({ context, event }, what: string) => context.ports.logger.error({ err: (event as { error?: unknown }).error }, what),
    logLost: ({ context }) => context.ports.logger.warn('lost the scheduler leader lease: this instance stops scheduling'),
  },
  guards: {
    granted: ({ event }) => (event as { output?: unknown }).output === true,
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input }) => ({ ports: input }),
  initial: 'follower',
  states: {
    follower: {
      on: { STOP: 'stopping' },
      initial: 'acquiring',
      states: {
        acquiring: {
          invoke: {
            src: 'acquire',
            input: ({ context }) => context.ports,
            onDone: [{ guard: 'granted', target: '#scheduler.leading' }, { target: 'resting' }],
            onError: { target: 'resting', actions: { type: 'logError', params: 'scheduler leader lease: taking it failed' } },
          },
        },
        resting: { after: { renewal: 'acquiring' } },
      },
    },
    leading: {
      on: { STOP: 'stopping' },
      entry: 'activate',
      type: 'parallel',
      states: {
        firing: {
          initial: 'ticking',
          states: {
            ticking: {
              invoke: {
                src: 'tick',
                input: ({ context }) => context.ports,
                onDone: 'waiting',
                onError: { target: 'waiting', actions: { type: 'logError', params: 'scheduler tick failed' } },
              },
            },
            // due times are whole seconds: ticking just after each one fires it within milliseconds
            waiting: { after: { nextTick: 'ticking' } },
          },
        },
        renewing: {
          initial: 'waiting',
          states: {
            waiting: { after: { renewal: 'renewing' } },
            renewing: {
              invoke: {
                src: 'renew',
                input: ({ context }) => context.ports,
                onDone: [{ guard: 'granted', target: 'waiting' }, { target: '#scheduler.deposed', actions: 'logLost' }],
                // unsure whether it still holds the lease: firing on could fire beside a new leader
                onError: { target: '#scheduler.deposed', actions: [{ type: 'logError', params: 'scheduler leader lease: renewing it failed' }, 'logLost'] },
              },
            },
          },
        },
      },
    },
    deposed: {
      on: { STOP: 'stopping' },
      invoke: {
        src: 'stepDown',
        input: ({ context }) => ({ ports: context.ports, release: false }),
        onDone: 'follower',
        onError: { target: 'follower', actions: { type: 'logError', params: 'scheduler: stepping down failed' } },
      },
    },
    stopping: {
      invoke: {
        src: 'stepDown',
        input: ({ context }) => ({ ports: context.ports, release: true }),
        onDone: 'stopped',
        onError: { target: 'stopped', actions: { type: 'logError', params: 'scheduler: stepping down failed' } },
      },
    },
    stopped: { type: 'final' },
  },
});

/** the timers XState's delayed transitions use (a test may pass a simulated clock) */
export type TimerClock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

/** XState's timers, not keeping the process alive on their own (a stopped service exits). */
const unrefClock: TimerClock = {
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms).unref(),
  clearTimeout: (id: NodeJS.Timeout) => clearTimeout(id),
};

export interface SchedulerActor {
  /** whether this instance leads the scheduler now */
  readonly leading: boolean;
  /** the lifecycle state, for logs and tests: follower, leading, deposed, stopping, stopped */
  readonly state: string;
  /** steps down: the tick in progress ends, the lease is released; resolves once stopped */
  stop(): Promise<void>;
}

/** Starts the scheduler actor: it follows, or leads at once when the lease is free. */
export function startScheduler(ports: SchedulerPorts, clock: TimerClock = unrefClock): SchedulerActor {
  const actor = createActor(schedulerMachine, { input: ports, clock });
  const done = toPromise(actor).catch((err: unknown) => ports.logger.error({ err }, 'the scheduler actor failed'));
  actor.start();
  return {
    get leading() {
      return actor.getSnapshot().matches('leading');
    },
    get state() {
      const value = actor.getSnapshot().value;
      return typeof value === 'string' ? value : Object.keys(value)[0] ?? 'unknown';
    },
    async stop() {
      actor.send({ type: 'STOP' });
      await done;
    },
  };
}
