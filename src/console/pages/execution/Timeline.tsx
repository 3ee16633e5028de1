/**
 * The run on a real time axis (SPEC §8): one bar per block and iteration, from its start to its
 * end (or to now while it runs), coloured by state; a waiting block's bar runs to now, and on
 * to its `until` (dashed) when it has one.
 */
import { useEffect, useState } from 'react';
import { formatMs } from '../../hooks';
import { look } from '../../graph/status';
import type { BlockLog, WaitingEntry } from '../../types';

const ROW = 22;
const LABEL_W = 190;
const WIDTH = 1200;

function ticks(span: number): number[] {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000, 300_000, 600_000, 3_600_000];
  const step = steps.find((s) => span / s <= 8) ?? 3_600_000;
  const out: number[] = [];
  for (let t = 0; t <= span; t += step) out.push(t);
  return out;
}

/** ` #0` for iteration 0 of its container (nested iterations: ` #1.0`), as a person counts them on the bars. */
export function iterationText(it: unknown): string {
  if (it === undefined || it === null) return '';
  const parts: string[] = [];
  for (let level: unknown = it; level !== null && typeof level === 'object'; level = (level as { outer?: unknown }).outer) {
    const index = (level as { index?: unknown }).index;
    if (index !== undefined) parts.unshift(String(index));
  }
  return parts.length > 0 ? ` #${parts.join('.')}` : ` #${typeof it === 'object' ? JSON.stringify(it) : String(it)}`;
}

/** The due time of a waiting log (ms), from the record's `waiting` list. */
function dueOf(l: BlockLog, waiting: WaitingEntry[]): number | undefined {
  if (l.status !== 'waiting') return undefined;
  const w = waiting.find((x) => x.blockId === l.blockId && JSON.stringify(x.iteration ?? null) === JSON.stringify(l.iteration ?? null));
  const due = w?.until ? Date.parse(w.until) : NaN;
  return Number.isNaN(due) ? undefined : due;
}

export function Timeline({ logs, waiting = [], onSelect, running }: {
  logs: BlockLog[]; waiting?: WaitingEntry[]; onSelect: (blockId: string) => void; running: boolean;
}): React.JSX.Element {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return undefined;
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [running]);
  const bars = logs.filter((l) => l.startedAt).sort((a, b) => Date.parse(a.startedAt ?? '') - Date.parse(b.startedAt ?? ''));
  if (bars.length === 0) return <p className="empty">No block has started yet.</p>;
  const t0 = Math.min(...bars.map((l) => Date.parse(l.startedAt ?? '')));
  const end = (l: BlockLog): number => (l.endedAt ? Date.parse(l.endedAt) : running ? now : Date.parse(l.startedAt ?? ''));
  const span = Math.max(1, ...bars.map((l) => Math.max(end(l), dueOf(l, waiting) ?? 0) - t0));
  const x = (ms: number): number => LABEL_W + (ms / span) * (WIDTH - LABEL_W - 10);
  const height = bars.length * ROW + 24;
  return (
    <svg className="timeline" viewBox={`0 0 ${WIDTH} ${height}`} width="100%" role="img" aria-label={`Timeline: ${bars.length} bars over ${formatMs(span)}`}>
      {ticks(span).map((t) => (
        <g key={t}><line x1={x(t)} x2={x(t)} y1={0} y2={height - 18} className="tick" /><text x={x(t)} y={height - 4} className="tick-label">{formatMs(t)}</text></g>
      ))}
      {bars.map((l, i) => {
        const s = Date.parse(l.startedAt ?? '') - t0;
        const w = Math.max(2, x(end(l) - t0) - x(s));
        const due = dueOf(l, waiting);
        return (
          <g key={`${l.blockId}${iterationText(l.iteration)}${i}`} className="bar" data-block-id={l.blockId} onClick={() => onSelect(l.blockId)}>
            <text x={4} y={i * ROW + 15} className="bar-label">{(l.blockName ?? l.blockId) + iterationText(l.iteration)}</text>
            <rect x={x(s)} y={i * ROW + 4} width={w} height={ROW - 8} rx={3} fill={look(l.status).color}>
              <title>{`${l.blockName ?? l.blockId}${iterationText(l.iteration)}: ${l.status}, ${formatMs(l.durationMs ?? end(l) - Date.parse(l.startedAt ?? ''))}`}</title>
            </rect>
            {due !== undefined && due > end(l) && (
              <rect x={x(end(l) - t0)} y={i * ROW + 4} width={x(due - t0) - x(end(l) - t0)} height={ROW - 8} rx={3} className="bar-due" stroke={look(l.status).color}>
                <title>{`waits until ${new Date(due).toLocaleString()}`}</title>
              </rect>
            )}
          </g>
        );
      })}
    </svg>
  );
}
