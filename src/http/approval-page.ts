/**
 * The one-time approval page (SPEC §2.1): the message, a form of the block's `inputFormat`
 * fields, Approve and Reject. Self-contained like the chat page (inline style, no script, no
 * external resource), styled the same way, readable on a phone. Every value is escaped.
 */
import { DEFAULT_PRIMARY_COLOR, escapeHtml, textColorOn } from './chat-page.js';

export interface ApprovalField {
  name: string;
  type?: string;
  required?: boolean;
  description?: string;
}

const STYLE = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:36rem;margin:0 auto;padding:1.25rem}.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.25rem}
h1{font-size:1.25rem;margin:0 0 .75rem}.message{white-space:pre-wrap;margin:0 0 1rem}label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{font-weight:400;color:#6b7280;font-size:.875rem}input,textarea{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #d1d5db;border-radius:8px}
.actions{display:flex;gap:.75rem;margin-top:1.25rem}button{flex:1;font:inherit;font-weight:600;padding:.75rem;border-radius:8px;border:0;cursor:pointer}
.approve{background:${DEFAULT_PRIMARY_COLOR};color:${textColorOn(DEFAULT_PRIMARY_COLOR)}}.reject{background:#e5e7eb;color:#111827}`;

function layout(title: string, body: string): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
    + `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'self'">`
    + `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main><div class="card">${body}</div></main></body></html>`;
}

function fieldHtml(f: ApprovalField, index: number): string {
  const id = `f${index}`;
  const required = f.required === true ? ' required' : '';
  const hint = f.description === undefined ? '' : ` <span class="hint">${escapeHtml(f.description)}</span>`;
  const label = `<label for="${id}">${escapeHtml(f.name)}${hint}</label>`;
  const name = escapeHtml(f.name);
  if (f.type === 'object' || f.type === 'array' || f.type === 'any') return `${label}<textarea id="${id}" name="${name}" rows="3"${required}></textarea>`;
  if (f.type === 'boolean') return `${label}<input id="${id}" name="${name}" type="checkbox" value="true" style="width:auto">`;
  const kind = f.type === 'number' ? 'number" step="any' : 'text';
  return `${label}<input id="${id}" name="${name}" type="${kind}"${required}>`;
}

export function renderApprovalPage(message: string, fields: readonly ApprovalField[], action: string): string {
  const form = `<form method="post" action="${escapeHtml(action)}">${fields.map(fieldHtml).join('')}`
    + '<div class="actions"><button class="approve" type="submit" name="decision" value="approved">Approve</button>'
    + '<button class="reject" type="submit" name="decision" value="rejected" formnovalidate>Reject</button></div></form>';
  return layout('Approval requested', `<h1>Approval requested</h1><p class="message">${escapeHtml(message)}</p>${form}`);
}

export function renderApprovalDone(title: string, text: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p class="message">${escapeHtml(text)}</p>`);
}

/** The form's values as the inputFormat's types: numbers, booleans, and JSON for objects and arrays. */
export function formData(params: URLSearchParams, fields: readonly ApprovalField[]): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of fields) {
    const raw = params.get(f.name);
    if (f.type === 'boolean') {
      data[f.name] = raw === 'true';
      continue;
    }
    if (raw === null || raw === '') continue;
    if (f.type === 'number') data[f.name] = Number(raw);
    else if (f.type === 'object' || f.type === 'array' || f.type === 'any') data[f.name] = parseLoose(raw);
    else data[f.name] = raw;
  }
  return data;
}

function parseLoose(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
