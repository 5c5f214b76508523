import { describe, expect, it } from 'vitest';
import { checkParameters, withDefaults } from '../engine/parameters.js';
import { ctx, jsonOf, testDeps, trigger, webhookNode, workflow } from '../engine/testing.js';
import { WorkflowEngine } from '../engine/workflow-engine.js';
import { PLATFORM_PREFIX, resolveNodeAlias } from './aliases.js';
import { defaultNodeRegistry } from './index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

/** Runs webhook → node(parameters) and returns the outcome. */
async function runOne(type: string, parameters: Record<string, unknown>, items = [{ json: {} }]) {
  const def = workflow([webhookNode, { name: 'N', type, parameters }], [['Webhook', 'N']]);
  return engine.run(def, trigger(items), ctx);
}

/** The problem paths of a node given by its short name (resolved as at import) with these parameters. */
const problemsOf = (type: string, params: Record<string, unknown>) => {
  const node = resolveNodeAlias({ id: 'n', name: 'N', type, position: [0, 0], parameters: params });
  const nodeType = defaultNodeRegistry.get(node.type, node.typeVersion);
  if (!nodeType) throw new Error(type);
  const problems = checkParameters(nodeType.schema, node.parameters, 'parameters', true);
  // A union (Merge v3's `mode`) may name one path twice.
  if (problems.length > 0 || !nodeType.check) return [...new Set(problems.map((p) => p.path))];
  const limits = { maxWaitMs: 86_400_000, now: new Date() };
  return nodeType.check(withDefaults(nodeType.schema, node.parameters) as never, limits).map((p) => p.path);
};

describe('parameter schemas', () => {
  it.each([
    ['webhook', { path: 'x', authentication: 'magic' }, ['parameters.authentication']],
    ['webhook', { path: 'x', responseData: 'all' }, ['parameters.responseData']],
    ['webhook', { path: 'x', options: { bodyLimitBytes: 0 } }, ['parameters.options.bodyLimitBytes']],
    ['respondToWebhook', { respondWith: 'xml' }, ['parameters.respondWith']],
    // Resolved to n8n's Respond to Webhook: its headers are n8n's list of entries.
    [
      'respondToWebhook',
      { responseHeaders: { a: 1 } },
      ['parameters.options.responseHeaders.entries[0].value'],
    ],
    ['httpRequest', {}, ['parameters.url']],
    ['httpRequest', { url: 'ftp://x' }, ['parameters.url']],
    [
      'httpRequest',
      { url: 'https://x', responseFormat: 'xml', timeout: 0 },
      ['parameters.timeout', 'parameters.responseFormat'],
    ],
    ['set', { values: 'x' }, ['parameters.values']],
    ['set', { keepOnlySet: 'yes' }, ['parameters.keepOnlySet']],
    ['if', { conditions: [] }, ['parameters.conditions']],
    // Resolved to n8n's If: the operation is its filter condition's operator.
    [
      'if',
      { conditions: [{ value1: 1, operation: 'like' }] },
      ['parameters.conditions.conditions[0].operator.operation'],
    ],
    ['switch', { rules: [] }, ['parameters.rules']],
    ['merge', { mode: 'zip' }, ['parameters.mode']],
    ['splitItems', {}, ['parameters.field']],
    ['wait', { unit: 'weeks' }, ['parameters.unit']],
    ['stopAndError', {}, ['parameters.errorMessage']],
    ['markdown', { field: '' }, ['parameters.field']],
    ['validate', { fields: [{ field: 'a', type: 'date' }] }, ['parameters.fields[0].type']],
  ])('%s %j → problems at %j', (type, params, paths) => {
    expect(problemsOf(type, params)).toEqual(paths);
  });

  it('every node type accepts its minimal parameters', () => {
    const minimal: Record<string, Record<string, unknown>> = {
      webhook: { path: 'a' },
      httpRequest: { url: 'https://example.test' },
      splitItems: { field: 'a' },
      stopAndError: { errorMessage: 'x' },
      validate: { fields: [{ field: 'a', type: 'string' }] },
      documentLoad: { source: 'text', content: 'x', credential: 'kb' },
      knowledgeQuery: { query: 'x', credential: 'kb' },
      flowPrediction: { flowId: 'f', question: 'x', credential: 'c' },
      gamePlatform: { operation: 'getPublicMilestones', credential: 'g' },
      vectorStoreKnowledgeBase: { topic: 'faq' },
    };
    const platformTypes = defaultNodeRegistry.types.filter((t) => !t.versions).map((t) => t.type);
    expect(platformTypes.every((t) => t.startsWith(PLATFORM_PREFIX))).toBe(true);
    for (const type of platformTypes) {
      const name = type.slice(PLATFORM_PREFIX.length);
      expect(problemsOf(name, minimal[name] ?? {}), type).toEqual([]);
    }
  });
});

describe('set', () => {
  it('assigns dot paths and keeps only the set fields when asked', async () => {
    const out = await runOne('set', { values: { 'customer.email': '={{ $json.e }}' }, keepOnlySet: true }, [
      { json: { e: 'a@b.c', other: 1 } },
    ]);
    expect(jsonOf(out.state, 'N')).toEqual([{ customer: { email: 'a@b.c' } }]);
  });

  it('refuses prototype keys', async () => {
    const out = await runOne('set', { values: { '__proto__.polluted': 1 } });
    expect(out.status).toBe('error');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('splitItems', () => {
  it('splits an array field into items', async () => {
    const out = await runOne('splitItems', { field: 'body.lines', includeOtherFields: true }, [
      { json: { id: 1, body: { lines: [{ sku: 'a' }, 'b'] } } },
    ]);
    expect(jsonOf(out.state, 'N')).toEqual([
      { id: 1, sku: 'a' },
      { id: 1, value: 'b' },
    ]);
  });
});

describe('respondToWebhook', () => {
  it('answers text and noData', async () => {
    const text = await runOne(
      'respondToWebhook',
      { respondWith: 'text', responseBody: '=hi {{ $json.n }}' },
      [{ json: { n: 2 } }],
    );
    expect(text.webhookResponse).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'hi 2',
    });
    const none = await runOne('respondToWebhook', { respondWith: 'noData', responseCode: 204 });
    expect(none.webhookResponse).toEqual({ statusCode: 204, headers: {}, body: null });
  });
});

describe('validate node', () => {
  const params = {
    source: 'body',
    fields: [
      { field: 'email', type: 'email' },
      { field: 'age', type: 'integer', required: false },
      { field: 'name', type: 'string', minLength: 2 },
      { field: 'tags', type: 'array', required: false },
    ],
  };

  it('passes valid items on', async () => {
    const out = await runOne('validate', params, [
      { json: { body: { email: 'a@b.co', name: 'Ada', age: 3 } } },
    ]);
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'N')).toHaveLength(1);
  });

  it('fails listing every problem', async () => {
    const out = await runOne('validate', params, [
      { json: { body: { email: 'nope', age: 1.5, tags: 'x' } } },
    ]);
    expect(out.status).toBe('error');
    const problems = [
      { path: 'body.email', message: 'must be an email address' },
      { path: 'body.age', message: 'must be integer' },
      { path: 'body.name', message: 'is required' },
      { path: 'body.tags', message: 'must be array' },
    ];
    expect(out.state.error?.problems).toEqual(problems);
    expect(JSON.parse(out.state.error?.description ?? '')).toEqual(problems);
    expect(out.state.error?.message).toMatch(/^Validation failed: body\.email/);
  });

  it('fails when the source is not an object', async () => {
    const out = await runOne('validate', params, [{ json: { body: 'x' } }]);
    expect(out.state.error?.problems).toEqual([{ path: 'body', message: 'must be an object' }]);
  });
});

describe('wait parameters at run time', () => {
  it('fails on a date that is not a date', async () => {
    const out = await runOne('wait', { resume: 'specificTime', dateTime: 'soon' });
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/not a date/);
  });
});
