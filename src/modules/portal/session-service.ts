import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Grant } from '../../core/auth/ceiling.js';
import type { Principal, Role } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError, assertNever } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { MemberRow } from './member-store.js';
import type { LiveSession, SessionRow, SessionStore } from './session-store.js';
import type { MemberRole } from './tables.js';

/** last_seen_at is written at most this often per session: not a write per request. */
const TOUCH_EVERY_MS = 60_000;
/** Expired sessions are swept at most this often, on a sign-in. */
const SWEEP_EVERY_MS = 3_600_000;

interface SessionSettings {
  ttlHours: number;
  idleMinutes: number;
}

/** A new session: the cookie value (shown to the browser only) and what the answer carries. */
export interface NewSession {
  token: string;
  csrfToken: string;
  expiresAt: string;
  maxAgeSeconds: number;
}

/** The session a request was authenticated by, for the portal's own routes. */
interface CurrentSession {
  id: string;
  memberId: string;
  accountId: string;
  token: string;
  row: LiveSession;
}

/** A member's role as the platform's: owner/admin act as Admin, developer as Writer, viewer as Reader. */
function platformRole(role: MemberRole): Role {
  switch (role) {
    case 'owner':
    case 'admin':
      return 'Admin';
    case 'developer':
      return 'Writer';
    case 'viewer':
      return 'Reader';
    default:
      return assertNever(role);
  }
}

/**
 * What a member's session grants: their role's operations on every service (and no bounds). An
 * invite or role change is checked against it (core/auth/ceiling.ts).
 */
export function memberGrant(role: MemberRole): Grant {
  return { role: platformRole(role), services: ['*'], scopes: [] };
}

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

const expired = () => new AppError('UNAUTHORIZED', 'Session has expired or was signed out; sign in again');

/**
 * Browser sessions: an opaque 32-byte cookie value, stored as its SHA-256; a CSRF token derived
 * from it by HMAC (nothing more to store); an absolute end and an idle timeout.
 */
export class SessionService {
  private readonly current = new WeakMap<FastifyRequest, CurrentSession>();
  private nextSweep = 0;

  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
    private readonly csrfKey: Buffer,
    private readonly settings: SessionSettings,
  ) {}

  csrfFor(token: string): string {
    return createHmac('sha256', this.csrfKey).update(token).digest('base64url');
  }

  async create(member: MemberRow, request: FastifyRequest): Promise<NewSession> {
    const now = this.clock.now();
    await this.sweep(now);
    const token = randomBytes(32).toString('base64url');
    const maxAgeSeconds = this.settings.ttlHours * 3600;
    const expiresAt = new Date(now.getTime() + maxAgeSeconds * 1000).toISOString();
    const agent = request.headers['user-agent'];
    await this.store.insert({
      id: newId('ses'),
      member_id: member.id,
      account_id: member.account_id,
      token_hash: hashToken(token),
      created_at: now.toISOString(),
      last_seen_at: now.toISOString(),
      expires_at: expiresAt,
      ip: request.ip ?? null,
      user_agent: typeof agent === 'string' ? agent.slice(0, 500) : null,
    });
    return { token, csrfToken: this.csrfFor(token), expiresAt, maxAgeSeconds };
  }

  /** The session of a cookie value as a principal; 401 when unknown, ended, idle too long or its member gone. */
  async verify(token: string, request: FastifyRequest): Promise<{ principal: Principal; csrfToken: string }> {
    // A cookie value is 43 base64url characters; anything else is not worth a query.
    if (!/^[\w-]{43}$/.test(token)) throw expired();
    const row = await this.store.byTokenHash(hashToken(token));
    if (!row) throw expired();
    const nowMs = this.clock.now().getTime();
    if (!this.alive(row, nowMs)) {
      await this.store.deleteById(row.id);
      throw expired();
    }
    if (nowMs - Date.parse(row.last_seen_at) >= TOUCH_EVERY_MS)
      await this.store.touch(row.id, new Date(nowMs).toISOString());
    this.current.set(request, { id: row.id, memberId: row.member_id, accountId: row.account_id, token, row });
    const principal: Principal = {
      kind: 'session',
      accountId: row.account_id,
      keyId: null,
      keyType: null,
      services: ['*'],
      role: platformRole(row.role),
      scopes: [],
      customerId: null,
      dailyQuota: null,
      models: null,
      dailyTokenBudget: null,
      ipAllowed: null,
      memberId: row.member_id,
    };
    return { principal, csrfToken: this.csrfFor(token) };
  }

  /** The session the auth hook found for this request (a programming error on a route without one). */
  of(request: FastifyRequest): CurrentSession {
    const session = this.current.get(request);
    if (!session) throw new AppError('UNAUTHORIZED', 'This operation needs a signed-in session');
    return session;
  }

  /** As `of`, or undefined for a request made with a key. */
  find(request: FastifyRequest): CurrentSession | undefined {
    return this.current.get(request);
  }

  alive(row: Pick<SessionRow, 'expires_at' | 'last_seen_at'>, nowMs: number): boolean {
    const idleMs = this.settings.idleMinutes * 60_000;
    return Date.parse(row.expires_at) > nowMs && Date.parse(row.last_seen_at) + idleMs > nowMs;
  }

  async listOf(memberId: string): Promise<SessionRow[]> {
    const now = this.clock.now();
    const rows = await this.store.ofMember(memberId, now.toISOString());
    return rows.filter((row) => this.alive(row, now.getTime()));
  }

  async revoke(memberId: string, id: string): Promise<void> {
    if (!(await this.store.deleteOfMember(memberId, id)))
      throw new AppError('NOT_FOUND', `Session '${id}' was not found`, { id });
  }

  async end(id: string): Promise<void> {
    await this.store.deleteById(id);
  }

  /** Ends every session of a member (removed, password set), but `keep` if given. */
  async endAllOf(memberId: string, keep?: string): Promise<void> {
    await this.store.deleteAllOfMember(memberId, keep);
  }

  private async sweep(now: Date): Promise<void> {
    if (now.getTime() < this.nextSweep) return;
    this.nextSweep = now.getTime() + SWEEP_EVERY_MS;
    await this.store.deleteExpired(now.toISOString());
  }
}
