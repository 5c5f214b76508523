import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Dialog } from '../components/dialog.js';
import { ErrorNote } from '../components/error-note.js';
import type { ApiKey, List, Member } from '../types.js';
import { useLoad } from '../use-load.js';

interface Shares {
  id: string;
  owner: string;
  sharedWith: string[];
}
interface Principal {
  id: string;
  label: string;
}

/**
 * Keys and members a credential can be shared with. Listing keys and members needs an owner or admin;
 * a member who may not list them still sees (and keeps) the current shares by id.
 */
async function candidates(
  credentialId: string,
): Promise<{ shares: Shares; people: Principal[]; note: string }> {
  const [shares, keys, members] = await Promise.all([
    api<Shares>('GET', `/api/v1/credentials/${encodeURIComponent(credentialId)}/share`),
    api<List<ApiKey>>('GET', '/v1/api-keys?limit=100').then(
      (r) => r.data,
      () => null,
    ),
    api<{ data: Member[] }>('GET', '/v1/members').then(
      (r) => r.data,
      () => null,
    ),
  ]);
  const people: Principal[] = [
    ...(members ?? []).map((m) => ({ id: `member:${m.id}`, label: `${m.email} (${m.role})` })),
    ...(keys ?? [])
      .filter((k) => k.status === 'active')
      .map((k) => ({ id: `key:${k.id}`, label: `key ${k.name}` })),
  ];
  for (const id of shares.sharedWith) if (!people.some((p) => p.id === id)) people.push({ id, label: id });
  const note = keys && members ? '' : 'Only owners and admins can list every key and member.';
  return { shares, people: people.filter((p) => p.id !== shares.owner), note };
}

/** n8n's credential sharing: the workflows these keys and members save may use the credential. */
export function ShareDialog(props: { credential: { id: string; name: string }; onClose: () => void }) {
  const loaded = useLoad(() => candidates(props.credential.id), [props.credential.id]);
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const selected = chosen ?? new Set(loaded.data?.shares.sharedWith ?? []);
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('PUT', `/api/v1/credentials/${encodeURIComponent(props.credential.id)}/share`, {
        body: { shareWithIds: [...selected] },
      });
      props.onClose();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Share ${props.credential.name}`} onClose={props.onClose}>
      <form onSubmit={save}>
        <p class="hint">
          Workflows saved by whom you tick may use this credential; they never see its values.
        </p>
        <ErrorNote error={loaded.error ?? error} />
        {loaded.data?.note && <p class="notice">{loaded.data.note}</p>}
        <fieldset>
          <legend>Shared with</legend>
          {(loaded.data?.people ?? []).map((p) => (
            <label key={p.id} class="inline">
              <input
                type="checkbox"
                name="shareWith"
                value={p.id}
                checked={selected.has(p.id)}
                onChange={(e) => {
                  const next = new Set(selected);
                  if (e.currentTarget.checked) next.add(p.id);
                  else next.delete(p.id);
                  setChosen(next);
                }}
              />
              {p.label}
            </label>
          ))}
          {loaded.data?.people.length === 0 && <p>Nobody else to share with.</p>}
        </fieldset>
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || !loaded.data}>
            Save shares
          </button>
        </div>
      </form>
    </Dialog>
  );
}
