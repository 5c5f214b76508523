import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { List } from '../types.js';

/** A `datetime-local` value (the browser's time) as the ISO instant the API filters on. */
export const instant = (local: string): string | undefined => {
  if (!local) return undefined;
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
};

/** Pages of a cursor list, the next one appended on "Load more". */
export function usePages<T>(path: string, params: Record<string, string | undefined>) {
  const key = path + query(params);
  const [state, setState] = useState<{
    key: string;
    rows: T[];
    next: string | null;
    error: unknown;
    busy: boolean;
  }>({ key: '', rows: [], next: null, error: null, busy: false });
  const load = async (cursor: string | null) => {
    setState((s) => ({ ...s, busy: true, error: null }));
    try {
      const page = await api<List<T>>('GET', path + query({ ...params, limit: 50, cursor }));
      setState((s) => ({
        key,
        rows: cursor && s.key === key ? [...s.rows, ...page.data] : page.data,
        next: page.nextCursor,
        error: null,
        busy: false,
      }));
    } catch (error) {
      setState((s) => ({ ...s, key, error, busy: false }));
    }
  };
  // The key names every input of the load.
  useEffect(() => {
    void load(null);
  }, [key]);
  return { ...state, more: () => load(state.next), reload: () => load(null) };
}

export function TimeFilters(props: { from: string; to: string; set: (from: string, to: string) => void }) {
  return (
    <>
      <label>
        From
        <input
          type="datetime-local"
          name="from"
          value={props.from}
          onChange={(e) => props.set(e.currentTarget.value, props.to)}
        />
      </label>
      <label>
        To
        <input
          type="datetime-local"
          name="to"
          value={props.to}
          onChange={(e) => props.set(props.from, e.currentTarget.value)}
        />
      </label>
    </>
  );
}

export function More(props: {
  next: string | null;
  busy: boolean;
  more: () => void;
  count: number;
  noun: string;
}) {
  return (
    <p class="actions">
      <span role="status">
        {props.busy
          ? 'Loading…'
          : `${props.count} ${props.count === 1 ? props.noun.replace(/s$/, '') : props.noun}${props.next ? ' shown' : ''}`}
      </span>
      {props.next && (
        <button type="button" onClick={props.more} disabled={props.busy}>
          Load more
        </button>
      )}
    </p>
  );
}
