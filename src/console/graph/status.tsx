/** Block states as colours and icons (SPEC §8), one table for the graph, the timeline and the legend. */
import type { BlockStatus } from '../types';

export const STATUS_LOOK: Record<BlockStatus, { color: string; icon: string; label: string }> = {
  pending: { color: '#94a3b8', icon: '○', label: 'not run yet' },
  running: { color: '#2563eb', icon: '▶', label: 'running' },
  waiting: { color: '#d97706', icon: '‖', label: 'waiting' },
  completed: { color: '#16a34a', icon: '✓', label: 'completed' },
  failed: { color: '#dc2626', icon: '✕', label: 'failed' },
  skipped: { color: '#a8a29e', icon: '↷', label: 'skipped' },
  cancelled: { color: '#7c3aed', icon: '⊘', label: 'cancelled' },
};

export function look(status: string | undefined): { color: string; icon: string; label: string } {
  return STATUS_LOOK[(status ?? 'pending') as BlockStatus] ?? STATUS_LOOK.pending;
}

export function Legend(): React.JSX.Element {
  return (
    <ul className="legend" aria-label="Block states">
      {Object.entries(STATUS_LOOK).map(([status, l]) => (
        <li key={status}>
          <span className="legend-dot" style={{ background: l.color }} aria-hidden="true">{l.icon}</span> {l.label}
        </li>
      ))}
      <li><span className="legend-dot issue" aria-hidden="true">!</span> has an issue</li>
      <li><span className="legend-dot disabled" aria-hidden="true">∅</span> disabled</li>
    </ul>
  );
}
