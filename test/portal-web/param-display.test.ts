/**
 * Issue 38: the portal's node forms show only the parameters that apply, by n8n's displayOptions rules
 * (its `displayParameter`), and leave hidden ones out of what they save. The bundle's own module, run here.
 */
import { describe, expect, it } from 'vitest';
import { type DisplayScope, isShown, withoutHidden } from '../../web/portal/src/components/param-display.js';
import { freshUuid, newEntry, type ParamSchema } from '../../web/portal/src/components/param-schema.js';

const schema: ParamSchema = {
  type: 'object',
  properties: {
    sendBody: { type: 'boolean', default: false },
    contentType: { enum: ['json', 'raw'], default: 'json', displayOptions: { show: { sendBody: [true] } } },
    jsonBody: { type: 'string', displayOptions: { show: { sendBody: [true], contentType: ['json'] } } },
    body: {
      type: 'string',
      displayOptions: [{ show: { sendBody: [true], contentType: ['raw'] } }, { show: { '@version': [1] } }],
    },
    legacy: { type: 'string', displayOptions: { hide: { '@version': [{ _cnd: { gte: 4 } }] } } },
    options: {
      type: 'object',
      properties: {
        arrays: { type: 'string', displayOptions: { show: { '/sendBody': [true] } } },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              kind: { enum: ['field', 'file'] },
              value: { type: 'string', displayOptions: { hide: { kind: ['file'] } } },
              file: { type: 'string', displayOptions: { show: { kind: ['file'] } } },
            },
          },
        },
      },
    },
  },
};

const scope = (values: Record<string, unknown>, version = 4.2): DisplayScope => ({
  level: values,
  levelSchema: schema,
  root: values,
  rootSchema: schema,
  version,
  tool: false,
});
const shown = (values: Record<string, unknown>, version = 4.2) =>
  Object.entries(schema.properties ?? {})
    .filter(([, s]) => isShown(s, scope(values, version)))
    .map(([name]) => name);

describe("displayOptions in the portal's node forms", () => {
  it('shows a parameter when every show key holds, reading unset parameters as their defaults', () => {
    expect(shown({})).toEqual(['sendBody', 'options']);
    // contentType is unset: its default (json) counts.
    expect(shown({ sendBody: true })).toEqual(['sendBody', 'contentType', 'jsonBody', 'options']);
    expect(shown({ sendBody: true, contentType: 'raw' })).toEqual([
      'sendBody',
      'contentType',
      'body',
      'options',
    ]);
  });

  it('hides by any hide key, reads @version with n8n conditions, and takes any of a list', () => {
    expect(shown({}, 3)).toEqual(['sendBody', 'legacy', 'options']);
    expect(shown({}, 1)).toEqual(['sendBody', 'body', 'legacy', 'options']);
  });

  it('shows a parameter whose condition reads an expression (known only when the node runs)', () => {
    expect(shown({ sendBody: '={{ $json.send }}' })).toContain('jsonBody');
  });

  it('drops hidden parameters on save at every depth, keeping what the schema does not know', () => {
    const values = {
      sendBody: false,
      jsonBody: '{"a":1}',
      unknownToSchema: 1,
      options: {
        arrays: 'x',
        rows: [
          { kind: 'file', value: 'v', file: 'data' },
          { kind: 'field', value: 'v', file: 'stale' },
        ],
      },
    };
    expect(withoutHidden(values, schema, { version: 4.2, tool: false })).toEqual({
      sendBody: false,
      unknownToSchema: 1,
      options: {
        rows: [
          { kind: 'file', file: 'data' },
          { kind: 'field', value: 'v' },
        ],
      },
    });
  });

  it('gives a new entry a fresh UUID where the schema says so', () => {
    const item: ParamSchema = {
      type: 'object',
      required: ['name'],
      properties: { id: { type: 'string', generated: 'uuid' }, name: { type: 'string', default: '' } },
    };
    const a = newEntry(item) as { id: string; name: string };
    const b = newEntry(item) as { id: string };
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.id).not.toBe(b.id);
    expect(a.name).toBe('');
    expect(freshUuid()).not.toBe(freshUuid());
  });
});
