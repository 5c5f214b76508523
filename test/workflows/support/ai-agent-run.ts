import type { TestPlatform } from '../../helpers/platform.js';
import type { Execution } from '../db-support.js';
import { createWorkflow } from '../support.js';
import { type AiNodeSpec, aiWorkflow, LC } from './ai-workflow.js';

export interface AgentRunOptions {
  /** The AI Agent node's version (n8n exports 1–3.1). */
  typeVersion: number;
  text: string;
  maxIterations?: number;
}

/**
 * Saves and runs (manually, from the agent) a workflow of an AI Agent with an OpenAI chat model on
 * the credential `openAiCred` and one tool; answers the HTTP status and the execution.
 */
export async function runAgentWithTool(
  p: TestPlatform,
  openAiCred: string,
  tool: AiNodeSpec,
  agent: AgentRunOptions,
): Promise<{ status: number; execution: Execution }> {
  const wf = aiWorkflow(
    [
      {
        name: 'AI Agent',
        type: `${LC}.agent`,
        typeVersion: agent.typeVersion,
        parameters: {
          promptType: 'define',
          text: agent.text,
          ...(agent.maxIterations !== undefined ? { options: { maxIterations: agent.maxIterations } } : {}),
        },
      },
      {
        name: 'Model',
        type: `${LC}.lmChatOpenAi`,
        typeVersion: 1.2,
        parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
        credentials: { openAiApi: { id: openAiCred, name: 'openai' } },
      },
      tool,
    ],
    [
      ['Trigger', 'AI Agent'],
      ['Model', 'AI Agent', 'ai_languageModel'],
      [tool.name, 'AI Agent', 'ai_tool'],
    ],
  );
  const id = await createWorkflow(p, {
    name: wf.name,
    nodes: wf.nodes,
    connections: wf.connections,
    settings: {},
  });
  const res = await p.request({
    method: 'POST',
    url: `/api/v1/workflows/${id}/run`,
    payload: { startNode: 'AI Agent', items: [{ json: {} }] },
  });
  return { status: res.statusCode, execution: res.json() as Execution };
}

/** The AI Agent node's first output item. */
export const agentOutput = (e: Execution) =>
  e.data.resultData.runData['AI Agent']?.[0]?.data?.main[0]?.[0]?.json;
