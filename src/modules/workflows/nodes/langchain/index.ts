import type { NodeType } from '../../engine/node-type.js';
import { agentNode } from './agent/index.js';
import { agentToolNode } from './agent-tool/index.js';
import { chainLlmNode } from './chain-llm/index.js';
import { chatTriggerNode } from './chat-trigger/index.js';
import { lmChatAnthropicNode } from './lm-chat-anthropic/index.js';
import { lmChatOllamaNode } from './lm-chat-ollama/index.js';
import { lmChatOpenAiNode } from './lm-chat-open-ai/index.js';
import { memoryBufferWindowNode } from './memory-buffer-window/index.js';
import { outputParserStructuredNode } from './output-parser-structured/index.js';
import { toolCalculatorNode } from './tool-calculator/index.js';
import { toolCodeNode } from './tool-code/index.js';

/** n8n's AI nodes (`@n8n/n8n-nodes-langchain.*`): root nodes and the sub-nodes attached to them. */
export const langchainNodeTypes: NodeType[] = [
  agentNode,
  agentToolNode,
  chainLlmNode,
  chatTriggerNode,
  lmChatAnthropicNode,
  lmChatOllamaNode,
  lmChatOpenAiNode,
  memoryBufferWindowNode,
  outputParserStructuredNode,
  toolCalculatorNode,
  toolCodeNode,
];
