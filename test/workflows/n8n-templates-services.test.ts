import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { LOCAL_FILES_OFF } from '../../src/modules/workflows/nodes/n8n/local-file-trigger/index.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { FakeAiUpstream, ollamaText, ollamaToolCalls } from './support/fake-ai-upstream.js';
import { FakeHnAlgolia } from './support/fake-hn-algolia.js';
import { FakeMediaWiki } from './support/fake-mediawiki.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { FIXTURES, loadFixture, type N8nExport, runFixture } from './support/n8n-fixtures.js';
import { activate, createCredential, settled, workflowPlatform } from './support.js';

/**
 * Real n8n template exports that use the Wikipedia tool, the Hacker News node and the Local File
 * Trigger (test/fixtures/n8n/templates/, SOURCES-templates.md), imported unmodified and run against
 * local servers speaking the real wire formats: MediaWiki's API for Wikipedia, the Algolia Hacker News
 * API, Ollama and OpenAI; the public hosts the nodes call are sent to those servers.
 */

const wiki = new FakeMediaWiki();
const hn = new FakeHnAlgolia();
const ollama = new FakeAiUpstream('/api/chat');
const openai = new FakeOpenAi();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await Promise.all([wiki.start(), hn.start(), ollama.start(), openai.start()]);
  const guarded = createOutboundHttp({
    allowHosts: [wiki.base, hn.base, ollama.base, openai.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  const publicHosts: Array<[string, string]> = [
    ['https://en.wikipedia.org', wiki.base],
    ['https://hn.algolia.com', hn.base],
  ];
  deps = {
    http: (req) => {
      const route = publicHosts.find(([origin]) => req.url.startsWith(`${origin}/`));
      return guarded(route ? { ...req, url: route[1] + req.url.slice(route[0].length) } : req);
    },
    tenant: 'acct_templates_services',
    // The templates' credential ids: their Ollama and OpenAI accounts.
    credential: async (id): Promise<Record<string, string>> => {
      if (id === 'xHuYe0MDGOs9IpBW') return { baseUrl: ollama.base };
      if (id === 'VQtv7frm7eLiEDnd') return { apiKey: 'oa-key', url: `${openai.base}/v1` };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(async () => {
  await Promise.all([wiki.stop(), hn.stop(), ollama.stop(), openai.stop()]);
});
beforeEach(() => {
  wiki.reset();
  hn.reset();
  ollama.reset();
  openai.reset();
});

describe('Wikipedia tool v1 beside an HTTP Request tool, on Ollama with a window memory (template 2931)', () => {
  it('the agent asks Wikipedia; the tool answers with the pages’ extracts as LangChain does', async () => {
    wiki.pages.set('Lisbon', { extract: 'Lisbon is the capital and largest city of Portugal.' });
    wiki.pages.set('Lisbon Metro', { extract: 'The Lisbon Metro is a rapid transit system.' });
    ollama.queue(
      ollamaToolCalls([{ name: 'wikipedia-api', arguments: { input: 'Lisbon' } }]),
      ollamaText('Lisbon is the capital of Portugal.'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/agent-v1.6-wikipedia-ollama.json'),
      deps,
      [{ json: { sessionId: 's-2931', action: 'sendMessage', input: 'What is Lisbon?' } }],
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Lisbon is the capital of Portugal.' }]);

    const first = ollama.requests[0]?.body as { model: string; tools: Array<{ function: { name: string } }> };
    expect(first.model).toBe('llama3.2:latest');
    expect(first.tools.map((t) => t.function.name).sort()).toEqual(['Weather_HTTP_Request', 'wikipedia-api']);
    // MediaWiki was searched, then asked for each page's extract.
    expect(wiki.queries.map((q) => q.get('list') ?? q.get('titles'))).toEqual([
      'search',
      'Lisbon',
      'Lisbon Metro',
    ]);
    const messages = (ollama.requests[1]?.body.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content:
        'Page: Lisbon\nSummary: Lisbon is the capital and largest city of Portugal.\n\n' +
        'Page: Lisbon Metro\nSummary: The Lisbon Metro is a rapid transit system.',
    });
  });

  it('a MediaWiki outage reaches the model as the tool’s error, and the run still answers', async () => {
    wiki.failWith = 503;
    ollama.queue(
      ollamaToolCalls([{ name: 'wikipedia-api', arguments: { input: 'Lisbon' } }]),
      ollamaText('Wikipedia is unavailable right now.'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/agent-v1.6-wikipedia-ollama.json'),
      deps,
      [{ json: { sessionId: 's-2931b', action: 'sendMessage', input: 'What is Lisbon?' } }],
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Wikipedia is unavailable right now.' }]);
    const messages = (ollama.requests[1]?.body.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)?.role).toBe('tool');
    expect(messages.at(-1)?.content).toContain('Network response was not ok');
  });
});

/** The template's tool calls its own workflow (`$workflow.id`): a sub-workflow run of the same export. */
function selfCalls(def: N8nExport, calls: string[]): EngineDeps['subWorkflow'] {
  const subWorkflow: EngineDeps['subWorkflow'] = async (call) => {
    calls.push(call.workflowId);
    if (call.workflowId !== def.id) throw new Error(`Workflow '${call.workflowId}' was not found`);
    const engine = new WorkflowEngine(testDeps({ ...deps, subWorkflow }), defaultNodeRegistry);
    const trigger = def.nodes.find((n) => n.type === 'n8n-nodes-base.executeWorkflowTrigger');
    const done = await engine.run(
      def,
      { nodeName: trigger?.name ?? '', items: call.items },
      { ...runContext, mode: 'integrated' },
    );
    if (done.status !== 'success') throw new Error(`The sub-workflow failed: ${done.state.error?.message}`);
    return { items: done.lastItems, nodeRuns: call.nodeRunsBefore };
  };
  return subWorkflow;
}

describe('Hacker News v1 behind a Call n8n Workflow tool (template "AI chat with any data source")', () => {
  it('the agent calls its own workflow: Hacker News searches the top 50, Set and Code shape the answer', async () => {
    const def = loadFixture('templates/agent-v1.1-hacker-news-workflow-tool.json');
    const calls: string[] = [];
    openai.queue(
      toolCalls([{ id: 'call_hn', name: 'hn_tool', arguments: JSON.stringify({ query: 'top posts' }) }]),
      completion('The 5th most popular post is "Story 5".'),
    );
    const { outcome, outputs } = await runFixture(def, { ...deps, subWorkflow: selfCalls(def, calls) }, [
      {
        json: {
          sessionId: 's-hn',
          action: 'sendMessage',
          chat_input: 'What is the 5th most popular post ever on Hacker News?',
        },
      },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'The 5th most popular post is "Story 5".' }]);
    expect(calls).toEqual([def.id]);
    // n8n's query: no keyword, no tags, the node's limit as hitsPerPage.
    expect(hn.requests).toEqual(['/api/v1/search?tags=&hitsPerPage=50']);
    const tools = (openai.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name)).toEqual(['hn_tool']);
    const answer = ((openai.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
    expect(answer?.role).toBe('tool');
    const posts = JSON.parse(answer?.content ?? '') as Array<Record<string, unknown>>;
    expect(posts).toHaveLength(50);
    expect(posts[4]).toEqual({
      title: 'Story 5',
      points: 4_995,
      url: 'https://example.com/5',
      created_at: '2024-01-06T10:00:00.000Z',
      author: 'user5',
    });
  });
});

const template = (relative: string) =>
  JSON.parse(readFileSync(path.join(FIXTURES, relative), 'utf8')) as Record<string, unknown> & {
    nodes: Array<Record<string, unknown>>;
  };

describe.each(await testDialects())(
  'Local File Trigger v1 through the service (template 2334) on %s',
  (dialect) => {
    let p: TestPlatform;
    let files: string;
    beforeAll(async () => {
      files = await mkdtemp(path.join(tmpdir(), 'lft-template-'));
      p = await workflowPlatform(dialect, {
        WORKFLOW_FILES_DIR: files,
        WORKFLOW_EXECUTE_COMMAND_ENABLED: 'true',
        TRIGGER_LISTENER_SYNC_SECONDS: '1',
      });
    });
    afterAll(async () => {
      await p?.close();
      await rm(files, { recursive: true, force: true });
    });

    it('imports unmodified, and a file added to the watched folder starts one execution', async () => {
      const credId = await createCredential(p, 'Mistral Cloud account', 'mistralCloudApi', {
        apiKey: 'mi-key',
      });
      const exported = template('templates/local-file-trigger-mistral-organiser.json');
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: { name: 'Organise Your Local File Directories With AI', ...exported },
      });
      expect(res.statusCode, res.body).toBe(201);
      const id = (res.json() as { id: string }).id;
      // The export names its author's credential id: as in n8n, the importer picks their own before activating.
      const saved = (await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` })).json() as {
        nodes: Array<Record<string, unknown>>;
        connections: unknown;
        settings: unknown;
      };
      const nodes = saved.nodes.map((n) =>
        n.credentials
          ? { ...n, credentials: { mistralCloudApi: { id: credId, name: 'Mistral Cloud account' } } }
          : n,
      );
      const put = await p.request({
        method: 'PUT',
        url: `/api/v1/workflows/${id}`,
        payload: {
          name: 'Organise Your Local File Directories With AI',
          nodes,
          connections: saved.connections,
          settings: saved.settings,
        },
      });
      expect(put.statusCode, put.body).toBe(200);
      await activate(p, id);
      // Activation starts the listener in the background; a refresh waits for it (its first listing
      // taken: a file written before that is part of it, and not an event, as n8n's ignoreInitial).
      await p.ctx.apis.workflows?.listeners.refresh(p.accountId, id);
      // The listener makes the account's folder; n8n's Docker path /home/node/… lands inside it.
      const [account] = await until(async () => {
        const found = await readdir(files);
        return found.length > 0 ? found : undefined;
      }, "the account's folder");
      const drive = path.join(files, account ?? '', 'host_mount', 'shared_drive');
      await mkdir(drive, { recursive: true });
      await writeFile(path.join(drive, 'invoice-2024.pdf'), '%PDF-1.4 a small invoice');

      const runs = async () =>
        (
          (await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` })).json() as {
            data: Array<{ id: string }>;
          }
        ).data;
      const [run] = await until(
        async () => {
          const found = await runs();
          return found.length > 0 ? found : undefined;
        },
        'an execution for the new file',
        30_000,
      );
      const detail = (await settled(p, run?.id ?? '')) as {
        status: string;
        data: {
          resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>> };
        };
      };
      expect(detail.status).toBe('success');
      const out = (node: string) =>
        detail.data.resultData.runData[node]?.[0]?.data.main[0]?.map((i) => i.json);
      expect(out('Local File Trigger')).toEqual([
        { event: 'add', path: '/home/node/host_mount/shared_drive/invoice-2024.pdf' },
      ]);
      // `$('Local File Trigger').params.path`: the folder as the workflow names it.
      expect(out('Set Variables')).toEqual([{ directory: '/home/node/host_mount/shared_drive' }]);
      // The template's shell commands name that Docker path literally: this host has nothing there, so
      // the listing is empty and the If ends the run before the model is asked.
      expect(detail.data.resultData.runData['Get Files and Folders']).toHaveLength(1);
      expect(detail.data.resultData.runData['AI File Manager']).toBeUndefined();
      expect(await runs()).toHaveLength(1);
    });

    it('refuses at save a watched path outside the files folder, and the trigger when the instance has none', async () => {
      const exported = template('templates/local-file-trigger-mistral-organiser.json');
      const nodes = exported.nodes.map((n) =>
        n.type === 'n8n-nodes-base.localFileTrigger'
          ? { ...n, parameters: { ...(n.parameters as object), path: '/home/node/../../etc' } }
          : n,
      );
      const outsideRes = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: { name: 'outside', ...exported, nodes },
      });
      expect(outsideRes.statusCode).toBe(400);
      expect(outsideRes.body).toContain("it is outside the account's files folder");

      const off = await workflowPlatform(dialect, { WORKFLOW_EXECUTE_COMMAND_ENABLED: 'true' });
      try {
        await createCredential(off, 'Mistral Cloud account', 'mistralCloudApi', { apiKey: 'mi-key' });
        const res = await off.request({
          method: 'POST',
          url: '/api/v1/workflows',
          payload: { name: 'off', ...exported },
        });
        expect(res.statusCode).toBe(400);
        expect(res.body).toContain(LOCAL_FILES_OFF);
      } finally {
        await off.close();
      }
    });
  },
);
