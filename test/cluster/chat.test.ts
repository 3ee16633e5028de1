/**
 * Chat session actors in a cluster (SPEC §9): a conversation's session is on the instance
 * holding its lease (the `troupe_chat_sessions` bucket); a message arriving at another instance
 * is answered by the owner; an idle session passivates (its lease goes) and the next message
 * activates it wherever it arrives; when the owner is SIGKILLed, another instance takes the
 * session over once its lease expired. The history keeps every turn once, in order.
 */
import { expect } from 'chai';
import { connect, type KV, type NatsConnection } from 'nats';
import { deployChat, expectedHistory, sendTurn, storedHistory, type Conversation } from '../chaos/chat-check.js';
import { eventually, startTestCluster, type TestCluster } from './support.js';

async function ownerOf(kv: KV, conversationId: string): Promise<string | null> {
  const entry = await kv.get(Buffer.from(conversationId, 'utf8').toString('base64url'));
  if (entry === null || entry.operation !== 'PUT') return null;
  return (entry.json() as { owner: string }).owner;
}

describe('chat session actors in a cluster (child processes)', function () {
  this.timeout(180_000);
  let cluster: TestCluster;
  let nc: NatsConnection | undefined;

  before(async () => {
    cluster = await startTestCluster();
  });

  after(async () => {
    await nc?.close();
    await cluster?.close();
  });

  it('answers on the owner from any instance, passivates when idle, and is taken over when its owner dies', async () => {
    const idle = { TROUPE_CHAT_IDLE_MS: '2000' };
    const east = await cluster.serve('east', idle);
    const west = await cluster.serve('west', idle);
    await deployChat(east.url);
    nc = await connect({ servers: cluster.nats.url });
    const kv = await nc.jetstream().views.kv('troupe_chat_sessions');
    const conv: Conversation = {};
    const turn = async (url: string, n: number): Promise<void> => {
      const got = await sendTurn(url, conv, n);
      expect(got, `turn ${n}`).to.deep.equal({ ok: true, answer: `echo: turn ${n}` });
    };
    await turn(east.url, 1);
    const id = conv.id as string;
    expect(await ownerOf(kv, id)).to.equal('east');
    // through the other instance: sent on to the owner, which keeps the session
    await turn(west.url, 2);
    expect(await ownerOf(kv, id)).to.equal('east');
    // idle: passivated, its lease gone; the next message activates it where it arrives
    await eventually('the session passivated', 20_000, async () => ((await ownerOf(kv, id)) === null ? true : undefined));
    await turn(west.url, 3);
    expect(await ownerOf(kv, id)).to.equal('west');
    west.child.kill('SIGKILL');
    await west.exited;
    await turn(east.url, 4);
    expect(await ownerOf(kv, id)).to.equal('east');
    expect(east.stdout() + east.stderr()).to.match(/took over a chat session/);
    expect(await storedHistory(cluster.db.url, id)).to.deep.equal(expectedHistory(4));
  });
});
