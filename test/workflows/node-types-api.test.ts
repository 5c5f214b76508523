import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { workflowPlatform } from './support.js';

/** The node catalogue over HTTP: what the portal's parameter forms are built from. */
describe.each(await testDialects())('node types API on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  it('lists every node type once, its versions together', async () => {
    const res = await p.request({ method: 'GET', url: '/api/v1/node-types' });
    expect(res.statusCode, res.body).toBe(200);
    const { types: data } = res.json() as {
      types: Array<{ type: string; versions: number[] | null; trigger: boolean; subNode: string | null }>;
    };
    expect(new Set(data.map((t) => t.type)).size).toBe(data.length);
    expect(data.find((t) => t.type === 'n8n-nodes-base.set')).toEqual({
      type: 'n8n-nodes-base.set',
      versions: [1, 2, 3, 3.1, 3.2, 3.3, 3.4],
      trigger: false,
      subNode: null,
    });
    expect(data.find((t) => t.type === 'n8n-nodes-base.webhook')).toMatchObject({ trigger: true });
    expect(data.find((t) => t.type === '@n8n/n8n-nodes-langchain.toolCalculator')).toMatchObject({
      subNode: 'ai_tool',
    });
  });

  it('answers the parameter schema of a type at a version, with its defaults', async () => {
    const res = await p.request({
      method: 'GET',
      url: '/api/v1/node-types/schema?type=n8n-nodes-base.set&version=3.4',
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as {
      type: string;
      version: number;
      trigger: boolean;
      schema: { properties: Record<string, { properties?: object }> };
    };
    expect(body).toMatchObject({ type: 'n8n-nodes-base.set', version: 3.4, trigger: false });
    expect(body.schema.properties.mode).toEqual({ enum: ['manual', 'raw'], default: 'manual' });
    expect(body.schema.properties.options?.properties).toHaveProperty('stripBinary');
    // n8n's displayOptions travel with the schema (the form hides what does not apply), and the
    // assignments' ids are marked as generated for new entries.
    expect(body.schema.properties.jsonOutput).toMatchObject({ displayOptions: { show: { mode: ['raw'] } } });
    expect(JSON.stringify(body.schema.properties.assignments)).toContain('"generated":"uuid"');
    const http = await p.request({
      method: 'GET',
      url: '/api/v1/node-types/schema?type=n8n-nodes-base.httpRequest&version=4.2',
    });
    expect(http.json().schema.properties.jsonBody.displayOptions).toEqual({
      show: { sendBody: [true], contentType: ['json'], specifyBody: ['json'] },
    });
    expect(http.json().schema.properties.bodyParameters.displayOptions).toHaveLength(3);
    // An older version has the other shape.
    const v3 = await p.request({
      method: 'GET',
      url: '/api/v1/node-types/schema?type=n8n-nodes-base.set&version=3',
    });
    expect(v3.json().schema.properties).toHaveProperty('fields');
    expect(v3.json().schema.properties).not.toHaveProperty('assignments');
    // A type name with a slash travels in the query.
    const tool = await p.request({
      method: 'GET',
      url: `/api/v1/node-types/schema?type=${encodeURIComponent('@n8n/n8n-nodes-langchain.toolCalculator')}&version=1`,
    });
    expect(tool.statusCode, tool.body).toBe(200);
  });

  it('refuses unknown types and versions with a 404 naming the supported versions, bad input with a 400', async () => {
    const unknown = await p.request({ method: 'GET', url: '/api/v1/node-types/schema?type=nope.nothing' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND', message: "unknown node type 'nope.nothing'" });
    const version = await p.request({
      method: 'GET',
      url: '/api/v1/node-types/schema?type=n8n-nodes-base.set&version=9',
    });
    expect(version.statusCode).toBe(404);
    expect(version.json().message).toContain('supported: 1, 2, 3, 3.1, 3.2, 3.3, 3.4');
    for (const url of [
      '/api/v1/node-types/schema',
      '/api/v1/node-types/schema?type=n8n-nodes-base.set&version=abc',
      '/api/v1/node-types/schema?type=n8n-nodes-base.set&extra=1',
      `/api/v1/node-types/schema?type=${'x'.repeat(201)}`,
      '/api/v1/node-types?limit=5',
    ]) {
      const res = await p.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
  });

  describe('access', () => {
    authSuite(() => p, { method: 'GET', url: '/api/v1/node-types', service: 'workflow' });
    authSuite(() => p, {
      method: 'GET',
      url: '/api/v1/node-types/schema?type=n8n-nodes-base.noOp',
      service: 'workflow',
    });
  });
});
