import { expect } from 'chai';
import { createActor } from 'xstate';
import { chatSessionMachine, type ChatTurnJob } from '../../actors/chat-session.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('actors: chat session', () => {
  it('rehydrates first, then answers its turns one at a time in arrival order, then passivates when idle', async () => {
    const log: string[] = [];
    const settled = deferred();
    const gates = [deferred(), deferred()];
    const job = (i: number): ChatTurnJob => ({
      run: async () => {
        log.push(`begin ${i}`);
        await gates[i]?.promise;
        log.push(`end ${i}`);
      },
      abandon: () => log.push(`abandoned ${i}`),
    });
    const actor = createActor(chatSessionMachine, {
      input: { conversationId: 'c', idleMs: 30, rehydrate: async () => { log.push('rehydrate'); await settled.promise; } },
    });
    const ended = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
    actor.start();
    actor.send({ type: 'TURN', job: job(0) });
    actor.send({ type: 'TURN', job: job(1) });
    await tick();
    expect(log, 'no turn before the earlier owner\'s turn is settled').to.deep.equal(['rehydrate']);
    settled.resolve();
    await tick();
    expect(log).to.deep.equal(['rehydrate', 'begin 0']);
    gates[0]?.resolve();
    await tick();
    await tick();
    expect(log).to.deep.equal(['rehydrate', 'begin 0', 'end 0', 'begin 1']);
    expect(actor.getSnapshot().value).to.equal('answering');
    gates[1]?.resolve();
    await ended;
    expect(log).to.deep.equal(['rehydrate', 'begin 0', 'end 0', 'begin 1', 'end 1']);
    expect(actor.getSnapshot().status).to.equal('done');
  });

  it('goes on with the next turn when one fails, and passivates on request when idle', async () => {
    const ran: number[] = [];
    const actor = createActor(chatSessionMachine, { input: { conversationId: 'c', idleMs: 60_000, rehydrate: async () => undefined } });
    actor.start();
    actor.send({ type: 'TURN', job: { run: async () => { ran.push(1); throw new Error('boom'); }, abandon: () => undefined } });
    actor.send({ type: 'TURN', job: { run: async () => { ran.push(2); }, abandon: () => undefined } });
    await tick();
    await tick();
    await tick();
    expect(ran).to.deep.equal([1, 2]);
    expect(actor.getSnapshot().value).to.equal('idle');
    actor.send({ type: 'PASSIVATE' });
    expect(actor.getSnapshot().status).to.equal('done');
  });
});
