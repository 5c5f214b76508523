import type { Config } from '../../config.js';
import { AppError } from '../../core/errors.js';

/** The module's settings, taken from the parsed config once at boot (tests build their own). */
export interface GameSettings {
  apiUrl: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Sent as `redirect_uri` only when set; otherwise the application's registered URL applies. */
  redirectUrl: string;
  publicUrl: string;
  ratePerSecond: number;
  queueMax: number;
  timeoutMs: number;
}

export function gameSettings(config: Config): GameSettings {
  return {
    apiUrl: config.GAME_API_URL.replace(/\/+$/, ''),
    apiKey: config.GAME_API_KEY,
    clientId: config.GAME_OAUTH_CLIENT_ID,
    clientSecret: config.GAME_OAUTH_CLIENT_SECRET,
    authorizeUrl: config.GAME_OAUTH_AUTHORIZE_URL,
    tokenUrl: config.GAME_OAUTH_TOKEN_URL,
    redirectUrl: config.GAME_OAUTH_REDIRECT_URL,
    publicUrl: config.PUBLIC_URL.replace(/\/+$/, ''),
    ratePerSecond: config.GAME_RATE_PER_SECOND,
    queueMax: config.GAME_QUEUE_MAX,
    timeoutMs: config.GAME_TIMEOUT_MS,
  };
}

/** 503 naming every missing setting (operator configuration, not a caller error). */
export function requireSettings(
  settings: GameSettings,
  names: ReadonlyArray<keyof typeof SETTING_NAMES>,
): void {
  const missing = names.filter((n) => !settings[n]).map((n) => SETTING_NAMES[n]);
  if (missing.length > 0) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `The game-platform integration is not configured: set ${missing.join(', ')}`,
      { missingSettings: missing },
    );
  }
}

const SETTING_NAMES = {
  apiKey: 'GAME_API_KEY',
  clientId: 'GAME_OAUTH_CLIENT_ID',
  clientSecret: 'GAME_OAUTH_CLIENT_SECRET',
} as const;
