import type { WorkflowDefinition, WorkflowNode } from '../engine/types.js';
import { ifParameters, switchParameters } from './condition-aliases.js';

/**
 * One node dialect: a saved workflow holds n8n's type names (`n8n-nodes-base.set` with its
 * `typeVersion`) and the platform's own nodes under `n8n-nodes-platform.` (like an n8n community
 * package). The platform's older short names (`set`, `webhook`, `validate`, …) are aliases, resolved
 * here when a definition is accepted (create, update, import, the shipped workflows) and when a row
 * saved before is read: the node is rewritten to the type, version and parameter shape it stands for,
 * so it behaves as before. A type that is no alias is left as given (validation names it).
 */

export const PLATFORM_PREFIX = 'n8n-nodes-platform.';

type Parameters = Record<string, unknown>;
type Translation = { type: string; typeVersion: number; parameters: Parameters };

const isObject = (v: unknown): v is Parameters => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A short name kept as the platform node of the same name (n8n has no node that does what it does). */
const platform =
  (name: string) =>
  (parameters: Parameters): Translation => ({
    type: `${PLATFORM_PREFIX}${name}`,
    typeVersion: 1,
    parameters,
  });

/** `={{ expr }}` as a whole value (its type is known only when it runs), not a template like `=a-{{ b }}`. */
function isWholeExpression(value: unknown): boolean {
  if (typeof value !== 'string' || !value.startsWith('={{') || !value.trimEnd().endsWith('}}')) return false;
  return value.indexOf('{{', 3) === -1;
}

/** The Set v3 field type for a value of the old `values` map (an expression's value: kept as it comes). */
function fieldType(value: unknown): string {
  if (isWholeExpression(value)) return 'object';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

/** `set {values, keepOnlySet}` → Edit Fields (Set) v3.4 with one assignment per field. */
function set(p: Parameters): Translation {
  const { values = {}, keepOnlySet, ...rest } = p;
  // A shape the old node refused stays in place, so the new one refuses it too.
  if (!isObject(values) || (keepOnlySet !== undefined && typeof keepOnlySet !== 'boolean'))
    return { type: 'n8n-nodes-base.set', typeVersion: 3.4, parameters: p };
  const entries = Object.entries(values);
  return {
    type: 'n8n-nodes-base.set',
    typeVersion: 3.4,
    parameters: {
      ...rest,
      mode: 'manual',
      assignments: {
        assignments: entries.map(([name, value], i) => ({
          id: `a${i}`,
          name,
          value,
          type: fieldType(value),
        })),
      },
      includeOtherFields: keepOnlySet !== true,
      // The old node output JSON only, and kept an expression's value whatever its type.
      options: { stripBinary: true, ignoreConversionErrors: true },
    },
  };
}

/** `respondToWebhook` → Respond to Webhook v1.1; `json` without a body answers the first item, as before. */
function respondToWebhook(p: Parameters): Translation {
  const { respondWith = 'json', responseCode, responseHeaders, responseBody, ...rest } = p;
  const options: Parameters = {};
  if (responseCode !== undefined) options.responseCode = responseCode;
  if (isObject(responseHeaders) && Object.keys(responseHeaders).length > 0)
    options.responseHeaders = {
      entries: Object.entries(responseHeaders).map(([name, value]) => ({ name, value })),
    };
  const firstItem = respondWith === 'json' && responseBody === undefined;
  return {
    type: 'n8n-nodes-base.respondToWebhook',
    typeVersion: 1.1,
    parameters: {
      ...rest,
      respondWith: firstItem ? 'firstIncomingItem' : respondWith,
      ...(responseBody !== undefined ? { responseBody } : {}),
      options,
    },
  };
}

/** `merge {mode}` → Merge v3: append, or combine by position keeping unpaired items, input 2 winning. */
function merge(p: Parameters): Translation {
  const { mode = 'append', ...rest } = p;
  if (mode !== 'combineByPosition')
    return { type: 'n8n-nodes-base.merge', typeVersion: 3, parameters: { ...rest, mode } };
  return {
    type: 'n8n-nodes-base.merge',
    typeVersion: 3,
    parameters: {
      ...rest,
      mode: 'combine',
      combineBy: 'combineByPosition',
      options: {
        clashHandling: { values: { resolveClash: 'preferLast', mergeMode: 'shallowMerge' } },
        includeUnpaired: true,
      },
    },
  };
}

/** `stopAndError {errorMessage, description?}` → Stop and Error v1 (an error object when described). */
function stopAndError(p: Parameters): Translation {
  const { errorMessage, description, ...rest } = p;
  const parameters =
    description === undefined
      ? { ...rest, errorType: 'errorMessage', ...(errorMessage !== undefined ? { errorMessage } : {}) }
      : { ...rest, errorType: 'errorObject', errorObject: { message: errorMessage ?? '', description } };
  return { type: 'n8n-nodes-base.stopAndError', typeVersion: 1, parameters };
}

/** `if` → If v2.2 and `switch` → Switch v3.2, conditions as n8n's filter (condition-aliases.ts). */
const conditional =
  (type: string, typeVersion: number, translate: (p: Parameters) => Parameters | null) =>
  (p: Parameters): Translation => ({ type, typeVersion, parameters: translate(p) ?? p });

const ALIASES: Record<string, (p: Parameters) => Translation> = {
  // n8n's nodes with the same behaviour.
  noOp: (parameters) => ({ type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters }),
  stopAndError,
  wait: (parameters) => ({ type: 'n8n-nodes-base.wait', typeVersion: 1.1, parameters }),
  merge,
  set,
  respondToWebhook,
  if: conditional('n8n-nodes-base.if', 2.2, ifParameters),
  switch: conditional('n8n-nodes-base.switch', 3.2, switchParameters),
  // Rows saved while if and switch were platform nodes (same parameters as the short names).
  [`${PLATFORM_PREFIX}if`]: conditional('n8n-nodes-base.if', 2.2, ifParameters),
  [`${PLATFORM_PREFIX}switch`]: conditional('n8n-nodes-base.switch', 3.2, switchParameters),
  // The platform's own nodes (docs/decisions.md says why webhook and httpRequest are here).
  webhook: platform('webhook'),
  httpRequest: platform('httpRequest'),
  validate: platform('validate'),
  markdown: platform('markdown'),
  documentLoad: platform('documentLoad'),
  knowledgeQuery: platform('knowledgeQuery'),
  flowPrediction: platform('flowPrediction'),
  gamePlatform: platform('gamePlatform'),
  splitItems: platform('splitItems'),
  vectorStoreKnowledgeBase: platform('vectorStoreKnowledgeBase'),
  embeddingsBuiltin: platform('embeddingsBuiltin'),
};

/** A node with its alias resolved (the same object when its type is no alias). */
export function resolveNodeAlias(node: WorkflowNode): WorkflowNode {
  const translate = typeof node.type === 'string' && Object.hasOwn(ALIASES, node.type) && ALIASES[node.type];
  if (!translate) return node;
  const { type, typeVersion, parameters } = translate(isObject(node.parameters) ? node.parameters : {});
  // Parameters that are not an object stay as given, so validation refuses them as before.
  const resolved: Record<string, unknown> = {};
  // `typeVersion` right after `type`, where a node saved in n8n's dialect holds it: an export of a
  // resolved node imports again byte for byte.
  for (const [key, value] of Object.entries(node)) {
    if (key === 'typeVersion') continue;
    if (key === 'type') {
      resolved.type = type;
      resolved.typeVersion = typeVersion;
    } else resolved[key] = key === 'parameters' && isObject(node.parameters) ? parameters : value;
  }
  return resolved as unknown as WorkflowNode;
}

/** A definition whose nodes hold only n8n's and the platform's prefixed type names. */
export function resolveAliases<D extends Pick<WorkflowDefinition, 'nodes'>>(def: D): D {
  if (!Array.isArray(def.nodes) || !def.nodes.some((n) => Object.hasOwn(ALIASES, String(n?.type))))
    return def;
  return { ...def, nodes: def.nodes.map((n) => (n && typeof n === 'object' ? resolveNodeAlias(n) : n)) };
}
