import { type Static, Type } from 'typebox';
import { annotated, shownWhen } from '../../../engine/display-options.js';
import { defineNode, output } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import { JoinModes, MergeByFields, MergeV3Parameters, mergeInputs, OutputDataFrom } from './index.js';

const BY_FIELDS = { mode: ['combine'], combinationMode: ['mergeByFields'] };

/** n8n's Merge v2 (2, 2.1) parameters: v3's modes under older names, two inputs. */
const MergeV2Parameters = Type.Object(
  {
    mode: Type.Enum(['append', 'combine', 'chooseBranch'] as const, { default: 'append' }),
    combinationMode: Type.Enum(['mergeByFields', 'mergeByPosition', 'multiplex'] as const, {
      default: 'mergeByFields',
      ...shownWhen({ mode: ['combine'] }),
    }),
    mergeByFields: annotated(MergeByFields, shownWhen(BY_FIELDS)),
    joinMode: annotated(JoinModes, shownWhen(BY_FIELDS)),
    outputDataFrom: annotated(
      OutputDataFrom,
      shownWhen({ ...BY_FIELDS, joinMode: ['keepMatches', 'keepNonMatches'] }),
    ),
    chooseBranchMode: Type.Literal('waitForBoth', { default: 'waitForBoth' }),
    output: Type.Enum(['input1', 'input2', 'empty'] as const, {
      default: 'input1',
      ...shownWhen({ mode: ['chooseBranch'] }),
    }),
    options: Type.Object(
      {
        clashHandling: Type.Optional(
          Type.Object(
            {
              values: Type.Object(
                {
                  resolveClash: Type.Optional(
                    Type.Enum(['addSuffix', 'preferInput1', 'preferInput2'] as const),
                  ),
                  mergeMode: Type.Optional(Type.Enum(['deepMerge', 'shallowMerge'] as const)),
                  overrideEmpty: Type.Optional(Type.Boolean()),
                },
                { additionalProperties: false, default: {} },
              ),
            },
            { additionalProperties: false },
          ),
        ),
        fuzzyCompare: Type.Optional(Type.Boolean()),
        disableDotNotation: Type.Optional(Type.Boolean()),
        multipleMatches: Type.Optional(Type.Enum(['all', 'first'] as const)),
        includeUnpaired: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type V2 = Static<typeof MergeV2Parameters>;
type V3 = Static<typeof MergeV3Parameters>;

const COMBINE_BY = {
  mergeByFields: 'combineByFields',
  mergeByPosition: 'combineByPosition',
  multiplex: 'combineAll',
} as const;

/** The v3 parameters that do what a v2 node's do (two inputs; v2's `preferInput2` is v3's `preferLast`). */
function asV3(p: V2): V3 {
  const { clashHandling, ...options } = p.options;
  const clash = clashHandling?.values;
  const resolveClash = clash?.resolveClash === 'preferInput2' ? 'preferLast' : clash?.resolveClash;
  const base = withDefaults(MergeV3Parameters, {}) as V3;
  return {
    ...base,
    mode: p.mode,
    combineBy: COMBINE_BY[p.combinationMode],
    advanced: true,
    mergeByFields: p.mergeByFields,
    joinMode: p.joinMode,
    outputDataFrom: p.outputDataFrom,
    output: p.output === 'empty' ? 'empty' : 'specifiedInput',
    useDataOfInput: p.output === 'input2' ? 2 : 1,
    options: clash ? { ...options, clashHandling: { values: { ...clash, resolveClash } } } : options,
  };
}

/** n8n's Merge v2 (2, 2.1): append, combine (by fields, by position, all pairs) or choose a branch. */
export const mergeV2Node = defineNode({
  type: 'n8n-nodes-base.merge',
  versions: [2, 2.1],
  schema: MergeV2Parameters,
  inputs: 2,
  async execute(ctx) {
    return output(mergeInputs(ctx.inputs, asV3(await ctx.params(0))));
  },
});
