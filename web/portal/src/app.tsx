import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, setCsrfToken, whenUnauthorized } from './api.js';
import { AgentPage } from './pages/agent.js';
import { AgentsPage } from './pages/agents.js';
import { CredentialsPage } from './pages/credentials.js';
import { ExecutionPage } from './pages/execution.js';
import { ExecutionsPage } from './pages/executions.js';
import { FlowPage } from './pages/flow.js';
import { FlowsPage } from './pages/flows.js';
import { KeysPage } from './pages/keys.js';
import { KnowledgeDocumentPage, KnowledgePage } from './pages/knowledge.js';
import { InvitePage, LoginPage, SetupPage } from './pages/login.js';
import { AuditPage, RequestLogPage } from './pages/logs.js';
import { MembersPage } from './pages/members.js';
import { ModelCallsPage } from './pages/model-calls.js';
import { PlaygroundPage } from './pages/playground.js';
import { SessionsPage } from './pages/sessions.js';
import { UsagePage } from './pages/usage.js';
import { WorkflowPage } from './pages/workflow.js';
import { WorkflowImportPage } from './pages/workflow-json.js';
import { WorkflowsPage } from './pages/workflows.js';
import { href, navigate, type Route, useRoute } from './route.js';
import { SessionContext } from './session.js';
import type { SignedIn } from './types.js';

const PUBLIC_PAGES = new Set(['login', 'setup', 'invite']);
const NAV: Array<[string, string]> = [
  ['keys', 'Keys'],
  ['usage', 'Usage'],
  ['workflows', 'Workflows'],
  ['executions', 'Executions'],
  ['credentials', 'Credentials'],
  ['knowledge', 'Knowledge'],
  ['flows', 'Flows'],
  ['agents', 'Agents'],
  ['logs', 'Logs'],
  ['playground', 'Playground'],
  ['members', 'Members'],
  ['sessions', 'Sessions'],
];
/** Where to go back after signing in again: a page of this portal, nothing else. */
const SAFE_NEXT = /^#\/[\w/?=&%.-]{0,300}$/;

function page(route: Route) {
  const [name, id] = route.path;
  switch (name) {
    case 'usage':
      return <UsagePage params={route.params} />;
    case 'workflows':
      return id === 'new' ? <WorkflowImportPage /> : id ? <WorkflowPage id={id} /> : <WorkflowsPage />;
    case 'executions':
      return id ? <ExecutionPage id={id} /> : <ExecutionsPage params={route.params} />;
    case 'credentials':
      return <CredentialsPage />;
    case 'knowledge':
      return id ? <KnowledgeDocumentPage id={id} /> : <KnowledgePage params={route.params} />;
    case 'flows':
      return id ? <FlowPage id={id} /> : <FlowsPage />;
    case 'agents':
      return id ? <AgentPage id={id} /> : <AgentsPage />;
    case 'logs':
      return id === 'audit' ? (
        <AuditPage />
      ) : id === 'models' ? (
        <ModelCallsPage />
      ) : (
        <RequestLogPage params={route.params} />
      );
    case 'playground':
      return <PlaygroundPage />;
    case 'members':
      return <MembersPage />;
    case 'sessions':
      return <SessionsPage />;
    default:
      return <KeysPage />;
  }
}

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<SignedIn | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const main = useRef<HTMLElement>(null);
  const section = route.path[0] ?? 'keys';

  const signedIn = useCallback((s: SignedIn) => {
    setCsrfToken(s.csrfToken);
    setSession(s);
    setNotice('');
  }, []);
  const ended = useCallback((why: string) => {
    setCsrfToken(null);
    setSession(null);
    setNotice(why);
    const here = location.hash;
    if (!PUBLIC_PAGES.has(here.replace(/^#\/?/, '').split(/[/?]/)[0] ?? ''))
      navigate(SAFE_NEXT.test(here) ? `#/login?next=${encodeURIComponent(here)}` : '#/login');
  }, []);

  useEffect(() => {
    whenUnauthorized(() => ended('Your session has ended. Sign in again.'));
    api<SignedIn>('GET', '/v1/auth/session', { session: false }).then(signedIn, () => ended(''));
  }, [signedIn, ended]);

  // A session revoked elsewhere (another tab, the sessions page, an admin removing the member)
  // logs this page out when the person comes back to it, not at their next click. No timer: a
  // background poll would keep an unattended tab's session alive past its idle timeout.
  useEffect(() => {
    if (!session) return;
    const check = () => {
      if (document.visibilityState === 'visible') void api('GET', '/v1/auth/session').catch(() => undefined);
    };
    addEventListener('focus', check);
    document.addEventListener('visibilitychange', check);
    return () => {
      removeEventListener('focus', check);
      document.removeEventListener('visibilitychange', check);
    };
  }, [session]);

  // Each page change moves focus to the page, so keyboard and screen-reader users start there.
  useEffect(() => {
    main.current?.focus();
  }, [route.path.join('/')]);

  const signOut = useCallback(async () => {
    await api('POST', '/v1/auth/logout').catch(() => undefined);
    ended('You are signed out.');
  }, [ended]);

  if (session === undefined) {
    return (
      <main ref={main} tabIndex={-1} aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }

  if (!session || PUBLIC_PAGES.has(section)) {
    const done = (s: SignedIn) => {
      signedIn(s);
      const next = route.params.get('next') ?? '';
      navigate(SAFE_NEXT.test(next) && !next.startsWith('#/login') ? next : '#/keys');
    };
    return (
      <main ref={main} tabIndex={-1} class="narrow">
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        {section === 'setup' ? (
          <SetupPage token={route.params.get('token') ?? ''} onSignedIn={done} />
        ) : section === 'invite' ? (
          <InvitePage token={route.params.get('token') ?? ''} onSignedIn={done} />
        ) : (
          <LoginPage onSignedIn={done} />
        )}
      </main>
    );
  }

  return (
    <SessionContext.Provider value={{ session, signOut }}>
      {/* A button, not a #main link: the hash is the router's. */}
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header>
        <span class="brand">Developer portal</span>
        <nav aria-label="Portal">
          <ul>
            {NAV.map(([id, label]) => (
              <li key={id}>
                <a href={href(id)} aria-current={section === id ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          <span>
            {session.member.email} ({session.member.role})
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {page(route)}
      </main>
    </SessionContext.Provider>
  );
}
