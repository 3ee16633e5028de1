import { createActor, type AnyActorLogic, type AnyActorRef } from 'xstate';

/**
 * The block actors of one execution, by inbox key. The execution actor and container actors
 * spawn into it and stop what they spawned; the execution's one inbox subscription routes bus
 * messages through it. Kept outside XState's children map on purpose: XState copies that map on
 * every spawn and stop, which made an execution O(blocks²).
 */
export class ActorGroup {
  private readonly actors = new Map<string, AnyActorRef>();

  spawn(key: string, logic: AnyActorLogic, input: unknown): AnyActorRef {
    const actor = createActor(logic, { input });
    this.actors.set(key, actor);
    actor.start();
    return actor;
  }

  send(key: string, event: { type: string; [k: string]: unknown }): void {
    this.actors.get(key)?.send(event);
  }

  stop(keys: Iterable<string>): void {
    for (const key of keys) {
      this.actors.get(key)?.stop();
      this.actors.delete(key);
    }
  }

  stopAll(): void {
    this.stop([...this.actors.keys()]);
  }

  get size(): number {
    return this.actors.size;
  }
}
