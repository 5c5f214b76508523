import { useMemo, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorNote } from '../components/error-note.js';
import { SecretDialog } from '../components/secret-dialog.js';
import { dateTime, day } from '../format.js';
import { href } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { ApiKey, ApiKeyWithSecret, List } from '../types.js';
import { useLoad } from '../use-load.js';
import { CreateKeyDialog, EditKeyDialog, RotateKeyDialog } from './key-dialogs.js';

/** Every key of the account, page by page (an account holds dozens, not millions). */
export async function allKeys(): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const page: List<ApiKey> = await api('GET', `/v1/api-keys${query({ limit: 100, cursor })}`);
    keys.push(...page.data);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return keys;
}

type SortField = 'name' | 'type' | 'role' | 'expiresAt' | 'lastUsedAt' | 'status' | 'createdAt';
const COLUMNS: Array<[SortField | null, string]> = [
  ['name', 'Name'],
  [null, 'Key'],
  ['type', 'Type'],
  ['role', 'Role'],
  [null, 'Services'],
  [null, 'Scopes'],
  [null, 'Allowed IPs'],
  ['expiresAt', 'Expires'],
  ['lastUsedAt', 'Last used'],
  ['status', 'Status'],
];

type Open =
  | { kind: 'create' }
  | { kind: 'edit' | 'rotate' | 'revoke'; key: ApiKey }
  | { kind: 'secret'; title: string; key: ApiKeyWithSecret }
  | null;

export function KeysPage() {
  const { session } = useSession();
  const role = session.member.role;
  const manage = can.manage(role);
  const keys = useLoad(allKeys, []);
  const [filter, setFilter] = useState('');
  const [status, setStatus] = useState('active');
  const [sort, setSort] = useState<{ field: SortField; desc: boolean }>({ field: 'createdAt', desc: true });
  const [open, setOpen] = useState<Open>(null);

  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const rows = (keys.data ?? []).filter(
      (k) =>
        (status === '' || k.status === status) &&
        (!needle ||
          [k.name, k.prefix, k.last4, k.role, k.type, ...k.services, ...k.scopes].some((v) =>
            v.toLowerCase().includes(needle),
          )),
    );
    const value = (k: ApiKey) => k[sort.field] ?? '';
    rows.sort((a, b) => {
      const order = String(value(a)).localeCompare(String(value(b)));
      return sort.desc ? -order : order;
    });
    return rows;
  }, [keys.data, filter, status, sort]);

  const sortBy = (field: SortField) => setSort((s) => ({ field, desc: s.field === field ? !s.desc : false }));

  return (
    <section aria-labelledby="keys-title">
      <div class="title-row">
        <h1 id="keys-title">API keys</h1>
        <button
          type="button"
          class="primary"
          disabled={!manage}
          aria-describedby={manage ? undefined : 'create-refused'}
          onClick={() => setOpen({ kind: 'create' })}
        >
          Create key
        </button>
      </div>
      {!manage && (
        <p id="create-refused" class="notice">
          {refusal(role, 'create or change keys')}
        </p>
      )}
      <div class="filters">
        <label>
          Filter
          <input
            type="search"
            name="filter"
            placeholder="name, prefix, role, service…"
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
        </label>
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="active">active</option>
            <option value="expired">expired</option>
            <option value="revoked">revoked</option>
          </select>
        </label>
      </div>
      <ErrorNote error={keys.error} />
      {keys.data && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">
              {shown.length} of {keys.data.length} keys
            </caption>
            <thead>
              <tr>
                {COLUMNS.map(([field, label]) => (
                  <th
                    key={label}
                    scope="col"
                    aria-sort={
                      field && sort.field === field ? (sort.desc ? 'descending' : 'ascending') : undefined
                    }
                  >
                    {field ? (
                      <button type="button" class="sort" onClick={() => sortBy(field)}>
                        {label}
                        <span aria-hidden="true">
                          {sort.field === field ? (sort.desc ? ' ▼' : ' ▲') : ''}
                        </span>
                      </button>
                    ) : (
                      label
                    )}
                  </th>
                ))}
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <th scope="row">{k.name}</th>
                  <td>
                    <code>
                      {k.prefix}…{k.last4}
                    </code>
                  </td>
                  <td>{k.type}</td>
                  <td>{k.role}</td>
                  <td>{k.services.join(', ')}</td>
                  <td>{k.scopes.length ? k.scopes.join(', ') : '—'}</td>
                  <td>{k.allowedIps.length ? k.allowedIps.join(', ') : 'any'}</td>
                  <td title={k.expiresAt}>{day(k.expiresAt)}</td>
                  <td title={k.lastUsedAt ?? ''}>{k.lastUsedAt ? dateTime(k.lastUsedAt) : 'never'}</td>
                  <td>
                    <span class={`badge ${k.status}`}>{k.status}</span>
                  </td>
                  <td class="row-actions">
                    <a
                      href={`${href('usage')}?keyId=${encodeURIComponent(k.id)}`}
                      aria-label={`Usage of ${k.name}`}
                    >
                      Usage
                    </a>
                    <CopyButton value={k.id} label="Copy id" name={`Copy the id of ${k.name}`} />
                    {manage && k.status !== 'revoked' && (
                      <>
                        <button
                          type="button"
                          onClick={() => setOpen({ kind: 'edit', key: k })}
                          aria-label={`Edit ${k.name}`}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          onClick={() => setOpen({ kind: 'rotate', key: k })}
                          aria-label={`Rotate ${k.name}`}
                        >
                          Rotate
                        </button>
                        <button
                          type="button"
                          class="danger"
                          onClick={() => setOpen({ kind: 'revoke', key: k })}
                          aria-label={`Revoke ${k.name}`}
                        >
                          Revoke
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {shown.length === 0 && <p>No keys match.</p>}
        </div>
      )}

      {open?.kind === 'create' && (
        <CreateKeyDialog
          onClose={() => setOpen(null)}
          onCreated={(key) => {
            setOpen({ kind: 'secret', title: 'Your new API key', key });
            keys.reload();
          }}
        />
      )}
      {open?.kind === 'edit' && (
        <EditKeyDialog apiKey={open.key} onSaved={keys.reload} onClose={() => setOpen(null)} />
      )}
      {open?.kind === 'rotate' && (
        <RotateKeyDialog
          apiKey={open.key}
          onClose={() => setOpen(null)}
          onRotated={(key) => {
            setOpen({ kind: 'secret', title: 'The rotated key’s new value', key });
            keys.reload();
          }}
        />
      )}
      {open?.kind === 'revoke' && (
        <ConfirmDialog
          title={`Revoke key ${open.key.name}?`}
          confirmLabel="Revoke key"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await api('DELETE', `/v1/api-keys/${encodeURIComponent(open.key.id)}`);
            keys.reload();
          }}
        >
          <p>
            Every request with{' '}
            <code>
              {open.key.prefix}…{open.key.last4}
            </code>{' '}
            is refused (401) from now on. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
      {open?.kind === 'secret' && (
        <SecretDialog
          title={open.title}
          label="Key value"
          value={open.key.key}
          warning="This is the only time the key is shown. Copy it now and keep it somewhere safe: the platform stores only a hash and cannot show it again."
          onClose={() => setOpen(null)}
        />
      )}
    </section>
  );
}
