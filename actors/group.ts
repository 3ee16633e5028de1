import { createActor, type AnyActorLogic, type AnyActorRef } from 'xstate';
import { containerRunKey } from '../src/model/block-run.js';

/**
 * The block actors of one execution, by inbox key. The execution actor and container actors
 * spawn into it and stop what they spawned; the execution's one inbox subscription routes bus
 * messages through it. Kept outside XState's children map on purpose: XState copies that map on
 * every spawn and stop, which made an execution O(blocks²).
 */
export class ActorGroup {
  private readonly actors = new Map<string, AnyActorRef>();

  /**
   * `onFailure` hears an actor spawned without `onEnd` whose logic threw (a bus that refused a
   * publish, a bug). Without an observer XState rethrows such an error outside any stack that
   * could catch it, which ended the whole process; with it, the owner fails its execution.
   */
  constructor(private readonly onFailure?: (key: string, error: unknown) => void) {}

  /** `onEnd` hears the actor reach a final state (its output) or fail (its error); not a stop. */
  spawn(key: string, logic: AnyActorLogic, input: unknown, onEnd?: (end: { output: unknown } | { error: unknown }) => void): AnyActorRef {
    const actor = createActor(logic, { input });
    this.actors.set(key, actor);
    if (onEnd !== undefined) {
      actor.subscribe({
        complete: () => {
          const snapshot = actor.getSnapshot();
          if (snapshot.status === 'done') onEnd({ output: snapshot.output });
        },
        error: (error) => onEnd({ error }),
      });
    } else if (this.onFailure !== undefined) {
      const onFailure = this.onFailure;
      actor.subscribe({
        error(error) {
          onFailure(key, error);
        },
      });
    }
    actor.start();
    return actor;
  }

  send(key: string, event: { type: string; [k: string]: unknown }): void {
    this.actors.get(key)?.send(event);
  }

  /**
   * Stops these block actors and the container machines of those that are containers: a nested
   * loop or parallel left running after its iteration was stopped would go on spawning (its
   * signal is aborted, so each child fails at once) until the execution ends.
   */
  stop(keys: Iterable<string>): void {
    for (const key of keys) {
      this.stopOne(key);
      this.stopOne(containerRunKey(key));
    }
  }

  private stopOne(key: string): void {
    this.actors.get(key)?.stop();
    this.actors.delete(key);
  }

  /** Stops every actor, except those `atRest` says take no more events: they are only forgotten. */
  stopAll(atRest: (actor: AnyActorRef) => boolean = () => false): void {
    for (const actor of this.actors.values()) if (!atRest(actor)) actor.stop();
    this.actors.clear();
  }

  get size(): number {
    return this.actors.size;
  }
}
