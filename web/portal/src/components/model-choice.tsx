import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { Model } from '../types.js';
import { useLoad } from '../use-load.js';

/** The models a key of this member may call (the gateway's list). */
export const modelList = () => api<{ data: Model[] }>('GET', '/v1/models').then((r) => r.data);

/** A form's model: the first listed until one is chosen; the select that chooses it. */
export function useModelChoice() {
  const models = useLoad(modelList, []);
  const [model, setModel] = useState('');
  const chosen = model || models.data?.[0]?.id || '';
  const select = (
    <label>
      Model
      <select name="model" value={chosen} onChange={(e) => setModel(e.currentTarget.value)}>
        {(models.data ?? []).map((m) => (
          <option key={m.id} value={m.id}>
            {m.id}
          </option>
        ))}
      </select>
    </label>
  );
  return { chosen, select, error: models.error };
}

/** Comma-separated names as a list, blanks dropped. */
export const names = (text: string): string[] =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
