import type { PlatformErrorCodes } from 'bungie-api-ts/core';

// bungie-api-ts declares its codes as an ambient const enum, which isolatedModules cannot
// read at run time; the numbers are restated here and checked against its type.
const code = <T extends PlatformErrorCodes>(value: T): number => value;

export const SUCCESS = code(1 satisfies PlatformErrorCodes.Success);

/** Codes that mean "slow down": wait ThrottleSeconds (or back off) and retry. */
export const THROTTLE_CODES: ReadonlySet<number> = new Set([
  code(31 satisfies PlatformErrorCodes.ThrottleLimitExceeded),
  code(35 satisfies PlatformErrorCodes.ThrottleLimitExceededMinutes),
  code(36 satisfies PlatformErrorCodes.ThrottleLimitExceededMomentarily),
  code(37 satisfies PlatformErrorCodes.ThrottleLimitExceededSeconds),
  code(51 satisfies PlatformErrorCodes.PerEndpointRequestThrottleExceeded),
  code(54 satisfies PlatformErrorCodes.PerApplicationThrottleExceeded),
  code(55 satisfies PlatformErrorCodes.PerApplicationAnonymousThrottleExceeded),
  code(56 satisfies PlatformErrorCodes.PerApplicationAuthenticatedThrottleExceeded),
  code(57 satisfies PlatformErrorCodes.PerUserThrottleExceeded),
  code(1672 satisfies PlatformErrorCodes.DestinyThrottledByGameServer),
]);

/** Codes that mean the user's access token was not accepted: renew once and retry. */
export const AUTH_CODES: ReadonlySet<number> = new Set([
  code(99 satisfies PlatformErrorCodes.WebAuthRequired),
  code(2111 satisfies PlatformErrorCodes.AccessTokenHasExpired),
  code(2115 satisfies PlatformErrorCodes.OAuthAccessTokenExpired),
  code(2119 satisfies PlatformErrorCodes.AuthorizationRecordInvalid),
  code(2120 satisfies PlatformErrorCodes.TokenPreviouslyRevoked),
  code(2121 satisfies PlatformErrorCodes.TokenInvalidMembership),
  code(2123 satisfies PlatformErrorCodes.AuthorizationRecordExpired),
  code(2124 satisfies PlatformErrorCodes.AuthorizationRecordRevoked),
]);
