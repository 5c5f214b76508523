import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { More, usePages } from '../components/paged-list.js';
import { dateTime } from '../format.js';
import { can, refusal, useSession } from '../session.js';
import { ShareDialog } from './credential-share.js';

interface Credential {
  id: string;
  name: string;
  type: string;
  owner: string;
  createdAt: string;
  updatedAt: string;
}
interface DataSchema {
  properties: Record<string, { type: string }>;
  required: string[];
}

/** Types people reach for first; any other type n8n names works too (the server says if it has it). */
const COMMON_TYPES = [
  'httpHeaderAuth',
  'httpBasicAuth',
  'httpBearerAuth',
  'httpQueryAuth',
  'openAiApi',
  'ollamaApi',
  'anthropicApi',
  'postgres',
  'mySql',
  'redis',
  'smtp',
  'imap',
  'sftp',
  'aws',
];
/** Fields that are not secret (addresses, names); every other value is typed into a password box. */
const PLAIN =
  /^(name|user|username|host|port|database|url|baseUrl|region|domain|email|clientId|accountId|sslMode|ssl|secure|protocol)$/i;

function NewCredential({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('');
  const [schema, setSchema] = useState<DataSchema | null>(null);
  const [data, setData] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const loadFields = async () => {
    setError(null);
    setSchema(null);
    if (!type.trim()) return;
    try {
      setSchema(
        await api<DataSchema>('GET', `/api/v1/credentials/schema/${encodeURIComponent(type.trim())}`),
      );
      setData({});
    } catch (e) {
      setError(e);
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Empty optional fields are left out rather than stored as empty secrets.
      const filled = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== ''));
      await api('POST', '/api/v1/credentials', {
        body: { name: name.trim(), type: type.trim(), data: filled },
      });
      setName('');
      setType('');
      setSchema(null);
      setData({});
      onCreated();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={create} aria-labelledby="new-credential-title">
      <h2 id="new-credential-title">New credential</h2>
      <div class="filters">
        <label>
          Name
          <input
            name="name"
            required
            maxLength={128}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          Type
          <input
            name="type"
            list="credential-types"
            required
            value={type}
            onInput={(e) => setType(e.currentTarget.value)}
            onChange={loadFields}
          />
          <datalist id="credential-types">
            {COMMON_TYPES.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
        <button type="button" onClick={loadFields}>
          Show fields
        </button>
      </div>
      {schema && (
        <fieldset>
          <legend>{type} fields</legend>
          <p class="hint">Stored encrypted; the values are never shown again, not even to you.</p>
          {Object.keys(schema.properties).map((field) => (
            <label key={field}>
              {field}
              {schema.required.includes(field) ? ' (required)' : ''}
              <input
                name={field}
                type={PLAIN.test(field) ? 'text' : 'password'}
                autocomplete="off"
                required={schema.required.includes(field)}
                value={data[field] ?? ''}
                onInput={(e) => {
                  const value = e.currentTarget.value;
                  setData((d) => ({ ...d, [field]: value }));
                }}
              />
            </label>
          ))}
        </fieldset>
      )}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || !schema}>
          Create credential
        </button>
      </div>
    </form>
  );
}

/** Credentials of the account: create with fields from the type's schema, test, share, delete; secrets never come back. */
export function CredentialsPage() {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const list = usePages<Credential>('/api/v1/credentials', {});
  const [results, setResults] = useState<Record<string, string>>({});
  const [deleting, setDeleting] = useState<Credential | null>(null);
  const [sharing, setSharing] = useState<Credential | null>(null);
  const [error, setError] = useState<unknown>(null);
  const test = async (c: Credential) => {
    setResults((r) => ({ ...r, [c.id]: 'Testing…' }));
    try {
      const result = await api<{ status: string; message: string }>(
        'POST',
        `/api/v1/credentials/${encodeURIComponent(c.id)}/test`,
        { body: {} },
      );
      setResults((r) => ({ ...r, [c.id]: `${result.status}: ${result.message}` }));
    } catch (e) {
      setResults((r) => ({ ...r, [c.id]: e instanceof Error ? e.message : String(e) }));
    }
  };
  return (
    <section aria-labelledby="credentials-title">
      <div class="title-row">
        <h1 id="credentials-title">Credentials</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      {writable ? (
        <NewCredential onCreated={list.reload} />
      ) : (
        <p class="notice">{refusal(session.member.role, 'create or delete credentials')}</p>
      )}
      <ErrorNote error={list.error ?? error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Owner</th>
              <th scope="col">Updated</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.rows.map((c) => (
              <tr key={c.id} data-credential={c.name}>
                <th scope="row">{c.name}</th>
                <td>
                  <code>{c.type}</code>
                </td>
                <td>
                  <code>{c.owner}</code>
                </td>
                <td title={c.updatedAt}>{dateTime(c.updatedAt)}</td>
                <td>
                  <button type="button" onClick={() => test(c)} aria-label={`Test ${c.name}`}>
                    Test
                  </button>{' '}
                  <button
                    type="button"
                    disabled={!writable}
                    aria-label={`Share ${c.name}`}
                    onClick={() => setSharing(c)}
                  >
                    Share
                  </button>{' '}
                  <button
                    type="button"
                    class="danger"
                    disabled={!writable}
                    aria-label={`Delete ${c.name}`}
                    onClick={() => setDeleting(c)}
                  >
                    Delete
                  </button>
                  {results[c.id] && (
                    <span role="status" class="hint">
                      {' '}
                      {results[c.id]}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!list.busy && list.rows.length === 0 && !list.error && <p>No credentials yet.</p>}
      <More next={list.next} busy={list.busy} more={list.more} count={list.rows.length} noun="credentials" />
      {sharing && <ShareDialog credential={sharing} onClose={() => setSharing(null)} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          confirmLabel="Delete credential"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            setError(null);
            await api('DELETE', `/api/v1/credentials/${encodeURIComponent(deleting.id)}`);
            list.reload();
          }}
        >
          <p>Workflows that use it stop working until they get another.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
