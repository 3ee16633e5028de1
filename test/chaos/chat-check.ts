/**
 * The chaos test's chat check (SPEC §4.4, §9, issue 25): a visitor speaks to one public chat
 * throughout the kills, one turn at a time, each turn's message numbered and sent with a
 * messageId, through the instances in turn. A turn whose request failed (its instance, or the
 * session's, was killed) is sent again with the same messageId to the next instance, as the
 * page would after a lost connection; the retry must not make a second turn. Afterwards the
 * conversation's stored history holds every turn once, in order, each followed by its answer.
 */
import { expect } from 'chai';
import pg from 'pg';
import { TOKEN } from '../cluster/support.js';
import { call } from '../cli/serve-helpers.js';

const SUBDOMAIN = 'chaos-chat';
const REQUEST_TIMEOUT_MS = 90_000;
const RETRY_PAUSE_MS = 300;
/**
 * A visitor's pace between turns, and a bound on them: a conversation holds at most 500 messages
 * (409 after), and each instance lets a visitor send 30 a minute. On a quiet machine an unpaced
 * client spoke 250 turns in the 45 s and filled the conversation.
 */
const TURN_PAUSE_MS = 400;
const MAX_TURNS = 200;
/** after the kills, how long the current turn may still take */
const FINISH_MS = 120_000;

/** A cheap chat: the function block echoes the message, no LLM. */
function chatWorkflow(): unknown {
  return {
    id: 'chaos-chat',
    name: 'Chaos chat',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'echo', type: 'function', name: 'Echo', config: { code: 'return `echo: ${<start.message>}`;' } },
    ],
    connections: [{ from: 'start', to: 'echo' }],
  };
}

export async function deployChat(url: string): Promise<void> {
  const created = await call(url, 'POST', '/api/workflows', { token: TOKEN, body: chatWorkflow() });
  if (created.status !== 201) throw new Error(`create chat workflow: ${created.status} ${JSON.stringify(created.body)}`);
  const deployed = await call(url, 'POST', '/api/workflows/chaos-chat/deploy', { token: TOKEN });
  if (deployed.status !== 201) throw new Error(`deploy chat workflow: ${deployed.status}`);
  const chat = await call(url, 'PUT', '/api/workflows/chaos-chat/chat', { token: TOKEN, body: { subdomain: SUBDOMAIN, auth: { mode: 'public' }, branding: { title: 'Chaos' } } });
  if (chat.status !== 201) throw new Error(`chat: ${chat.status} ${JSON.stringify(chat.body)}`);
}

export interface Conversation {
  id?: string;
  token?: string;
}

export type TurnResult = { ok: true; answer: string } | { ok: false; why: string };

/** One request of a turn: the SSE stream read to its end. */
export async function sendTurn(url: string, conv: Conversation, n: number): Promise<TurnResult> {
  const body = { message: `turn ${n}`, messageId: `m${n}`, ...(conv.id === undefined ? {} : { conversationId: conv.id, conversationToken: conv.token }) };
  let res: Response;
  try {
    res = await fetch(`${url}/api/chat/${SUBDOMAIN}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    return { ok: false, why: `request: ${(err as Error).message}` };
  }
  // the conversation is the visitor's as soon as the headers say so, even if the stream is cut after
  conv.id ??= res.headers.get('x-conversation-id') ?? undefined;
  conv.token ??= res.headers.get('x-conversation-token') ?? undefined;
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    return { ok: false, why: `stream: ${(err as Error).message}` };
  }
  if (res.status !== 200) return { ok: false, why: `${res.status} ${text.slice(0, 200)}` };
  const done = /event: done\ndata: (.*)\n/.exec(text);
  if (done?.[1] === undefined) return { ok: false, why: `no done: ${text.slice(0, 200)}` };
  const data = JSON.parse(done[1]) as { conversationId: string; conversationToken: string; output: unknown };
  conv.id = data.conversationId;
  conv.token = data.conversationToken;
  return { ok: true, answer: String((data.output as { result?: unknown } | null)?.result) };
}

export interface ChatTalk {
  /** resolves when the talk is over: the kills ended and the turn under way got its answer */
  finished: Promise<void>;
  conversationId(): string | undefined;
  turns(): number;
  retries(): number;
  /** why requests failed, counted */
  failures(): Map<string, number>;
}

/** Speaks to the chat until `end`, one turn at a time, each through the next of `urls()`. */
export function talkThroughout(urls: () => string[], end: number): ChatTalk {
  const conv: Conversation = {};
  let turns = 0;
  let retries = 0;
  const failures = new Map<string, number>();
  const whys: string[] = [];
  let next = 0;
  const finished = (async () => {
    let n = 1;
    const giveUp = end + FINISH_MS;
    while (Date.now() < end && n <= MAX_TURNS) {
      for (;;) {
        const targets = urls();
        const target = targets[next++ % Math.max(1, targets.length)];
        const got = target === undefined ? { ok: false as const, why: 'no instance up' } : await sendTurn(target, conv, n);
        if (got.ok) {
          expect(got.answer, `the answer of turn ${n}`).to.equal(`echo: turn ${n}`);
          break;
        }
        const kind = got.why.split(':')[0] ?? got.why;
        failures.set(kind, (failures.get(kind) ?? 0) + 1);
        if (Date.now() > giveUp) throw new Error(`chat turn ${n} got no answer: ${got.why} (failures so far: ${JSON.stringify([...failures])}; last whys: ${JSON.stringify(whys)})`);
        whys.push(`${new Date().toISOString()} ${target ?? '-'} ${got.why.slice(0, 160)}`);
        if (whys.length > 8) whys.shift();
        retries += 1;
        await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
      }
      turns = n;
      n += 1;
      await new Promise((r) => setTimeout(r, TURN_PAUSE_MS));
    }
  })();
  // awaited once the kills are over: a failure before then is not an unhandled one meanwhile
  finished.catch(() => undefined);
  return { finished, conversationId: () => conv.id, turns: () => turns, retries: () => retries, failures: () => failures };
}

/** The conversation's stored history, as `[role, content]`, read from the database. */
export async function storedHistory(databaseUrl: string, conversationId: string): Promise<string[][]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ body: unknown }>('SELECT body FROM chat_messages WHERE conversation_id = $1 ORDER BY seq', [conversationId]);
    return rows.map((r) => (typeof r.body === 'string' ? JSON.parse(r.body) : r.body) as { role: string; content: string }).map((m) => [m.role, m.content]);
  } finally {
    await client.end();
  }
}

/** turns 1..n, each followed by its answer */
export function expectedHistory(n: number): string[][] {
  return Array.from({ length: n }, (_, i) => [['user', `turn ${i + 1}`], ['assistant', `echo: turn ${i + 1}`]]).flat();
}

/** The conversation's stored history holds every turn once, in order, each followed by its answer. */
export async function checkHistory(databaseUrl: string, talk: ChatTalk): Promise<void> {
  const id = talk.conversationId();
  expect(id, 'a conversation').to.be.a('string');
  expect(talk.turns(), 'turns answered').to.be.above(5);
  expect(await storedHistory(databaseUrl, id as string)).to.deep.equal(expectedHistory(talk.turns()));
}
