/** Two versions side by side (SPEC §8) with @codemirror/merge: changed lines marked, unchanged runs collapsed. */
import { json } from '@codemirror/lang-json';
import { MergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

export function Compare({ left, right }: { left: string; right: string }): React.JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (host.current === null) return undefined;
    const extensions = [basicSetup, json(), EditorState.readOnly.of(true), EditorView.editable.of(false)];
    const view = new MergeView({
      a: { doc: left, extensions }, b: { doc: right, extensions }, parent: host.current,
      collapseUnchanged: { margin: 3, minSize: 6 }, gutter: true,
    });
    return () => view.destroy();
  }, [left, right]);
  return <div className="compare" ref={host} data-testid="compare" />;
}
