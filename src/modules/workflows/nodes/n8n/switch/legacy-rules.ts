import { Type } from 'typebox';
import type { NodeExecutionContext, NodeResult } from '../../../engine/node-type.js';
import { NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { LEGACY_DATA_TYPES, LEGACY_OPERATIONS, legacyCompare, legacyDateTime } from '../if/legacy-compare.js';

const ALL_OPERATIONS = [...new Set(Object.values(LEGACY_OPERATIONS).flat())];
const DEFAULT_OPERATION = {
  boolean: 'equal',
  dateTime: 'after',
  number: 'smaller',
  string: 'equal',
} as const;

/**
 * The parameters Switch v1 and v2 share: one value 1 of a data type, routing rules comparing it with
 * each rule's value 2 (first match wins), a fallback output (-1: none), or an expression giving the
 * output index. v1 has four fixed outputs and a rule names its `output`; v2 has one output per rule
 * (`outputKey` labels it) and `outputsAmount` outputs in expression mode.
 */
export function legacySwitchParameters(version: 1 | 2) {
  const rule = Type.Object(
    {
      /** Absent in an export when it is the data type's default (see DEFAULT_OPERATION). */
      operation: Type.Optional(Type.Enum(ALL_OPERATIONS)),
      value2: Type.Optional(Type.Unknown()),
      ...(version === 1
        ? { output: Type.Integer({ minimum: 0, maximum: 3, default: 0 }) }
        : { outputKey: Type.Optional(Type.String()), output: Type.Optional(Type.Unknown()) }),
    },
    { additionalProperties: false },
  );
  return Type.Object(
    {
      mode: Type.Enum(['expression', 'rules'] as const, { default: 'rules' }),
      output: Type.Optional(Type.Union([Type.Number(), Type.String()])),
      ...(version === 2 ? { outputsAmount: Type.Integer({ minimum: 0, maximum: 100, default: 4 }) } : {}),
      dataType: Type.Enum(LEGACY_DATA_TYPES, { default: 'number' }),
      value1: Type.Optional(Type.Unknown()),
      rules: Type.Object(
        { rules: Type.Optional(Type.Array(rule, { maxItems: 100 })) },
        { additionalProperties: false, default: {} },
      ),
      fallbackOutput: Type.Union([Type.Integer({ minimum: -1 }), Type.String()], { default: -1 }),
    },
    { additionalProperties: false },
  );
}

interface LegacySwitchParams {
  mode: 'expression' | 'rules';
  output?: number | string;
  outputsAmount?: number;
  dataType: (typeof LEGACY_DATA_TYPES)[number];
  value1?: unknown;
  rules: { rules?: Array<{ operation?: string; value2?: unknown; output?: unknown }> };
  fallbackOutput: number | string;
}

/** n8n's default of a rule's value 2 per data type (an export leaves defaults out). */
const VALUE2_DEFAULT: Record<(typeof LEGACY_DATA_TYPES)[number], unknown> = {
  boolean: false,
  dateTime: '',
  number: 0,
  string: '',
};

/** Outputs as n8n's editor draws them: v1 always four; v2 one per rule, or `outputsAmount`. */
export function legacySwitchOutputs(version: 1 | 2, params: Record<string, unknown>): number {
  if (version === 1) return 4;
  if (params.mode === 'expression')
    return typeof params.outputsAmount === 'number' ? params.outputsAmount : 4;
  const rules = (params.rules as { rules?: unknown } | undefined)?.rules;
  return Array.isArray(rules) ? rules.length : 0;
}

function checkIndex(index: unknown, outputs: number): number {
  const n = typeof index === 'string' && index.trim() !== '' ? Number(index) : index;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= outputs)
    throw new NodeOperationError(
      `The ouput ${String(index)} is not allowed. It has to be between 0 and ${outputs - 1}!`,
    );
  return n;
}

/** n8n's Switch v1/v2 routing, item by item (the outputs laid out from item 0's parameters). */
export async function runLegacySwitch(
  version: 1 | 2,
  ctx: NodeExecutionContext<unknown>,
): Promise<NodeResult> {
  let outputs: Item[][] = version === 1 ? [[], [], [], []] : [];
  for (const [i, item] of ctx.items.entries()) {
    try {
      const p = (await ctx.params(i)) as LegacySwitchParams;
      const rules = p.rules.rules ?? [];
      if (p.mode === 'expression') {
        if (version === 2 && i === 0) outputs = Array.from({ length: p.outputsAmount ?? 4 }, () => []);
        outputs[checkIndex(p.output, outputs.length)]?.push(item);
        continue;
      }
      if (version === 2 && i === 0) outputs = rules.map(() => []);
      const value1 = p.dataType === 'dateTime' ? legacyDateTime(p.value1) : p.value1;
      let matched = false;
      for (const [r, rule] of rules.entries()) {
        // An export omits a value n8n holds at its default (number 0, string '', boolean false).
        const given = rule.value2 === undefined ? VALUE2_DEFAULT[p.dataType] : rule.value2;
        const value2 = p.dataType === 'dateTime' ? legacyDateTime(given) : given;
        const operation = rule.operation ?? DEFAULT_OPERATION[p.dataType];
        if (!(await legacyCompare(operation, value1, value2))) continue;
        const target = version === 1 ? checkIndex(rule.output ?? 0, outputs.length) : r;
        outputs[target]?.push(item);
        matched = true;
        break;
      }
      const fallback = Number(p.fallbackOutput);
      if (!matched && fallback !== -1) outputs[checkIndex(fallback, outputs.length)]?.push(item);
    } catch (err) {
      if (ctx.node.continueOnFail !== true) throw err;
      if (outputs.length === 0) outputs = [[]];
      outputs[0]?.push({ json: { error: (err as Error).message } });
    }
  }
  return output(...(outputs.length > 0 ? outputs : [[]]));
}
