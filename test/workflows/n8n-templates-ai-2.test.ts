import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAddressGuard, createOutboundHttp } from '../../src/core/http/outbound.js';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { binaryOf } from '../../src/modules/workflows/engine/binary.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { PG_URL, uniqueName } from '../helpers/services.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { FakeProvider } from './support/fake-provider.js';
import { loadFixture, type N8nExport, runFixture } from './support/n8n-fixtures.js';

/**
 * More real n8n template exports (test/fixtures/n8n/templates/, SOURCES-templates.md), each the first
 * real export in the suite of one of its AI node types (Azure OpenAI, Information Extractor, Text
 * Classifier, Summarization Chain, Recursive Character Text Splitter, HTTP Request tool). Imported
 * unmodified: the credential callback maps the export's credential ids to local upstreams, and the
 * outbound function sends the public hosts the templates name (LINE, paulgraham.com, the Bored API,
 * Firecrawl) to a local web server that records what it was sent.
 */

const openai = new FakeOpenAi();
const azure = new FakeProvider();

/** A local web server for the templates' public hosts: answers by path, records each request. */
class FakeWeb {
  readonly requests: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> =
    [];
  readonly pages = new Map<string, { type: string; body: string }>();
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = req.url ?? '';
        this.requests.push({
          method: req.method ?? '',
          url,
          headers: { ...req.headers },
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const page = this.pages.get(url) ?? this.pages.get(url.split('?')[0] ?? '');
        if (!page) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
          return;
        }
        res.writeHead(200, { 'content-type': page.type }).end(page.body);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.requests.length = 0;
    this.pages.clear();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const web = new FakeWeb();
/** The public origins the templates call, each served by the local web server. */
const PUBLIC = [
  'https://api.line.me',
  'http://www.paulgraham.com',
  'https://bored-api.appbrewery.com',
  'https://api.firecrawl.dev',
];
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await Promise.all([openai.start(), azure.start(), web.start()]);
  const guarded = createOutboundHttp({
    allowHosts: [openai.base, azure.base, web.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  deps = {
    http: (req) => {
      const origin = PUBLIC.find((o) => req.url.startsWith(`${o}/`));
      return guarded(origin ? { ...req, url: web.base + req.url.slice(origin.length) } : req);
    },
    tenant: 'acct_templates_ai_2',
    // The templates' credential ids.
    credential: async (id): Promise<Record<string, string>> => {
      if (id === '5AjoWhww5SQi2VXd')
        return {
          apiKey: 'az-key',
          resourceName: 'gratitude',
          apiVersion: '2024-08-01-preview',
          endpoint: azure.base,
        };
      if (id === 'yiPG7xPwvDzsY0Qd') return { name: 'Authorization', value: 'Bearer line-token' };
      if (id === 'OUOnyTkL9vHZNorB') return { name: 'Authorization', value: 'Bearer fc-key' };
      if (id === 'by5xbXU1Yz36JahE' || id === '8gccIjcuf3gvaoEr')
        return { apiKey: 'oa-key', url: `${openai.base}/v1` };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(async () => {
  await Promise.all([openai.stop(), azure.stop(), web.stop()]);
});
beforeEach(() => {
  openai.reset();
  azure.reset();
  web.reset();
});

type Message = { role: string; content?: string | null; tool_call_id?: string };
const messagesOf = (i: number) => (openai.requests[i]?.messages ?? []) as Message[];

describe('Azure OpenAI Chat Model (template Sebvr1R2t4zkAg1V)', () => {
  it('a Basic LLM Chain v1.5 on an Azure deployment, then Set v3.4 and an HTTP push to LINE', async () => {
    azure.queue(completion('**Hello!** What made you <b>smile</b> today?\nWrite it down.'));
    web.pages.set('/v2/bot/message/push', { type: 'application/json', body: '{}' });
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/chain-llm-azure-schedule.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();

    const [call] = azure.requests;
    expect(azure.requests).toHaveLength(1);
    expect(call?.method).toBe('POST');
    expect(call?.url).toBe('/openai/deployments/4o/chat/completions?api-version=2024-08-01-preview');
    expect(call?.headers['api-key']).toBe('az-key');
    expect(call?.headers.authorization).toBeUndefined();
    expect(call?.body).toMatchObject({ model: '4o', temperature: 0.9 });
    expect(call?.body.messages).toEqual([
      {
        role: 'system',
        content: "You'll rewrite this message to send reminder to user to record good thing today.",
      },
      {
        role: 'user',
        content: 'Today is a wonderful day! 🌟 What or who brought a smile to your face today? 😊\n',
      },
    ]);

    expect(outputs.WriteReminder).toEqual([
      { text: '**Hello!** What made you <b>smile</b> today?\nWrite it down.' },
    ]);
    // replaceAll("\n", "\\n") then removeMarkdown() and removeTags(), as the template's Set does.
    expect(outputs['Reformat Output from Chat Model']).toEqual([
      { posestoday: 'Hello! What made you smile today?\\nWrite it down.' },
    ]);
    const push = web.requests.find((r) => r.url === '/v2/bot/message/push');
    expect(push?.method).toBe('POST');
    expect(push?.headers.authorization).toBe('Bearer line-token');
    expect(JSON.parse(push?.body ?? '{}')).toEqual({
      to: 'YOUR ID HERE',
      messages: [{ type: 'text', text: 'Hello! What made you smile today?\nWrite it down.' }],
    });
  });
});

describe('Text Classifier and Information Extractor (template 39KuujB1fbOvx8Al)', () => {
  const email = (text: string) => [
    {
      json: { subject: 'Application', from: 'ada@example.com', text },
      binary: {
        attachment0: binaryOf(
          buildPdf(['Ada Lovelace, 36, London. Mathematics. Analyst at Babbage & Co.']),
          'application/pdf',
          'cv.pdf',
        ),
      },
    },
  ];

  it('a job application: classified by the model, then its fields extracted from mail and PDF', async () => {
    openai.queue(
      completion(
        '```json\n{"job_application": true, "inbound_lead": false, "invoice": false, "other": false}\n```',
      ),
      completion(
        JSON.stringify({
          first_name: 'Ada',
          last_name: 'Lovelace',
          age: '36',
          residence: 'London',
          study: 'Mathematics',
          work_experience: 'Analyst at Babbage & Co.',
          personal_character: 'curious',
        }),
      ),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/text-classifier-extractor-imap.json'),
      deps,
      email('Dear team, I apply for the analyst position.'),
    );
    expect(outcome.state.error).toBeNull();
    expect(openai.requests).toHaveLength(2);

    const [classify, extract] = [messagesOf(0), messagesOf(1)];
    expect(openai.requests[0]?.model).toBe('gpt-4o');
    expect(classify[0]?.role).toBe('system');
    expect(classify[0]?.content).toContain(
      'Please classify the text provided by the user into one of the following categories: job_application, inbound_lead, invoice, other, and use the provided formatting instructions below.',
    );
    expect(classify[0]?.content).toContain(
      'Should be true if the input has category \\"invoice\\" (description: for invoices)',
    );
    expect(classify[1]).toEqual({
      role: 'user',
      content:
        'Dear team, I apply for the analyst position.\n\nattachment:\nAda Lovelace, 36, London. Mathematics. Analyst at Babbage & Co.\n',
    });
    expect(extract[0]?.content).toContain('You are an expert extraction algorithm.');
    expect(extract[0]?.content).toContain('"personal_character":{"type":"string"');
    expect(extract[1]?.content).toBe(
      'Dear team, I apply for the analyst position.\n\nResume:\nAda Lovelace, 36, London. Mathematics. Analyst at Babbage & Co.\n',
    );

    expect(outputs['Extract variables - email & attachment']).toEqual([
      {
        output: {
          first_name: 'Ada',
          last_name: 'Lovelace',
          age: '36',
          residence: 'London',
          study: 'Mathematics',
          work_experience: 'Analyst at Babbage & Co.',
          personal_character: 'curious',
        },
      },
    ]);
    expect(outputs['Workflow 2']).toBeUndefined();
  });

  it('an invoice goes to its own branch, unchanged, and nothing is extracted', async () => {
    openai.queue(
      completion('{"job_application": false, "inbound_lead": false, "invoice": true, "other": false}'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/text-classifier-extractor-imap.json'),
      deps,
      email('Please find our invoice attached.'),
    );
    expect(outcome.state.error).toBeNull();
    expect(openai.requests).toHaveLength(1);
    expect(outputs['Workflow 3']).toHaveLength(1);
    expect(outputs['Workflow 3']?.[0]).toMatchObject({
      text: 'Ada Lovelace, 36, London. Mathematics. Analyst at Babbage & Co.',
    });
    expect(outputs['Extract variables - email & attachment']).toBeUndefined();
  });
});

describe('Summarization Chain v2, Default Data Loader, Recursive Character Text Splitter (template "Scrape and summarize webpages with AI")', () => {
  const essay = (title: string, text: string) =>
    `<html><head><title>${title}</title></head><body><p>${text}</p></body></html>`;

  it('fetches the essay list, keeps the first three, summarises each page and merges title, summary and URL', async () => {
    web.pages.set('/articles.html', {
      type: 'text/html; charset=utf-8',
      body: '<html><body><table><tr><td><table><tr><td><a href="greatwork.html">How to Do Great Work</a><br><a href="best.html">The Best Essay</a><br><a href="superlinear.html">Superlinear Returns</a><br><a href="read.html">The Need to Read</a></td></tr></table></td></tr></table></body></html>',
    });
    web.pages.set('/greatwork.html', {
      type: 'text/html',
      body: essay('How to Do Great Work', 'Choose a field.'),
    });
    web.pages.set('/best.html', {
      type: 'text/html',
      body: essay('The Best Essay', 'Start with a question.'),
    });
    web.pages.set('/superlinear.html', {
      type: 'text/html',
      body: essay('Superlinear Returns', 'Returns compound.'),
    });
    openai.queue(
      completion('Work on what excites you.'),
      completion('Questions lead.'),
      completion('Growth compounds.'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/summarization-splitter-html.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();

    expect(web.requests.map((r) => r.url)).toEqual([
      '/articles.html',
      '/greatwork.html',
      '/best.html',
      '/superlinear.html',
    ]);
    expect(openai.requests).toHaveLength(3);
    expect(openai.requests[0]?.model).toBe('gpt-4o-mini');
    // One chunk per page fits LangChain's map-reduce limit: one combining call with n8n's prompt.
    const prompt = messagesOf(0);
    expect(prompt).toHaveLength(1);
    expect(prompt[0]?.role).toBe('user');
    expect(prompt[0]?.content).toMatch(/^Write a concise summary of the following:\n\n\n"/);
    expect(prompt[0]?.content).toContain('Choose a field.');
    expect(prompt[0]?.content).toMatch(/"\n\n\nCONCISE SUMMARY:$/);
    expect(messagesOf(2)[0]?.content).toContain('Returns compound.');

    expect(outputs['Summarization Chain']).toEqual([
      { response: { text: 'Work on what excites you.' } },
      { response: { text: 'Questions lead.' } },
      { response: { text: 'Growth compounds.' } },
    ]);
    expect(outputs['Clean up']).toEqual([
      {
        title: 'How to Do Great Work',
        summary: 'Work on what excites you.',
        url: 'http://www.paulgraham.com/greatwork.html',
      },
      { title: 'The Best Essay', summary: 'Questions lead.', url: 'http://www.paulgraham.com/best.html' },
      {
        title: 'Superlinear Returns',
        summary: 'Growth compounds.',
        url: 'http://www.paulgraham.com/superlinear.html',
      },
    ]);
  });
});

describe('HTTP Request tool v1 (template "Introduction to the HTTP Tool")', () => {
  type Tool = { function: { name: string; description: string; parameters: unknown } };
  const toolsOf = (i: number) => (openai.requests[i]?.tools ?? []) as Tool[];

  it('two AI Agents v1.6: a scraper tool with optimized response and a query tool, each as n8n’s one-text-input tool', async () => {
    web.pages.set('/v0/scrape', {
      type: 'application/json',
      body: JSON.stringify({
        success: true,
        data: {
          markdown: '# Issues\n- #1 Bug',
          metadata: { title: 'Issues', statusCode: 200 },
          html: '<h1>x</h1>',
        },
      }),
    });
    web.pages.set('/filter', {
      type: 'application/json; charset=utf-8',
      body: JSON.stringify([{ activity: 'Learn Express.js', type: 'education', participants: 1 }]),
    });
    openai.queue(
      toolCalls([
        {
          id: 'call_s',
          name: 'Webscraper_Tool',
          arguments: JSON.stringify({ input: '{"url":"https://github.com/n8n-io/n8n/issues"}' }),
        },
      ]),
      completion('The latest issue is #1 Bug.'),
      toolCalls([
        {
          id: 'call_a',
          name: 'Activity_Tool',
          arguments: JSON.stringify({ input: '{"type":"education","participants":1}' }),
        },
      ]),
      completion('Learn Express.js!'),
    );
    const { outcome, outputs } = await runFixture(loadFixture('templates/agent-v1.6-http-tools.json'), deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'The latest issue is #1 Bug.' }]);
    expect(outputs['AI Agent1']).toEqual([{ output: 'Learn Express.js!' }]);

    // The scraper: one text input; the description lists the parameters as n8n's v1 tool does.
    const [scraper] = toolsOf(0);
    expect(scraper?.function.name).toBe('Webscraper_Tool');
    expect(scraper?.function.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string' } },
    });
    expect(scraper?.function.description).toBe(
      'Call this tool to fetch a webpage content.\n\tTool expects valid stringified JSON object with 1 properties.\n\tProperty names with description, type and required status:\n\turl: (description: , type: string, required: true)\n\tALL parameters marked as required must be provided',
    );
    expect(messagesOf(0)).toEqual([
      { role: 'system', content: 'You are a helpful assistant' },
      { role: 'user', content: 'Can get the latest 10 issues from https://github.com/n8n-io/n8n/issues?' },
    ]);
    const scrape = web.requests.find((r) => r.url === '/v0/scrape');
    expect(scrape?.method).toBe('POST');
    expect(scrape?.headers.authorization).toBe('Bearer fc-key');
    expect(JSON.parse(scrape?.body ?? '{}')).toEqual({
      url: 'https://github.com/n8n-io/n8n/issues',
      pageOptions: {
        onlyMainContent: true,
        replaceAllPathsWithAbsolutePaths: true,
        removeTags: 'img,svg,video,audio',
      },
    });
    // Optimize Response: `data`, then only `markdown`, as a pretty-printed list.
    expect(messagesOf(1).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_s',
      content: JSON.stringify([{ markdown: '# Issues\n- #1 Bug' }], null, 2),
    });

    const [activity] = toolsOf(2);
    expect(activity?.function.name).toBe('Activity_Tool');
    expect(activity?.function.description).toContain(
      'Tool expects valid stringified JSON object with 2 properties.\n\tProperty names with description, type and required status:\n\ttype: (description: , type: string, required: true),\n participants: (description: , type: string, required: true)',
    );
    const filter = web.requests.find((r) => r.url.startsWith('/filter'));
    expect(filter?.method).toBe('GET');
    expect(filter?.url).toBe('/filter?type=education&participants=1');
    // Without optimizing, a JSON answer reaches the model pretty-printed, as n8n's helper parses it.
    expect(messagesOf(3).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_a',
      content: JSON.stringify(
        [{ activity: 'Learn Express.js', type: 'education', participants: 1 }],
        null,
        2,
      ),
    });
  });
});

/**
 * The platform's sub-workflow path for a template that calls itself (`$workflow.id`), as the workflow
 * service runs it: the callee from its Execute Workflow Trigger with the real engine (not in a manual
 * run's mode, so pinned data does not apply, as in n8n), the last node's output back.
 */
function selfCalls(
  def: N8nExport,
  over: () => Partial<EngineDeps>,
  calls: string[],
): EngineDeps['subWorkflow'] {
  const subWorkflow: EngineDeps['subWorkflow'] = async (call) => {
    calls.push(call.workflowId);
    if (call.workflowId !== def.id) throw new Error(`Workflow '${call.workflowId}' was not found`);
    const engine = new WorkflowEngine(testDeps({ ...over(), subWorkflow }), defaultNodeRegistry);
    const trigger = def.nodes.find((n) => n.type === 'n8n-nodes-base.executeWorkflowTrigger');
    const done = await engine.run(
      def,
      { nodeName: trigger?.name ?? '', items: call.items },
      {
        ...runContext,
        mode: 'integrated',
      },
    );
    if (done.status !== 'success') throw new Error(`The sub-workflow failed: ${done.state.error?.message}`);
    return { items: done.lastItems, nodeRuns: call.nodeRunsBefore };
  };
  return subWorkflow;
}

describe('Call n8n Workflow tool v2 and an Information Extractor with a JSON schema (template 2094)', () => {
  it('the agent calls its own workflow as a tool: the extractor reads the request, the API is asked, the answer aggregated', async () => {
    const def = loadFixture('templates/agent-v1.8-workflow-tool-extractor.json');
    const calls: string[] = [];
    const subWorkflow = selfCalls(def, () => deps, calls);
    web.pages.set('/filter', {
      type: 'application/json; charset=utf-8',
      body: JSON.stringify([
        { activity: 'Bake bread together', type: 'cooking', participants: 2, key: '1' },
        { activity: 'Cook a new recipe', type: 'cooking', participants: 2, key: '2' },
      ]),
    });
    openai.queue(
      toolCalls([
        {
          id: 'call_w',
          name: 'activity_tool',
          arguments: JSON.stringify({ chatInput: 'We are two and bored, we like cooking' }),
        },
      ]),
      completion('```json\n{"type": {"data": "cooking"}, "participants": 2}\n```'),
      completion('Bake bread together, or cook a new recipe.'),
    );
    const { outcome, outputs } = await runFixture(def, { ...deps, subWorkflow }, [
      { json: { sessionId: 's-2094', action: 'sendMessage', chatInput: 'I am bored, ideas for two?' } },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Bake bread together, or cook a new recipe.' }]);
    expect(calls).toEqual([def.id]);

    // The agent's tool: v2 is named by its `name` parameter (after the node only from v2.2), as n8n's.
    const tools = (openai.requests[0]?.tools ?? []) as Array<{
      function: { name: string; parameters: unknown };
    }>;
    expect(tools.map((t) => t.function.name)).toEqual(['activity_tool']);
    expect(tools[0]?.function.parameters).toMatchObject({
      type: 'object',
      properties: { chatInput: { type: 'string' } },
    });
    // The extractor: the tool's input as the text, the template's JSON schema in the instructions.
    const extract = messagesOf(1);
    expect(extract[0]?.content).toContain('You are an expert extraction algorithm.');
    expect(extract[0]?.content).toContain('"participants":{"type":"number"}');
    expect(extract[1]).toEqual({ role: 'user', content: 'We are two and bored, we like cooking' });
    // The HTTP node's query, the template's own parameter names (its `participicants` included).
    const filter = web.requests.find((r) => r.url.startsWith('/filter'));
    expect(filter?.url).toBe('/filter?type=cooking&participicants=2');
    // The sub-workflow's last node (Set) answers the tool: its first item, as JSON.
    const answer = messagesOf(2).at(-1);
    expect(answer?.role).toBe('tool');
    expect(JSON.parse(answer?.content ?? '{}')).toEqual({
      response: JSON.stringify([{ activity: 'Bake bread together' }, { activity: 'Cook a new recipe' }]),
    });
  });
});

describe('MCP Client Tool v1 on the SSE transport (template xRclXA5QzrT3c6U8)', () => {
  // The template's endpoint is an MCP Server Trigger of the n8n instance it was made on
  // (localhost:5678, n8n's default port): the SDK's own server on its SSE transport stands in there.
  const PATH = '/mcp/404f083e-f3f4-4358-83ef-9804099ee253';
  let server: Server;
  const sent: Array<{ channel: string; message: string }> = [];

  beforeAll(async () => {
    const sessions = new Map<string, SSEServerTransport>();
    server = createServer((req, res) => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (req.method === 'GET' && url.pathname === `${PATH}/sse`) {
          const transport = new SSEServerTransport(`${PATH}/messages`, res);
          sessions.set(transport.sessionId, transport);
          res.on('close', () => sessions.delete(transport.sessionId));
          const mcp = new McpServer({ name: 'discord', version: '1.0.0' });
          mcp.registerTool(
            'send_message',
            {
              description: 'Sends a message to a Discord channel',
              inputSchema: { channel: z.string(), message: z.string() },
            },
            async ({ channel, message }) => {
              sent.push({ channel, message });
              return { content: [{ type: 'text', text: `Sent to #${channel}` }] };
            },
          );
          await mcp.connect(transport);
          return;
        }
        const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
        if (req.method === 'POST' && url.pathname === `${PATH}/messages` && transport) {
          await transport.handlePostMessage(req, res);
          return;
        }
        res.writeHead(404).end();
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    // The export's port is fixed: the same file on the other runtime (the suite runs Node 20 and 24 side
    // by side) may hold it; wait until it is free rather than fail.
    const until = Date.now() + 120_000;
    for (;;) {
      const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
        server.once('error', resolve);
        server.listen(5678, '127.0.0.1', () => {
          server.removeAllListeners('error');
          resolve(null);
        });
      });
      if (!error) break;
      if (error.code !== 'EADDRINUSE' || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 130_000);
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('an AI Agent v1.9 lists the server’s tools, the model calls one, the server runs it', async () => {
    const local = createOutboundHttp({
      allowHosts: [new URL(openai.base).host, 'localhost:5678'],
      timeoutMs: 10_000,
    });
    const mcpDeps: Partial<EngineDeps> = {
      ...deps,
      http: local,
      connectAddress: createAddressGuard(['localhost:5678']),
      credential: async (id) => {
        if (id === 'AWozvbIHWTdrKYZt') return { apiKey: 'oa-key', url: `${openai.base}/v1` };
        throw new Error(`Credential '${id}' not found`);
      },
    };
    openai.queue(
      toolCalls([
        {
          id: 'call_d',
          name: 'send_message',
          arguments: JSON.stringify({ channel: 'general', message: 'Hello from n8n' }),
        },
      ]),
      completion('Posted it to #general.'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/agent-v1.9-mcp-client-sse.json'),
      mcpDeps,
      [{ json: { sessionId: 's-mcp', action: 'sendMessage', chatInput: 'Say hello in #general' } }],
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Posted it to #general.' }]);
    expect(sent).toEqual([{ channel: 'general', message: 'Hello from n8n' }]);
    const tools = (openai.requests[0]?.tools ?? []) as Array<{
      function: { name: string; description: string; parameters: { properties?: unknown } };
    }>;
    expect(tools.map((t) => t.function.name)).toEqual(['send_message']);
    expect(tools[0]?.function.description).toBe('Sends a message to a Discord channel');
    expect(Object.keys(tools[0]?.function.parameters.properties ?? {})).toEqual(['channel', 'message']);
    expect(openai.requests[0]?.model).toBe('gpt-4o');
    expect(messagesOf(1).at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_d' });
    expect(String(messagesOf(1).at(-1)?.content)).toContain('Sent to #general');
  });
});

describe('Postgres Chat Memory, Postgres tools and a tool router (template Q63cSgFlcqz291ec)', () => {
  const db = uniqueName('tpl_ai_pg');
  const admin = new pg.Client({ connectionString: PG_URL });
  let pgDeps: Partial<EngineDeps>;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    const url = new URL(PG_URL);
    const seed = new pg.Client({
      connectionString: `${url.protocol}//${url.username}${url.password ? `:${url.password}` : ''}@${url.host}/${db}`,
    });
    await seed.connect();
    await seed.query('CREATE TABLE listings (mls_num text PRIMARY KEY, list_price integer)');
    await seed.query("INSERT INTO listings VALUES ('R1', 1148000), ('V2', 420000)");
    await seed.end();
    pgDeps = {
      ...deps,
      connectAddress: createAddressGuard([url.hostname]),
      credential: async (id): Promise<Record<string, string>> => {
        if (id === 'jEMSvKmtYfzAkhe6') return { apiKey: 'oa-key', url: `${openai.base}/v1` };
        if (id === 'wZnget4L3P3bnlfh')
          return {
            host: url.hostname,
            port: url.port || '5432',
            database: db,
            user: decodeURIComponent(url.username) || 'postgres',
            password: decodeURIComponent(url.password),
            ssl: 'disable',
          };
        throw new Error(`Credential '${id}' not found`);
      },
    };
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });

  it('the primary agent routes to its own sub-workflow, whose agent queries PostgreSQL; the chat is kept in PostgreSQL', async () => {
    const def = loadFixture('templates/agent-v1.7-postgres-memory-tool-router.json');
    const calls: string[] = [];
    const subWorkflow = selfCalls(def, () => pgDeps, calls);
    openai.queue(
      toolCalls([
        { id: 'call_q', name: 'query_database_tool', arguments: JSON.stringify({ input: 'prices' }) },
      ]),
      toolCalls([
        {
          id: 'call_sql',
          name: 'Execute_SQL_Query',
          arguments: JSON.stringify({
            sql_query: 'SELECT mls_num, list_price FROM listings ORDER BY mls_num',
          }),
        },
      ]),
      completion('R1 lists at 1,148,000; V2 at 420,000.'),
      completion('Here are the prices: R1 1,148,000 and V2 420,000.'),
    );
    const { outcome, outputs } = await runFixture(def, { ...pgDeps, subWorkflow }, [
      { json: { sessionId: 's-pg', action: 'sendMessage', chatInput: 'What are the list prices?' } },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs['🤖Primary Agent']).toEqual([
      { output: 'Here are the prices: R1 1,148,000 and V2 420,000.' },
    ]);
    expect(calls).toEqual([def.id]);

    // The primary agent: the template's system message, its two Call n8n Workflow tools by `name`.
    const primary = openai.requests[0];
    expect(messagesOf(0)[0]?.content).toMatch(
      /^You are a helpful assistant that answers the users questions/,
    );
    const offered = (primary?.tools ?? []) as Array<{ function: { name: string; parameters: unknown } }>;
    expect(offered.map((t) => t.function.name).sort()).toEqual([
      'generate_chart_tool',
      'query_database_tool',
    ]);
    // Without $fromAI the tool is LangChain's one-text-input tool, as n8n makes it.
    expect(offered.find((t) => t.function.name === 'query_database_tool')?.function.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string' } },
    });
    // The sub-workflow's agent: the routed user prompt, the template's three Postgres tools.
    const secondary = messagesOf(1);
    expect(secondary.at(-1)).toEqual({ role: 'user', content: 'What are the list prices?' });
    const dbTools = (openai.requests[1]?.tools ?? []) as Array<{ function: { name: string } }>;
    expect(dbTools.map((t) => t.function.name).sort()).toEqual([
      'DB_Schema_and_Tables',
      'Execute_SQL_Query',
      'Table_Definitions',
    ]);
    const rows = messagesOf(2).at(-1);
    expect(rows?.role).toBe('tool');
    expect(JSON.parse(String(rows?.content))).toEqual([
      { mls_num: 'R1', list_price: 1148000 },
      { mls_num: 'V2', list_price: 420000 },
    ]);
    // The sub-workflow's answer (its agent's item) is the primary agent's tool result.
    expect(JSON.parse(String(messagesOf(3).at(-1)?.content))).toEqual({
      output: 'R1 lists at 1,148,000; V2 at 420,000.',
    });

    // The Postgres Chat Memory: the exchange in `{workflow id}_chat_history`, as LangChain's Postgres
    // history stores it (`{...data, type}`).
    const url = new URL(PG_URL);
    const check = new pg.Client({
      connectionString: `${url.protocol}//${url.username}${url.password ? `:${url.password}` : ''}@${url.host}/${db}`,
    });
    await check.connect();
    const stored = await check.query(`SELECT session_id, message FROM "${def.id}_chat_history" ORDER BY id`);
    await check.end();
    expect(stored.rows.map((r) => [r.session_id, r.message.type, r.message.content])).toEqual([
      ['s-pg', 'human', 'What are the list prices?'],
      ['s-pg', 'ai', 'Here are the prices: R1 1,148,000 and V2 420,000.'],
    ]);
  });
});
