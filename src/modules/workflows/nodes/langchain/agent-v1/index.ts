import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { imagesOf } from '../agent/parameters.js';
import { runAgentItem } from '../agent/run-agent.js';
import { LANGCHAIN } from '../ai-parts.js';
import { AgentV1Parameters, agentTypeOf, promptOfV1, systemMessageOf } from './parameters.js';

/**
 * n8n's AI Agent v1–1.9 (its `AgentV1` class): the Tools, Conversational, OpenAI Functions and ReAct
 * agents all run on the platform's one tool loop with the model's native tool calls. n8n's
 * Conversational and ReAct agents describe the tools in the prompt and parse JSON or "Action:" text out
 * of the answer; here the tools go to the model as tool definitions, so their text-protocol templates
 * (`humanMessage`, `humanMessageTemplate`, `suffix`, `suffixChat`) are not used — a model that cannot
 * call tools answers without them. Plan-and-Execute and SQL agents are refused at save.
 */
export const agentV1Node = defineNode({
  type: `${LANGCHAIN}.agent`,
  versions: [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9],
  schema: AgentV1Parameters,
  aiInputs: ['ai_languageModel', 'ai_memory', 'ai_tool', 'ai_outputParser'],
  check(p) {
    const problems: ValidationProblem[] = [];
    if (p.agent === 'sqlAgent' || p.agent === 'planAndExecuteAgent')
      problems.push({
        path: 'parameters.agent',
        message: `the ${p.agent === 'sqlAgent' ? 'SQL' : 'Plan and Execute'} agent is not served here (n8n deprecated it): use the Tools Agent`,
      });
    return problems;
  },
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const type = agentTypeOf(p, version);
      const json = ctx.items[i]?.json ?? {};
      const result = await runAgentItem(ctx, i, {
        prompt: promptOfV1(p, version, json),
        images: type === 'toolsAgent' && p.options.passthroughBinaryImages ? imagesOf(ctx.items[i]) : [],
        systemMessage: systemMessageOf(p, type),
        maxIterations: p.options.maxIterations,
        // n8n shows "Require Specific Output Format" from 1.3 on; before, an attached parser counts.
        useParser: version <= 1.2 ? ctx.subNodes('ai_outputParser').length > 0 : p.hasOutputParser,
        useFallback: false,
      });
      const item: Record<string, Json> = { output: result.output as Json };
      if (p.options.returnIntermediateSteps) item.intermediateSteps = result.steps as unknown as Json;
      out.push({ json: item });
    }
    return output(out);
  },
});
