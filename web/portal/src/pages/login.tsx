import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import type { SignedIn } from '../types.js';
import { useSubmit } from '../use-submit.js';

type Done = (session: SignedIn) => void;

const PASSWORD_HINT = 'At least 12 characters; not a common password and not built from your email.';

export function LoginPage({ onSignedIn }: { onSignedIn: Done }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const form = useSubmit(async () => {
    onSignedIn(await api<SignedIn>('POST', '/v1/auth/login', { body: { email, password }, session: false }));
  });
  return (
    <form onSubmit={form.onSubmit} aria-labelledby="login-title">
      <h1 id="login-title">Sign in</h1>
      <label>
        Email
        <input
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </label>
      <label>
        Password
        <input
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </label>
      <ErrorNote error={form.error} />
      <button type="submit" class="primary" disabled={form.busy}>
        Sign in
      </button>
    </form>
  );
}

/** Password twice; the server checks its rules and says what is wrong. */
function NewPassword(props: { password: string; confirm: string; set: (p: string, c: string) => void }) {
  return (
    <>
      <label>
        New password
        <input
          type="password"
          name="new-password"
          autoComplete="new-password"
          required
          minLength={12}
          aria-describedby="password-hint"
          value={props.password}
          onInput={(e) => props.set(e.currentTarget.value, props.confirm)}
        />
      </label>
      <p id="password-hint" class="hint">
        {PASSWORD_HINT}
      </p>
      <label>
        Repeat the password
        <input
          type="password"
          name="confirm-password"
          autoComplete="new-password"
          required
          value={props.confirm}
          onInput={(e) => props.set(props.password, e.currentTarget.value)}
        />
      </label>
    </>
  );
}

const MISMATCH = new Error('The two passwords differ.');
const NO_TOKEN = new Error('This page needs the link you were given: it carries a one-time token.');

export function SetupPage({ token, onSignedIn }: { token: string; onSignedIn: Done }) {
  const [pw, setPw] = useState({ password: '', confirm: '' });
  const form = useSubmit(async () => {
    if (!token) throw NO_TOKEN;
    if (pw.password !== pw.confirm) throw MISMATCH;
    onSignedIn(
      await api<SignedIn>('POST', '/v1/auth/setup', {
        body: { token, password: pw.password },
        session: false,
      }),
    );
  });
  return (
    <form onSubmit={form.onSubmit} aria-labelledby="setup-title">
      <h1 id="setup-title">Set the owner's password</h1>
      <p>Choose the password of the platform owner's account. The link works once.</p>
      <NewPassword {...pw} set={(password, confirm) => setPw({ password, confirm })} />
      <ErrorNote error={form.error ?? (token ? null : NO_TOKEN)} />
      <button type="submit" class="primary" disabled={form.busy || !token}>
        Set password and sign in
      </button>
    </form>
  );
}

export function InvitePage({ token, onSignedIn }: { token: string; onSignedIn: Done }) {
  const [name, setName] = useState('');
  const [pw, setPw] = useState({ password: '', confirm: '' });
  const form = useSubmit(async () => {
    if (!token) throw NO_TOKEN;
    if (pw.password !== pw.confirm) throw MISMATCH;
    onSignedIn(
      await api<SignedIn>('POST', '/v1/auth/invites/accept', {
        body: { token, name, password: pw.password },
        session: false,
      }),
    );
  });
  return (
    <form onSubmit={form.onSubmit} aria-labelledby="invite-title">
      <h1 id="invite-title">Accept the invitation</h1>
      <label>
        Your name
        <input
          type="text"
          name="name"
          autoComplete="name"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <NewPassword {...pw} set={(password, confirm) => setPw({ password, confirm })} />
      <ErrorNote error={form.error ?? (token ? null : NO_TOKEN)} />
      <button type="submit" class="primary" disabled={form.busy || !token}>
        Join and sign in
      </button>
    </form>
  );
}
