/**
 * What a waiting execution waits for (SPEC §2.1), and the admin's decision of a pending approval
 * (SPEC §4.2 `POST /api/executions/{id}/approvals/{blockId}`), with the block's inputFormat fields.
 */
import { useState } from 'react';
import { ApiError, api, enc, explain } from '../../api';
import { formatTime } from '../../hooks';
import { href } from '../../router';
import { Field, fieldsIn, valueOf } from '../workflow/RunTab';
import { iterationText } from './Timeline';
import type { Block, Execution, WaitingEntry } from '../../types';

type Decision = 'approved' | 'rejected';

/** The sentence for a refused decision: what happened and what the person can do now. */
function refusal(err: unknown): string {
  if (err instanceof ApiError && err.code === 'NOT_WAITING') {
    return `Not recorded: this block no longer waits for a decision (${err.message}). It was decided, timed out or the execution ended: the page shows its state now.`;
  }
  if (err instanceof ApiError && err.code === 'INVALID_INPUT') {
    const where = err.issues.map((i) => `${i.path || '/'}: ${i.message}`).join('; ');
    return `Not recorded: the data does not fit the block's inputFormat (${where || err.message}). Fix the fields and decide again.`;
  }
  return explain(err);
}

function ApprovalForm({ execution, w, block, onDecided }: {
  execution: Execution; w: WaitingEntry; block: Block | undefined; onDecided: (said: string) => void;
}): React.JSX.Element {
  const fields = fieldsIn(block?.config?.inputFormat);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const decide = (decision: Decision): void => {
    // the service checks the data against the inputFormat whatever the decision
    let data: Record<string, unknown>;
    try {
      data = Object.fromEntries(fields.map((f) => [f.name, valueOf(f, values[f.name])]).filter(([, v]) => v !== undefined));
    } catch (err) {
      setProblem((err as Error).message);
      return;
    }
    setBusy(true);
    setProblem(undefined);
    api<Execution>('POST', `/api/executions/${enc(execution.id)}/approvals/${enc(w.blockId)}`, { decision, data }).then(
      // the form goes once the execution resumes: the page keeps the answer
      () => onDecided(`${decision === 'approved' ? 'Approved' : 'Rejected'} ${w.blockId}: the execution resumes on its “${decision}” path.`),
      (err: unknown) => {
        if (err instanceof ApiError && err.code === 'NOT_WAITING') onDecided(refusal(err));
        else setProblem(refusal(err));
      },
    ).finally(() => setBusy(false));
  };
  const prefix = `approval-${w.blockId}-`;
  return (
    <form className="approval-form" aria-label={`Decide ${w.blockId}`} onSubmit={(e) => { e.preventDefault(); decide('approved'); }}>
      {fields.map((f) => <Field key={f.name} f={f} idPrefix={prefix} value={values[f.name]} set={(v) => setValues({ ...values, [f.name]: v })} />)}
      <div className="toolbar">
        <button type="submit" className="approve" disabled={busy}>Approve</button>
        <button type="button" className="reject" disabled={busy} onClick={() => decide('rejected')}>Reject</button>
      </div>
      {problem !== undefined && <p className="error" role="alert" id={`${prefix}problem`}>{problem}</p>}
    </form>
  );
}

function Entry({ execution, w, blocks, onDecided }: {
  execution: Execution; w: WaitingEntry; blocks: Block[]; onDecided: (said: string) => void;
}): React.JSX.Element {
  const block = blocks.find((b) => b.id === w.blockId);
  // only a top-level approval can be decided (docs/waiting.md): one inside a loop waits for its timeout
  const decidable = w.kind === 'approval' && execution.status === 'waiting' && block !== undefined && block.parent === undefined;
  return (
    <li className="waiting-entry" data-block-id={w.blockId} data-kind={w.kind}>
      <p>
        <strong>{block?.name ?? w.blockId}</strong>{iterationText(w.iteration)} · {w.kind} since {formatTime(w.since)}
        {w.until ? <> · until {formatTime(w.until)}</> : w.kind === 'approval' ? ' · no time limit' : ''}
        {w.childExecutionId !== undefined && <> · child <a href={href('executions', w.childExecutionId)}>{w.childExecutionId}</a></>}
      </p>
      {w.message !== undefined && w.message !== '' && <p className="waiting-message">{w.message}</p>}
      {w.approveUrl !== undefined && <p><small>One-time link: <a href={w.approveUrl}>{w.approveUrl}</a></small></p>}
      {decidable && <ApprovalForm execution={execution} w={w} block={block} onDecided={onDecided} />}
      {w.kind === 'approval' && block?.parent !== undefined && <p className="hint">An approval inside a loop or parallel cannot be decided: it waits for its timeout.</p>}
    </li>
  );
}

export function WaitingPanel({ execution, blocks, onDecided }: { execution: Execution; blocks: Block[]; onDecided: (said: string) => void }): React.JSX.Element | null {
  const list = execution.waiting ?? [];
  if (list.length === 0) return null;
  return (
    <section className="waiting" aria-label="Waiting for" id="waiting">
      <h2>Waiting for</h2>
      <ul>{list.map((w) => <Entry key={`${w.blockId}${iterationText(w.iteration)}`} execution={execution} w={w} blocks={blocks} onDecided={onDecided} />)}</ul>
    </section>
  );
}
