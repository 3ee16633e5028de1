/**
 * The forms a secret's value takes once Troupe has sent it, which an upstream may echo back or
 * an error message may quote: redaction looks for each of them (SPEC §3). Only the forms Troupe
 * itself produces are here; what a workflow's own code makes of a value (base64, reversed,
 * JSON inside JSON) is out of reach (docs/config.md).
 */
import type { CompiledWorkflow } from './compiled.js';
import { secretPattern } from './ref-parse.js';

/** a form shorter than this would blank unrelated text (a trimmed secret ` a `) */
const MIN_FORM = 4;

const valuesCache = new WeakMap<ReadonlyMap<string, string>, string[]>();

/**
 * What redaction looks for in a run with these secrets: the forms of every value. Computed
 * once per secrets map (one per execution, or one shared by the runs that name no secret).
 */
export function redactionValues(secrets: ReadonlyMap<string, string>): string[] {
  const cached = valuesCache.get(secrets);
  if (cached !== undefined) return cached;
  const out = new Set<string>();
  for (const value of secrets.values()) for (const form of formsOf(value)) out.add(form);
  const values = [...out];
  valuesCache.set(secrets, values);
  return values;
}

/**
 * The forms of one value, remembered: a run that names a secret has a map of its own, and every
 * stored secret's forms would otherwise be worked out again for each of its executions. Bounded,
 * and emptied when full, so it does not hold on to values that were deleted long ago.
 */
const formsMemo = new Map<string, readonly string[]>();
const FORMS_MEMO_SIZE = 512;

function formsOf(value: string): readonly string[] {
  let forms = formsMemo.get(value);
  if (forms === undefined) {
    forms = computeForms(value);
    if (formsMemo.size >= FORMS_MEMO_SIZE) formsMemo.clear();
    formsMemo.set(value, forms);
  }
  return forms;
}

/**
 * Each sent form (see sentForms), as it is and lowercased (the URL parser lowercases a host
 * name: `http://{{KEY}}.example/` fails with the lowercased name in the message), its
 * JSON-escaped form (an error message that quotes a value with JSON.stringify escapes its quotes
 * and backslashes), and its percent-encoded forms (urlForms).
 */
function computeForms(value: string): string[] {
  const out = new Set<string>();
  for (const form of sentForms(value)) {
    // a short one the run names is kept as it is: lowercased too, it would blank more unrelated text
    for (const text of form.length >= MIN_FORM ? [form, form.toLowerCase()] : [form]) {
      out.add(text);
      out.add(JSON.stringify(text).slice(1, -1));
    }
    for (const encoded of urlForms(form)) if (encoded.length >= MIN_FORM) out.add(encoded);
  }
  return [...out];
}

/**
 * The forms a secret's value may take once sent: as it is, and as an HTTP header carries it
 * (surrounding whitespace trimmed, line breaks dropped), so an upstream echoing the header back
 * is redacted too. A form shorter than 4 characters is left out: it would blank unrelated text.
 */
function sentForms(value: string): string[] {
  if (value === '') return [];
  const forms = new Set([value]);
  for (const form of [value.trim(), value.replace(/[\r\n]+/g, '').trim()]) if (form.length >= MIN_FORM) forms.add(form);
  return [...forms];
}

/**
 * The ways a value is percent-encoded on its way out: as a path parameter or param
 * (`encodeURIComponent`), in a params query (which also encodes `'`), in a form body (`+` for
 * space, `!'()~` encoded), and written into the URL's path or query text, which the URL parser
 * encodes its own way (WHATWG: `"` as `%22`, `%` and `|` kept; the query encodes `'`, not the path).
 */
function urlForms(value: string): string[] {
  const component = encodeURIComponent(value);
  return [
    component,
    component.replace(/'/g, '%27'),
    new URLSearchParams([['', value]]).toString().slice(1),
    ...parsedForm('http://h/', value, (u) => u.pathname.slice(1) + u.search + u.hash),
    ...parsedForm('http://h/?', value, (u) => u.search.slice(1) + u.hash),
  ];
}

/**
 * The text the URL parser makes of `value` after `prefix`. A sentinel ends it, so trailing
 * spaces are not stripped as they would be at the end of a whole URL, but not inside one.
 */
function parsedForm(prefix: string, value: string, part: (url: URL) => string): string[] {
  try {
    const text = part(new URL(`${prefix}${value}Z`));
    return text.endsWith('Z') ? [text.slice(0, -1)] : [];
  } catch {
    return [];
  }
}

/** an absolute URL's userinfo (what precedes the last `@` of its authority), as the URL parser reads it */
const USERINFO = /^[a-z][a-z\d+.-]*:\/\/([^/?#\\]*)@/i;

const credentialUrls = new WeakMap<CompiledWorkflow, ReadonlyArray<{ blockId: string; url: string }>>();

/** The API blocks whose URL has a userinfo that names a secret: found once per compiled workflow. */
function urlsWithCredentials(workflow: CompiledWorkflow): ReadonlyArray<{ blockId: string; url: string }> {
  let found = credentialUrls.get(workflow);
  if (found === undefined) {
    const urls: Array<{ blockId: string; url: string }> = [];
    for (const block of workflow.blocks.values()) {
      const url = block.config['url'];
      if (block.type === 'api' && typeof url === 'string' && USERINFO.exec(url.trim())?.[1]?.includes('{{') === true) urls.push({ blockId: block.id, url: url.trim() });
    }
    credentialUrls.set(workflow, urls);
    found = urls;
  }
  return found;
}

/**
 * A run's secrets plus the Basic credentials its API blocks send: the HTTP client turns a URL's
 * userinfo (`http://user:{{PASS}}@host/`) into `Authorization: Basic base64(user:pass)`, which an
 * echoing upstream sends back. Under names no `{{NAME}}` can spell (a ':'). The same map when
 * there are none; a copy otherwise, so a shared map is never changed.
 */
export function withSentCredentials(workflow: CompiledWorkflow, secrets: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  let out: Map<string, string> | null = null;
  for (const { blockId, url } of urlsWithCredentials(workflow)) {
    const basic = basicCredentials(url, secrets);
    if (basic === null) continue;
    out ??= new Map(secrets);
    out.set(`sent:${blockId}`, basic);
  }
  return out ?? secrets;
}

/**
 * The Basic value sent for a URL template's userinfo, as the outbound client makes it
 * (src/outbound/transport.ts): the parsed user name and password, percent-decoded, joined by
 * ':', base64 of the UTF-8 bytes. Null when the
 * userinfo holds a reference or a path parameter (known only when the block runs) or an
 * unknown secret (the block then fails with MISSING_SECRET and sends nothing).
 */
export function basicCredentials(url: string, secrets: ReadonlyMap<string, string>): string | null {
  const template = USERINFO.exec(url)?.[1];
  if (template === undefined || /[<{]/.test(template.replace(secretPattern(), ''))) return null;
  let missing = false;
  const filled = url.replace(secretPattern(), (_whole, name: string) => {
    const value = secrets.get(name);
    if (value === undefined) missing = true;
    return value ?? '';
  });
  const userinfo = USERINFO.exec(filled)?.[1];
  if (missing || userinfo === undefined) return null;
  const parsed = new URL(`http://${userinfo}@h.invalid/`);
  if (parsed.username === '' && parsed.password === '') return null;
  return Buffer.from(`${decodeSafe(parsed.username)}:${decodeSafe(parsed.password)}`, 'utf8').toString('base64');
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
