import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  type FakeServer,
  notionBlock,
  richText,
  startFakeWorkspace,
} from '../workflows/support/fakes/index.js';
import { createCredential } from '../workflows/support.js';
import { type DocView, load } from './support.js';

/** `source: "workspace"`: a Notion-style page read through the account's workspace credential. */
describe.each(await testDialects())('the workspace source on %s', (dialect) => {
  let p: TestPlatform;
  let workspace: FakeServer;

  beforeAll(async () => {
    workspace = await startFakeWorkspace({
      token: 'secret_ws',
      maxPageSize: 2,
      pages: {
        'page-42': {
          title: 'Onboarding',
          blocks: [
            notionBlock('heading_1', ['Welcome']),
            notionBlock('paragraph', [
              'Laptops are handed out on ',
              richText('day one', { bold: true }),
              '.',
            ]),
            notionBlock('bulleted_list_item', ['Badge']),
            notionBlock('bulleted_list_item', ['Keys']),
          ],
        },
      },
    });
    p = await createTestPlatform({ dialect, env: { WORKSPACE_API_URL: workspace.url } });
  });
  afterAll(async () => {
    await p?.close();
    await workspace?.close();
  });

  it('without the workspace credential: 422 naming it', async () => {
    const res = await load(p, { source: 'workspace', content: 'page-42' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'UNPROCESSABLE',
      message: expect.stringMatching(/workspace-api-token/),
    });
  });

  it('reads the page and all its blocks (paginated) as Markdown, titled by the page', async () => {
    await createCredential(p, 'workspace-api-token', 'httpBearerAuth', { token: 'secret_ws' });
    const res = await load(p, { source: 'workspace', content: 'page-42', topic: 'handbook' });
    expect(res.statusCode, res.body).toBe(201);
    const doc = res.json() as DocView;
    expect(doc).toMatchObject({
      source: 'workspace',
      title: 'Onboarding',
      mimeType: 'text/markdown',
      topic: 'handbook',
    });
    const text = doc.pages?.[0]?.text ?? '';
    expect(text).toMatch(/^# Welcome/);
    expect(text).toContain('Laptops are handed out on **day one**.');
    expect(text).toContain('- Keys');
    const calls = workspace.received.filter((r) => r.path.startsWith('/v1/blocks/page-42/children'));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]?.headers.authorization).toBe('Bearer secret_ws');
  });

  it('an unknown page is a 404; a missing page id a 400', async () => {
    const missing = await load(p, { source: 'workspace', content: 'page-nope' });
    expect(missing.statusCode).toBe(404);
    expect((await load(p, { source: 'workspace' })).statusCode).toBe(400);
  });
});
