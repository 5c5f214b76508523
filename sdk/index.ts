import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

export interface PlatformClientOptions extends ClientOptions {
  /** The server's root URL, e.g. http://127.0.0.1:8080 (the document's paths start at the root). */
  baseUrl: string;
  /** An API key or a customer token, sent as `Authorization: Bearer` unless a call sets its own. */
  token?: string;
}

/** A client typed by the generated `paths`: every path, parameter, body and response is checked. */
export function createPlatformClient({ token, ...options }: PlatformClientOptions): Client<paths> {
  const client = createClient<paths>(options);
  if (token) {
    // A middleware rather than default headers: those come in several shapes, this needs no merge.
    client.use({
      onRequest({ request }) {
        if (!request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
        return request;
      },
    });
  }
  return client;
}
