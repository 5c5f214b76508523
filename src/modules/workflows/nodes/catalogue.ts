import { NodeRegistry, type NodeType } from '../engine/node-type.js';
import { langchainNodeTypes } from './langchain/index.js';
import { nodeAsTool } from './langchain/node-as-tool.js';
import { aggregateNode } from './n8n/aggregate/index.js';
import { aiTransformNode } from './n8n/ai-transform/index.js';
import { awsS3Node } from './n8n/aws-s3/index.js';
import { readBinaryFileNode, readBinaryFilesNode, writeBinaryFileNode } from './n8n/binary-file/index.js';
import { codeNode } from './n8n/code/index.js';
import { compareDatasetsNode } from './n8n/compare-datasets/index.js';
import { n8nCompressionNode } from './n8n/compression/index.js';
import { n8nConvertToFileNode } from './n8n/convert-to-file/index.js';
import { cronNode } from './n8n/cron/index.js';
import { cryptoV2Node } from './n8n/crypto/index.js';
import { cryptoV1Node } from './n8n/crypto/v1.js';
import { n8nDateTimeNodes } from './n8n/date-time/index.js';
import { debugHelperNode } from './n8n/debug-helper/index.js';
import { emailReadImapNode } from './n8n/email-read-imap/index.js';
import { emailSendNodes } from './n8n/email-send/index.js';
import { errorTriggerNode } from './n8n/error-trigger/index.js';
import { executeCommandNode } from './n8n/execute-command/index.js';
import { executeWorkflowNode } from './n8n/execute-workflow/index.js';
import { executeWorkflowTriggerNode } from './n8n/execute-workflow-trigger/index.js';
import { executionDataNode } from './n8n/execution-data/index.js';
import { n8nExtractFromFileNode } from './n8n/extract-from-file/index.js';
import { n8nFilterNodes } from './n8n/filter/index.js';
import { filterV1Node } from './n8n/filter/v1.js';
import { n8nFormNode } from './n8n/form/index.js';
import { formTriggerNode, formTriggerV1Node } from './n8n/form-trigger/index.js';
import { ftpNode } from './n8n/ftp/index.js';
import { functionNode } from './n8n/function/index.js';
import { functionItemNode } from './n8n/function-item/index.js';
import { githubNode } from './n8n/github/index.js';
import { googleSheetsNode } from './n8n/google-sheets/index.js';
import { graphqlNodes } from './n8n/graphql/index.js';
import { hackerNewsNode } from './n8n/hacker-news/index.js';
import { n8nHtmlNode } from './n8n/html/index.js';
import { n8nHtmlExtractNode } from './n8n/html-extract/index.js';
import { n8nHttpRequestNode } from './n8n/http-request/index.js';
import { n8nHttpRequestLegacyNode } from './n8n/http-request/legacy.js';
import { n8nICalNode } from './n8n/i-calendar/index.js';
import { n8nIfNodes } from './n8n/if/index.js';
import { ifV1Node } from './n8n/if/v1.js';
import { intervalNode } from './n8n/interval/index.js';
import { itemListsNode } from './n8n/item-lists/index.js';
import { jwtNode } from './n8n/jwt/index.js';
import { limitNode } from './n8n/limit/index.js';
import { localFileTriggerNode } from './n8n/local-file-trigger/index.js';
import { manualTriggerNode } from './n8n/manual-trigger/index.js';
import { n8nMarkdownNode } from './n8n/markdown/index.js';
import { mergeV3Node } from './n8n/merge/index.js';
import { mergeV1Node } from './n8n/merge/v1.js';
import { mergeV2Node } from './n8n/merge/v2.js';
import { n8nMoveBinaryDataNode } from './n8n/move-binary-data/index.js';
import { mySqlNode } from './n8n/mysql/index.js';
import { mySqlV1Node } from './n8n/mysql/v1.js';
import { n8nApiNode } from './n8n/n8n-api/index.js';
import { trainingCustomerDatastoreNode, trainingCustomerMessengerNode } from './n8n/n8n-training/index.js';
import { n8nNoOpNode } from './n8n/no-op/index.js';
import { openAiLegacyNode } from './n8n/open-ai/index.js';
import { postgresNode } from './n8n/postgres/index.js';
import { postgresV1Node } from './n8n/postgres/v1.js';
import { postgresTriggerNode } from './n8n/postgres-trigger/index.js';
import { readPdfNode } from './n8n/read-pdf/index.js';
import { readWriteFileNode } from './n8n/read-write-file/index.js';
import { redisNode } from './n8n/redis/index.js';
import { redisTriggerNode } from './n8n/redis-trigger/index.js';
import { removeDuplicatesNode } from './n8n/remove-duplicates/index.js';
import { removeDuplicatesV2Node } from './n8n/remove-duplicates/v2.js';
import { renameKeysNode } from './n8n/rename-keys/index.js';
import { n8nRespondToWebhookNode } from './n8n/respond-to-webhook/index.js';
import { rssFeedReadNode } from './n8n/rss-feed-read/index.js';
import { rssFeedReadTriggerNode } from './n8n/rss-feed-read-trigger/index.js';
import { scheduleTriggerNode } from './n8n/schedule-trigger/index.js';
import { n8nSetV3Nodes } from './n8n/set/index.js';
import { n8nSetV1Node } from './n8n/set/v1.js';
import { sortNode } from './n8n/sort/index.js';
import { splitInBatchesV3Node } from './n8n/split-in-batches/index.js';
import { splitInBatchesV1Node, splitInBatchesV2Node } from './n8n/split-in-batches/v1-v2.js';
import { splitOutNode } from './n8n/split-out/index.js';
import { n8nSpreadsheetFileNode } from './n8n/spreadsheet-file/index.js';
import { sshNode } from './n8n/ssh/index.js';
import { startNode } from './n8n/start/index.js';
import { stickyNoteNode } from './n8n/sticky-note/index.js';
import { n8nStopAndErrorNode } from './n8n/stop-and-error/index.js';
import { summarizeNode } from './n8n/summarize/index.js';
import { n8nSwitchNodes } from './n8n/switch/index.js';
import { switchV1Node } from './n8n/switch/v1.js';
import { switchV2Node } from './n8n/switch/v2.js';
import { telegramNode } from './n8n/telegram/index.js';
import { telegramTriggerNode } from './n8n/telegram-trigger/index.js';
import { totpNode } from './n8n/totp/index.js';
import { n8nWaitNode } from './n8n/wait/index.js';
import { n8nWebhookNode } from './n8n/webhook/index.js';
import { n8nXmlNode } from './n8n/xml/index.js';
import { documentLoadNode } from './platform/document-load/index.js';
import { embeddingsBuiltinNode } from './platform/embeddings-builtin/index.js';
import { flowPredictionNode } from './platform/flow-prediction/index.js';
import { gamePlatformNode } from './platform/game-platform/index.js';
import { httpRequestNode } from './platform/http-request/index.js';
import { knowledgeQueryNode } from './platform/knowledge-query/index.js';
import { markdownNode } from './platform/markdown/index.js';
import { splitItemsNode } from './platform/split-items/index.js';
import { validateNode } from './platform/validate/index.js';
import { vectorStoreKnowledgeBaseNode } from './platform/vector-store-knowledge-base/index.js';
import { webhookNode } from './platform/webhook/index.js';

/**
 * Every node type the platform knows, one entry per folder, alphabetical by type name: n8n's
 * (`n8n-nodes-base.*`, each version set from its folder's `versions`) then the platform's own
 * (`n8n-nodes-platform.*`). A new node type is a folder under `n8n/` or `platform/` and one line here.
 */
export const allNodeTypes: NodeType[] = [
  aggregateNode,
  readBinaryFileNode,
  readBinaryFilesNode,
  writeBinaryFileNode,
  awsS3Node,
  codeNode,
  aiTransformNode,
  compareDatasetsNode,
  n8nCompressionNode,
  n8nConvertToFileNode,
  cronNode,
  cryptoV2Node,
  cryptoV1Node,
  ...n8nDateTimeNodes,
  debugHelperNode,
  emailReadImapNode,
  ...emailSendNodes,
  errorTriggerNode,
  executeCommandNode,
  executeWorkflowNode,
  executeWorkflowTriggerNode,
  executionDataNode,
  n8nExtractFromFileNode,
  ...n8nFilterNodes,
  filterV1Node,
  formTriggerNode,
  formTriggerV1Node,
  n8nFormNode,
  ftpNode,
  functionNode,
  functionItemNode,
  githubNode,
  googleSheetsNode,
  ...graphqlNodes,
  hackerNewsNode,
  n8nApiNode,
  n8nHtmlNode,
  n8nHtmlExtractNode,
  n8nHttpRequestNode,
  n8nHttpRequestLegacyNode,
  n8nICalNode,
  ...n8nIfNodes,
  ifV1Node,
  intervalNode,
  itemListsNode,
  jwtNode,
  limitNode,
  localFileTriggerNode,
  manualTriggerNode,
  n8nMarkdownNode,
  mergeV3Node,
  mergeV1Node,
  mergeV2Node,
  n8nMoveBinaryDataNode,
  mySqlNode,
  mySqlV1Node,
  trainingCustomerDatastoreNode,
  trainingCustomerMessengerNode,
  n8nNoOpNode,
  openAiLegacyNode,
  readPdfNode,
  readWriteFileNode,
  postgresNode,
  postgresV1Node,
  postgresTriggerNode,
  redisNode,
  redisTriggerNode,
  removeDuplicatesNode,
  removeDuplicatesV2Node,
  renameKeysNode,
  rssFeedReadNode,
  rssFeedReadTriggerNode,
  n8nRespondToWebhookNode,
  scheduleTriggerNode,
  ...n8nSetV3Nodes,
  n8nSetV1Node,
  sortNode,
  splitInBatchesV3Node,
  splitInBatchesV1Node,
  splitInBatchesV2Node,
  splitOutNode,
  n8nSpreadsheetFileNode,
  sshNode,
  startNode,
  stickyNoteNode,
  n8nStopAndErrorNode,
  summarizeNode,
  ...n8nSwitchNodes,
  switchV1Node,
  switchV2Node,
  telegramNode,
  telegramTriggerNode,
  totpNode,
  n8nWaitNode,
  n8nWebhookNode,
  n8nXmlNode,
  ...langchainNodeTypes,
  documentLoadNode,
  embeddingsBuiltinNode,
  flowPredictionNode,
  gamePlatformNode,
  httpRequestNode,
  knowledgeQueryNode,
  markdownNode,
  splitItemsNode,
  validateNode,
  vectorStoreKnowledgeBaseNode,
  webhookNode,
  // n8n's "as tool" twins (`postgresTool`…) of the nodes here that n8n marks usable as a tool.
  ...(
    [
      [postgresNode, 'Postgres'],
      [mySqlNode, 'MySQL'],
      [redisNode, 'Redis'],
      [executeCommandNode, 'Execute Command'],
      [n8nHttpRequestNode, 'HTTP Request'],
      [telegramNode, 'Telegram'],
      ...emailSendNodes.map((n) => [n, 'Send Email'] as const),
    ] as const
  ).map(([node, label]) => nodeAsTool(node, label)),
];

export const defaultNodeRegistry = new NodeRegistry(allNodeTypes);
