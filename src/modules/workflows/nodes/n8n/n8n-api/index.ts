import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';

/** Longest one call may take (the outbound client caps it further by OUTBOUND_TIMEOUT_MS). */
const TIMEOUT_MS = 30_000;
/** Pages a getAll with returnAll reads at most (250 entries each). */
const MAX_PAGES = 400;

const RESOURCES = ['audit', 'credential', 'execution', 'workflow'] as const;
const OPERATIONS = [
  'generate',
  'create',
  'delete',
  'getSchema',
  'get',
  'getAll',
  'activate',
  'deactivate',
  'update',
] as const;

/** n8n's resource locator (`{__rl, value, mode}`) or a plain id. */
const Locator = Type.Union([Type.String(), Type.Object({ value: Type.Unknown() })], { default: '' });

const N8nParameters = Type.Object(
  {
    resource: Type.Enum(RESOURCES, { default: 'workflow' }),
    operation: Type.Optional(Type.Enum(OPERATIONS)),
    // workflow
    workflowId: Locator,
    workflowObject: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], { default: '' }),
    // execution
    executionId: Type.String({ default: '' }),
    // credential
    name: Type.String({ default: '' }),
    credentialTypeName: Type.String({ default: '' }),
    data: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], { default: '' }),
    credentialId: Type.String({ default: '' }),
    // lists
    returnAll: Type.Boolean({ default: false }),
    limit: Type.Integer({ minimum: 1, maximum: 250, default: 100 }),
    filters: Type.Object(
      {
        activeWorkflows: Type.Optional(Type.Boolean()),
        tags: Type.Optional(Type.String()),
        name: Type.Optional(Type.String()),
        projectId: Type.Optional(Type.String()),
        excludePinnedData: Type.Optional(Type.Boolean()),
        status: Type.Optional(Type.String()),
        workflowId: Type.Optional(Locator),
      },
      { additionalProperties: false, default: {} },
    ),
    options: Type.Object(
      { includeData: Type.Optional(Type.Boolean()), activeWorkflows: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
    additionalOptions: Type.Object(
      {
        categories: Type.Optional(Type.Array(Type.String(), { maxItems: 10 })),
        daysAbandonedWorkflow: Type.Optional(Type.Number()),
      },
      { additionalProperties: false, default: {} },
    ),
    requestOptions: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

type Params = {
  resource: (typeof RESOURCES)[number];
  operation?: (typeof OPERATIONS)[number];
  workflowId: string | { value: unknown };
  workflowObject: string | Record<string, unknown>;
  executionId: string;
  name: string;
  credentialTypeName: string;
  data: string | Record<string, unknown>;
  credentialId: string;
  returnAll: boolean;
  limit: number;
  filters: {
    activeWorkflows?: boolean;
    tags?: string;
    name?: string;
    projectId?: string;
    excludePinnedData?: boolean;
    status?: string;
    workflowId?: string | { value: unknown };
  };
  options: { includeData?: boolean; activeWorkflows?: boolean };
  additionalOptions: { categories?: string[]; daysAbandonedWorkflow?: number };
};

/** n8n's default operation of each resource. */
const DEFAULT_OPERATION: Record<Params['resource'], Params['operation']> = {
  audit: 'generate',
  credential: 'create',
  execution: 'getAll',
  workflow: 'getAll',
};

const ALLOWED: Record<Params['resource'], ReadonlyArray<(typeof OPERATIONS)[number]>> = {
  audit: ['generate'],
  credential: ['create', 'delete', 'getSchema'],
  execution: ['get', 'getAll', 'delete'],
  workflow: ['activate', 'create', 'deactivate', 'delete', 'get', 'getAll', 'update'],
};

/** A resource locator's value as text ('' when unset). */
function locatorValue(value: string | { value: unknown } | undefined): string {
  const raw = typeof value === 'object' && value !== null ? value.value : value;
  return typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
}

/** An id from a resource locator: the value, or the last path segment of a workflow URL. */
function idOf(value: string | { value: unknown } | undefined, what: string): string {
  const text = locatorValue(value);
  const fromUrl = /\/workflow\/([^/?#]+)/.exec(text)?.[1];
  const id = fromUrl ?? text;
  if (!id) throw new NodeOperationError(`The parameter "${what}" has to be set`);
  return id;
}

function jsonObject(value: string | Record<string, unknown>, what: string): Record<string, unknown> {
  if (typeof value !== 'string') return value;
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new NodeOperationError(`"${what}" must be a JSON object`, { description: value.slice(0, 200) });
}

/** The fields n8n's node sends of a workflow (its create/update take no read-only fields). */
function workflowBody(value: string | Record<string, unknown>): Record<string, unknown> {
  const wf = jsonObject(value, 'Workflow Object');
  const { name, nodes, connections, settings, staticData } = wf;
  return {
    name,
    nodes,
    connections,
    settings: settings ?? {},
    ...(staticData !== undefined ? { staticData } : {}),
  };
}

/**
 * n8n's n8n node: this platform's own public API (`/api/v1`) called with the `n8nApi` credential's
 * key (`apiKey`, sent as X-N8N-API-KEY) at its `baseUrl`, through the guarded outbound client. The
 * answers are n8n's: a list is one item per entry.
 */
export const n8nApiNode = defineNode({
  type: 'n8n-nodes-base.n8n',
  versions: [1],
  schema: N8nParameters,
  check: (raw) => {
    const p = raw as Params;
    const op = p.operation ?? DEFAULT_OPERATION[p.resource];
    return op && ALLOWED[p.resource].includes(op)
      ? []
      : [{ path: 'parameters.operation', message: `'${op}' is not an operation of ${p.resource}` }];
  },
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = (await ctx.params(i)) as Params;
      const credential = await credentialOf(ctx.node, 'n8nApi', (id) => ctx.credential(id));
      const base = (credential.baseUrl ?? '').replace(/\/+$/, '');
      if (!/^https?:\/\//.test(base))
        throw new NodeOperationError('The credential\'s "Base URL" must be an http(s) URL ending in /api/v1');
      const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
        const res = await ctx.deps.http({
          method,
          url: `${base}${path}`,
          headers: {
            accept: 'application/json',
            'x-n8n-api-key': credential.apiKey ?? '',
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          timeoutMs: TIMEOUT_MS,
          credentialHeaders: ['x-n8n-api-key'],
        });
        let json: unknown = null;
        try {
          json = res.body === '' ? null : JSON.parse(res.body);
        } catch {
          json = res.body;
        }
        if (res.status >= 400) {
          const message =
            json !== null &&
            typeof json === 'object' &&
            typeof (json as { message?: unknown }).message === 'string'
              ? (json as { message: string }).message
              : `HTTP ${res.status}`;
          throw new NodeOperationError(message, { description: `${method} ${path} answered ${res.status}` });
        }
        return json;
      };
      const list = async (path: string, query: URLSearchParams): Promise<unknown[]> => {
        const entries: unknown[] = [];
        query.set('limit', String(p.returnAll ? 250 : p.limit));
        for (let page = 0; page < MAX_PAGES; page++) {
          const answer = (await call('GET', `${path}?${query}`)) as {
            data?: unknown[];
            nextCursor?: string | null;
          };
          entries.push(...(answer?.data ?? []));
          if (!p.returnAll || !answer?.nextCursor) break;
          query.set('cursor', answer.nextCursor);
        }
        return p.returnAll ? entries : entries.slice(0, p.limit);
      };

      const op = p.operation ?? DEFAULT_OPERATION[p.resource];
      let result: unknown;
      const key = `${p.resource}.${op}`;
      switch (key) {
        case 'audit.generate': {
          const { categories, daysAbandonedWorkflow } = p.additionalOptions;
          result = await call('POST', '/audit', {
            additionalOptions: {
              ...(categories && categories.length > 0 ? { categories } : {}),
              ...(daysAbandonedWorkflow !== undefined ? { daysAbandonedWorkflow } : {}),
            },
          });
          break;
        }
        case 'credential.create':
          result = await call('POST', '/credentials', {
            name: p.name,
            type: p.credentialTypeName,
            data: jsonObject(p.data, 'Data'),
          });
          break;
        case 'credential.delete':
          result = await call(
            'DELETE',
            `/credentials/${encodeURIComponent(idOf(p.credentialId, 'Credential ID'))}`,
          );
          break;
        case 'credential.getSchema':
          result = await call(
            'GET',
            `/credentials/schema/${encodeURIComponent(idOf(p.credentialTypeName, 'Credential Type'))}`,
          );
          break;
        case 'execution.get': {
          const q = p.options.includeData ? '?includeData=true' : '';
          result = await call(
            'GET',
            `/executions/${encodeURIComponent(idOf(p.executionId, 'Execution ID'))}${q}`,
          );
          break;
        }
        case 'execution.getAll': {
          const q = new URLSearchParams();
          if (p.filters.status) q.set('status', p.filters.status);
          const workflow = locatorValue(p.filters.workflowId);
          if (workflow !== '' && workflow !== 'all') q.set('workflowId', idOf(workflow, 'Workflow'));
          if (p.options.includeData) q.set('includeData', 'true');
          result = await list('/executions', q);
          break;
        }
        case 'execution.delete':
          result = await call(
            'DELETE',
            `/executions/${encodeURIComponent(idOf(p.executionId, 'Execution ID'))}`,
          );
          break;
        case 'workflow.getAll': {
          const q = new URLSearchParams();
          if (p.filters.activeWorkflows !== undefined) q.set('active', String(p.filters.activeWorkflows));
          if (p.filters.name) q.set('name', p.filters.name);
          const wanted = (p.filters.tags ?? '')
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t !== '');
          // The platform's list has no tag filter: kept here, any of the names (n8n's reading).
          const all = await list('/workflows', q);
          result =
            wanted.length === 0
              ? all
              : all.filter((w) =>
                  ((w as { tags?: Array<{ name: string }> }).tags ?? []).some((t) => wanted.includes(t.name)),
                );
          break;
        }
        case 'workflow.create':
          result = await call('POST', '/workflows', workflowBody(p.workflowObject));
          break;
        case 'workflow.update':
          result = await call(
            'PUT',
            `/workflows/${encodeURIComponent(idOf(p.workflowId, 'Workflow'))}`,
            workflowBody(p.workflowObject),
          );
          break;
        case 'workflow.get':
        case 'workflow.delete': {
          const path = `/workflows/${encodeURIComponent(idOf(p.workflowId, 'Workflow'))}`;
          result = await call(op === 'get' ? 'GET' : 'DELETE', path);
          break;
        }
        case 'workflow.activate':
        case 'workflow.deactivate':
          result = await call(
            'POST',
            `/workflows/${encodeURIComponent(idOf(p.workflowId, 'Workflow'))}/${op}`,
            {},
          );
          break;
        default:
          throw new NodeOperationError(`The operation "${op}" is not known for ${p.resource}`);
      }
      const entries = Array.isArray(result) ? result : [result];
      for (const entry of entries) {
        const json =
          entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? entry : { value: entry };
        out.push({ json: json as Record<string, Json>, pairedItem: { item: i } });
      }
    }
    return output(out);
  },
});
