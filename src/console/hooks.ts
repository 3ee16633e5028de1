import { useCallback, useEffect, useState } from 'react';
import { explain } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  /** the raw error, to tell a missing route from another failure */
  failure: unknown;
  reload: () => void;
}

/** Loads once per key and on reload(); keeps the last data while reloading (no flicker). */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setFailure(undefined);
      },
      (err: unknown) => live && setFailure(err ?? new Error('failed')),
    );
    return () => {
      live = false;
    };
    // load is a fresh closure each render; the key says when it means something new
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error: failure === undefined ? undefined : explain(failure), failure, reload };
}

export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
