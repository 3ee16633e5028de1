/** Which blocks a validation issue is about, from its JSON Pointer into the submitted document. */
import type { ApiIssue } from './api.js';
import { decodePointer } from './editor/pointer.js';

interface Doc {
  blocks?: { id?: unknown }[];
  connections?: { from?: unknown; to?: unknown }[];
}

export function issuesByBlock(doc: unknown, issues: ApiIssue[]): Record<string, string[]> {
  const d = (doc ?? {}) as Doc;
  const out: Record<string, string[]> = {};
  const add = (id: unknown, message: string): void => {
    if (typeof id !== 'string') return;
    out[id] = [...(out[id] ?? []), message];
  };
  for (const issue of issues) {
    const [list, index, field] = decodePointer(issue.path);
    const i = Number(index);
    if (list === 'blocks' && Array.isArray(d.blocks)) add(d.blocks[i]?.id, issue.message);
    if (list === 'connections' && Array.isArray(d.connections)) {
      const c = d.connections[i];
      // a bad target is the target's problem only when it exists; else the source shows it
      if (field === 'to' && typeof c?.to === 'string' && d.blocks?.some((b) => b.id === c.to)) add(c.to, issue.message);
      else add(c?.from, issue.message);
    }
  }
  return out;
}
