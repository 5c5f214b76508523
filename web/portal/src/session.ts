import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { MemberRole, SignedIn } from './types.js';

export interface SessionApi {
  session: SignedIn;
  /** Ends this session on the server, then shows the sign-in page. */
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionApi | null>(null);

/** The signed-in member of a page that requires one (the app renders those pages only then). */
export function useSession(): SessionApi {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a signed-in page');
  return value;
}

/** What a member's role lets the portal offer; the API decides in the end (403 shown in words). */
export const can = {
  /** Keys and members need core:admin: owner and admin. */
  manage: (role: MemberRole) => role === 'owner' || role === 'admin',
  /** Writes on the workflow and llm services: every role but viewer. */
  write: (role: MemberRole) => role !== 'viewer',
};

export function refusal(role: MemberRole, what: string): string {
  return `Your role (${role}) cannot ${what}; ask an owner or admin.`;
}
