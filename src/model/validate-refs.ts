/**
 * Reference rules (SPEC §1.2): every `<x.path>` in any string of an enabled block's config
 * (code fields included) must name a block, `start`, or a reference prefix; iteration
 * references only inside a container of that kind. See ref-parse.ts for what is left alone.
 */
import { toPointer } from './json.js';
import { collectReferences, interpretReference, ITERATION_FIELDS, referenceableNames, type LocatedRef } from './ref-parse.js';
import type { BlockEntry, ValidationContext } from './validate-context.js';

function unknownMessage(ctx: ValidationContext, ref: LocatedRef): string {
  if (ref.root === 'env') return `${ref.raw}: environment values are read as {{NAME}}, not as references`;
  if (ctx.starter !== undefined && ref.root === ctx.starter.normName) {
    return `${ref.raw}: the starter block is referenced as <start${ref.raw.slice(1 + ref.rawRoot.length)}`;
  }
  return `${ref.raw} names a block that does not exist ("${ref.rawRoot}")`;
}

/** A while/doWhile condition is evaluated per pass, in the loop's own iteration scope. */
function isOwnLoopCondition(entry: BlockEntry, ref: LocatedRef, kind: 'loop' | 'parallel'): boolean {
  return kind === 'loop' && entry.def.type === 'loop' && ref.at[0] === 'condition';
}

function iterationMessage(ctx: ValidationContext, entry: BlockEntry, ref: LocatedRef, kind: 'loop' | 'parallel'): string | null {
  // a container's own config is evaluated in its parent's scope, so only enclosing containers count
  const inScope = ctx.containersOf(entry).some((c) => c.def.type === kind) || isOwnLoopCondition(entry, ref, kind);
  if (!inScope) return `${ref.raw} is only available inside a ${kind} block`;
  const field = ref.path[0];
  if (!(ITERATION_FIELDS as readonly unknown[]).includes(field)) return `${ref.raw}: a ${kind} reference reads ${ITERATION_FIELDS.join(', ')}`;
  return null;
}

export function checkReferences(ctx: ValidationContext): void {
  const names = referenceableNames(ctx.blocks);
  for (const entry of ctx.blocks) {
    if (!entry.enabled) continue;
    for (const token of collectReferences(entry.def.config)) {
      const { kind, ref } = interpretReference(token, names);
      let message: string | null = null;
      if (kind === 'unknown') message = unknownMessage(ctx, ref);
      else if (kind === 'loop' || kind === 'parallel') message = iterationMessage(ctx, entry, ref, kind);
      if (message !== null) ctx.add(`/blocks/${entry.index}/config${toPointer(ref.at)}`, message);
    }
  }
}
