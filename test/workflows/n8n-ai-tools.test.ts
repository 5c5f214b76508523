import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import type { Execution } from './db-support.js';
import { agentOutput, runAgentWithTool } from './support/ai-agent-run.js';
import { type AiNodeSpec, LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { FIXTURES } from './support/n8n-fixtures.js';
import { createCredential, createWorkflow, workflowPlatform } from './support.js';

/**
 * n8n's Call n8n Workflow tool and HTTP Request tool on an AI Agent, through the platform: the
 * sub-workflow runs on the platform's sub-workflow path, the request through its outbound guard and
 * credentials; the model (a local OpenAI upstream) reads each answer as the tool result.
 */

const openai = new FakeOpenAi();
/** A page with navigation around one article, for the tool's text and HTML optimizers. */
const PAGE = `<!doctype html><html><head><title>Tides</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>How tides work</h1>
<p>The Moon's gravity pulls the oceans toward it, and the water bulges on the side facing the Moon. ${'More about the tides and the Moon. '.repeat(20)}</p>
<h2>Spring <span class="ad">AD</span> tides</h2><p>When Sun and Moon align, tides are highest. ${'Sun and Moon together. '.repeat(20)}</p>
<h2>Neap tides</h2><p>At quarter moons the pulls partly cancel.</p></article>
<footer>© Tide Times</footer></body></html>`;
const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
let api: Server;
let apiBase = '';

beforeAll(async () => {
  await openai.start();
  api = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body });
      if (req.url?.startsWith('/page')) {
        res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
        return;
      }
      if (req.url?.startsWith('/big')) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5_000));
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, path: req.url }));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await openai.stop();
  await new Promise<void>((resolve) => api.close(() => resolve()));
});
beforeEach(() => {
  openai.reset();
  seen.length = 0;
});

const toolResult = (i: number) =>
  ((openai.requests[i]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
const offered = (i: number) =>
  (
    (openai.requests[i]?.tools ?? []) as Array<{
      function: { name: string; description: string; parameters: unknown };
    }>
  ).map((t) => t.function);

describe.each(await testDialects())('AI tools through the platform on %s', (dialect) => {
  let p: TestPlatform;
  let openAiCred = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    openAiCred = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
  });
  afterAll(() => p.close());

  async function runAgent(tool: AiNodeSpec): Promise<Execution> {
    const { status, execution } = await runAgentWithTool(p, openAiCred, tool, {
      typeVersion: 3.1,
      text: 'Weather in Paris?',
      maxIterations: 3,
    });
    expect(status).toBe(200);
    return execution;
  }
  const outputOf = agentOutput;

  async function weatherWorkflow(): Promise<string> {
    return createWorkflow(p, {
      name: 'weather',
      nodes: [
        {
          id: 't',
          name: 'Start',
          type: 'n8n-nodes-base.executeWorkflowTrigger',
          typeVersion: 1.1,
          position: [0, 0],
          parameters: { inputSource: 'passthrough' },
        },
        {
          id: 's',
          name: 'Answer',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          position: [200, 0],
          parameters: {
            assignments: {
              assignments: [
                {
                  id: 'a',
                  name: 'response',
                  value:
                    "={{ 'Sunny in ' + ($json.query ?? $json.city) + ($json.unit ? ' (' + $json.unit + ')' : '') }}",
                  type: 'string',
                },
              ],
            },
            options: {},
          },
        },
      ],
      connections: { Start: { main: [[{ node: 'Answer', type: 'main', index: 0 }]] } },
      settings: {},
    });
  }

  it('Call n8n Workflow tool v1.3: {query, …fields} in, the response property back', async () => {
    const sub = await weatherWorkflow();
    openai.queue(
      toolCalls([{ id: 'c1', name: 'weather', arguments: JSON.stringify({ query: 'Paris' }) }]),
      completion('It is sunny in Paris.'),
    );
    const e = await runAgent({
      name: 'weather',
      type: `${LC}.toolWorkflow`,
      typeVersion: 1.3,
      parameters: {
        description: 'Gets the weather of a city',
        workflowId: { __rl: true, mode: 'id', value: sub },
        fields: { values: [{ name: 'unit', stringValue: 'celsius' }] },
      },
    });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'It is sunny in Paris.' });
    expect(offered(0)[0]).toMatchObject({
      name: 'weather',
      description: 'Gets the weather of a city',
      parameters: { type: 'object', required: ['query'] },
    });
    expect(toolResult(1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'Sunny in Paris (celsius)' });
  });

  it('Call n8n Workflow tool v2.2: $fromAI inputs typed and checked, the first item back as JSON', async () => {
    const sub = await weatherWorkflow();
    openai.queue(
      toolCalls([{ id: 'c1', name: 'weather_v2', arguments: JSON.stringify({ city: { nested: 'x' } }) }]),
      toolCalls([{ id: 'c2', name: 'weather_v2', arguments: JSON.stringify({ city: 'Lyon' }) }]),
      completion('Sunny in Lyon.'),
    );
    const e = await runAgent({
      name: 'weather_v2',
      type: `${LC}.toolWorkflow`,
      typeVersion: 2.2,
      parameters: {
        description: 'Weather',
        workflowId: { __rl: true, mode: 'list', value: sub },
        workflowInputs: {
          mappingMode: 'defineBelow',
          value: { city: "={{ $fromAI('city', 'The city', 'string') }}" },
          matchingColumns: [],
          schema: [],
        },
      },
    });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'Sunny in Lyon.' });
    expect(offered(0)[0]?.parameters).toEqual({
      type: 'object',
      properties: { city: { type: 'string', description: 'The city' } },
      required: ['city'],
    });
    // A hostile argument (an object for a string) is refused before the sub-workflow runs; the model is told.
    expect(toolResult(1)?.content).toContain("the argument 'city' must be text");
    // From v2.1 every item the callee outputs, as a list (n8n's `returnAllItems`).
    expect(JSON.parse(toolResult(2)?.content ?? '[]')).toEqual([{ response: 'Sunny in Lyon' }]);
  });

  it("Call n8n Workflow tool v1.1 with source 'parameter': the workflow given as JSON runs as the sub-workflow", async () => {
    // As templates ship it: text, no name, a Manual Trigger named "Execute workflow" as its start.
    const workflowJson = JSON.stringify({
      nodes: [
        {
          id: 'm',
          name: 'Execute workflow',
          type: 'n8n-nodes-base.manualTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters: {},
        },
        {
          id: 's',
          name: 'Set',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          position: [200, 0],
          parameters: {
            assignments: {
              assignments: [
                { id: 'a', name: 'response', value: "={{ 'Domain: ' + $json.query }}", type: 'string' },
              ],
            },
            options: {},
          },
        },
      ],
      connections: { 'Execute workflow': { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
      pinData: {},
    });
    openai.queue(
      toolCalls([{ id: 'c1', name: 'domain', arguments: JSON.stringify({ query: 'example.org' }) }]),
      completion('Done.'),
    );
    const e = await runAgent({
      name: 'domain',
      type: `${LC}.toolWorkflow`,
      typeVersion: 1.1,
      parameters: { name: 'domain', description: 'Looks a domain up', source: 'parameter', workflowJson },
    });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(toolResult(1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'Domain: example.org' });
  });

  it("n8n's own Get Weather sub-workflow (imported unmodified) answers the Workflow tool", async () => {
    const sub = await createWorkflow(
      p,
      JSON.parse(readFileSync(join(FIXTURES, 'ai/Test_Subworkflow_Get_Weather.json'), 'utf8')),
    );
    openai.queue(
      toolCalls([{ id: 'c1', name: 'get_weather', arguments: JSON.stringify({ query: 'Berlin' }) }]),
      completion('Sunny.'),
    );
    const e = await runAgent({
      name: 'get_weather',
      type: `${LC}.toolWorkflow`,
      typeVersion: 1.1,
      parameters: { description: 'Get the weather', workflowId: { __rl: true, mode: 'list', value: sub } },
    });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'Sunny.' });
    expect(toolResult(1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'Weather is sunny' });
  });

  it('HTTP Request tool: placeholders encoded into the URL and JSON body, a credential applied, the answer read', async () => {
    const cred = await createCredential(p, 'api key', 'httpHeaderAuth', { name: 'x-api-key', value: 'k-1' });
    openai.queue(
      toolCalls([
        {
          id: 'c1',
          name: 'lookup',
          arguments: JSON.stringify({ city: 'Paris/../admin?x=1', days: 3, note: 'say "hi"' }),
        },
      ]),
      completion('Done.'),
    );
    const e = await runAgent({
      name: 'lookup',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: {
        toolDescription: 'Looks a city up',
        method: 'POST',
        url: `${apiBase}/cities/{city}`,
        authentication: 'genericCredentialType',
        genericAuthType: 'httpHeaderAuth',
        sendQuery: true,
        parametersQuery: {
          values: [
            { name: 'days', valueProvider: 'modelRequired' },
            { name: 'lang', valueProvider: 'fieldValue', value: 'en' },
          ],
        },
        sendBody: true,
        specifyBody: 'json',
        jsonBody: '{"note": "{note}", "days": {days}}',
        placeholderDefinitions: { values: [{ name: 'days', type: 'number', description: 'How many days' }] },
      },
      credentials: { httpHeaderAuth: { id: cred, name: 'api key' } },
    } as AiNodeSpec);
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'Done.' });
    expect(offered(0)[0]?.parameters).toMatchObject({
      type: 'object',
      properties: { city: {}, days: { type: 'number', description: 'How many days' }, note: {} },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.url).toBe('/cities/Paris%2F..%2Fadmin%3Fx%3D1?days=3&lang=en');
    expect(seen[0]?.headers['x-api-key']).toBe('k-1');
    expect(JSON.parse(seen[0]?.body ?? '{}')).toEqual({ note: 'say "hi"', days: 3 });
    expect(JSON.parse(toolResult(1)?.content ?? '{}')).toEqual({
      ok: true,
      path: '/cities/Paris%2F..%2Fadmin%3Fx%3D1?days=3&lang=en',
    });
  });

  it('HTTP Request tool: Optimize Response reads a page as text (Readability) or picks elements (HTML)', async () => {
    openai.queue(toolCalls([{ id: 'c1', name: 'page', arguments: '{}' }]), completion('ok'));
    await runAgent({
      name: 'page',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: {
        toolDescription: 'page',
        url: `${apiBase}/page`,
        optimizeResponse: true,
        responseType: 'text',
      },
    });
    const text = toolResult(1)?.content ?? '';
    expect(text).toContain("The Moon's gravity pulls the oceans toward it");
    expect(text).toContain('At quarter moons the pulls partly cancel.');
    expect(text).not.toContain('<p>');
    expect(text).not.toContain('Tide Times');

    openai.reset();
    openai.queue(toolCalls([{ id: 'c1', name: 'heads', arguments: '{}' }]), completion('ok'));
    await runAgent({
      name: 'heads',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: {
        toolDescription: 'heads',
        url: `${apiBase}/page`,
        optimizeResponse: true,
        responseType: 'html',
        cssSelector: 'article h2',
        onlyContent: true,
        elementsToOmit: '.ad',
      },
    });
    // Each heading's inner HTML as text (html-to-text), the ad left out, whitespace collapsed.
    expect(JSON.parse(toolResult(1)?.content ?? '[]')).toEqual(['Spring tides', 'Neap tides']);

    openai.reset();
    openai.queue(toolCalls([{ id: 'c1', name: 'raw', arguments: '{}' }]), completion('ok'));
    await runAgent({
      name: 'raw',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: {
        toolDescription: 'raw',
        url: `${apiBase}/page`,
        optimizeResponse: true,
        responseType: 'html',
        cssSelector: 'h2',
        truncateResponse: true,
        maxLength: 40,
      },
    });
    const raw = toolResult(1)?.content ?? '';
    expect(raw).toBe(
      JSON.stringify(['Spring <span class="ad">AD</span> tides', 'Neap tides'], null, 2).slice(0, 40),
    );

    openai.reset();
    openai.queue(toolCalls([{ id: 'c1', name: 'bad', arguments: '{}' }]), completion('could not'));
    await runAgent({
      name: 'bad',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: {
        toolDescription: 'bad',
        url: `${apiBase}/page`,
        optimizeResponse: true,
        responseType: 'html',
        cssSelector: 'h2[',
      },
    });
    expect(toolResult(1)?.content).toBe(`There was an error: "'h2[' is not a CSS selector"`);
  });

  it('HTTP Request tool: the answer cut at maxLength; a guarded host refused, the model told', async () => {
    openai.queue(
      toolCalls([{ id: 'c1', name: 'big', arguments: '{}' }]),
      toolCalls([{ id: 'c2', name: 'big', arguments: '{}' }]),
      completion('ok'),
    );
    const big = await runAgent({
      name: 'big',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: { toolDescription: 'big', url: `${apiBase}/big`, truncateResponse: true, maxLength: 100 },
    });
    expect(outputOf(big)).toEqual({ output: 'ok' });
    expect(toolResult(1)?.content).toBe('x'.repeat(100));
    openai.reset();
    openai.queue(toolCalls([{ id: 'c1', name: 'meta', arguments: '{}' }]), completion('could not'));
    const meta = await runAgent({
      name: 'meta',
      type: `${LC}.toolHttpRequest`,
      typeVersion: 1.1,
      parameters: { toolDescription: 'meta', url: 'http://169.254.169.254/latest/meta-data' },
    });
    expect(outputOf(meta)).toEqual({ output: 'could not' });
    expect(toolResult(1)?.content).toMatch(/not allowed|private|refused|blocked/i);
  });
});
