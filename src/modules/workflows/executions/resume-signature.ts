import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signatures of resume URLs (`/webhook-waiting/{id}?signature=…`, as n8n's): an HMAC of the
 * execution id and the pause it resumes, under a server key. The id alone resumes nothing, and a
 * pause's URL stops working once the execution went on past it.
 */
export class ResumeSigner {
  constructor(private readonly key: Buffer) {}

  /** `{waitIndex}.{mac}`: the index travels in the URL so a check needs no database read. */
  sign(executionId: string, waitIndex: number): string {
    return `${waitIndex}.${this.mac(executionId, waitIndex).toString('base64url')}`;
  }

  /** The pause index a signature is valid for, or null when it is not this execution's. */
  verify(executionId: string, signature: string): number | null {
    const match = /^(\d{1,9})\.([A-Za-z0-9_-]{43})$/.exec(signature);
    if (!match) return null;
    const index = Number(match[1]);
    const given = Buffer.from(match[2] as string, 'base64url');
    const expected = this.mac(executionId, index);
    return given.length === expected.length && timingSafeEqual(given, expected) ? index : null;
  }

  private mac(executionId: string, waitIndex: number): Buffer {
    return createHmac('sha256', this.key).update(`resume:${executionId}:${waitIndex}`).digest();
  }
}

/** Signatures of resume URLs inside any text (`signature=3.<43 chars>`, also percent-encoded `=`). */
const SIGNATURE_IN_TEXT = /(signature(?:=|%3D))\d{1,9}\.[A-Za-z0-9_-]{43}/g;

/**
 * A view with every resume-URL signature blanked: for callers who may read executions but not act
 * on them, since a workflow's own data may carry `$execution.resumeUrl` (an approval mail's link).
 */
export function withoutResumeSignatures<T>(view: T): T {
  return JSON.parse(JSON.stringify(view).replace(SIGNATURE_IN_TEXT, '$1[hidden]')) as T;
}
