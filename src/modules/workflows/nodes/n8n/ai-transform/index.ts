import { Type } from 'typebox';
import { CodeError } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';

const Parameters = Type.Object(
  {
    /** The plain-language instructions n8n's editor turned into `jsCode` (kept, never run). */
    instructions: Type.Optional(Type.String({ maxLength: 10_000 })),
    /** The instructions the stored code was generated for (n8n's editor keeps it). */
    codeGeneratedForPrompt: Type.Optional(Type.String({ maxLength: 10_000 })),
    jsCode: Type.String({ default: '', maxLength: 200_000 }),
    hint: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's AI Transform (v1): runs the JavaScript n8n's editor generated from the instructions (`jsCode`)
 * over all items, in the Code node's sandbox (`$input`, `items`; time and memory bounded). Generating
 * the code is n8n's cloud AI service, called by n8n's editor, not by the node: an export without code
 * fails with n8n's message.
 */
export const aiTransformNode = defineNode({
  type: 'n8n-nodes-base.aiTransform',
  versions: [1],
  schema: Parameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    if (!p.jsCode) {
      if (!p.instructions)
        throw new NodeOperationError('Missing instructions to generate code', {
          description: "Enter your prompt in the 'Instructions' parameter and click 'Generate code'",
        });
      throw new NodeOperationError('Missing code for data transformation', {
        description:
          "Click the 'Generate code' button to create the code (code generation is n8n's cloud service: generate it in n8n and import the workflow again)",
      });
    }
    try {
      // In an inner function, as n8n's sandbox runs it: generated code often declares `const items`.
      const code = `return await (async () => {\n${p.jsCode}\n})();`;
      const run = await ctx.runCode(code, 'runOnceForAllItems');
      return { ...output(run.items), logs: run.logs };
    } catch (err) {
      if (!(err instanceof CodeError)) throw err;
      const continues =
        ctx.node.continueOnFail === true ||
        ctx.node.onError === 'continueRegularOutput' ||
        ctx.node.onError === 'continueErrorOutput';
      // As n8n: one item holding the error, whatever the number of input items.
      if (continues) return { ...output([{ json: { error: err.message } }]), logs: err.logs };
      throw new NodeOperationError(err.message, { logs: err.logs });
    }
  },
});
