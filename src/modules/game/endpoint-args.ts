import { Ajv, type ValidateFunction } from 'ajv';
import { AppError } from '../../core/errors.js';
import { GAME_BODY_SCHEMAS } from './endpoint-bodies.js';
import type { GameEndpoint, GameParam } from './endpoint-types.js';
import type { PathSegment } from './upstream-path.js';

/** What one call sends upstream, checked against the endpoint's declared parameters and body type. */
export interface EndpointArgs {
  path: PathSegment[];
  query: Record<string, string>;
  body: unknown;
}

interface Field {
  field: string;
  message: string;
}

const MAX_VALUE_LENGTH = 512;
const MAX_LIST_ITEMS = 100;
const INTEGER = /^-?[0-9]{1,20}$/;

const ajv = new Ajv({ allErrors: false, strict: false, allowUnionTypes: true });
const validators = new Map<string, ValidateFunction>();

function bodyValidator(type: string): ValidateFunction {
  let validate = validators.get(type);
  if (!validate) {
    const schema = GAME_BODY_SCHEMAS[type];
    if (!schema) throw new Error(`no schema for ${type}`);
    validate = ajv.compile(schema);
    validators.set(type, validate);
  }
  return validate;
}

/** Why `value` is not a valid `param`, or null. Path values must also stay one segment. */
function problem(param: GameParam, value: string, inPath: boolean): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_VALUE_LENGTH) return `must be at most ${MAX_VALUE_LENGTH} characters`;
  // A path value holding `/`, `\` or `..` could make the upstream route elsewhere.
  if (inPath && (/[/\\]/.test(value) || value.includes('..') || value === '.')) {
    return "must not contain '/', '\\' or '..'";
  }
  const items = param.list ? value.split(',') : [value];
  if (items.length > MAX_LIST_ITEMS) return `must list at most ${MAX_LIST_ITEMS} values`;
  for (const item of items) {
    switch (param.type) {
      case 'number':
        if (!INTEGER.test(item)) return 'must be an integer';
        break;
      case 'enum':
        if (!INTEGER.test(item) || !param.enum?.includes(Number(item))) {
          return `must be one of ${param.enum?.join(', ')}`;
        }
        break;
      case 'boolean':
        if (item !== 'true' && item !== 'false') return 'must be true or false';
        break;
      default:
        if (item.length === 0) return 'must not hold empty values';
    }
  }
  return null;
}

/**
 * The upstream path, query and body of a call, or 400 naming every field at fault: parameters
 * the endpoint does not declare are refused rather than forwarded, so the upstream receives
 * exactly what the caller asked for.
 */
export function endpointArgs(
  endpoint: GameEndpoint,
  params: Record<string, string>,
  query: Record<string, unknown>,
  body: unknown,
): EndpointArgs {
  const fields: Field[] = [];
  const byName = new Map(endpoint.pathParams.map((p) => [p.name, p]));
  for (const param of endpoint.pathParams) {
    const why = problem(param, params[param.name] ?? '', true);
    if (why) fields.push({ field: `params.${param.name}`, message: why });
  }
  const sent: Record<string, string> = {};
  const declared = new Map(endpoint.query.map((q) => [q.name, q]));
  for (const [name, raw] of Object.entries(query)) {
    const param = declared.get(name);
    if (!param) {
      fields.push({ field: `querystring.${name}`, message: 'is not a parameter of this endpoint' });
      continue;
    }
    if (typeof raw !== 'string') {
      fields.push({ field: `querystring.${name}`, message: 'must be given once' });
      continue;
    }
    const why = problem(param, raw, false);
    if (why) fields.push({ field: `querystring.${name}`, message: why });
    else sent[name] = raw;
  }
  for (const param of endpoint.query) {
    if (param.required && !(param.name in query)) {
      fields.push({ field: `querystring.${param.name}`, message: 'required' });
    }
  }
  const noBody = body === undefined || body === null || (isEmptyObject(body) && endpoint.body === null);
  if (endpoint.body === null && !noBody) {
    fields.push({ field: 'body', message: 'this endpoint takes no body' });
  } else if (endpoint.body !== null) {
    const validate = bodyValidator(endpoint.body);
    if (body === undefined || body === null) {
      fields.push({ field: 'body', message: `required: a JSON ${endpoint.body}` });
    } else if (!validate(body)) {
      const [error] = validate.errors ?? [];
      const where = error?.instancePath ? error.instancePath.slice(1).replaceAll('/', '.') : '';
      fields.push({
        field: where ? `body.${where}` : 'body',
        message: `${error?.message ?? 'is invalid'} (${endpoint.body})`,
      });
    }
  }
  if (fields.length > 0) {
    throw new AppError('VALIDATION_ERROR', `Invalid request for ${endpoint.name}`, { fields });
  }
  const path = endpoint.path
    .split('/')
    .filter(Boolean)
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      return name && byName.has(name) ? (params[name] ?? '') : part;
    });
  return { path, query: sent, body: endpoint.body === null ? undefined : body };
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}
