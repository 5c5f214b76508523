import { Type } from 'typebox';
import { NodeOperationError } from '../../engine/node-type.js';

/**
 * What the chat model nodes share: n8n's resource locator for a model, and a base URL taken from a
 * credential (a proxy or a compatible server) or the provider's own.
 */

/** n8n's resource locator (`{__rl, mode, value}`) as a model parameter holds it. */
export const ModelLocator = Type.Object(
  {
    __rl: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.String()),
    value: Type.String({ maxLength: 300 }),
    cachedResultName: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** `url` without trailing slashes, checked to be http(s); `fallback` when it is empty. */
export function baseUrlOf(url: string | undefined, fallback: string): string {
  const base = (url?.trim() || fallback).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(base)) throw new NodeOperationError(`The base URL '${base}' is not http(s)`);
  return base;
}

/** n8n's "-1 for the default" token limits: a positive value, or nothing sent. */
export const positiveOrNone = (value: number | undefined): number | undefined =>
  value !== undefined && value > 0 ? value : undefined;
