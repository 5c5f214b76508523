import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Dialog } from '../components/dialog.js';
import { ErrorNote } from '../components/error-note.js';
import type { ApiKey, ApiKeyWithSecret, KeyType } from '../types.js';
import { useSubmit } from '../use-submit.js';
import { grantOf, type KeyDraft, KeyFields, listOf, quotaOf } from './key-fields.js';

function Buttons(props: { busy: boolean; submit: string; onCancel: () => void }) {
  return (
    <div class="actions">
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
      <button type="submit" class="primary" disabled={props.busy}>
        {props.submit}
      </button>
    </div>
  );
}

export function CreateKeyDialog(props: { onCreated: (key: ApiKeyWithSecret) => void; onClose: () => void }) {
  const [draft, setDraft] = useState<KeyDraft>({
    name: '',
    // Least privilege: no service until one is chosen; "All services" is a choice of its own.
    services: [],
    role: 'Reader',
    scopes: '',
    allowedIps: '',
    dailyQuota: '',
  });
  const [type, setType] = useState<KeyType>('development');
  const [expires, setExpires] = useState('');
  const set = (patch: Partial<KeyDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const form = useSubmit(async () => {
    const quota = quotaOf(draft.dailyQuota);
    const body = {
      ...grantOf(draft),
      type,
      ...(quota !== null ? { dailyQuota: quota } : {}),
      // The chosen day's end, UTC: the key works through that whole day.
      ...(expires ? { expiresAt: `${expires}T23:59:59.999Z` } : {}),
    };
    props.onCreated(await api<ApiKeyWithSecret>('POST', '/v1/api-keys', { body }));
  });
  return (
    <Dialog title="Create an API key" onClose={props.onClose}>
      <form onSubmit={form.onSubmit}>
        <fieldset>
          <legend>Type</legend>
          {(['development', 'production'] as const).map((t) => (
            <label class="inline" key={t}>
              <input type="radio" name="type" value={t} checked={type === t} onChange={() => setType(t)} />
              {t}
            </label>
          ))}
        </fieldset>
        <KeyFields
          draft={draft}
          set={set}
          quotaHint="Empty: the default of the key's type (development 5,000, production 50,000 unless configured)."
        />
        <label>
          Expires on
          <input
            type="date"
            name="expiresAt"
            aria-describedby="expiry-hint"
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        </label>
        <p id="expiry-hint" class="hint">
          Empty: production keys 1 year, development keys 90 days.
        </p>
        <ErrorNote error={form.error} />
        <Buttons busy={form.busy} submit="Create key" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

/** Sends only what changed: an untouched quota stays the type's default rather than becoming fixed. */
export function EditKeyDialog(props: { apiKey: ApiKey; onSaved: () => void; onClose: () => void }) {
  const k = props.apiKey;
  const initial: KeyDraft = {
    name: k.name,
    services: k.services,
    role: k.role,
    scopes: k.scopes.join('\n'),
    allowedIps: k.allowedIps.join('\n'),
    dailyQuota: String(k.dailyQuota),
  };
  const [draft, setDraft] = useState(initial);
  const set = (patch: Partial<KeyDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const form = useSubmit(async () => {
    const next = grantOf(draft);
    const before = grantOf(initial);
    const body: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(next))
      if (JSON.stringify(value) !== JSON.stringify(before[field])) body[field] = value;
    // Scopes go with the role: a role change to Custom needs them even when the text did not change.
    if (draft.role === 'Custom' && body.role) body.scopes = listOf(draft.scopes);
    if (draft.dailyQuota !== initial.dailyQuota) body.dailyQuota = quotaOf(draft.dailyQuota);
    if (Object.keys(body).length === 0) throw new Error('Nothing changed.');
    await api<ApiKey>('PATCH', `/v1/api-keys/${encodeURIComponent(k.id)}`, { body });
    props.onSaved();
    props.onClose();
  });
  return (
    <Dialog title={`Edit key ${k.name}`} onClose={props.onClose}>
      <form onSubmit={form.onSubmit}>
        <KeyFields draft={draft} set={set} quotaHint="Empty: back to the default of the key's type." />
        <ErrorNote error={form.error} />
        <Buttons busy={form.busy} submit="Save changes" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

const GRACE_PERIODS: Array<[number, string]> = [
  [0, 'None: the old value stops now'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
  [7 * 86_400, '7 days'],
];

export function RotateKeyDialog(props: {
  apiKey: ApiKey;
  onRotated: (key: ApiKeyWithSecret) => void;
  onClose: () => void;
}) {
  const [grace, setGrace] = useState(3600);
  const form = useSubmit(async () => {
    const body = { gracePeriodSeconds: grace };
    props.onRotated(
      await api<ApiKeyWithSecret>('POST', `/v1/api-keys/${encodeURIComponent(props.apiKey.id)}/rotate`, {
        body,
      }),
    );
  });
  return (
    <Dialog title={`Rotate key ${props.apiKey.name}`} onClose={props.onClose}>
      <form onSubmit={form.onSubmit}>
        <p>
          A new value replaces this key's. Callers still using the old value keep working for the grace
          period.
        </p>
        <label>
          Grace period for the old value
          <select
            name="gracePeriodSeconds"
            value={grace}
            onChange={(e) => setGrace(Number(e.currentTarget.value))}
          >
            {GRACE_PERIODS.map(([seconds, label]) => (
              <option key={seconds} value={seconds}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <ErrorNote error={form.error} />
        <Buttons busy={form.busy} submit="Rotate" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
