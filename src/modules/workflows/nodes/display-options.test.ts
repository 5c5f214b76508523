import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { shownWhen } from '../engine/display-options.js';
import { checkParameters, withDefaults } from '../engine/parameters.js';
import { defaultNodeRegistry } from './index.js';

type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  displayOptions?: unknown;
};

/** The schema's object levels: itself, the branches of a union, an array's items. */
function levels(schema: Schema): Schema[] {
  if (schema.anyOf) return schema.anyOf.flatMap(levels);
  if (schema.items) return levels(schema.items);
  return schema.properties ? [schema] : [];
}

/** Whether a dotted parameter path exists under `schema`. */
function resolves(schema: Schema, path: string): boolean {
  let at: Schema[] = [schema];
  for (const key of path.split('.')) {
    at = at.flatMap(levels).flatMap((l) => (l.properties?.[key] ? [l.properties[key]] : []));
    if (at.length === 0) return false;
  }
  return true;
}

/** Every annotated parameter: its type, path, the object level it sits in, and its displayOptions. */
function* annotations(type: string, root: Schema) {
  const walk = function* (schema: Schema, path: string): Generator<[string, Schema, unknown]> {
    for (const level of levels(schema)) {
      for (const [name, child] of Object.entries(level.properties ?? {})) {
        const options = child.displayOptions ?? child.anyOf?.find((b) => b.displayOptions)?.displayOptions;
        if (options) yield [`${path}${name}`, level, options];
        yield* walk(child, `${path}${name}.`);
      }
    }
  };
  for (const [path, level, options] of walk(root, '')) yield { type, root, path, level, options };
}

describe("n8n's displayOptions on parameter schemas", () => {
  const all = defaultNodeRegistry.types.flatMap((t) => [
    ...annotations(`${t.type}@${t.versions?.join(',') ?? '*'}`, t.schema as Schema),
  ]);

  it('are on the most used nodes', () => {
    const types = new Set(all.map((a) => a.type.replace(/@.*/, '')));
    for (const type of [
      'httpRequest',
      'set',
      'switch',
      'webhook',
      'postgres',
      'code',
      'dateTime',
      'crypto',
      'merge',
    ])
      expect(types, type).toContain(`n8n-nodes-base.${type}`);
  });

  it('name only parameters that exist (beside the parameter, from the root with /, or @version/@tool)', () => {
    const wrong: string[] = [];
    for (const { type, root, path, level, options } of all) {
      for (const option of Array.isArray(options) ? options : [options]) {
        expect(
          Object.keys(option).every((k) => k === 'show' || k === 'hide'),
          `${type} ${path}`,
        ).toBe(true);
        for (const [key, conditions] of Object.entries({ ...option.show, ...option.hide })) {
          if (!Array.isArray(conditions) || conditions.length === 0)
            wrong.push(`${type} ${path}: ${key} has no list`);
          const ok =
            key === '@version' || key === '@tool'
              ? true
              : key.startsWith('/')
                ? resolves(root, key.slice(1))
                : resolves(level, key);
          if (!ok) wrong.push(`${type} ${path}: ${key}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('are ignored by validation and defaults', () => {
    const plain = Type.Object({ a: Type.Boolean({ default: false }), b: Type.String({ default: 'x' }) });
    const annotated = Type.Object({
      a: Type.Boolean({ default: false }),
      b: Type.String({ default: 'x', ...shownWhen({ a: [true] }), generated: 'uuid' }),
    });
    for (const params of [{}, { b: 'y' }, { b: 3 }, { a: 'no' }, { c: 1 }])
      expect(checkParameters(annotated, params, 'parameters', false)).toEqual(
        checkParameters(plain, params, 'parameters', false),
      );
    expect(withDefaults(annotated, {})).toEqual({ a: false, b: 'x' });
    // A real node: HTTP Request's hidden JSON body does not stop a raw body.
    const http = defaultNodeRegistry.get('n8n-nodes-base.httpRequest', 4.2);
    expect(
      checkParameters(
        http?.schema as never,
        {
          url: 'http://127.0.0.1/',
          sendBody: true,
          contentType: 'raw',
          rawContentType: 'text/plain',
          body: 'hi',
        },
        'parameters',
        true,
      ),
    ).toEqual([]);
  });
});
