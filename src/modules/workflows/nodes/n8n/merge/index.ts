import { type Static, Type } from 'typebox';
import { assertNever } from '../../../../../core/errors.js';
import { annotated, shownWhen, shownWhenAny } from '../../../engine/display-options.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import { DEFAULT_CODE_TIMEOUT_MS, type Item } from '../../../engine/types.js';
import { queryText } from '../sql/rows.js';
import { type Clash, combineByFields, type JoinMode, mergeInto, withSuffix } from './combine.js';
import { MATCH_LIMITS } from './match-index.js';
import { mergeBySql } from './sql.js';

const ClashHandling = Type.Object(
  {
    values: Type.Object(
      {
        resolveClash: Type.Optional(
          Type.Union([
            Type.Literal(''),
            Type.Literal('addSuffix'),
            Type.Literal('preferInput1'),
            Type.Literal('preferLast'),
          ]),
        ),
        mergeMode: Type.Optional(Type.Union([Type.Literal('deepMerge'), Type.Literal('shallowMerge')])),
        overrideEmpty: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, ...shownWhen({ '/mode': ['combine'] }) },
);

const BY_FIELDS = { mode: ['combine'], combineBy: ['combineByFields'] };

/** Shared with v2 (whose editor shows them on other conditions): annotated where used. */
export const JoinModes = Type.Union(
  [
    Type.Literal('keepMatches'),
    Type.Literal('keepNonMatches'),
    Type.Literal('keepEverything'),
    Type.Literal('enrichInput1'),
    Type.Literal('enrichInput2'),
  ],
  { default: 'keepMatches' },
);
export const MergeByFields = Type.Object(
  {
    values: Type.Array(
      Type.Object(
        { field1: Type.String({ default: '' }), field2: Type.String({ default: '' }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, default: { values: [{ field1: '', field2: '' }] } },
);
export const OutputDataFrom = Type.Union(
  [Type.Literal('both'), Type.Literal('input1'), Type.Literal('input2')],
  { default: 'both' },
);

export const MergeV3Parameters = Type.Object(
  {
    mode: Type.Union(
      [
        Type.Literal('append'),
        Type.Literal('combine'),
        Type.Literal('combineBySql'),
        Type.Literal('chooseBranch'),
      ],
      { default: 'append' },
    ),
    combineBy: Type.Union(
      [Type.Literal('combineByFields'), Type.Literal('combineByPosition'), Type.Literal('combineAll')],
      { default: 'combineByFields', ...shownWhen({ mode: ['combine'] }) },
    ),
    /** How many inputs the node has (append, combine by position, choose branch); fixed at save time. */
    numberInputs: Type.Integer({
      minimum: 2,
      maximum: 10,
      default: 2,
      ...shownWhenAny(
        { show: { mode: ['append', 'combineBySql', 'chooseBranch'] } },
        { show: { mode: ['combine'], combineBy: ['combineByPosition'] } },
      ),
    }),
    joinMode: annotated(JoinModes, shownWhen(BY_FIELDS)),
    advanced: Type.Boolean({ default: false, ...shownWhen(BY_FIELDS) }),
    fieldsToMatchString: Type.String({ default: '', ...shownWhen({ ...BY_FIELDS, advanced: [false] }) }),
    mergeByFields: annotated(MergeByFields, shownWhen({ ...BY_FIELDS, advanced: [true] })),
    outputDataFrom: annotated(
      OutputDataFrom,
      shownWhen({ ...BY_FIELDS, joinMode: ['keepMatches', 'keepNonMatches'] }),
    ),
    chooseBranchMode: Type.Literal('waitForAll', { default: 'waitForAll' }),
    output: Type.Union([Type.Literal('specifiedInput'), Type.Literal('empty')], {
      default: 'specifiedInput',
      ...shownWhen({ mode: ['chooseBranch'] }),
    }),
    useDataOfInput: Type.Integer({
      minimum: 1,
      default: 1,
      ...shownWhen({ mode: ['chooseBranch'], output: ['specifiedInput'] }),
    }),
    /** combineBySql's query (alasql's dialect, run in the sandbox: sql.ts); `{{ }}` parts are evaluated first. */
    query: Type.String({
      default: 'SELECT * FROM input1 LEFT JOIN input2 ON input1.name = input2.id',
      ...shownWhen({ mode: ['combineBySql'] }),
    }),
    // Options by mode, as n8n's editor offers them (a superset where n8n narrows further).
    options: Type.Object(
      {
        clashHandling: Type.Optional(ClashHandling),
        fuzzyCompare: Type.Optional(Type.Boolean(shownWhen({ '/mode': ['combine'] }))),
        disableDotNotation: Type.Optional(Type.Boolean(shownWhen({ '/mode': ['combine'] }))),
        multipleMatches: Type.Optional(
          Type.Union([Type.Literal('all'), Type.Literal('first')], shownWhen({ '/mode': ['combine'] })),
        ),
        includeUnpaired: Type.Optional(
          Type.Boolean(shownWhen({ '/mode': ['combine'], '/combineBy': ['combineByPosition'] })),
        ),
        /** v3.2: what a query that returns no rows gives (v3, v3.1: always `{ success: true }`). */
        emptyQueryResult: Type.Optional(
          Type.Union(
            [Type.Literal('success'), Type.Literal('empty')],
            shownWhen({ '/mode': ['combineBySql'] }),
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** n8n's Merge v3: joins 2–10 inputs once every connected input has arrived. */
export const mergeV3Node = defineNode({
  type: 'n8n-nodes-base.merge',
  versions: [3, 3.1, 3.2],
  schema: MergeV3Parameters,
  inputs: (params) => {
    const n = params.numberInputs;
    return typeof n === 'number' && Number.isInteger(n) && n >= 2 && n <= 10 ? n : 2;
  },
  async execute(ctx) {
    const p = await ctx.params(0);
    if (p.mode !== 'combineBySql') return output(mergeInputs(ctx.inputs, p));
    const query = await queryText(p.query, (source) => ctx.evaluate(source, 0));
    const untilDeadline =
      ctx.deadlineAt === undefined ? Number.POSITIVE_INFINITY : ctx.deadlineAt - Date.now();
    const rows = await mergeBySql(ctx.inputs, query, {
      timeoutMs: Math.max(1, Math.min(ctx.deps.codeTimeoutMs ?? DEFAULT_CODE_TIMEOUT_MS, untilDeadline)),
      tenant: ctx.deps.tenant ?? 'default',
    });
    // n8n: an empty result is one `{ success: true }` item up to v3.1; v3.2 asks (default: no items).
    const success = (ctx.node.typeVersion ?? 3) <= 3.1 || p.options.emptyQueryResult === 'success';
    return output(rows.length === 0 && success ? [{ json: { success: true } }] : rows);
  },
});

/** Merge v3's modes over the inputs (v2 maps its parameters onto these: merge-v2.ts). */
export function mergeInputs(inputs: Item[][], p: Static<typeof MergeV3Parameters>): Item[] {
  const clash: Clash = p.options.clashHandling?.values ?? {};
  switch (p.mode) {
    case 'append':
      return inputs.flat();
    case 'chooseBranch': {
      if (p.output === 'empty') return [{ json: {} }];
      const chosen = inputs[p.useDataOfInput - 1];
      if (!chosen)
        throw new NodeOperationError(`Input ${p.useDataOfInput} doesn't exist`, {
          description: `The node has only ${inputs.length} inputs, so selecting input ${p.useDataOfInput} is not possible.`,
        });
      return chosen;
    }
    case 'combineBySql':
      // Asynchronous (a sandbox call): Merge v3's execute runs it before coming here.
      throw new NodeOperationError("Merge mode 'combineBySql' runs only in Merge v3");
    case 'combine':
      break;
    default:
      return assertNever(p.mode);
  }
  const [input1 = [], input2 = []] = inputs;
  switch (p.combineBy) {
    case 'combineByFields': {
      const pairs = p.advanced
        ? p.mergeByFields.values
        : p.fieldsToMatchString.split(',').map((f) => ({ field1: f.trim(), field2: f.trim() }));
      return combineByFields(input1, input2, pairs, {
        joinMode: p.joinMode as JoinMode,
        outputDataFrom: p.outputDataFrom,
        fuzzyCompare: p.options.fuzzyCompare === true,
        dotNotation: p.options.disableDotNotation !== true,
        multipleMatches: p.options.multipleMatches ?? 'all',
        clash,
      });
    }
    case 'combineByPosition':
      return combineByPosition(inputs, clash, p.options.includeUnpaired === true);
    case 'combineAll':
      return combineAll(input1, input2, clash);
    default:
      return assertNever(p.combineBy);
  }
}

/** Item i of every input merged into one; the preferred input (default: the last) wins clashes. */
function combineByPosition(inputs: Item[][], clash: Clash, includeUnpaired: boolean): Item[] {
  const suffix = clash.resolveClash === 'addSuffix';
  const preferred = clash.resolveClash?.startsWith('preferInput')
    ? Number(clash.resolveClash.replace('preferInput', '')) - 1
    : inputs.length - 1;
  const lists = suffix ? inputs.map((input, i) => withSuffix(input, String(i + 1))) : inputs;
  const lengths = lists.map((l) => l.length);
  const count = includeUnpaired ? Math.max(0, ...lengths) : Math.min(...lengths);
  const out: Item[] = [];
  for (let i = 0; i < count; i++) {
    const rest = lists.filter((_, n) => suffix || n !== preferred).map((l) => l[i]?.json ?? {});
    const first = suffix ? [] : [lists[preferred]?.[i]?.json ?? {}];
    out.push({ json: mergeInto(clash, {}, [...rest, ...first]) });
  }
  return out;
}

/**
 * Every pairing of an input 1 item with an input 2 item (cross join). n × m items: past both inputs'
 * items + MATCH_LIMITS.pairAllowance it is a node error (as Matching Fields' pairs), not a memory stall
 * of the server (10,000 × 10,000 items would be 10⁸).
 */
function combineAll(input1: Item[], input2: Item[], clash: Clash): Item[] {
  const total = input1.length * input2.length;
  const max = input1.length + input2.length + MATCH_LIMITS.pairAllowance;
  if (total > max)
    throw new NodeOperationError(
      `All Possible Combinations would make ${total} items (${input1.length} × ${input2.length}); at most ${max}`,
    );
  let [a, b] = clash.resolveClash === 'preferInput1' ? [input2, input1] : [input1, input2];
  if (clash.resolveClash === 'addSuffix') [a, b] = [withSuffix(a, '1'), withSuffix(b, '2')];
  const out: Item[] = [];
  for (const x of a) for (const y of b) out.push({ json: mergeInto(clash, x.json, [y.json]) });
  return out;
}
