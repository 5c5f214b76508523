import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.js';
import { Nullable, withErrors } from '../../../core/http/schemas.js';
import type { NodeRegistry } from '../engine/node-type.js';
import { NoQuery } from '../executions/n8n-schemas.js';

const config = { auth: { service: 'workflow', endpointLimit: true } } as const;
const tags = ['Node types'];

const NodeTypeEntry = Type.Object({
  type: Type.String({ description: 'n8n’s type name, e.g. n8n-nodes-base.set' }),
  versions: Nullable(
    Type.Array(Type.Number(), {
      description: 'The typeVersions served; null: any (the platform’s own nodes)',
    }),
  ),
  trigger: Type.Boolean(),
  subNode: Nullable(Type.String({ description: 'The connection type a sub-node supplies (ai_tool…)' })),
});

/** A catalogue (about 130 rows, the same for every account), not a paged list: no cursor, limit or sort. */
const NodeTypeCatalogue = Type.Object({ types: Type.Array(NodeTypeEntry) });

const SchemaQuery = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 200, description: 'A node type name' }),
    version: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1000,
        description: 'The typeVersion (n8n reads a missing one as 1)',
      }),
    ),
  },
  { additionalProperties: false },
);

const NodeTypeSchemaView = Type.Object({
  type: Type.String(),
  version: Nullable(Type.Number()),
  trigger: Type.Boolean(),
  schema: Type.Unknown({
    description:
      'The JSON schema of the node’s parameters at that version (defaults included); an expression string (={{ … }}) may stand in for any value',
  }),
});

/** The node catalogue, one row per type name (its versions together), in the catalogue's order. */
export function nodeTypeRows(registry: NodeRegistry) {
  const rows = new Map<
    string,
    { type: string; versions: number[] | null; trigger: boolean; subNode: string | null }
  >();
  for (const t of registry.types) {
    const row = rows.get(t.type);
    if (row) {
      row.versions = [...(row.versions ?? []), ...(t.versions ?? [])].sort((a, b) => a - b);
      continue;
    }
    rows.set(t.type, {
      type: t.type,
      versions: t.versions ? [...t.versions] : null,
      trigger: t.trigger === true,
      subNode: t.subNode ?? null,
    });
  }
  return [...rows.values()];
}

/**
 * Read-only routes over the node catalogue: what a client (the portal's parameter forms) needs to
 * build a node's parameters. They read no account data; `workflow:read` as the workflow reads.
 */
export function nodeTypeRoutes(app: FastifyInstance, registry: NodeRegistry): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const rows = nodeTypeRows(registry);

  r.get(
    '/api/v1/node-types',
    {
      config,
      schema: {
        tags,
        summary: 'The node types this server runs, with their versions',
        querystring: NoQuery,
        response: withErrors({ 200: NodeTypeCatalogue }),
      },
    },
    async () => ({ types: rows }),
  );

  r.get(
    '/api/v1/node-types/schema',
    {
      config,
      schema: {
        tags,
        summary: 'The parameter schema of a node type at a version; an unknown type or version is a 404',
        querystring: SchemaQuery,
        response: withErrors({ 200: NodeTypeSchemaView }),
      },
    },
    async (request) => {
      const { type, version } = request.query;
      const found = registry.get(type, version);
      if (!found) throw new AppError('NOT_FOUND', registry.missing(type, version));
      return {
        type: found.type,
        version: found.versions ? (version ?? 1) : null,
        trigger: found.trigger === true,
        schema: found.schema,
      };
    },
  );
}
