import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, type BrowserServer, chromium, type Page } from 'playwright-core';
import { buildPortal } from '../../scripts/build-portal.mjs';
import { allModules } from '../../src/modules/index.js';
import { createPortalWebModule, portalWebModule } from '../../src/modules/portal-web/index.js';
import { freePort } from '../helpers/listening.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** Where the browser suites write their screenshots (docs/screenshots holds the chosen ones). */
export const SHOTS = path.resolve('coverage', 'portal-screenshots');

/** The built portal served by a listening platform on SQLite, and Debian's Chromium driving it. */
export interface PortalBrowser {
  p: TestPlatform;
  base: string;
  buildDir: string;
  browser: Browser;
  /** The owner's browser context (one per suite; its steps share it). */
  owner: BrowserContext;
  /** Content-Security-Policy refusals any page reported: the bundle must need none. */
  cspViolations: string[];
  newPage(context: BrowserContext): Promise<Page>;
  shot(name: string, on: Page): Promise<Buffer>;
  close(): Promise<void>;
}

export async function startPortalBrowser(env: Record<string, string> = {}): Promise<PortalBrowser> {
  mkdirSync(SHOTS, { recursive: true });
  const buildDir = mkdtempSync(path.join(tmpdir(), 'portal-build-'));
  await buildPortal({ outDir: path.join(buildDir, 'portal') });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const p = await createTestPlatform({
    dialect: 'sqlite',
    env: { PUBLIC_URL: base, ...env },
    modules: [
      ...allModules.filter((m) => m !== portalWebModule),
      createPortalWebModule({ dir: path.join(buildDir, 'portal') }),
    ],
  });
  await p.app.listen({ port, host: '127.0.0.1' });
  let server: BrowserServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    const pid = server?.process().pid;
    const grace = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    await Promise.race([
      (async () => {
        await browser?.close().catch(() => undefined);
        await server?.close().catch(() => undefined);
      })(),
      grace,
    ]);
    // Still there after the grace period: the browser is killed, not left running.
    if (pid && server?.process().exitCode === null) process.kill(pid, 'SIGKILL');
    p.app.server.closeAllConnections();
    await p.close();
    rmSync(buildDir, { recursive: true, force: true });
  };
  try {
    server = await chromium.launchServer({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    browser = await chromium.connect(server.wsEndpoint());
  } catch (error) {
    await close();
    throw error;
  }
  const owner = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const cspViolations: string[] = [];
  const newPage = async (context: BrowserContext) => {
    const created = await context.newPage();
    created.setDefaultTimeout(8_000);
    // A page error (a bundle that throws, a CSP refusal) fails the step that caused it.
    created.on('pageerror', (error) => {
      throw error;
    });
    created.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
        cspViolations.push(message.text());
    });
    return created;
  };
  return {
    p,
    base,
    buildDir,
    browser,
    owner,
    cspViolations,
    newPage,
    shot: (name, on) => on.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true }),
    close,
  };
}

/** The text of the page's alert (an API error shown in words). */
export const alertText = async (on: Page) => (await on.getByRole('alert').first().textContent()) ?? '';

/** The owner sets a password from the setup link and lands signed in. */
export async function ownerSignsIn(portal: PortalBrowser, page: Page, password: string): Promise<void> {
  const members = portal.p.ctx.apis.portal?.members;
  if (!members) throw new Error('portal module missing');
  const { url } = await members.setupLink('owner@localhost');
  await page.goto(url);
  await page.getByLabel('New password').fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
}
