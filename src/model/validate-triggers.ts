/** Trigger rules (SPEC §4.3, §4.5): cron syntax and ranges, IANA zones, unique ids and paths. */
import { isValidTimeZone, parseCron } from './cron.js';
import type { TriggerDef } from './types.js';
import type { ValidationContext } from './validate-context.js';

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
      if (def.timezone !== undefined && !isValidTimeZone(def.timezone)) {
        ctx.add(['triggers', index, 'timezone'], `unknown time zone "${def.timezone}" (use an IANA name such as "Europe/Paris")`);
      }
    } else {
      const firstPath = paths.get(def.path);
      if (firstPath === undefined) paths.set(def.path, index);
      else ctx.add(['triggers', index, 'path'], `webhook path "${def.path}" is already used by /triggers/${firstPath}`);
    }
  }
}
