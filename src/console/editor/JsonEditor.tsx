/**
 * The definition editor (SPEC §8): CodeMirror 6 with JSON highlighting, folding and syntax
 * checks; the service's validation issues are shown at their place (underline and gutter mark).
 */
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { forceLinting, linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';
import type { ApiIssue } from '../api';
import { pointerRange } from './pointer';

export interface JsonEditorProps {
  value: string;
  onChange: (text: string) => void;
  issues: ApiIssue[];
  label: string;
}

export function issueDiagnostics(view: EditorView, issues: ApiIssue[]): Diagnostic[] {
  return issues.map((i) => ({ ...pointerRange(view.state, i.path), severity: 'error', message: `${i.path}: ${i.message}`, source: 'validation' }));
}

export function JsonEditor({ value, onChange, issues, label }: JsonEditorProps): React.JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const changed = useRef(onChange);
  changed.current = onChange;
  // one linter shows both: JSON syntax errors and the service's issues (found again in the text as it changes)
  const shown = useRef(issues);
  useEffect(() => {
    if (host.current === null) return undefined;
    const v = new EditorView({
      doc: value,
      parent: host.current,
      extensions: [
        basicSetup, json(), lintGutter(),
        linter((v) => [...jsonParseLinter()(v), ...issueDiagnostics(v, shown.current)], { delay: 300 }),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((u) => u.docChanged && changed.current(u.state.doc.toString())),
      ],
    });
    view.current = v;
    return () => v.destroy();
    // the editor is made once per mount; a new document comes with a new key
  }, []);
  useEffect(() => {
    const v = view.current;
    if (v === undefined) return;
    shown.current = issues;
    forceLinting(v);
    const found = issueDiagnostics(v, issues);
    // the first issue is brought into view, so a person sees where to look
    if (found[0] !== undefined) v.dispatch({ selection: { anchor: found[0].from }, effects: EditorView.scrollIntoView(found[0].from, { y: 'center' }) });
  }, [issues]);
  return <div className="json-editor" ref={host} />;
}
