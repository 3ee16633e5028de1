/**
 * Where a JSON Pointer (a 422 issue's `path`) lands in the editor's text: walks the JSON syntax
 * tree CodeMirror already keeps, down to the deepest part that exists (a missing property is
 * shown on the object that lacks it).
 */
import { syntaxTree } from '@codemirror/language';
import type { EditorState } from '@codemirror/state';
import type { SyntaxNode } from '@lezer/common';

const PUNCTUATION = new Set(['{', '}', '[', ']', ',', ':', '⚠']);

function values(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c !== null; c = c.nextSibling) if (!PUNCTUATION.has(c.name)) out.push(c);
  return out;
}

function propertyValue(state: EditorState, object: SyntaxNode, key: string): SyntaxNode | undefined {
  for (const prop of values(object)) {
    if (prop.name !== 'Property') continue;
    const name = prop.getChild('PropertyName');
    if (name === null) continue;
    let text: unknown;
    try {
      text = JSON.parse(state.sliceDoc(name.from, name.to));
    } catch {
      continue;
    }
    if (text !== key) continue;
    return values(prop).find((v) => v.name !== 'PropertyName') ?? prop;
  }
  return undefined;
}

export function decodePointer(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer.replace(/^\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The range to mark for a pointer: the value it names, or its deepest existing ancestor (first line only). */
export function pointerRange(state: EditorState, pointer: string): { from: number; to: number } {
  let node: SyntaxNode | null = syntaxTree(state).topNode.firstChild;
  if (node === null) return { from: 0, to: Math.min(1, state.doc.length) };
  for (const segment of decodePointer(pointer)) {
    let next: SyntaxNode | undefined;
    if (node.name === 'Object') next = propertyValue(state, node, segment);
    else if (node.name === 'Array' && /^\d+$/.test(segment)) next = values(node)[Number(segment)];
    if (next === undefined) break;
    node = next;
  }
  const line = state.doc.lineAt(node.from);
  return { from: node.from, to: Math.max(node.from + 1, Math.min(node.to, line.to)) };
}
