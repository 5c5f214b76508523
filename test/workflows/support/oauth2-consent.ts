import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import type { TestPlatform } from '../../helpers/platform.js';
import type { FakeOAuth2 } from './fake-oauth2.js';

/** What a browser sends: the callback answers it a page. */
export const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** GET through loopback without following redirects: the browser's hop to the provider. */
export function browserGet(url: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, location: res.headers.location });
    })
      .on('error', reject)
      .end();
  });
}

/** The confirmation page's button as a browser sends it: a form POST from this site's page. */
export function confirmLink(p: TestPlatform, authorizeUrl: string, headers: Record<string, string> = {}) {
  const link = new URL(authorizeUrl);
  return p.request({
    method: 'POST',
    url: link.pathname,
    key: null,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(p.ctx.config.PUBLIC_URL).origin,
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
    payload: new URLSearchParams({ ticket: link.searchParams.get('ticket') ?? '' }).toString(),
  });
}

/** A link asked for with a key: its confirmation page (nothing spent), then its button. */
export async function openLink(p: TestPlatform, authorizeUrl: string) {
  const link = new URL(authorizeUrl);
  const page = await p.request({ method: 'GET', url: `${link.pathname}${link.search}`, key: null });
  expect(page.statusCode).toBe(200);
  expect(page.headers.location).toBeUndefined();
  return confirmLink(p, authorizeUrl);
}

/**
 * The whole consent of a link asked for with a key: the API's link, the confirmation, the hop to the
 * provider (the fake stands in for a typed credential's provider host), the callback.
 */
export async function connect(
  p: TestPlatform,
  provider: FakeOAuth2,
  credentialId: string,
  opts: { key?: string; dropCookie?: boolean } = {},
) {
  const started = await p.request({
    method: 'POST',
    url: `/api/v1/credentials/${credentialId}/oauth2/authorize`,
    ...(opts.key ? { key: opts.key } : {}),
  });
  expect(started.statusCode).toBe(200);
  const { authorizeUrl, callbackUrl } = started.json() as { authorizeUrl: string; callbackUrl: string };
  const start = await openLink(p, authorizeUrl);
  expect(start.statusCode).toBe(303);
  const cookie = String(start.headers['set-cookie']).split(';')[0] as string;
  const atProvider = new URL(String(start.headers.location));
  expect(atProvider.searchParams.get('redirect_uri')).toBe(callbackUrl);
  const back = await browserGet(`${provider.base}/authorize${atProvider.search}`);
  expect(back.status).toBe(302);
  const callback = new URL(back.location as string);
  return {
    atProvider,
    callback,
    cookie,
    page: await p.request({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      key: null,
      headers: opts.dropCookie ? { accept: HTML } : { cookie, accept: HTML },
    }),
  };
}
