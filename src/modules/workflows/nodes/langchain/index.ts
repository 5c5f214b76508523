import type { NodeType } from '../../engine/node-type.js';
import { agentNode } from './agent/index.js';
import { agentToolNode } from './agent-tool/index.js';
import { agentV1Node } from './agent-v1/index.js';
import { informationExtractorNode } from './chain-information-extractor/index.js';
import { chainLlmNode } from './chain-llm/index.js';
import { chainRetrievalQaNode } from './chain-retrieval-qa/index.js';
import { sentimentAnalysisNode } from './chain-sentiment-analysis/index.js';
import { chainSummarizationNodes } from './chain-summarization/index.js';
import { textClassifierNode } from './chain-text-classifier/index.js';
import { chatTriggerNode } from './chat-trigger/index.js';
import { documentDefaultDataLoaderNode } from './document-default-data-loader/index.js';
import { embeddingsMistralCloudNode } from './embeddings-mistral-cloud/index.js';
import { embeddingsOllamaNode } from './embeddings-ollama/index.js';
import { embeddingsOpenAiNode } from './embeddings-open-ai/index.js';
import { lmChatAnthropicNode } from './lm-chat-anthropic/index.js';
import { lmChatAzureOpenAiNode } from './lm-chat-azure-open-ai/index.js';
import { lmChatGoogleGeminiNode } from './lm-chat-google-gemini/index.js';
import { lmChatGroqNode } from './lm-chat-groq/index.js';
import { lmChatMistralCloudNode } from './lm-chat-mistral-cloud/index.js';
import { lmChatOllamaNode } from './lm-chat-ollama/index.js';
import { lmChatOpenAiNode } from './lm-chat-open-ai/index.js';
import { lmChatOpenRouterNode } from './lm-chat-open-router/index.js';
import { manualChatTriggerNode } from './manual-chat-trigger/index.js';
import { mcpClientToolNode } from './mcp-client-tool/index.js';
import { mcpTriggerNode } from './mcp-trigger/index.js';
import { memoryBufferWindowNode } from './memory-buffer-window/index.js';
import { memoryManagerNode } from './memory-manager/index.js';
import { memoryPostgresChatNode } from './memory-postgres-chat/index.js';
import { memoryRedisChatNode } from './memory-redis-chat/index.js';
import { openAiNode } from './open-ai/index.js';
import { outputParserAutofixingNode } from './output-parser-autofixing/index.js';
import { outputParserStructuredNode } from './output-parser-structured/index.js';
import { retrieverVectorStoreNode } from './retriever-vector-store/index.js';
import {
  textSplitterCharacterNode,
  textSplitterRecursiveNode,
  textSplitterTokenNode,
} from './text-splitter/index.js';
import { toolCalculatorNode } from './tool-calculator/index.js';
import { toolCodeNode } from './tool-code/index.js';
import { toolHttpRequestNode } from './tool-http-request/index.js';
import { toolThinkNode } from './tool-think/index.js';
import { toolVectorStoreNode } from './tool-vector-store/index.js';
import { toolWikipediaNode } from './tool-wikipedia/index.js';
import { toolWorkflowNode } from './tool-workflow/index.js';
import { vectorStoreInMemoryNode } from './vector-store-in-memory/index.js';
import { vectorStorePgVectorNode } from './vector-store-pg-vector/index.js';
import { vectorStorePineconeNode } from './vector-store-pinecone/index.js';
import { vectorStoreQdrantNode } from './vector-store-qdrant/index.js';

/** n8n's AI nodes (`@n8n/n8n-nodes-langchain.*`): root nodes and the sub-nodes attached to them. */
export const langchainNodeTypes: NodeType[] = [
  agentNode,
  agentV1Node,
  agentToolNode,
  chainLlmNode,
  informationExtractorNode,
  chainRetrievalQaNode,
  sentimentAnalysisNode,
  ...chainSummarizationNodes,
  textClassifierNode,
  chatTriggerNode,
  documentDefaultDataLoaderNode,
  embeddingsMistralCloudNode,
  embeddingsOllamaNode,
  embeddingsOpenAiNode,
  lmChatAnthropicNode,
  lmChatAzureOpenAiNode,
  lmChatGoogleGeminiNode,
  lmChatGroqNode,
  lmChatMistralCloudNode,
  lmChatOllamaNode,
  lmChatOpenAiNode,
  openAiNode,
  lmChatOpenRouterNode,
  manualChatTriggerNode,
  mcpClientToolNode,
  mcpTriggerNode,
  memoryBufferWindowNode,
  memoryManagerNode,
  memoryPostgresChatNode,
  memoryRedisChatNode,
  outputParserAutofixingNode,
  outputParserStructuredNode,
  retrieverVectorStoreNode,
  textSplitterCharacterNode,
  textSplitterRecursiveNode,
  textSplitterTokenNode,
  toolCalculatorNode,
  toolCodeNode,
  toolHttpRequestNode,
  toolThinkNode,
  toolVectorStoreNode,
  toolWikipediaNode,
  toolWorkflowNode,
  vectorStoreInMemoryNode,
  vectorStorePgVectorNode,
  vectorStorePineconeNode,
  vectorStoreQdrantNode,
];
