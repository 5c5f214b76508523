import { AppError, notFound } from '../../../core/errors.js';

/** A portal member as the portal module lists them. */
export interface Member {
  id: string;
  email: string;
  name: string;
  role: string;
  createdAt: string;
}

export interface PeopleDeps {
  /** The account's portal members. */
  members(accountId: string): Promise<Member[]>;
  /** The account's active API keys (id and name). */
  activeKeys(accountId: string): Promise<Array<{ id: string; name: string }>>;
}

const ROLE: Record<string, string> = {
  owner: 'global:owner',
  admin: 'global:admin',
  developer: 'global:member',
  viewer: 'global:member',
};

/** n8n's user object of a member; the role only when asked (n8n's includeRole). */
function userView(m: Member, includeRole: boolean) {
  const space = m.name.indexOf(' ');
  return {
    id: m.id,
    email: m.email,
    firstName: space < 0 ? m.name : m.name.slice(0, space),
    lastName: space < 0 ? '' : m.name.slice(space + 1),
    isPending: false,
    createdAt: m.createdAt,
    updatedAt: m.createdAt,
    ...(includeRole ? { role: ROLE[m.role] ?? 'global:member', portalRole: m.role } : {}),
  };
}

/** n8n's cursor: here the offset of the next page, base64url-encoded. */
function page<T>(all: T[], limit = 100, cursor?: string): { data: T[]; nextCursor: string | null } {
  let offset = 0;
  if (cursor !== undefined) {
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    offset = /^\d{1,9}$/.test(decoded) ? Number(decoded) : Number.NaN;
    if (!Number.isInteger(offset)) {
      throw new AppError('VALIDATION_ERROR', 'cursor is not a cursor this list gave', { field: 'cursor' });
    }
  }
  const data = all.slice(offset, offset + limit);
  const next = offset + limit;
  return { data, nextCursor: next < all.length ? Buffer.from(String(next)).toString('base64url') : null };
}

/**
 * n8n's users and projects over the platform's own concepts: users are the account's portal
 * members; projects are the principals things can belong to — the account (n8n's team project) and
 * each member and active key (personal projects), the destinations of a credential transfer.
 */
export class PeopleService {
  constructor(private readonly deps: PeopleDeps) {}

  async users(
    accountId: string,
    query: { limit?: number; cursor?: string; sort?: 'id' | 'email' | 'createdAt'; includeRole?: boolean },
  ) {
    const by = query.sort ?? 'id';
    const members = (await this.deps.members(accountId)).sort(
      (a, b) => a[by].localeCompare(b[by]) || a.id.localeCompare(b.id),
    );
    const { data, nextCursor } = page(members, query.limit, query.cursor);
    return { data: data.map((m) => userView(m, query.includeRole === true)), nextCursor };
  }

  /** A member by id or email (case-insensitive), as n8n's `GET /users/{id}`. */
  async user(accountId: string, idOrEmail: string, includeRole = false) {
    const wanted = idOrEmail.toLowerCase();
    const member = (await this.deps.members(accountId)).find(
      (m) => m.id === idOrEmail || m.email.toLowerCase() === wanted,
    );
    if (!member) throw notFound('NOT_FOUND', 'User', idOrEmail);
    return userView(member, includeRole);
  }

  /** By id: the account, then keys, then members. */
  async projects(accountId: string, query: { limit?: number; cursor?: string }) {
    const members = await this.deps.members(accountId);
    const keys = await this.deps.activeKeys(accountId);
    const all = [
      { id: 'account', name: 'Account', type: 'team' as const },
      ...members.map((m) => ({ id: `member:${m.id}`, name: m.name || m.email, type: 'personal' as const })),
      ...keys.map((k) => ({ id: `key:${k.id}`, name: k.name, type: 'personal' as const })),
    ].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return page(all, query.limit, query.cursor);
  }
}
