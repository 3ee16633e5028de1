/**
 * The chat page of SPEC §4.4: one self-contained HTML document (inline style and script, no
 * external resources but the optional logo). Every branding value is escaped for HTML; the
 * script reads its data from a JSON block (`#chat-config`) whose `<` are escaped, never from
 * interpolated JS. A CSP meta tag allows exactly this style and this script (by hash), same-origin
 * fetches and images. The page only calls `/api/chat/{subdomain}/auth` and `.../messages` by
 * absolute path, so it works at `{subdomain}.{chat host}/` and at `/chat/{subdomain}/` alike.
 */
import { createHash } from 'node:crypto';
import { CHAT_PAGE_SCRIPT } from './chat-page-script.js';

export type ChatAuthMode = 'public' | 'password' | 'email';

export interface ChatBranding {
  title: string;
  description?: string;
  welcomeMessage?: string;
  primaryColor?: string;
  logoUrl?: string;
}

export interface ChatPageOptions {
  subdomain: string;
  branding: ChatBranding;
  authMode: ChatAuthMode;
}

export const DEFAULT_PRIMARY_COLOR = '#4f46e5';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

/** `#rgb` or `#rrggbb` (lowercased), else the default colour. */
export function safeColor(value: string | undefined): string {
  return value !== undefined && /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(value) ? value.toLowerCase() : DEFAULT_PRIMARY_COLOR;
}

/** Black or white, whichever reads better on the given `#rgb`/`#rrggbb` colour. */
export function textColorOn(hex: string): string {
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join('') : hex.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(digits.slice(i, i + 2), 16) / 255);
  const luminance = 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
  return luminance > 0.6 ? '#111827' : '#ffffff';
}

/** An http(s) URL or a same-origin absolute path; anything else (javascript:, data:, //host) is dropped. */
export function safeLogoUrl(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const url = value.trim();
  if (url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\')) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** JSON safe to place inside a `<script type="application/json">` element. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function cspHash(source: string): string {
  return `'sha256-${createHash('sha256').update(source, 'utf8').digest('base64')}'`;
}

const SCRIPT_HASH = cspHash(CHAT_PAGE_SCRIPT);

const BASE_CSS = `
*{box-sizing:border-box}
[hidden]{display:none!important}
html,body{height:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;background:#f3f4f6}
.app{display:flex;flex-direction:column;max-width:760px;height:100%;margin:0 auto;background:#fff;box-shadow:0 0 24px rgba(0,0,0,.06)}
header{display:flex;align-items:center;gap:12px;padding:14px 18px;border-bottom:1px solid #e5e7eb}
header .heading{flex:1;min-width:0}
#chat-logo{width:40px;height:40px;object-fit:contain;border-radius:8px}
#chat-title{margin:0;font-size:1.2rem;line-height:1.3;overflow-wrap:anywhere}
#chat-description{margin:2px 0 0;color:#4b5563;font-size:.9rem;overflow-wrap:anywhere}
button{font:inherit;cursor:pointer;border-radius:8px;border:1px solid transparent;padding:8px 14px}
button:disabled{opacity:.55;cursor:not-allowed}
button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
.primary{background:var(--primary);color:var(--on-primary)}
.secondary{background:#fff;color:#374151;border-color:#d1d5db}
#messages{flex:1;overflow-y:auto;padding:18px;display:flex;flex-direction:column;gap:10px}
.message{max-width:85%;padding:10px 14px;border-radius:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.message.user{align-self:flex-end;background:var(--primary);color:var(--on-primary);border-bottom-right-radius:4px}
.message.assistant{align-self:flex-start;background:#f3f4f6;border-bottom-left-radius:4px}
.message.streaming .message-text:empty::after{content:"\\2026";color:#6b7280}
.message-error{margin-top:4px;color:#b91c1c;font-size:.9rem}
.message.error .message-text:empty{display:none}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
#signin{display:flex;flex-direction:column;gap:10px;padding:18px;border-top:1px solid #e5e7eb}
#signin label{font-weight:600;font-size:.9rem}
#signin input{font:inherit;padding:8px 10px;border:1px solid #d1d5db;border-radius:8px}
#signin .actions{display:flex;gap:8px}
#signin-error{margin:0;color:#b91c1c;min-height:1.5em}
#signin-hint{margin:0;color:#4b5563}
#composer{display:flex;gap:8px;align-items:flex-end;padding:12px 18px;border-top:1px solid #e5e7eb}
#message-input{flex:1;font:inherit;resize:none;padding:8px 10px;border:1px solid #d1d5db;border-radius:8px;min-height:44px;max-height:40vh}
`;

function styleBlock(primaryColor: string | undefined): string {
  const color = safeColor(primaryColor);
  return `:root{--primary:${color};--on-primary:${textColorOn(color)}}${BASE_CSS}`;
}

function contentSecurityPolicy(style: string): string {
  return [
    "default-src 'none'",
    `script-src ${SCRIPT_HASH}`,
    `style-src ${cspHash(style)}`,
    "img-src 'self' https: http: data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** Sign-out, for chats with a sign-in: shown by the script while signed in. */
function signOutHtml(authMode: ChatAuthMode): string {
  return authMode === 'public' ? '' : '<button type="button" id="sign-out" class="secondary" hidden>Sign out</button>';
}

function headerHtml(branding: ChatBranding, authMode: ChatAuthMode): string {
  const logo = safeLogoUrl(branding.logoUrl);
  const logoHtml = logo === undefined ? '' : `<img id="chat-logo" src="${escapeHtml(logo)}" alt="">`;
  const description = branding.description
    ? `<p id="chat-description">${escapeHtml(branding.description)}</p>`
    : '';
  return `<header>${logoHtml}<div class="heading"><h1 id="chat-title">${escapeHtml(branding.title)}</h1>${description}</div>`
    + `<button type="button" id="new-conversation" class="secondary">New conversation</button>${signOutHtml(authMode)}</header>`;
}

function passwordFields(): string {
  return '<label for="password">Password</label>'
    + '<input id="password" name="password" type="password" autocomplete="current-password" required>';
}

function emailFields(): string {
  return '<label for="email">Email</label>'
    + '<input id="email" name="email" type="email" autocomplete="email" required>'
    + '<div id="code-step" hidden><label for="code">6-digit code</label>'
    + '<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}"></div>';
}

function signinHtml(authMode: ChatAuthMode): string {
  if (authMode === 'public') return '';
  const fields = authMode === 'password' ? passwordFields() : emailFields();
  const submit = authMode === 'password' ? 'Sign in' : 'Send code';
  const restart = authMode === 'email'
    ? '<button type="button" id="signin-restart" class="secondary" hidden>Use another email</button>'
    : '';
  return '<form id="signin" aria-labelledby="signin-heading" novalidate hidden>'
    + '<h2 id="signin-heading" class="sr-only">Sign in</h2>'
    + '<p id="signin-hint">Sign in to start chatting.</p>'
    + fields
    + `<div class="actions"><button type="submit" id="signin-submit" class="primary">${submit}</button>${restart}</div>`
    + '<p id="signin-error" role="alert"></p></form>';
}

function composerHtml(): string {
  return '<form id="composer" hidden>'
    + '<label for="message-input" class="sr-only">Message</label>'
    + '<textarea id="message-input" name="message" rows="1" placeholder="Type a message…" '
    + 'aria-describedby="composer-hint"></textarea>'
    + '<span id="composer-hint" class="sr-only">Enter sends, Shift+Enter adds a new line.</span>'
    + '<button type="submit" id="send" class="primary">Send</button></form>';
}

/** The complete chat page for one chat deployment. */
export function renderChatPage(opts: ChatPageOptions): string {
  const { subdomain, branding, authMode } = opts;
  const style = styleBlock(branding.primaryColor);
  const config = {
    subdomain,
    authMode,
    title: branding.title,
    welcomeMessage: branding.welcomeMessage ?? '',
  };
  const description = branding.description
    ? `<meta name="description" content="${escapeHtml(branding.description)}">`
    : '';
  // the logo as the tab icon, else an empty one: no stray request for /favicon.ico
  const icon = `<link rel="icon" href="${escapeHtml(safeLogoUrl(branding.logoUrl) ?? 'data:,')}">`;
  return '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
    + '<meta name="viewport" content="width=device-width, initial-scale=1">'
    + `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(style))}">`
    + '<meta name="referrer" content="no-referrer">'
    + `<title>${escapeHtml(branding.title)}</title>${description}${icon}<style>${style}</style></head>`
    + '<body><div class="app">'
    + headerHtml(branding, authMode)
    + '<div id="messages" role="log" aria-live="polite" aria-relevant="additions text" aria-label="Conversation"></div>'
    + signinHtml(authMode)
    + composerHtml()
    + '</div>'
    + `<script type="application/json" id="chat-config">${jsonForScript(config)}</script>`
    + `<script>${CHAT_PAGE_SCRIPT}</script>`
    + '</body></html>\n';
}
