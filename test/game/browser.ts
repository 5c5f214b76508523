import type { TestPlatform } from '../helpers/platform.js';
import { FAKE_SESSION_COOKIE, type FakeGamePlatform } from './fake-game-platform.js';

export interface BrowserAnswer {
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: as light-my-request's json(), for terse assertions
  json(): any;
}

interface StoredCookie {
  value: string;
  path: string;
}

/**
 * A user's browser for the OAuth flow: platform URLs go to the platform (app.inject) with the
 * cookies it set (Path respected, Max-Age=0 removes); fake-platform URLs go over HTTP carrying the
 * user's session there (who is signed in at the game platform, if anyone). Redirects are followed.
 */
export class Browser {
  readonly cookies = new Map<string, StoredCookie>();
  /** Every Set-Cookie the platform sent, as sent. */
  readonly setCookies: string[] = [];

  constructor(
    private readonly p: TestPlatform,
    private readonly fake: FakeGamePlatform,
    /** The membership id signed in at the game platform in this browser. */
    readonly gameUser?: string,
  ) {}

  /** One request, no redirect followed. */
  async step(url: string): Promise<BrowserAnswer> {
    const target = new URL(url);
    return target.origin === this.fake.baseUrl ? this.upstream(target) : this.platform(target);
  }

  /** Opens a URL and follows redirects; the final answer. */
  async open(url: string): Promise<BrowserAnswer> {
    let answer = await this.step(url);
    for (let hops = 0; hops < 5 && answer.status >= 300 && answer.status < 400; hops += 1) {
      const next = new URL(String(answer.headers.location), answer.url);
      // A redirect to the integration's own site (a return URL) leaves the platform and the game: stop.
      if (next.hostname.endsWith('.example')) break;
      answer = await this.step(next.toString());
    }
    return answer;
  }

  private async upstream(url: URL): Promise<BrowserAnswer> {
    const headers: Record<string, string> = this.gameUser
      ? { cookie: `${FAKE_SESSION_COOKIE}=${this.gameUser}` }
      : {};
    const res = await fetch(url, { headers, redirect: 'manual' });
    const body = await res.text();
    return {
      url: url.toString(),
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body,
      json: () => JSON.parse(body),
    };
  }

  private async platform(url: URL): Promise<BrowserAnswer> {
    const cookie = [...this.cookies]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
    const res = await this.p.request({
      method: 'GET',
      url: `${url.pathname}${url.search}`,
      key: null,
      headers: cookie ? { cookie } : {},
    });
    const sent = res.headers['set-cookie'];
    for (const line of sent === undefined ? [] : Array.isArray(sent) ? sent : [String(sent)])
      this.remember(line);
    return {
      url: url.toString(),
      status: res.statusCode,
      headers: res.headers as BrowserAnswer['headers'],
      body: res.body,
      json: () => res.json(),
    };
  }

  private remember(line: string): void {
    this.setCookies.push(line);
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const attr = (key: string) =>
      attributes.find((a) => a.toLowerCase().startsWith(`${key.toLowerCase()}=`))?.split('=')[1];
    if (attr('Max-Age') === '0') this.cookies.delete(name);
    else this.cookies.set(name, { value: pair.slice(eq + 1), path: attr('Path') ?? '/' });
  }
}
