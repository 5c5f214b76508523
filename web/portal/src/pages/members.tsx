import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { SecretDialog } from '../components/secret-dialog.js';
import { dateTime, day } from '../format.js';
import { can, refusal, useSession } from '../session.js';
import type { Invite, Member, MemberRole } from '../types.js';
import { useLoad } from '../use-load.js';

/** Roles an owner or admin may give; nobody makes another owner. */
const GIVEN_ROLES: MemberRole[] = ['admin', 'developer', 'viewer'];

function RoleCell(props: { member: Member; editable: boolean; onSaved: () => void }) {
  const m = props.member;
  const [role, setRole] = useState<MemberRole>(m.role);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  if (!props.editable || m.role === 'owner') return <span>{m.role}</span>;
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await api<Member>('PATCH', `/v1/members/${encodeURIComponent(m.id)}`, { body: { role } });
      props.onSaved();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="inline-form">
      <select
        aria-label={`Role of ${m.email}`}
        value={role}
        onChange={(e) => setRole(e.currentTarget.value as MemberRole)}
      >
        {GIVEN_ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <button
        type="button"
        disabled={busy || role === m.role}
        onClick={save}
        aria-label={`Save role of ${m.email}`}
      >
        Save
      </button>
      <ErrorNote error={error} />
    </span>
  );
}

export function MembersPage() {
  const { session } = useSession();
  const manage = can.manage(session.member.role);
  const members = useLoad(() => api<{ data: Member[] }>('GET', '/v1/members'), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>('developer');
  const [inviteError, setInviteError] = useState<unknown>(null);
  const [invite, setInvite] = useState<Invite | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);

  const sendInvite = async (event: Event) => {
    event.preventDefault();
    setInviteError(null);
    try {
      setInvite(await api<Invite>('POST', '/v1/members/invites', { body: { email, role } }));
      setEmail('');
    } catch (e) {
      setInviteError(e);
    }
  };

  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <ErrorNote error={members.error} />
      {members.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Member since</th>
              {manage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.data.data.map((m) => (
              <tr key={m.id}>
                <th scope="row">{m.email}</th>
                <td>{m.name}</td>
                <td>
                  <RoleCell member={m} editable={manage} onSaved={members.reload} />
                </td>
                <td>{day(m.createdAt)}</td>
                {manage && (
                  <td>
                    {m.role !== 'owner' && m.id !== session.member.id && (
                      <button
                        type="button"
                        class="danger"
                        onClick={() => setRemoving(m)}
                        aria-label={`Remove ${m.email}`}
                      >
                        Remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Invite a member</h2>
      {manage ? (
        <form onSubmit={sendInvite} class="row-form">
          <label>
            Email
            <input
              type="email"
              name="email"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
          <label>
            Role
            <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as MemberRole)}>
              {GIVEN_ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary">
            Create invite link
          </button>
        </form>
      ) : (
        <p class="notice">{refusal(session.member.role, 'invite members')}</p>
      )}
      <ErrorNote error={inviteError} />

      {invite && (
        <SecretDialog
          title={`Invitation for ${invite.email}`}
          label="Invite link"
          value={invite.inviteUrl}
          warning={`Send this link to ${invite.email} yourself: it is shown only now, works once, and expires ${dateTime(invite.expiresAt)}.`}
          onClose={() => {
            setInvite(null);
            members.reload();
          }}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove member"
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            await api('DELETE', `/v1/members/${encodeURIComponent(removing.id)}`);
            members.reload();
          }}
        >
          <p>They lose access at once: every session of theirs ends.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
