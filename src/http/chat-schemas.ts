/** Request and answer schemas of the chat routes (SPEC §4.4), also the OpenAPI document's. */
import { z } from 'zod';

const SUBDOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const EMAIL_RULE = /^(?:[^\s@]+@[^\s@]+\.[^\s@]+|@[^\s@]+\.[^\s@]+)$/;

const brandingSchema = z.object({
  title: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  welcomeMessage: z.string().max(4000).optional(),
  primaryColor: z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a hex colour such as #4f46e5').optional(),
  logoUrl: z.string().url().refine((u) => /^https?:\/\//i.test(u), 'an http(s) URL').optional(),
});

export const chatSettingsSchema = z.object({
  subdomain: z.string().regex(SUBDOMAIN, 'lowercase letters, digits and "-" (not at either end), at most 63'),
  auth: z.object({
    mode: z.enum(['public', 'password', 'email']),
    password: z.string().min(8, 'at least 8 characters').max(1000).optional()
      .describe('password mode; write-only (kept as a scrypt hash); omitted on a replace: the earlier one stays'),
    allowedEmails: z.array(z.string().regex(EMAIL_RULE, 'an address (ada@example.com) or a domain (@example.com)')).max(10_000).optional(),
  }),
  branding: brandingSchema,
  // null as GET shows "none": what GET answers can be sent back as it is
  output: z.object({ block: z.string().min(1), path: z.string().optional() }).nullish().transform((o) => o ?? undefined)
    .describe('which block\'s output (at an optional path such as result.items[0].text) is the answer; default (absent or null): the execution\'s output'),
});

export const chatViewSchema = z.object({
  workflowId: z.string(),
  subdomain: z.string(),
  host: z.string().describe('{subdomain}.{TROUPE_CHAT_HOST}'),
  path: z.string().describe('/chat/{subdomain}/ on the service itself'),
  auth: z.object({ mode: z.enum(['public', 'password', 'email']), allowedEmails: z.array(z.string()).optional() }),
  branding: brandingSchema,
  output: z.object({ block: z.string(), path: z.string().optional() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const publicChatSchema = z.object({
  subdomain: z.string(),
  branding: brandingSchema,
  auth: z.object({ mode: z.enum(['public', 'password', 'email']) }),
});

export const chatAuthSchema = z.object({
  password: z.string().max(1000).optional(),
  email: z.string().max(320).optional(),
  code: z.string().max(20).optional(),
});

export const chatMessageSchema = z.object({
  // a message of spaces and line breaks says nothing: the page does not send one, and a client
  // that does would start a run (and a turn of the stored conversation) for nothing
  message: z.string().min(1).max(16_000).regex(/\S/, 'the message is blank (only spaces or line breaks)'),
  conversationId: z.string().min(1).max(200).optional(),
  conversationToken: z.string().min(1).max(200).optional().describe('the token of the conversation\'s `done` events: it continues the conversation'),
  messageId: z.string().min(1).max(200).optional().describe('the client\'s id of this message: a retry that sends it again answers with the turn it began (no second turn)'),
});

export const chatSignedInSchema = z.object({ ok: z.literal(true) });
export const chatCodeSentSchema = z.object({ sent: z.literal(true) });
