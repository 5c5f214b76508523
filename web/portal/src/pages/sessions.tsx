import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { dateTime } from '../format.js';
import { useSession } from '../session.js';
import type { SessionView } from '../types.js';
import { useLoad } from '../use-load.js';

export function SessionsPage() {
  const { signOut } = useSession();
  const sessions = useLoad(() => api<{ data: SessionView[] }>('GET', '/v1/auth/sessions'), []);
  const [error, setError] = useState<unknown>(null);
  const revoke = async (s: SessionView) => {
    setError(null);
    try {
      if (s.current) return await signOut();
      await api('DELETE', `/v1/auth/sessions/${encodeURIComponent(s.id)}`);
      sessions.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Your sessions</h1>
      <p>Every browser signed in as you. Revoking one signs that browser out at once.</p>
      <ErrorNote error={sessions.error ?? error} />
      {sessions.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Browser</th>
              <th scope="col">Address</th>
              <th scope="col">Signed in</th>
              <th scope="col">Last seen</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.data.map((s) => (
              <tr key={s.id} data-session-id={s.id}>
                <th scope="row">
                  {s.userAgent ?? 'unknown'}
                  {s.current && <span class="badge active"> this browser</span>}
                </th>
                <td>{s.ip ?? '—'}</td>
                <td>{dateTime(s.createdAt)}</td>
                <td>{dateTime(s.lastSeenAt)}</td>
                <td>{dateTime(s.expiresAt)}</td>
                <td>
                  <button type="button" class="danger" onClick={() => revoke(s)}>
                    {s.current ? 'Sign out' : 'Revoke'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
