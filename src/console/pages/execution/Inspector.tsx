/** One block of a run (SPEC §8): per iteration its state, attempts, time, error, resolved input and output. */
import { useState } from 'react';
import { JsonView } from '../../editor/JsonView';
import { formatMs, formatTime } from '../../hooks';
import { look } from '../../graph/status';
import { href } from '../../router';
import { iterationText } from './Timeline';
import type { BlockLog } from '../../types';

const PAGE = 20;

function Entry({ l }: { l: BlockLog }): React.JSX.Element {
  const it = l.iteration === undefined || l.iteration === null ? undefined : iterationText(l.iteration).trim();
  return (
    <article className="log-entry" data-block-id={l.blockId}>
      <p>
        <span className="pill" style={{ background: look(l.status).color }}>{look(l.status).icon} {l.status}</span>
        {it !== undefined && <> iteration <code>{it}</code></>} · attempts {l.attempts ?? 1} · {formatMs(l.durationMs)} · started {formatTime(l.startedAt)}
        {l.errorHandled ? ' · error handled by its error path' : ''}
      </p>
      {l.carriedFrom !== undefined && <p className="note carried">Kept from execution <a href={href('executions', l.carriedFrom)}>{l.carriedFrom}</a>: not run again.</p>}
      {l.error && <p className="error">{l.error.code}: {l.error.message}</p>}
      <h4>Input (resolved)</h4>
      <JsonView value={l.input ?? null} label={`${l.blockId} input`} />
      <h4>Output</h4>
      <JsonView value={l.output ?? null} label={`${l.blockId} output`} />
    </article>
  );
}

export function Inspector({ blockId, logs, onRerunFrom, canRerun }: {
  blockId: string; logs: BlockLog[]; onRerunFrom: (blockId: string) => void; canRerun: boolean;
}): React.JSX.Element {
  const mine = logs.filter((l) => l.blockId === blockId);
  // a loop of a thousand iterations would be a thousand editors: a page at a time
  const [limit, setLimit] = useState(PAGE);
  return (
    <aside className="inspector" aria-label={`Block ${blockId}`} id="inspector">
      <h3>{mine[0]?.blockName ?? blockId} <small>{mine[0]?.blockType ?? ''}</small></h3>
      {canRerun && <button type="button" id="rerun-from" onClick={() => onRerunFrom(blockId)}>Rerun from this block</button>}
      {mine.length === 0 ? <p className="empty">This block did not run.</p> : mine.slice(0, limit).map((l, i) => <Entry key={i} l={l} />)}
      {mine.length > limit && <button type="button" onClick={() => setLimit(limit + PAGE)}>Show {Math.min(PAGE, mine.length - limit)} more of {mine.length - limit}</button>}
    </aside>
  );
}
