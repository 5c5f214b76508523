import type { FastifyReply } from 'fastify';
import { SESSION_COOKIE } from '../auth/index.js';

/** The session cookie: HttpOnly, SameSite=Lax, whole site; Secure when the platform is served over https. */
export class SessionCookie {
  constructor(private readonly secure: boolean) {}

  set(reply: FastifyReply, token: string, maxAgeSeconds: number): void {
    reply.header('set-cookie', this.format(token, maxAgeSeconds));
  }

  clear(reply: FastifyReply): void {
    reply.header('set-cookie', this.format('', 0));
  }

  private format(value: string, maxAgeSeconds: number): string {
    const parts = [
      `${SESSION_COOKIE}=${value}`,
      'Path=/',
      `Max-Age=${maxAgeSeconds}`,
      'HttpOnly',
      'SameSite=Lax',
    ];
    if (this.secure) parts.push('Secure');
    return parts.join('; ');
  }
}
