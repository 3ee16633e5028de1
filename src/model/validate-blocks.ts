/** Per-block rules (SPEC §1, §1.1): ids, names, types, configs, the starter, containers. */
import { containerTypes, contains, isEntry } from './capabilities.js';
import { normalizeName } from './names.js';
import { RESERVED_NAMES } from './types.js';
import type { BlockEntry, ValidationContext } from './validate-context.js';

function checkIdsAndNames(ctx: ValidationContext): void {
  const names = new Map<string, BlockEntry>();
  for (const entry of ctx.blocks) {
    const { def, index } = entry;
    const first = ctx.byId.get(def.id);
    if (first !== entry) ctx.add(['blocks', index, 'id'], `duplicate block id "${def.id}" (first used by /blocks/${first?.index ?? '?'})`);
    if (/[.<>]/.test(def.name)) ctx.add(['blocks', index, 'name'], `block name "${def.name}" must not contain ".", "<" or ">"`);
    const norm = entry.normName;
    if ((RESERVED_NAMES as readonly string[]).includes(norm) && !(norm === 'start' && isEntry(def.type))) {
      const why = norm === 'start' ? 'is reserved for the starter block' : 'is reserved';
      ctx.add(['blocks', index, 'name'], `block name "${def.name}" ${why}`);
      continue;
    }
    const same = names.get(norm);
    if (same === undefined) names.set(norm, entry);
    else ctx.add(['blocks', index, 'name'], `block name "${def.name}" is the same as /blocks/${same.index} ("${same.def.name}") after normalization`);
  }
}

function checkParents(ctx: ValidationContext): void {
  for (const entry of ctx.blocks) {
    const parentId = entry.def.parent;
    if (parentId === undefined) continue;
    const path = ['blocks', entry.index, 'parent'];
    const parent = ctx.byId.get(parentId);
    if (parentId === entry.def.id) ctx.add(path, 'a block cannot be its own parent');
    else if (parent === undefined) {
      if (!ctx.rawIds.has(parentId)) ctx.add(path, `parent "${parentId}" is not a block of this workflow`);
    } else if (!contains(parent.def.type)) {
      ctx.add(path, `parent "${parentId}" is a ${parent.def.type} block; only ${containerTypes().join(' and ')} blocks contain others`);
    } else if (wouldLoop(ctx, entry)) {
      ctx.add(path, `containers "${entry.def.id}" and "${parentId}" contain each other`);
    }
  }
}

function wouldLoop(ctx: ValidationContext, entry: BlockEntry): boolean {
  let id = entry.def.parent;
  const seen = new Set<string>();
  while (id !== undefined && !seen.has(id)) {
    if (id === entry.def.id) return true;
    seen.add(id);
    id = ctx.byId.get(id)?.def.parent;
  }
  return false;
}

function computeEnabled(ctx: ValidationContext): void {
  for (const entry of ctx.blocks) {
    entry.enabled = entry.def.enabled !== false && ctx.containersOf(entry).every((c) => c.def.enabled !== false);
  }
}

function checkTypesAndConfigs(ctx: ValidationContext): void {
  for (const entry of ctx.blocks) {
    if (!entry.enabled) continue;
    const info = ctx.typeInfo(entry.def.type);
    if (info === undefined) {
      ctx.add(['blocks', entry.index, 'type'], `unknown block type "${entry.def.type}"`);
      continue;
    }
    let found: { path: string; message: string }[];
    try {
      found = info.validateConfig(entry.def.config);
    } catch (err) {
      found = [{ path: '', message: `config could not be checked: ${err instanceof Error ? err.message : String(err)}` }];
    }
    for (const problem of found) {
      const rel = problem.path === '' || problem.path.startsWith('/') ? problem.path : `/${problem.path}`;
      ctx.add(`/blocks/${entry.index}/config${rel}`, problem.message);
    }
    entry.configOk = found.length === 0;
  }
}

function checkStarter(ctx: ValidationContext): void {
  const starters = ctx.blocks.filter((b) => b.enabled && isEntry(b.def.type));
  ctx.starter = starters[0];
  if (starters.length === 0) ctx.add('/blocks', 'a workflow needs exactly one (enabled) starter block');
  for (const extra of starters.slice(1)) {
    ctx.add(['blocks', extra.index, 'type'], `only one starter block is allowed (first: /blocks/${starters[0]?.index ?? '?'})`);
  }
  for (const starter of starters) {
    if (starter.def.parent !== undefined) ctx.add(['blocks', starter.index, 'parent'], 'the starter block must be at the top level');
  }
}

export function registerBlocks(ctx: ValidationContext, blocks: { index: number; def: BlockEntry['def'] }[]): void {
  for (const { index, def } of blocks) {
    const entry: BlockEntry = { index, def, normName: normalizeName(def.name), enabled: true, configOk: false };
    ctx.blocks.push(entry);
    if (!ctx.byId.has(def.id)) ctx.byId.set(def.id, entry);
  }
}

export function checkBlocks(ctx: ValidationContext): void {
  checkIdsAndNames(ctx);
  checkParents(ctx);
  computeEnabled(ctx);
  checkTypesAndConfigs(ctx);
  checkStarter(ctx);
}
