import { Type } from 'typebox';

/** Settings fields a remote provider's model entry may carry. */
export const RemoteProviderSettings = {
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2000 })),
  /** Name of the environment variable holding the provider's API key. */
  apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 100 })),
  /** Name or id of an encrypted credential of the owner account holding the API key. */
  apiKeyCredential: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
};

/** Trailing slashes off, by a loop: `/\/+$/` is quadratic on a long run of slashes. */
export function trimSlash(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}
