import { AppError } from '../../core/errors.js';
import { unreachable } from './game-client.js';
import type { OutboundThrottle } from './outbound-throttle.js';
import type { GameSettings } from './settings.js';

/** The token endpoint's answer (Bungie's shape), in our terms. */
export interface TokenGrant {
  accessToken: string;
  /** Seconds. */
  expiresIn: number;
  refreshToken: string | null;
  refreshExpiresIn: number | null;
  membershipId: string;
}

/** The token endpoint refused the code or the refresh token (HTTP 4xx, or no token in the answer). */
export class TokenRefused extends Error {
  constructor(
    readonly httpStatus: number,
    readonly oauthError: string | null,
  ) {
    super(`The game platform refused the grant${oauthError ? ` (${oauthError})` : ''}`);
    this.name = 'TokenRefused';
  }
}

/** The OAuth token endpoint, as a confidential client (client secret by HTTP Basic). */
export class TokenClient {
  constructor(
    private readonly settings: GameSettings,
    private readonly throttle: OutboundThrottle,
  ) {}

  /** The code, with the PKCE verifier whose S256 challenge went on the authorize URL. */
  exchangeCode(code: string, codeVerifier: string): Promise<TokenGrant> {
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      code_verifier: codeVerifier,
    };
    if (this.settings.redirectUrl) form.redirect_uri = this.settings.redirectUrl;
    return this.post(form);
  }

  refresh(refreshToken: string): Promise<TokenGrant> {
    return this.post({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async post(form: Record<string, string>): Promise<TokenGrant> {
    const { clientId, clientSecret, apiKey, timeoutMs } = this.settings;
    const basic = Buffer.from(
      `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`,
      'utf8',
    ).toString('base64');
    const release = await this.throttle.acquire();
    let response: Response;
    let body: Record<string, unknown> | null;
    try {
      response = await fetch(this.settings.tokenUrl, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'x-api-key': apiKey,
        },
        body: new URLSearchParams(form).toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    } catch (error) {
      throw unreachable(error, timeoutMs);
    } finally {
      release();
    }
    if (response.status >= 500) {
      throw new AppError('UPSTREAM_ERROR', 'The game platform token endpoint failed', {
        httpStatus: response.status,
      });
    }
    const accessToken = body?.access_token;
    if (!response.ok || typeof accessToken !== 'string' || accessToken.length === 0) {
      throw new TokenRefused(response.status, typeof body?.error === 'string' ? body.error : null);
    }
    const refreshToken = typeof body?.refresh_token === 'string' ? body.refresh_token : null;
    return {
      accessToken,
      expiresIn: positive(body?.expires_in, 3600),
      refreshToken,
      refreshExpiresIn: refreshToken ? positive(body?.refresh_expires_in, 90 * 86_400) : null,
      membershipId: String(body?.membership_id ?? ''),
    };
  }
}

function positive(value: unknown, fallback: number): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
