/**
 * The definition editor beside the graph it describes: a save that the service refuses shows
 * each issue at its place in the text and on its block; a save that passes is a new version.
 */
import { useMemo, useState } from 'react';
import { ApiError, api, enc, explain, type ApiIssue } from '../../api';
import { JsonEditor } from '../../editor/JsonEditor';
import { Graph } from '../../graph/Graph';
import { issuesByBlock } from '../../issues';
import type { Block, Connection, Workflow } from '../../types';

export function editable(w: Workflow): string {
  const { version: _v, createdAt: _c, updatedAt: _u, ...definition } = w;
  return JSON.stringify(definition, null, 2);
}

function parse(text: string): { doc?: unknown; error?: string } {
  try {
    return { doc: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function graphOf(doc: unknown, fallback: Workflow): { blocks: Block[]; connections: Connection[] } {
  const d = doc as Partial<Workflow> | undefined;
  return Array.isArray(d?.blocks) && Array.isArray(d.connections)
    ? { blocks: d.blocks.filter((b) => typeof b?.id === 'string'), connections: d.connections }
    : { blocks: fallback.blocks, connections: fallback.connections };
}

export function EditTab({ workflow, onSaved }: { workflow: Workflow; onSaved: () => void }): React.JSX.Element {
  const [text, setText] = useState(() => editable(workflow));
  const [issues, setIssues] = useState<ApiIssue[]>([]);
  const [note, setNote] = useState<{ ok: boolean; text: string } | undefined>();
  const parsed = useMemo(() => parse(text), [text]);
  const graph = useMemo(() => graphOf(parsed.doc, workflow), [parsed.doc, workflow]);
  const save = (): void => {
    if (parsed.error !== undefined) {
      setNote({ ok: false, text: `The definition is not valid JSON (${parsed.error}): fix the part marked in red, then save.` });
      return;
    }
    api<Workflow>('PUT', `/api/workflows/${enc(workflow.id)}`, parsed.doc).then(
      (saved) => {
        setIssues([]);
        setNote({ ok: true, text: `Saved as version ${saved.version}.` });
        onSaved();
      },
      (err: unknown) => {
        setIssues(err instanceof ApiError ? err.issues : []);
        setNote({ ok: false, text: err instanceof ApiError && err.issues.length > 0
          ? `Not saved: ${err.issues.length} issue(s), marked in the editor and on the blocks. Fix them and save again.` : `Not saved: ${explain(err)}` });
      },
    );
  };
  return (
    <div className="edit-tab">
      <div className="edit-pane">
        <div className="toolbar">
          <button type="button" id="save" onClick={save}>Save as new version</button>
          <button type="button" onClick={() => { setText(editable(workflow)); setIssues([]); setNote(undefined); }}>Discard changes</button>
          {note && <span className={note.ok ? 'ok' : 'error'} role="status" id="save-status">{note.text}</span>}
        </div>
        <JsonEditor key={workflow.version} value={text} onChange={setText} issues={issues} label="Workflow definition (JSON)" />
        {issues.length > 0 && (
          <ul className="issues" aria-label="Validation issues">{issues.map((i) => <li key={`${i.path}${i.message}`}><code>{i.path}</code> {i.message}</li>)}</ul>
        )}
      </div>
      <Graph blocks={graph.blocks} connections={graph.connections} issues={issuesByBlock(parsed.doc, issues)} />
    </div>
  );
}
