import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { MemberStore, MemberTokenRow } from './member-store.js';
import { hashToken } from './session-service.js';
import type { MemberRole, MemberTokenKind } from './tables.js';

/** How long setup and invite links work. */
const LINK_TTL_HOURS = 7 * 24;

const PAGE: Record<MemberTokenKind, string> = { setup: 'setup', invite: 'invite' };

/** One-time setup and invite links: the token is in the link only; the database keeps its hash. */
export class MemberTokens {
  constructor(
    private readonly store: MemberStore,
    private readonly clock: Clock,
    private readonly publicUrl: string,
  ) {}

  async issue(input: {
    kind: MemberTokenKind;
    accountId: string;
    email: string;
    role: MemberRole;
    createdBy: string | null;
  }): Promise<{ id: string; url: string; expiresAt: string }> {
    const now = this.clock.now();
    // A new setup link replaces the old one: only the latest printed link works.
    if (input.kind === 'setup') await this.store.retireTokens(input.email, 'setup', now.toISOString());
    const token = randomBytes(32).toString('base64url');
    const id = newId(input.kind === 'setup' ? 'setup' : 'inv');
    const expiresAt = new Date(now.getTime() + LINK_TTL_HOURS * 3_600_000).toISOString();
    await this.store.insertToken({
      id,
      hash: hashToken(token),
      kind: input.kind,
      account_id: input.accountId,
      email: input.email,
      role: input.role,
      created_by: input.createdBy,
      created_at: now.toISOString(),
      expires_at: expiresAt,
      used_at: null,
    });
    const base = this.publicUrl.replace(/\/+$/, '');
    return { id, url: `${base}/portal/#/${PAGE[input.kind]}?token=${token}`, expiresAt };
  }

  /** A link's token row while valid: known, unused and unexpired; 400 otherwise. */
  async find(kind: MemberTokenKind, token: string): Promise<MemberTokenRow> {
    const row = await this.store.tokenByHash(hashToken(token));
    if (
      !row ||
      row.kind !== kind ||
      row.used_at !== null ||
      Date.parse(row.expires_at) <= this.clock.now().getTime()
    )
      throw refused(kind);
    return row;
  }

  /** Marks a found token used, once: of two requests racing with one link, one wins. */
  async consume(row: MemberTokenRow): Promise<void> {
    if (!(await this.store.useToken(row.id, this.clock.now().toISOString()))) throw refused(row.kind);
  }
}

function refused(kind: MemberTokenKind): AppError {
  const what = kind === 'setup' ? 'setup link' : 'invitation';
  return new AppError(
    'VALIDATION_ERROR',
    `This ${what} is not valid: it is wrong, already used or expired. Ask for a new one`,
    { fields: [{ field: 'token', message: `unknown, used or expired ${what}` }] },
  );
}
