/**
 * Chat deployments (SPEC §4.4). Admin: PUT/GET/DELETE /api/workflows/{id}/chat. Public: the
 * page at /chat/{sub}/ (and at `/` on `{sub}.{TROUPE_CHAT_HOST}`, see chatHostRewrite), its
 * config, sign-in and messages (an SSE stream of `chunk`, then `done` or `error`).
 */
import type { Logger } from 'pino';
import { TroupeError } from '../../errors.js';
import type { ChatDeployment } from '../../store/types.js';
import type { ChatService, ChatVisitor } from '../../service/chat.js';
import type { ChatTurn } from '../../service/chat-messages.js';
import type { Services } from '../../service/index.js';
import type { SeqEvent } from '../../service/live.js';
import { renderChatPage } from '../chat-page.js';
import { pageHeaders } from '../page-headers.js';
import { checkBody, errorResponse, param, parseBody, type ResponseSpec, type RouteSpec } from '../route-spec.js';
import { chatAuthSchema, chatCodeSentSchema, chatMessageSchema, chatSettingsSchema, chatSignedInSchema, chatViewSchema, publicChatSchema } from '../chat-schemas.js';
import { openSse } from '../sse.js';
import type { Ctx } from '../types.js';

export function cookieName(subdomain: string): string {
  return `troupe_chat_${subdomain}`;
}

export function chatView(chat: ChatDeployment, chatHost: string): Record<string, unknown> {
  return {
    workflowId: chat.workflowId,
    subdomain: chat.subdomain,
    host: `${chat.subdomain}.${chatHost}`,
    path: `/chat/${chat.subdomain}/`,
    auth: { mode: chat.auth.mode, ...(chat.auth.allowedEmails ? { allowedEmails: chat.auth.allowedEmails } : {}) },
    branding: chat.branding,
    output: chat.output ?? null,
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt,
  };
}

function publicView(chat: ChatDeployment): Record<string, unknown> {
  return { subdomain: chat.subdomain, branding: chat.branding, auth: { mode: chat.auth.mode } };
}

const unauthorized = errorResponse('no or wrong admin token (UNAUTHORIZED)');

export function chatAdminRoutes(s: Services, chatHost: string): RouteSpec[] {
  return [
    {
      method: 'put', path: '/api/workflows/{id}/chat', operationId: 'putChat', tag: 'chat', auth: 'admin',
      summary: 'Create or replace the workflow\'s chat deployment (it answers with the deployed version)',
      body: { schema: chatSettingsSchema },
      responses: {
        200: { description: 'replaced', schema: chatViewSchema },
        201: { description: 'created', schema: chatViewSchema },
        400: errorResponse('invalid settings (INVALID_REQUEST, details lists each issue)'),
        401: unauthorized,
        404: errorResponse('unknown workflow (NOT_FOUND)'),
        409: errorResponse('the subdomain belongs to another workflow\'s chat (CONFLICT)'),
      },
      handler: async (ctx) => {
        const body = await parseBody(ctx, chatSettingsSchema);
        const { chat, created } = await s.chat.put(param(ctx, 'id'), body);
        ctx.status = created ? 201 : 200;
        ctx.body = chatView(chat, chatHost);
      },
    },
    {
      method: 'get', path: '/api/workflows/{id}/chat', operationId: 'getChat', tag: 'chat', auth: 'admin',
      summary: 'The workflow\'s chat deployment (never its password)',
      responses: { 200: { description: 'the chat', schema: chatViewSchema }, 401: unauthorized, 404: errorResponse('unknown workflow or no chat (NOT_FOUND)') },
      handler: async (ctx) => {
        ctx.body = chatView(await s.chat.get(param(ctx, 'id')), chatHost);
      },
    },
    {
      method: 'delete', path: '/api/workflows/{id}/chat', operationId: 'deleteChat', tag: 'chat', auth: 'admin',
      summary: 'Remove the chat deployment with its conversations',
      responses: { 204: { description: 'removed' }, 401: unauthorized, 404: errorResponse('unknown workflow or no chat (NOT_FOUND)') },
      handler: async (ctx) => {
        await s.chat.delete(param(ctx, 'id'));
        ctx.status = 204;
      },
    },
  ];
}

async function page(ctx: Ctx, chat: ChatService): Promise<void> {
  const found = await chat.bySubdomain(param(ctx, 'sub'));
  pageHeaders(ctx);
  ctx.body = renderChatPage({ subdomain: found.subdomain, branding: found.branding, authMode: found.auth.mode });
}

async function auth(ctx: Ctx, chat: ChatService): Promise<void> {
  sameOriginJson(ctx);
  const found = await chat.bySubdomain(param(ctx, 'sub'));
  const body = checkBody((await ctx.state.readJson()) ?? {}, chatAuthSchema);
  const outcome = await chat.authenticate(found, body, ctx.ip);
  if (outcome.kind === 'code-sent') {
    ctx.status = 202;
    ctx.body = { sent: true };
    return;
  }
  setSessionCookie(ctx, found.subdomain, outcome.cookie, { maxAge: outcome.maxAgeSec * 1000 });
  ctx.body = { ok: true };
}

/**
 * The session cookie, scoped to this chat's API: on a shared host (127.0.0.1/chat/…) no other
 * chat or route sees it. Sign-in and sign-out set it with the same name, path and flags, so the
 * browser replaces (or expires) the one it has.
 */
function setSessionCookie(ctx: Ctx, subdomain: string, value: string, lifetime: { maxAge: number } | { expires: Date }): void {
  ctx.cookies.set(cookieName(subdomain), value, {
    httpOnly: true, sameSite: 'lax', path: `/api/chat/${subdomain}`, secure: ctx.secure, overwrite: true, ...lifetime,
  });
}

/**
 * Sign-out: the session ends on the server (SPEC §4.4), so a copy of the cookie is refused from
 * then on; the cookie is HttpOnly, so the page cannot drop it itself: the answer expires it.
 */
async function signOut(ctx: Ctx, chat: ChatService): Promise<void> {
  sameOrigin(ctx);
  const found = await chat.bySubdomain(param(ctx, 'sub'));
  await chat.signOut(ctx.cookies.get(cookieName(found.subdomain)));
  setSessionCookie(ctx, found.subdomain, '', { expires: new Date(0) });
  ctx.status = 204;
}

async function messages(ctx: Ctx, s: Services, logger: Logger): Promise<void> {
  sameOriginJson(ctx);
  const found = await s.chat.bySubdomain(param(ctx, 'sub'));
  const visitor: ChatVisitor | null = await s.chat.visitor(found, ctx.cookies.get(cookieName(found.subdomain)));
  if (visitor === null) throw new TroupeError('UNAUTHORIZED', 'sign in to this chat first');
  const body = await parseBody(ctx, chatMessageSchema);
  const started = await s.chatMessages.start(found, visitor, ctx.ip, body);
  ctx.set('X-Execution-Id', started.executionId);
  ctx.set('X-Conversation-Id', started.conversationId);
  ctx.set('X-Conversation-Token', started.conversationToken);
  streamAnswer(ctx, s, logger, found, started);
}

/** chunks of the answer's block (every block's without an `output` setting), then done or error */
function streamAnswer(ctx: Ctx, s: Services, logger: Logger, chat: ChatDeployment, started: ChatTurn): void {
  const sse = openSse(ctx);
  // out now, with the headers (X-Conversation-Token): a visitor whose stream is cut before the
  // answer still holds the conversation
  sse.comment('conversation');
  const conversationId = started.conversationId;
  const conversationToken = started.conversationToken;
  let streamed = false;
  let ended = false;
  const finish = async (): Promise<void> => {
    const { executionId, errorCode, answer } = await started.answer;
    ended = true;
    if (answer === null) {
      // what failed inside the workflow stays in its execution record, not on a public page
      sse.send('error', { code: errorCode ?? 'FAILED', message: 'the assistant could not answer this message', conversationId, conversationToken, executionId });
    } else {
      if (!streamed && answer.text !== '') sse.send('chunk', { text: answer.text });
      sse.send('done', { conversationId, conversationToken, executionId, output: answer.output ?? null });
    }
    sse.close();
  };
  const onEvent = (e: SeqEvent): void => {
    if (e.event === 'chunk') {
      const chunk = e.data as { blockId: string; text: string };
      if (chat.output !== undefined && chunk.blockId !== chat.output.block) return;
      streamed = true;
      sse.send('chunk', { text: chunk.text });
    } else if (e.event === 'done') {
      void finish().catch((err: unknown) => fail(err));
    }
  };
  const fail = (err: unknown): void => {
    logger.error({ err, executionId: started.executionId }, 'chat stream failed');
    sse.send('error', { code: 'INTERNAL', message: 'the stream failed', conversationId, conversationToken });
    sse.close();
  };
  s.executions.follow(started.executionId, onEvent, sse.signal).then(
    () => {
      // the feed ended without `done` while the visitor is still there: say so rather than hang
      if (!ended && !sse.signal.aborted) void finish().catch((err: unknown) => fail(err));
    },
    (err: unknown) => fail(err),
  );
}

/**
 * Chat POSTs take JSON from the page's own origin only: a form on another site (or another
 * port of the same host, which SameSite does not tell apart) cannot post as the visitor.
 */
function sameOriginJson(ctx: Ctx): void {
  if (!ctx.is('application/json')) throw new TroupeError('INVALID_REQUEST', 'send JSON (Content-Type: application/json)');
  sameOrigin(ctx);
}

function sameOrigin(ctx: Ctx): void {
  const site = ctx.get('Sec-Fetch-Site');
  if (site !== '' && site !== 'same-origin' && site !== 'none') throw new TroupeError('FORBIDDEN', 'cross-site request refused');
  const origin = ctx.get('Origin');
  // (koa's ctx.origin is not ours to compare with: build this request's own origin)
  if (origin !== '' && origin !== `${ctx.protocol}://${ctx.host}`) throw new TroupeError('FORBIDDEN', 'cross-origin request refused');
}

/** sign-in and sign-out of a chat's visitors */
function signInRoutes(chat: ChatService, notFound: ResponseSpec): RouteSpec[] {
  return [
    {
      method: 'post', path: '/api/chat/{sub}/auth', operationId: 'chatAuth', tag: 'chat', auth: 'none',
      summary: 'Sign in: `{ password }`, `{ email }` (mails a 6-digit code, valid 15 min, 5 attempts) or `{ email, code }`',
      description: 'Success sets an HttpOnly signed session cookie. Asking for a code answers 202 for every well-formed address; the code is mailed only to addresses allowed by allowedEmails.',
      body: { schema: chatAuthSchema },
      responses: {
        200: { description: 'signed in: the session cookie is set', schema: chatSignedInSchema, headers: ['Set-Cookie'] },
        202: { description: 'a code is mailed if the address is allowed (the same answer either way)', schema: chatCodeSentSchema },
        400: errorResponse('missing field for this auth mode, or not an email address (INVALID_REQUEST)'),
        401: errorResponse('wrong password, or invalid or expired code (UNAUTHORIZED)'),
        403: errorResponse('a request from another origin (FORBIDDEN)'),
        404: notFound,
        429: errorResponse('too many attempts from this client address, or for this email from it (RATE_LIMITED)', ['Retry-After']),
      },
      handler: (ctx) => auth(ctx, chat),
    },
    {
      method: 'delete', path: '/api/chat/{sub}/auth', operationId: 'chatSignOut', tag: 'chat', auth: 'none',
      summary: 'Sign out: the session ends on the server and its cookie is cleared (signed in or not)',
      responses: {
        204: { description: 'signed out: the session is ended, its cookie refused from now on and expired', headers: ['Set-Cookie'] },
        403: errorResponse('a request from another origin (FORBIDDEN)'),
        404: notFound,
      },
      handler: (ctx) => signOut(ctx, chat),
    },
  ];
}

export function chatPublicRoutes(s: Services, logger: Logger): RouteSpec[] {
  const notFound = errorResponse('no chat with this subdomain (NOT_FOUND)');
  return [
    {
      method: 'get', path: '/chat/{sub}/', operationId: 'chatPage', tag: 'chat', auth: 'none',
      summary: 'The chat page (also `/` on `{sub}.{TROUPE_CHAT_HOST}`)',
      responses: { 200: { description: 'the branded chat page', contentType: 'text/html' }, 404: notFound },
      handler: (ctx) => page(ctx, s.chat),
    },
    {
      method: 'get', path: '/api/chat/{sub}', operationId: 'chatConfig', tag: 'chat', auth: 'none',
      summary: 'Public chat config: branding and auth mode',
      responses: { 200: { description: 'the public config', schema: publicChatSchema }, 404: notFound },
      handler: async (ctx) => {
        ctx.body = publicView(await s.chat.bySubdomain(param(ctx, 'sub')));
      },
    },
    ...signInRoutes(s.chat, notFound),
    {
      method: 'post', path: '/api/chat/{sub}/messages', operationId: 'chatMessage', tag: 'chat', auth: 'none',
      summary: 'Send a message: SSE `chunk` { text } as tokens arrive, then `done` { conversationId, conversationToken, executionId, output } or `error` { code, message }',
      description: 'A conversation continues only with the conversationToken of its `done` events, or in an email chat from a session of its owner\'s address.',
      body: { schema: chatMessageSchema },
      responses: {
        200: { description: 'text/event-stream', alsoContentTypes: ['text/event-stream'], headers: ['X-Execution-Id', 'X-Conversation-Id', 'X-Conversation-Token'] },
        400: errorResponse('invalid body (INVALID_JSON, INVALID_REQUEST)'),
        401: errorResponse('this chat needs a sign-in (UNAUTHORIZED)'),
        403: errorResponse('the workflow is not deployed (NOT_DEPLOYED); a conversationId without its token, or a request from another origin (FORBIDDEN)'),
        404: errorResponse('no such chat (NOT_FOUND)'),
        409: errorResponse('the conversation is full; start a new one (CONFLICT)'),
        422: errorResponse("the input does not match the starter's inputFormat (INVALID_INPUT)"),
        429: errorResponse('too many messages from this visitor (RATE_LIMITED)', ['Retry-After']),
        503: errorResponse('no capacity (OVERLOADED) or the bus is reconnecting (BUS_UNAVAILABLE)', ['Retry-After']),
      },
      handler: (ctx) => messages(ctx, s, logger),
    },
  ];
}
