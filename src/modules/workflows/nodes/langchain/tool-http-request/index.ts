import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { redactSecrets } from '../../../../../core/redact.js';
import { defineSubNode, type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { type AppliedCredential, buildRequest, secretsOf, toOutbound } from '../../n8n/http-request/build.js';
import { oauth2Credential, sendSigned } from '../../n8n/http-request/oauth2.js';
import { isPredefinedType, predefinedRefusal } from '../../n8n/http-request/predefined/index.js';
import {
  GENERIC_AUTH_TYPES,
  type GenericAuthType,
  HttpRequestV4Parameters,
  type HttpRequestV4Params,
} from '../../n8n/http-request/schema.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';
import { toolNameOf } from '../from-ai.js';
import { fillJson, fillUrl, placeholdersIn, textOf } from './placeholders.js';
import { toolAnswer } from './response.js';

const Pair = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    valueProvider: Type.Enum(['modelRequired', 'modelOptional', 'fieldValue'] as const, {
      default: 'modelRequired',
    }),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
const Pairs = Type.Object({ values: Type.Optional(Type.Array(Pair, { maxItems: 100 })) }, { default: {} });
const Specify = Type.Enum(['keypair', 'json', 'model'] as const, { default: 'keypair' });

const Parameters = Type.Object(
  {
    name: Type.String({ default: '', maxLength: 64 }),
    toolDescription: Type.String({ default: '', maxLength: 10_000 }),
    method: Type.Enum(['DELETE', 'GET', 'PATCH', 'POST', 'PUT'] as const, { default: 'GET' }),
    url: Type.String({ default: '', maxLength: 10_000 }),
    authentication: Type.Enum(['none', 'predefinedCredentialType', 'genericCredentialType'] as const, {
      default: 'none',
    }),
    nodeCredentialType: Type.Optional(Type.String()),
    genericAuthType: Type.Optional(Type.String()),
    sendQuery: Type.Boolean({ default: false }),
    specifyQuery: Specify,
    parametersQuery: Pairs,
    jsonQuery: Type.String({ default: '', maxLength: 100_000 }),
    sendHeaders: Type.Boolean({ default: false }),
    specifyHeaders: Specify,
    parametersHeaders: Pairs,
    jsonHeaders: Type.String({ default: '', maxLength: 100_000 }),
    sendBody: Type.Boolean({ default: false }),
    specifyBody: Specify,
    parametersBody: Pairs,
    jsonBody: Type.String({ default: '', maxLength: 1_000_000 }),
    placeholderDefinitions: Type.Object(
      {
        values: Type.Optional(
          Type.Array(
            Type.Object({
              name: Type.String({ maxLength: 64 }),
              description: Type.Optional(Type.String({ maxLength: 2_000 })),
              type: Type.Optional(
                Type.Enum(['not specified', 'string', 'number', 'boolean', 'json'] as const),
              ),
            }),
            { maxItems: 100 },
          ),
        ),
      },
      { default: {} },
    ),
    optimizeResponse: Type.Boolean({ default: false }),
    responseType: Type.Optional(Type.String()),
    dataField: Type.Optional(Type.String()),
    fieldsToInclude: Type.Optional(Type.String()),
    fields: Type.Optional(Type.String()),
    cssSelector: Type.Optional(Type.String()),
    onlyContent: Type.Optional(Type.Boolean()),
    elementsToOmit: Type.Optional(Type.String()),
    truncateResponse: Type.Boolean({ default: false }),
    maxLength: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Most characters of a response the model reads (longer ones are cut). */
const MAX_ANSWER_CHARS = 100_000;
const TIMEOUT_MS = 60_000;

type Part = 'Query' | 'Headers' | 'Body';

/**
 * n8n's HTTP Request tool: one request the model fills — `{placeholders}` in the URL and JSON parts
 * (percent-encoded in the URL, JSON-encoded in JSON), and key-pairs the model provides — sent with the
 * HTTP Request node's builder and credentials through the guarded outbound HTTP; the response text is
 * the tool's answer (cut at `maxLength` when truncating, and at 100,000 characters always).
 */
export const toolHttpRequestNode = defineSubNode({
  type: `${LANGCHAIN}.toolHttpRequest`,
  versions: [1, 1.1],
  schema: Parameters,
  subNode: 'ai_tool',
  async supply(ctx, itemIndex): Promise<AiTool> {
    const p = await ctx.params(itemIndex);
    if (p.optimizeResponse && p.responseType && !['json', 'text', 'html'].includes(p.responseType))
      throw new NodeOperationError(`Optimizing '${p.responseType}' responses is not supported here`);
    const credential = await credentialOf(ctx.node.credentials, p, ctx);
    const types = new Map((p.placeholderDefinitions.values ?? []).map((d) => [d.name, d]));
    const names = new Set<string>();
    const optional = new Set<string>();
    placeholdersIn(p.url, names);
    const parts: Part[] = [];
    if (p.sendQuery) parts.push('Query');
    if (p.sendHeaders) parts.push('Headers');
    if (p.sendBody) parts.push('Body');
    for (const part of parts) {
      const specify = p[`specify${part}`];
      if (specify === 'json') placeholdersIn(p[`json${part}`], names);
      else if (specify === 'model') names.add(part.toLowerCase());
      else
        for (const pair of p[`parameters${part}`].values ?? []) {
          if (pair.valueProvider === 'fieldValue') placeholdersIn(pair.value, names);
          else {
            names.add(pair.name);
            if (pair.valueProvider === 'modelOptional') optional.add(pair.name);
          }
        }
    }
    const properties: Record<string, unknown> = {};
    for (const name of names) {
      const def = types.get(name);
      const type = def?.type && def.type !== 'not specified' && def.type !== 'json' ? { type: def.type } : {};
      properties[name] = { ...type, ...(def?.description ? { description: def.description } : {}) };
      if (['query', 'headers', 'body'].includes(name) && !def) properties[name] = { type: 'object' };
    }
    const version = ctx.node.typeVersion ?? 1;
    const schema = { type: 'object', properties, required: [...names].filter((n) => !optional.has(n)) };
    const call = async (args: Record<string, unknown>): Promise<string> => {
      for (const name of names)
        if (!optional.has(name) && (args[name] === undefined || args[name] === null))
          throw new Error(`the argument '${name}' is missing`);
      const v4 = Value.Default(HttpRequestV4Parameters, {
        method: p.method,
        url: fillUrl(p.url, args),
        options: { timeout: TIMEOUT_MS },
      }) as HttpRequestV4Params;
      for (const part of parts) applyPart(v4, part, p, args);
      const req = buildRequest(v4, 4.2, credential);
      const res = await sendSigned(ctx.deps.http, toOutbound(req), credential);
      let text: string;
      if (res.status < 200 || res.status >= 300) {
        // The model and the execution read what the server said, not a secret it echoed.
        const said = res.body.slice(0, 2_000);
        // Read after the call: a token renewed during it (OAuth2) is among the credential's values now.
        text = `There was an error: "${res.status} - ${credential ? redactSecrets(said, secretsOf(credential)) : said}"`;
      } else
        try {
          text = await toolAnswer(res, p, ctx.deps.tenant);
        } catch (error) {
          // The model (and the run's steps) get the error, not the credential an upstream echoed in it.
          const message = (error as Error).message;
          text = `There was an error: "${ctx.redact?.(message) ?? message}"`;
        }
      const max = p.truncateResponse ? Math.min(p.maxLength, MAX_ANSWER_CHARS) : MAX_ANSWER_CHARS;
      return text.length > max ? text.slice(0, max) : text;
    };
    if (version < 1.1) {
      // v1 is LangChain's DynamicTool, as n8n keeps it: one text input, the stringified JSON of the
      // parameters, which the description lists (n8n's `prepareToolDescription`).
      const listed = [...names].map((name) => {
        const def = types.get(name);
        const type = def?.type && def.type !== 'not specified' ? def.type : 'string';
        return `${name}: (description: ${def?.description ?? ''}, type: ${type}, required: ${!optional.has(name)})`;
      });
      const description =
        names.size === 0
          ? p.toolDescription
          : `${p.toolDescription}\n\tTool expects valid stringified JSON object with ${names.size} properties.\n\tProperty names with description, type and required status:\n\t${listed.join(',\n ')}\n\tALL parameters marked as required must be provided`;
      return {
        kind: 'tool',
        name: toolNameOf(p.name || ctx.node.name),
        description,
        parameters: { type: 'object', properties: { input: { type: 'string' } } },
        run: (args) => call(names.size === 0 ? {} : dynamicInput(args.input, names)),
      };
    }
    return {
      kind: 'tool',
      name: toolNameOf(ctx.node.name),
      description: p.toolDescription,
      parameters: schema,
      run: call,
    };
  },
});

/**
 * A v1 tool's text input as its arguments (n8n's `configureToolFunction`): the model's stringified
 * JSON object, or, when the tool has one parameter, the text itself as that parameter.
 */
function dynamicInput(input: unknown, names: Set<string>): Record<string, unknown> {
  if (typeof input === 'object' && input !== null && !Array.isArray(input))
    return input as Record<string, unknown>;
  const text = typeof input === 'string' ? input : '';
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // not JSON: the text itself, for a tool of one parameter
  }
  const [only] = names;
  if (names.size === 1 && only !== undefined) return { [only]: text };
  throw new Error('Input is not a valid JSON object');
}

type Params = Static<typeof Parameters>;

function applyPart(v4: HttpRequestV4Params, part: Part, p: Params, args: Record<string, unknown>): void {
  const specify = p[`specify${part}`];
  const key = part === 'Query' ? 'sendQuery' : part === 'Headers' ? 'sendHeaders' : 'sendBody';
  const target = v4 as unknown as Record<string, unknown>;
  target[key] = true;
  const json = (value: unknown) => {
    target[`specify${part}`] = 'json';
    target[`json${part}`] = value;
  };
  if (specify === 'model') {
    json(JSON.stringify(args[part.toLowerCase()] ?? {}));
    return;
  }
  if (specify === 'json') {
    json(fillJson(p[`json${part}`], args));
    return;
  }
  const rows: Array<{ name: string; value: unknown }> = [];
  for (const pair of p[`parameters${part}`].values ?? []) {
    if (pair.valueProvider === 'fieldValue') rows.push({ name: pair.name, value: pair.value });
    else if (args[pair.name] !== undefined)
      rows.push({ name: pair.name, value: part === 'Body' ? args[pair.name] : textOf(args[pair.name]) });
  }
  target[`specify${part}`] = 'keypair';
  const field =
    part === 'Query' ? 'queryParameters' : part === 'Headers' ? 'headerParameters' : 'bodyParameters';
  target[field] = { parameters: rows };
}

async function credentialOf(
  credentials: Record<string, unknown> | undefined,
  p: Params,
  ctx: Pick<NodeExecutionContext<unknown>, 'credential' | 'oauth2Token'>,
): Promise<AppliedCredential | null> {
  if (p.authentication === 'none') return null;
  const predefined = p.authentication === 'predefinedCredentialType';
  const type = predefined ? p.nodeCredentialType : p.genericAuthType;
  if (predefined && !isPredefinedType(type)) throw new NodeOperationError(predefinedRefusal(type));
  if (!predefined && !(GENERIC_AUTH_TYPES as readonly string[]).includes(type ?? '') && type !== 'oAuth2Api')
    throw new NodeOperationError(
      `Authentication '${p.authentication}'${type ? ` (${type})` : ''} is not supported here: use a generic credential (${[...GENERIC_AUTH_TYPES, 'oAuth2Api'].join(', ')})`,
    );
  const id = credentialRefOf(credentials?.[type ?? ''] as never);
  if (!id) throw new NodeOperationError(`Node does not have any credentials set for "${type}"`);
  // n8n's tool signs an oAuth2Api credential as its HTTP Request node does (Bearer, renewed on 401).
  if (type === 'oAuth2Api') return oauth2Credential(ctx, type, id);
  return { type: type as GenericAuthType | string, data: await ctx.credential(id) };
}
