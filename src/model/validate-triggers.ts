/** Trigger rules (SPEC §4.3, §4.5): cron syntax and ranges, IANA zones, unique ids and paths. */
import { isValidTimeZone, parseCron } from './cron.js';
import { nextDue } from './cron-next.js';
import type { TriggerDef, WebhookTrigger } from './types.js';
import type { ValidationContext } from './validate-context.js';

const NEVER_CHECK_FROM = new Date(Date.UTC(1999, 11, 31));

export function checkTriggers(ctx: ValidationContext, triggers: { index: number; def: TriggerDef }[]): void {
  const ids = new Map<string, number>();
  const paths = new Map<string, number>();
  for (const { index, def } of triggers) {
    const firstId = ids.get(def.id);
    if (firstId === undefined) ids.set(def.id, index);
    else ctx.add(['triggers', index, 'id'], `duplicate trigger id "${def.id}" (first used by /triggers/${firstId})`);
    if (def.type === 'schedule') {
      const cron = parseCron(def.cron);
      if (!cron.ok) ctx.add(['triggers', index, 'cron'], `invalid cron expression "${def.cron}": ${cron.message}`);
      // five years from a leap year's start hold every date a cron can name (Feb 29 included)
      else if (nextDue(cron.fields, 'UTC', NEVER_CHECK_FROM) === null) ctx.add(['triggers', index, 'cron'], `cron expression "${def.cron}" never comes due (no such date)`);
      if (def.timezone !== undefined && !isValidTimeZone(def.timezone)) {
        ctx.add(['triggers', index, 'timezone'], `unknown time zone "${def.timezone}" (use an IANA name such as "Europe/Paris")`);
      }
    } else {
      checkWebhook(ctx, index, def);
      const firstPath = paths.get(def.path);
      if (firstPath === undefined) paths.set(def.path, index);
      else ctx.add(['triggers', index, 'path'], `webhook path "${def.path}" is already used by /triggers/${firstPath}`);
    }
  }
}

const SECRET_REFERENCE = /^\{\{[A-Za-z_][A-Za-z0-9_]*\}\}$/;

function checkWebhook(ctx: ValidationContext, index: number, def: WebhookTrigger): void {
  // the signature is the webhook's only credential; a key written into the definition would be
  // readable by anyone who reads the workflow, and a mistyped reference would become the key itself
  if (def.secret === undefined) {
    ctx.add(['triggers', index, 'secret'], 'a webhook needs a secret to check signatures with: "{{NAME}}", set with PUT /api/secrets/NAME');
  } else if (!SECRET_REFERENCE.test(def.secret)) {
    ctx.add(['triggers', index, 'secret'], 'a webhook secret is a secret reference "{{NAME}}" (letters, digits and "_", not starting with a digit)');
  }
  // Stripe and Slack always sign a timestamp and GitHub never does: on them the setting would
  // change nothing or refuse every delivery
  if (def.requireTimestamp === true && (def.provider ?? 'generic') !== 'generic') {
    ctx.add(['triggers', index, 'requireTimestamp'], 'requireTimestamp is for the generic provider (Stripe and Slack always sign a timestamp, GitHub never does)');
  }
  if (def.path.split('/').some((seg) => seg === '.' || seg === '..')) {
    ctx.add(['triggers', index, 'path'], 'a webhook path may not have "." or ".." segments (clients normalise them away)');
  }
}
