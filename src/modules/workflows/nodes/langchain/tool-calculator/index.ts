import { Type } from 'typebox';
import { ArithmeticError, evaluateArithmetic } from '../../../../../core/arithmetic.js';
import { defineSubNode } from '../../../engine/node-type.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';

/** n8n's Calculator tool (LangChain's `calculator`): a math expression in, its value out as text. */
export const toolCalculatorNode = defineSubNode({
  type: `${LANGCHAIN}.toolCalculator`,
  versions: [1],
  schema: Type.Object({ notice: Type.Optional(Type.String()) }, { additionalProperties: false }),
  subNode: 'ai_tool',
  async supply(): Promise<AiTool> {
    return {
      kind: 'tool',
      name: 'calculator',
      description:
        'Useful for getting the result of a math expression. The input to this tool should be a valid mathematical expression that could be executed by a simple calculator.',
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: 'The math expression' } },
        required: ['input'],
      },
      async run(args) {
        if (typeof args.input !== 'string') throw new Error("the argument 'input' must be a string");
        try {
          return String(evaluateArithmetic(args.input));
        } catch (error) {
          if (error instanceof ArithmeticError) return "I don't know how to do that.";
          throw error;
        }
      },
    };
  },
});
