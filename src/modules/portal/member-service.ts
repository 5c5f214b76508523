import type { FastifyRequest } from 'fastify';
import { assertMayGrantUnbounded } from '../../core/auth/ceiling.js';
import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { LoginThrottle } from './login-throttle.js';
import type { MemberRow, MemberStore } from './member-store.js';
import type { MemberTokens } from './member-tokens.js';
import { passwordProblem } from './password-rules.js';
import { hashPassword, verifyNothing, verifyPassword } from './passwords.js';
import { memberGrant, type NewSession, type SessionService } from './session-service.js';
import type { MemberRole } from './tables.js';

export interface MemberView {
  id: string;
  email: string;
  name: string;
  role: MemberRole;
  createdAt: string;
}

export interface SignedIn {
  accountId: string;
  member: MemberView;
  session: NewSession;
}

const normalEmail = (email: string): string => email.trim().toLowerCase();

const memberView = (row: Pick<MemberRow, 'id' | 'email' | 'name' | 'role' | 'created_at'>): MemberView => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  createdAt: row.created_at,
});

const wrongLogin = () => new AppError('UNAUTHORIZED', 'Email or password is wrong');
const memberNotFound = (id: string) => new AppError('NOT_FOUND', `Member '${id}' was not found`, { id });

function checkPassword(password: string, email: string): void {
  const problem = passwordProblem(password, email);
  if (problem)
    throw new AppError('VALIDATION_ERROR', problem, { fields: [{ field: 'password', message: problem }] });
}

/** Members of an account: sign-in, setup and invite links, roles and removal. */
export class MemberService {
  constructor(
    private readonly deps: {
      store: MemberStore;
      sessions: SessionService;
      links: MemberTokens;
      clock: Clock;
      throttle: LoginThrottle;
    },
  ) {}

  /** The platform role a member's session acts with now, or null once the member is gone. */
  async currentRole(accountId: string, id: string): Promise<Principal['role'] | null> {
    const row = await this.deps.store.byId(accountId, id);
    return row ? memberGrant(row.role).role : null;
  }

  async list(accountId: string): Promise<MemberView[]> {
    return (await this.deps.store.list(accountId)).map(memberView);
  }

  /**
   * Email and password. Failures count per email and per client address; past either limit the
   * answer is 429 before any hashing. An unknown email costs the time of a real check, and answers
   * the same 401 as a wrong password.
   */
  async login(emailInput: string, password: string, request: FastifyRequest): Promise<SignedIn> {
    const email = normalEmail(emailInput);
    await this.deps.throttle.check(email, request.ip);
    const member = await this.deps.store.byEmail(email);
    const ok = member?.password_hash
      ? await verifyPassword(password, member.password_hash)
      : await verifyNothing(password);
    if (!member || !ok) {
      await this.deps.throttle.failed(email, request.ip);
      throw wrongLogin();
    }
    return {
      accountId: member.account_id,
      member: memberView(member),
      session: await this.deps.sessions.create(member, request),
    };
  }

  /** Sets a member's password from a setup link; their other sessions end. */
  async setup(token: string, password: string, request: FastifyRequest): Promise<SignedIn> {
    const link = await this.deps.links.find('setup', token);
    const member = await this.deps.store.byEmail(link.email);
    if (!member || member.account_id !== link.account_id) {
      await this.deps.links.consume(link);
      throw new AppError('VALIDATION_ERROR', 'This setup link is for a member who no longer exists', {
        fields: [{ field: 'token', message: 'member removed' }],
      });
    }
    checkPassword(password, member.email);
    const hash = await hashPassword(password);
    await this.deps.links.consume(link);
    await this.deps.store.setPassword(member.id, hash, this.nowIso());
    await this.deps.sessions.endAllOf(member.id);
    return {
      accountId: member.account_id,
      member: memberView(member),
      session: await this.deps.sessions.create(member, request),
    };
  }

  /** Becomes a member through an invitation link, with a name and a password, and is signed in. */
  async acceptInvite(
    token: string,
    name: string,
    password: string,
    request: FastifyRequest,
  ): Promise<SignedIn> {
    const link = await this.deps.links.find('invite', token);
    if (name.trim().length === 0)
      throw new AppError('VALIDATION_ERROR', 'Name must not be blank', {
        fields: [{ field: 'name', message: 'must not be blank' }],
      });
    checkPassword(password, link.email);
    if (await this.deps.store.byEmail(link.email)) throw this.taken(link.email);
    const hash = await hashPassword(password);
    await this.deps.links.consume(link);
    const now = this.nowIso();
    const member: MemberRow = {
      id: newId('mem'),
      account_id: link.account_id,
      email: link.email,
      name: name.trim(),
      role: link.role,
      password_hash: hash,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.deps.store.insert(member);
    } catch (error) {
      if (isUniqueViolation(error)) throw this.taken(link.email);
      throw error;
    }
    return {
      accountId: member.account_id,
      member: memberView(member),
      session: await this.deps.sessions.create(member, request),
    };
  }

  /**
   * `caller` (null: the CLI) must hold what the member would: a key may invite only with every
   * scope of the role on all services and no bounds a member would escape (memberCeiling).
   */
  async invite(
    accountId: string,
    input: { email: string; role: MemberRole },
    createdBy: string | null,
    caller: Principal | null,
  ): Promise<{ id: string; email: string; role: MemberRole; inviteUrl: string; expiresAt: string }> {
    if (input.role === 'owner') throw this.noOwner('role');
    if (caller) assertMayGrantUnbounded(caller, memberGrant(input.role), `An invite as ${input.role}`);
    const email = normalEmail(input.email);
    if (await this.deps.store.byEmail(email)) throw this.taken(email);
    const link = await this.deps.links.issue({
      kind: 'invite',
      accountId,
      email,
      role: input.role,
      createdBy,
    });
    return { id: link.id, email, role: input.role, inviteUrl: link.url, expiresAt: link.expiresAt };
  }

  /** The caller must hold both the member's role and the new one: nobody manages above themselves. */
  async changeRole(
    accountId: string,
    id: string,
    role: MemberRole,
    caller: Principal | null,
  ): Promise<MemberView> {
    if (role === 'owner') throw this.noOwner('role');
    const member = await this.deps.store.byId(accountId, id);
    if (!member) throw memberNotFound(id);
    if (member.role === 'owner') throw this.ownerFixed();
    if (caller) {
      assertMayGrantUnbounded(caller, memberGrant(member.role), `Managing a member who is ${member.role}`);
      assertMayGrantUnbounded(caller, memberGrant(role), `The role ${role}`);
    }
    const now = this.nowIso();
    await this.deps.store.setRole(member.id, role, now);
    return memberView({ ...member, role });
  }

  /** Removing is managing: the caller must hold the member's role, as for a role change. */
  async remove(accountId: string, id: string, caller: Principal | null): Promise<void> {
    const member = await this.deps.store.byId(accountId, id);
    if (!member) throw memberNotFound(id);
    if (member.role === 'owner') throw this.ownerFixed();
    if (caller)
      assertMayGrantUnbounded(caller, memberGrant(member.role), `Managing a member who is ${member.role}`);
    await this.deps.sessions.endAllOf(member.id);
    await this.deps.store.remove(member.id);
  }

  /**
   * The owner member of an account (bootstrap): made once, with a setup link for its password.
   * Nothing when the account has its owner or the email is another account's member.
   */
  async ensureOwner(owner: {
    accountId: string;
    email: string;
    name: string;
  }): Promise<{ setupUrl?: string }> {
    const { store } = this.deps;
    const email = normalEmail(owner.email);
    if ((await store.ownerOf(owner.accountId)) || (await store.byEmail(email))) return {};
    const now = this.nowIso();
    try {
      await store.insert({
        id: newId('mem'),
        account_id: owner.accountId,
        email,
        name: owner.name,
        role: 'owner',
        password_hash: null,
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      // Another process made it at the same moment: its link is the one printed.
      if (isUniqueViolation(error)) return {};
      throw error;
    }
    return { setupUrl: (await this.setupLink(email)).url };
  }

  /** A fresh one-time link that sets a member's password (earlier unused ones stop working). */
  async setupLink(emailInput: string): Promise<{ url: string; expiresAt: string; member: MemberView }> {
    const member = await this.byEmailOrThrow(emailInput);
    const link = await this.deps.links.issue({
      kind: 'setup',
      accountId: member.account_id,
      email: member.email,
      role: member.role,
      createdBy: null,
    });
    return { url: link.url, expiresAt: link.expiresAt, member: memberView(member) };
  }

  /** Sets a member's password directly (the operator's CLI); their sessions end. */
  async setPassword(emailInput: string, password: string): Promise<MemberView> {
    const member = await this.byEmailOrThrow(emailInput);
    checkPassword(password, member.email);
    await this.deps.store.setPassword(member.id, await hashPassword(password), this.nowIso());
    await this.deps.sessions.endAllOf(member.id);
    return memberView(member);
  }

  private async byEmailOrThrow(emailInput: string): Promise<MemberRow> {
    const email = normalEmail(emailInput);
    const member = await this.deps.store.byEmail(email);
    if (!member) throw new AppError('NOT_FOUND', `No member has the email '${email}'`, { email });
    return member;
  }

  private nowIso(): string {
    return this.deps.clock.now().toISOString();
  }

  private taken(email: string): AppError {
    return new AppError('CONFLICT', `'${email}' is already a member`, { email });
  }

  private noOwner(field: string): AppError {
    const message = 'An account has one owner: nobody else can be made owner';
    return new AppError('VALIDATION_ERROR', message, { fields: [{ field, message }] });
  }

  private ownerFixed(): AppError {
    return new AppError('FORBIDDEN', "The account's owner cannot be changed or removed");
  }
}
