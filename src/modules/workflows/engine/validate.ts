import { EXPRESSION_LANGUAGES, type ExpressionLanguage } from './expressions.js';
import { inputCount, type NodeRegistry } from './node-type.js';
import { checkParameters, UNKNOWN_PARAMETER, withDefaults } from './parameters.js';
import {
  AI_CONNECTION_TYPES,
  type AiConnectionType,
  type CheckLimits,
  type ConnectionTarget,
  type ValidationProblem,
  type WorkflowDefinition,
  type WorkflowNode,
} from './types.js';

/** Every problem of a definition, each with a path like `nodes[2].parameters.path`. */
export function validateWorkflow(
  def: WorkflowDefinition,
  registry: NodeRegistry,
  limits: CheckLimits,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const nodes = Array.isArray(def.nodes) ? def.nodes : [];
  if (!Array.isArray(def.nodes)) problems.push({ path: 'nodes', message: 'must be an array' });
  const names = new Map<string, number>();

  nodes.forEach((node, i) => {
    const at = `nodes[${i}]`;
    if (typeof node.name !== 'string' || node.name.trim() === '') {
      problems.push({ path: `${at}.name`, message: 'is required' });
    } else if (names.has(node.name)) {
      problems.push({ path: `${at}.name`, message: `duplicate node name '${node.name}'` });
    } else {
      names.set(node.name, i);
    }
    const nodeType = registry.get(node.type, node.typeVersion);
    if (!nodeType) {
      problems.push({ path: `${at}.type`, message: registry.missing(node.type, node.typeVersion) });
      return;
    }
    if (node.parameters === null || typeof node.parameters !== 'object' || Array.isArray(node.parameters)) {
      problems.push({ path: `${at}.parameters`, message: 'must be an object' });
      return;
    }
    const paramProblems = checkParameters(nodeType.schema, node.parameters, `${at}.parameters`, true).map(
      (p) =>
        p.message === UNKNOWN_PARAMETER
          ? {
              ...p,
              message: `is not a parameter of ${node.type}${nodeType.versions ? ` v${node.typeVersion ?? 1}` : ''} (node '${node.name}')`,
            }
          : p,
    );
    problems.push(...paramProblems);
    if (paramProblems.length === 0 && nodeType.check) {
      for (const p of nodeType.check(withDefaults(nodeType.schema, node.parameters) as never, limits)) {
        problems.push({ path: `${at}.${p.path}`, message: p.message });
      }
    }
  });

  problems.push(...settingsProblems(def.settings));

  for (const [from, outputs] of Object.entries(def.connections ?? {})) {
    const at = `connections.${from}`;
    if (!names.has(from)) problems.push({ path: at, message: `connection from missing node '${from}'` });
    if (!outputs || typeof outputs !== 'object') {
      problems.push({ path: at, message: 'must be an object of outputs by connection type' });
      continue;
    }
    for (const [kind, list] of Object.entries(outputs)) {
      if (kind !== 'main' && !(AI_CONNECTION_TYPES as readonly string[]).includes(kind)) {
        problems.push({ path: `${at}.${kind}`, message: `unknown connection type '${kind}'` });
        continue;
      }
      if (!Array.isArray(list)) {
        problems.push({ path: `${at}.${kind}`, message: 'must be an array of outputs' });
        continue;
      }
      if (kind === 'main') problems.push(...mainProblems(at, list, names, nodes, registry));
      else
        problems.push(...subNodeProblems(at, from, kind as AiConnectionType, list, names, nodes, registry));
    }
  }
  return problems;
}

function mainProblems(
  at: string,
  main: unknown[],
  names: Map<string, number>,
  nodes: WorkflowNode[],
  registry: NodeRegistry,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  main.forEach((targets, o) => {
    if (!Array.isArray(targets)) {
      if (targets !== null) problems.push({ path: `${at}.main[${o}]`, message: 'must be an array' });
      return;
    }
    targets.forEach((t: ConnectionTarget, j) => {
      const tp = `${at}.main[${o}][${j}]`;
      const index = names.get(t?.node);
      if (index === undefined) {
        problems.push({ path: `${tp}.node`, message: `connection to missing node '${String(t?.node)}'` });
        return;
      }
      const target = nodes[index];
      const targetType = target && registry.get(target.type, target.typeVersion);
      const inputs = target && targetType ? inputCount(targetType, target.parameters ?? {}) : 1;
      if (!Number.isInteger(t.index) || t.index < 0 || t.index >= inputs) {
        problems.push({
          path: `${tp}.index`,
          message: inputs === 0 ? `node '${t.node}' takes no input` : `input index must be below ${inputs}`,
        });
      }
    });
  });
  return problems;
}

/** An ai_* connection joins a sub-node supplying that type to a root node that takes it. */
function subNodeProblems(
  at: string,
  from: string,
  kind: AiConnectionType,
  outputs: unknown[],
  names: Map<string, number>,
  nodes: WorkflowNode[],
  registry: NodeRegistry,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const source = nodes[names.get(from) ?? -1];
  const sourceType = source && registry.get(source.type, source.typeVersion);
  if (sourceType && sourceType.subNode !== kind && !sourceType.alsoSupplies?.includes(kind))
    problems.push({
      path: `${at}.${kind}`,
      message: `node '${from}' (${source?.type}) does not supply ${kind}`,
    });
  outputs.forEach((targets, o) => {
    if (!Array.isArray(targets)) {
      if (targets !== null) problems.push({ path: `${at}.${kind}[${o}]`, message: 'must be an array' });
      return;
    }
    targets.forEach((t: ConnectionTarget, j) => {
      const tp = `${at}.${kind}[${o}][${j}]`;
      const target = nodes[names.get(t?.node) ?? -1];
      if (!target) {
        problems.push({ path: `${tp}.node`, message: `connection to missing node '${String(t?.node)}'` });
        return;
      }
      if (t.type !== kind) problems.push({ path: `${tp}.type`, message: `must be '${kind}'` });
      if (!Number.isInteger(t.index) || t.index < 0 || t.index > 15)
        problems.push({ path: `${tp}.index`, message: 'must be an input index from 0 to 15' });
      const targetType = registry.get(target.type, target.typeVersion);
      if (targetType && !targetType.aiInputs?.includes(kind))
        problems.push({ path: `${tp}.node`, message: `node '${t.node}' (${target.type}) takes no ${kind}` });
    });
  });
  return problems;
}

/** The settings the engine reads (expression language, time zone of `$now`) and the error workflow id. */
function settingsProblems(settings: Record<string, unknown> | undefined): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const language = settings?.expressionLanguage;
  if (language !== undefined && !EXPRESSION_LANGUAGES.includes(language as ExpressionLanguage)) {
    problems.push({
      path: 'settings.expressionLanguage',
      message: `must be one of ${EXPRESSION_LANGUAGES.join(', ')}`,
    });
  }
  const zone = settings?.timezone;
  if (zone !== undefined && zone !== 'DEFAULT') {
    try {
      if (typeof zone !== 'string') throw new RangeError();
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
    } catch {
      problems.push({
        path: 'settings.timezone',
        message: 'must be an IANA time zone such as Europe/Berlin',
      });
    }
  }
  const timeout = settings?.executionTimeout;
  if (
    timeout !== undefined &&
    (!Number.isInteger(timeout) || (timeout as number) < -1 || (timeout as number) > 604_800)
  )
    problems.push({
      path: 'settings.executionTimeout',
      message: 'must be whole seconds from 1 to 604800 (7 days), or -1 for none',
    });
  // The id of the workflow started when an execution fails (n8n's `errorWorkflow`; `DEFAULT`: none).
  const errorWorkflow = settings?.errorWorkflow;
  if (errorWorkflow !== undefined && (typeof errorWorkflow !== 'string' || errorWorkflow.length > 100)) {
    problems.push({
      path: 'settings.errorWorkflow',
      message: 'must be a workflow id (a string of at most 100 characters)',
    });
  }
  return problems;
}
