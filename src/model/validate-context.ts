/** State shared by the validation passes (validate*.ts). */
import { toPointer, type PathSegment } from './json.js';
import type { BlockDef, BlockTypeInfo, BlockTypeRegistry } from './types.js';

/** Same shape as ValidationIssue in src/errors.ts (src/model may not import it). */
export interface ValidationIssue {
  /** JSON Pointer into the submitted document */
  path: string;
  message: string;
}

export interface BlockEntry {
  /** position in the submitted `blocks` array */
  index: number;
  def: BlockDef;
  normName: string;
  /** false when the block or an enclosing container is disabled: treated as absent */
  enabled: boolean;
  /** type known and config accepted, so its handles can be asked for */
  configOk: boolean;
}

export class ValidationContext {
  readonly issues: ValidationIssue[] = [];
  readonly blocks: BlockEntry[] = [];
  readonly byId = new Map<string, BlockEntry>();
  /** ids of every submitted block with a string id, valid or not (no "missing block" noise) */
  readonly rawIds = new Set<string>();
  starter: BlockEntry | undefined;

  constructor(readonly registry: BlockTypeRegistry) {}

  add(path: readonly PathSegment[] | string, message: string): void {
    this.issues.push({ path: typeof path === 'string' ? path : toPointer(path), message });
  }

  typeInfo(type: string): BlockTypeInfo | undefined {
    return Object.prototype.hasOwnProperty.call(this.registry, type) ? this.registry[type] : undefined;
  }

  /** Handles of a block whose config passed, or undefined when they cannot be known. */
  handlesOf(entry: BlockEntry): string[] | undefined {
    if (!entry.configOk) return undefined;
    try {
      return this.typeInfo(entry.def.type)?.handles(entry.def.config);
    } catch {
      return undefined;
    }
  }

  /** Enclosing containers, innermost first (stops on a parent cycle, which is reported elsewhere). */
  containersOf(entry: BlockEntry): BlockEntry[] {
    const out: BlockEntry[] = [];
    const seen = new Set<string>([entry.def.id]);
    let parentId = entry.def.parent;
    while (parentId !== undefined && !seen.has(parentId)) {
      const parent = this.byId.get(parentId);
      if (parent === undefined) break;
      out.push(parent);
      seen.add(parentId);
      parentId = parent.def.parent;
    }
    return out;
  }
}
