/**
 * Read-only JSON (an execution's input, output, error): highlighted, with everything below the
 * second level folded so a large payload reads at a glance; the fold markers open the rest.
 */
import { json } from '@codemirror/lang-json';
import { foldEffect, foldable, syntaxTree } from '@codemirror/language';
import { EditorState, type StateEffect } from '@codemirror/state';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

function foldDeep(view: EditorView): void {
  const effects: StateEffect<unknown>[] = [];
  syntaxTree(view.state).iterate({
    enter(node) {
      if (node.name !== 'Object' && node.name !== 'Array') return;
      let depth = 0;
      for (let p = node.node.parent; p !== null; p = p.parent) if (p.name === 'Object' || p.name === 'Array') depth++;
      if (depth < 2) return;
      const line = view.state.doc.lineAt(node.from);
      const range = foldable(view.state, line.from, line.to);
      if (range !== null) effects.push(foldEffect.of(range));
      return false;
    },
  });
  if (effects.length > 0) view.dispatch({ effects });
}

export function JsonView({ value, label }: { value: unknown; label: string }): React.JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  const text = value === undefined ? 'null' : JSON.stringify(value, null, 2);
  useEffect(() => {
    if (host.current === null) return undefined;
    const view = new EditorView({
      doc: text,
      parent: host.current,
      extensions: [basicSetup, json(), EditorState.readOnly.of(true), EditorView.contentAttributes.of({ 'aria-label': label })],
    });
    foldDeep(view);
    return () => view.destroy();
  }, [text, label]);
  return <div className="json-view" ref={host} data-json={text} />;
}
