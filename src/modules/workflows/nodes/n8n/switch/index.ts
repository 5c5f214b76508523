import { type Static, Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, ValidationProblem } from '../../../engine/types.js';
import { evaluateFilter, FilterValue, filterProblems } from '../filter/conditions.js';

const Rule = Type.Object(
  {
    conditions: FilterValue,
    /** `renameOutput`/`outputKey` name the rule's output in n8n's editor; routing is by position. */
    renameOutput: Type.Boolean({ default: false }),
    outputKey: Type.String({ default: '', ...shownWhen({ renameOutput: [true] }) }),
  },
  { additionalProperties: false },
);

/** n8n's default routing rules: one rule, `'' equals ''` (so everything goes to output 0). */
const DEFAULT_RULES = {
  values: [
    {
      conditions: {
        options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
        conditions: [{ leftValue: '', rightValue: '', operator: { type: 'string', operation: 'equals' } }],
        combinator: 'and',
      },
    },
  ],
};

/** From 3.1 "Less Strict Type Validation" is a top-level parameter instead of an option. */
function switchParameters(looseAtTopLevel: boolean) {
  return Type.Object(
    {
      mode: Type.Enum(['rules', 'expression'] as const, { default: 'rules' }),
      /** Expression mode: how many outputs, and the output index for each item. */
      numberOutputs: Type.Integer({ minimum: 1, default: 4, ...shownWhen({ mode: ['expression'] }) }),
      output: Type.Optional(Type.Union([Type.Number(), Type.String()], shownWhen({ mode: ['expression'] }))),
      rules: Type.Object(
        { values: Type.Array(Rule, { default: [] }) },
        { additionalProperties: false, default: DEFAULT_RULES, ...shownWhen({ mode: ['rules'] }) },
      ),
      ...(looseAtTopLevel ? { looseTypeValidation: Type.Boolean({ default: false }) } : {}),
      options: Type.Object(
        {
          /** `none` drops unmatched items, `extra` adds an output for them, N sends them to output N. */
          fallbackOutput: Type.Optional(
            Type.Union([Type.Literal('none'), Type.Literal('extra'), Type.Integer({ minimum: 0 })]),
          ),
          ignoreCase: Type.Optional(Type.Boolean()),
          ...(looseAtTopLevel ? {} : { looseTypeValidation: Type.Optional(Type.Boolean()) }),
          /** The editor's label of the extra output. */
          renameFallbackOutput: Type.Optional(Type.String(shownWhen({ fallbackOutput: ['extra'] }))),
          allMatchingOutputs: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false, default: {}, ...shownWhen({ mode: ['rules'] }) },
      ),
    },
    { additionalProperties: false },
  );
}

type SwitchParams = Static<ReturnType<typeof switchParameters>>;

/** Outputs for static parameters (as n8n's editor draws them). */
export function switchOutputCount(params: Record<string, unknown>): number {
  if (params.mode === 'expression') {
    return typeof params.numberOutputs === 'number' ? params.numberOutputs : 4;
  }
  const rules = (params.rules as { values?: unknown } | undefined)?.values;
  const count = Array.isArray(rules) ? rules.length : params.rules === undefined ? 1 : 0;
  const options = params.options as { fallbackOutput?: unknown } | undefined;
  return count + (options?.fallbackOutput === 'extra' ? 1 : 0);
}

/** n8n's range check, in n8n's words (including its spelling of "ouput"). */
function outputIndex(value: unknown, outputs: number): number {
  const index = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (index === outputs) {
    throw new NodeOperationError(`The ouput ${String(index)} is not allowed. `, {
      description: `Output indexes are zero based, if you want to use the extra output use ${outputs - 1}`,
    });
  }
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > outputs) {
    throw new NodeOperationError(`The ouput ${String(index)} is not allowed`, {
      description: `It has to be between 0 and ${outputs - 1}`,
    });
  }
  return index;
}

/** Routes one item by the rules; returns the output indexes it goes to. */
async function route(p: SwitchParams, itemIndex: number, outputs: number): Promise<number[]> {
  const loose =
    (p as { looseTypeValidation?: boolean }).looseTypeValidation ??
    (p.options as { looseTypeValidation?: boolean }).looseTypeValidation;
  const fallback = { ignoreCase: p.options.ignoreCase, looseTypeValidation: loose };
  const targets: number[] = [];
  for (const [r, rule] of p.rules.values.entries()) {
    if (!(await evaluateFilter(rule.conditions, itemIndex, fallback))) continue;
    targets.push(r);
    if (p.options.allMatchingOutputs !== true) return targets;
  }
  const fallbackOutput = p.options.fallbackOutput ?? 'none';
  if (targets.length > 0 || fallbackOutput === 'none') return targets;
  return [fallbackOutput === 'extra' ? outputs - 1 : outputIndex(fallbackOutput, outputs)];
}

function switchNode(versions: number[], looseAtTopLevel: boolean) {
  return defineNode({
    type: 'n8n-nodes-base.switch',
    versions,
    schema: switchParameters(looseAtTopLevel),
    outputs: switchOutputCount,
    check(params) {
      const problems: ValidationProblem[] = [];
      params.rules.values.forEach((rule, r) => {
        problems.push(...filterProblems(rule.conditions, `parameters.rules.values[${r}].conditions`));
      });
      return problems;
    },
    async execute(ctx) {
      // As n8n: the outputs are laid out from item 0's parameters.
      let outputs: Item[][] = [];
      for (const [i, item] of ctx.items.entries()) {
        try {
          const p = await ctx.params(i);
          if (i === 0) {
            const count = p.mode === 'expression' ? p.numberOutputs : p.rules.values.length;
            const extra = p.mode === 'rules' && p.options.fallbackOutput === 'extra' ? 1 : 0;
            outputs = Array.from({ length: count + extra }, () => []);
          }
          if (p.mode === 'expression') {
            outputs[outputIndex(p.output, outputs.length)]?.push(item);
          } else {
            for (const o of await route(p, i, outputs.length)) outputs[o]?.push(item);
          }
        } catch (err) {
          if (ctx.node.continueOnFail !== true) throw err;
          if (outputs.length === 0) outputs = [[]];
          outputs[0]?.push({ json: { error: (err as Error).message } });
        }
      }
      return output(...(outputs.length > 0 ? outputs : [[]]));
    },
  });
}

/** n8n's Switch v3.x, rules mode (n8n's filter conditions per output) and expression mode. */
export const n8nSwitchNodes = [switchNode([3], false), switchNode([3.1, 3.2], true)];
