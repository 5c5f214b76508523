/**
 * Cross-tenant access (written as an audit in wave 8, kept as the regression test). Account A (the owner, with its admin key) stores one of every kind of
 * thing; account B (another account's production Admin key for all services, and a signed-in admin
 * member of B) tries to read, list, change, delete, run, export and use each of them by id, directly
 * (a table walking every route of the OpenAPI document that takes the id of a stored thing) and
 * nested in bodies (credentials in nodes, sub-workflows, error workflows, agent tools, flows, topics,
 * document stores, tags, shares). Every refusal must be a 403/404 in the route's error body, never
 * the data and never a 500. At the end A checks that nothing of its own changed.
 *
 * Everything of A's carries the marker ALPHASECRET in a name or a content, so an answer to B that
 * holds the marker leaked A's data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallsThenText } from './agents/support.js';
import { otherAccountKey } from './helpers/accounts.js';
import { until } from './helpers/until.js';
import { call, type Reply } from './llm/calls.js';
import { type LlmTestbed, startLlmTestbed } from './llm/support.js';
import { ownerSession, type Session, sessionOf, tokenOf } from './portal/support.js';
import { flow } from './workflows/support.js';

const MARK = 'ALPHASECRET';
const rand = Math.random().toString(36).slice(2, 8);
const TOPIC_A = `kb-a-${rand}`;
const HOOK_A = `alpha-hook-${rand}`;
const CUSTOMER = `shared-cust-${rand}`;
const MODEL_A = `alpha-preset-${rand}`;

type Shape = 'platform' | 'flowise' | 'openai' | 'ollama' | 'any';
type Ids = Record<string, string>;
interface Probe {
  /** The route as the OpenAPI document names it. */
  route: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: (i: Ids) => string;
  body?: (i: Ids) => unknown;
  shape?: Shape;
  /** Statuses besides 403/404 that a documented refusal uses. */
  also?: number[];
}

const jsonl = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

/** Node of n8n's export shape. */
const node = (
  name: string,
  type: string,
  parameters: Record<string, unknown>,
  typeVersion = 1,
  extra = {},
) => ({
  id: `${name}-id`,
  name,
  type: type.includes('.') ? type : `n8n-nodes-base.${type}`,
  typeVersion,
  position: [0, 0],
  parameters,
  ...extra,
});
const chain = (...names: string[]) =>
  Object.fromEntries(
    names.slice(0, -1).map((name, i) => [name, { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] }]),
  );

function expectRefusal(res: Reply, shape: Shape, also: number[] = []): void {
  const where = `${res.status} ${res.text.slice(0, 400)}`;
  expect([403, 404, ...also], where).toContain(res.status);
  expect(res.text, `leaks ${MARK}: ${where}`).not.toContain(MARK);
  let body: Record<string, unknown>;
  try {
    body = res.json() as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${where}`);
  }
  expect(typeof body.code, where).toBe('string');
  expect(typeof body.requestId, where).toBe('string');
  if (shape === 'platform') expect(body.error, where).toBe(true);
  if (shape === 'flowise') expect(body).toMatchObject({ statusCode: res.status, success: false });
  if (shape === 'openai') expect(typeof (body.error as { message?: unknown })?.message, where).toBe('string');
  if (shape === 'ollama') expect(typeof body.error, where).toBe('string');
}

/** Every route of the document that takes the id of a stored thing, with A's id in it. */
const PROBES: Probe[] = [
  // Core: keys, members, sessions
  { route: 'GET /v1/api-keys/{id}', method: 'GET', path: (i) => `/v1/api-keys/${i.keyA}` },
  {
    route: 'PATCH /v1/api-keys/{id}',
    method: 'PATCH',
    path: (i) => `/v1/api-keys/${i.keyA}`,
    body: () => ({ name: 'taken over' }),
  },
  { route: 'DELETE /v1/api-keys/{id}', method: 'DELETE', path: (i) => `/v1/api-keys/${i.keyA}` },
  {
    route: 'POST /v1/api-keys/{id}/rotate',
    method: 'POST',
    path: (i) => `/v1/api-keys/${i.keyA}/rotate`,
    body: () => ({}),
  },
  {
    route: 'PATCH /v1/members/{id}',
    method: 'PATCH',
    path: (i) => `/v1/members/${i.memberA2}`,
    body: () => ({ role: 'admin' }),
  },
  { route: 'DELETE /v1/members/{id}', method: 'DELETE', path: (i) => `/v1/members/${i.memberA2}` },
  {
    route: 'DELETE /v1/auth/sessions/{id}',
    method: 'DELETE',
    path: (i) => `/v1/auth/sessions/${i.sessionA}`,
  },
  // Commerce
  { route: 'GET /api/custom-blends/{blendId}', method: 'GET', path: (i) => `/api/custom-blends/${i.blendA}` },
  {
    route: 'PATCH /api/custom-blends/{blendId}',
    method: 'PATCH',
    path: (i) => `/api/custom-blends/${i.blendA}`,
    body: () => ({ name: 'taken over' }),
  },
  {
    route: 'DELETE /api/custom-blends/{blendId}',
    method: 'DELETE',
    path: (i) => `/api/custom-blends/${i.blendA}`,
  },
  {
    route: 'POST /api/custom-blends/{blendId}/test-product',
    method: 'POST',
    path: (i) => `/api/custom-blends/${i.blendA}/test-product`,
    body: () => ({ productId: 'prod_candle_classic', intensity: 'medium', environment: 'living-room' }),
  },
  {
    route: 'GET /api/custom-blends/{blendId} (customer blend)',
    method: 'GET',
    path: (i) => `/api/custom-blends/${i.custBlendA}`,
  },
  {
    route: 'PATCH /api/cart/items/{itemId}',
    method: 'PATCH',
    path: (i) => `/api/cart/items/${i.cartItemA}`,
    body: () => ({ quantity: 3 }),
  },
  {
    route: 'DELETE /api/cart/items/{itemId}',
    method: 'DELETE',
    path: (i) => `/api/cart/items/${i.cartItemA}`,
  },
  { route: 'DELETE /v1/discounts/{id}', method: 'DELETE', path: (i) => `/v1/discounts/${i.discountA}` },
  { route: 'GET /v1/orders/{id}', method: 'GET', path: (i) => `/v1/orders/${i.orderA}` },
  // Workflows
  { route: 'GET /api/v1/workflows/{id}', method: 'GET', path: (i) => `/api/v1/workflows/${i.wfA}` },
  {
    route: 'PUT /api/v1/workflows/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/workflows/${i.wfA}`,
    body: () => flow('taken over', [{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }]),
  },
  { route: 'DELETE /api/v1/workflows/{id}', method: 'DELETE', path: (i) => `/api/v1/workflows/${i.wfA}` },
  {
    route: 'GET /api/v1/workflows/{id}/history',
    method: 'GET',
    path: (i) => `/api/v1/workflows/${i.wfA}/history`,
  },
  {
    route: 'GET /api/v1/workflows/{id}/{versionId}',
    method: 'GET',
    path: (i) => `/api/v1/workflows/${i.wfA}/${i.versionA}`,
  },
  {
    route: 'POST /api/v1/workflows/{id}/archive',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/archive`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/unarchive',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/unarchive`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/activate',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/activate`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/deactivate',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/deactivate`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/publish',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/publish`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/unpublish',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/unpublish`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/listen',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/listen`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/workflows/{id}/run',
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.wfA}/run`,
    body: () => ({}),
  },
  {
    route: 'GET /api/v1/executions/{id}',
    method: 'GET',
    path: (i) => `/api/v1/executions/${i.execA}?includeData=true`,
  },
  { route: 'DELETE /api/v1/executions/{id}', method: 'DELETE', path: (i) => `/api/v1/executions/${i.execA}` },
  {
    route: 'POST /api/v1/executions/{id}/stop',
    method: 'POST',
    path: (i) => `/api/v1/executions/${i.execWait}/stop`,
    body: () => ({}),
  },
  {
    route: 'POST /api/v1/executions/{id}/retry',
    method: 'POST',
    path: (i) => `/api/v1/executions/${i.execFail}/retry`,
    body: () => ({}),
  },
  { route: 'GET /api/v1/credentials/{id}', method: 'GET', path: (i) => `/api/v1/credentials/${i.credA}` },
  {
    route: 'PATCH /api/v1/credentials/{id}',
    method: 'PATCH',
    path: (i) => `/api/v1/credentials/${i.credA}`,
    body: () => ({ name: 'taken over' }),
  },
  {
    route: 'DELETE /api/v1/credentials/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/credentials/${i.credA}`,
  },
  {
    route: 'POST /api/v1/credentials/{id}/test',
    method: 'POST',
    path: (i) => `/api/v1/credentials/${i.credA}/test`,
    body: () => ({}),
  },
  {
    route: 'GET /api/v1/credentials/{id}/share',
    method: 'GET',
    path: (i) => `/api/v1/credentials/${i.credA}/share`,
  },
  {
    route: 'PUT /api/v1/credentials/{id}/share',
    method: 'PUT',
    path: (i) => `/api/v1/credentials/${i.credA}/share`,
    body: (i) => ({ shareWithIds: [`key:${i.keyB}`] }),
  },
  {
    route: 'PUT /api/v1/credentials/{id}/transfer',
    method: 'PUT',
    path: (i) => `/api/v1/credentials/${i.credA}/transfer`,
    body: (i) => ({ destinationProjectId: `key:${i.keyB}` }),
  },
  {
    route: 'POST /api/v1/credentials/{id}/oauth2/authorize',
    method: 'POST',
    path: (i) => `/api/v1/credentials/${i.oauthCredA}/oauth2/authorize`,
    body: () => ({}),
  },
  {
    route: 'PUT /api/v1/variables/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/variables/${i.varA}`,
    body: () => ({ key: 'TAKEN', value: 'over' }),
  },
  { route: 'DELETE /api/v1/variables/{id}', method: 'DELETE', path: (i) => `/api/v1/variables/${i.varA}` },
  { route: 'GET /api/v1/tags/{id}', method: 'GET', path: (i) => `/api/v1/tags/${i.tagA}` },
  {
    route: 'PUT /api/v1/tags/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/tags/${i.tagA}`,
    body: () => ({ name: 'taken-over' }),
  },
  { route: 'DELETE /api/v1/tags/{id}', method: 'DELETE', path: (i) => `/api/v1/tags/${i.tagA}` },
  { route: 'GET /api/v1/workflows/{id}/tags', method: 'GET', path: (i) => `/api/v1/workflows/${i.wfA}/tags` },
  {
    route: 'PUT /api/v1/workflows/{id}/tags',
    method: 'PUT',
    path: (i) => `/api/v1/workflows/${i.wfA}/tags`,
    body: () => [],
  },
  {
    route: 'GET /api/v1/executions/{id}/tags',
    method: 'GET',
    path: (i) => `/api/v1/executions/${i.execA}/tags`,
  },
  {
    route: 'PUT /api/v1/executions/{id}/tags',
    method: 'PUT',
    path: (i) => `/api/v1/executions/${i.execA}/tags`,
    body: () => [],
  },
  { route: 'GET /api/v1/users/{id}', method: 'GET', path: (i) => `/api/v1/users/${i.memberA}` },
  { route: 'GET /api/v1/users/{id} (by email)', method: 'GET', path: () => '/api/v1/users/owner@localhost' },
  // Language models: files, batches, responses
  { route: 'GET /v1/files/{file_id}', method: 'GET', path: (i) => `/v1/files/${i.fileA}`, shape: 'openai' },
  {
    route: 'DELETE /v1/files/{file_id}',
    method: 'DELETE',
    path: (i) => `/v1/files/${i.fileA}`,
    shape: 'openai',
  },
  {
    route: 'GET /v1/files/{file_id}/content',
    method: 'GET',
    path: (i) => `/v1/files/${i.fileA}/content`,
    shape: 'openai',
  },
  {
    route: 'GET /v1/batches/{batch_id}',
    method: 'GET',
    path: (i) => `/v1/batches/${i.batchA}`,
    shape: 'openai',
  },
  {
    route: 'POST /v1/batches/{batch_id}/cancel',
    method: 'POST',
    path: (i) => `/v1/batches/${i.batchA}/cancel`,
    body: () => ({}),
    shape: 'openai',
  },
  { route: 'GET /v1/responses/{id}', method: 'GET', path: (i) => `/v1/responses/${i.respA}`, shape: 'any' },
  // Documents
  { route: 'GET /api/documents/{id}', method: 'GET', path: (i) => `/api/documents/${i.docA}` },
  { route: 'DELETE /api/documents/{id}', method: 'DELETE', path: (i) => `/api/documents/${i.docA}` },
  { route: 'GET /api/documents/{id}/chunks', method: 'GET', path: (i) => `/api/documents/${i.docA}/chunks` },
  {
    route: 'POST /api/documents/{id}/process',
    method: 'POST',
    path: (i) => `/api/documents/${i.docA}/process`,
    body: () => ({}),
  },
  // Flows (Flowise)
  {
    route: 'GET /api/v1/chatflows/{id}',
    method: 'GET',
    path: (i) => `/api/v1/chatflows/${i.flowA}`,
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/chatflows/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/chatflows/${i.flowA}`,
    body: () => ({ name: 'taken over' }),
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/chatflows/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/chatflows/${i.flowA}`,
    shape: 'flowise',
  },
  {
    route: 'POST /api/v1/prediction/{id}',
    method: 'POST',
    path: (i) => `/api/v1/prediction/${i.flowA}`,
    body: () => ({ question: 'hello' }),
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/chatmessage/{id}',
    method: 'GET',
    path: (i) => `/api/v1/chatmessage/${i.flowA}`,
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/chatmessage/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/chatmessage/${i.flowA}`,
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/tools/{id}',
    method: 'GET',
    path: (i) => `/api/v1/tools/${i.toolA}`,
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/tools/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/tools/${i.toolA}`,
    body: () => ({ description: 'taken over' }),
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/tools/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/tools/${i.toolA}`,
    shape: 'flowise',
  },
  {
    route: 'PUT /flowise/api/v1/variables/{id}',
    method: 'PUT',
    path: (i) => `/flowise/api/v1/variables/${i.fvarA}`,
    body: () => ({ value: 'taken' }),
    shape: 'flowise',
  },
  {
    route: 'DELETE /flowise/api/v1/variables/{id}',
    method: 'DELETE',
    path: (i) => `/flowise/api/v1/variables/${i.fvarA}`,
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/assistants/{id}',
    method: 'GET',
    path: (i) => `/api/v1/assistants/${i.assistantA}`,
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/assistants/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/assistants/${i.assistantA}`,
    body: () => ({ iconSrc: 'x.png' }),
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/assistants/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/assistants/${i.assistantA}`,
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/feedback/{id}',
    method: 'GET',
    path: (i) => `/api/v1/feedback/${i.flowA}`,
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/feedback/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/feedback/${i.feedbackA}`,
    body: () => ({ rating: 'THUMBS_DOWN' }),
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/leads/{id}',
    method: 'GET',
    path: (i) => `/api/v1/leads/${i.flowA}`,
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/upsert-history/{id}',
    method: 'GET',
    path: (i) => `/api/v1/upsert-history/${i.ragA}`,
    shape: 'flowise',
  },
  {
    route: 'PATCH /api/v1/upsert-history/{id}',
    method: 'PATCH',
    path: (i) => `/api/v1/upsert-history/${i.ragA}`,
    body: (i) => ({ ids: [i.upsertA] }),
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/chatflows/apikey/{apikey}',
    method: 'GET',
    path: (i) => `/api/v1/chatflows/apikey/${i.keyAValue}`,
    shape: 'flowise',
    also: [400],
  },
  {
    route: 'GET /api/v1/document-store/store/{id}',
    method: 'GET',
    path: (i) => `/api/v1/document-store/store/${i.storeA}`,
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/document-store/store/{id}',
    method: 'PUT',
    path: (i) => `/api/v1/document-store/store/${i.storeA}`,
    body: () => ({ name: 'taken over' }),
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/document-store/store/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/document-store/store/${i.storeA}`,
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/document-store/loader/{storeId}/{loaderId}',
    method: 'DELETE',
    path: (i) => `/api/v1/document-store/loader/${i.storeA}/${i.loaderA}`,
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/document-store/loader/{storeId}/{loaderId} (B store, A loader)',
    method: 'DELETE',
    path: (i) => `/api/v1/document-store/loader/${i.storeB}/${i.loaderA}`,
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/document-store/vectorstore/{id}',
    method: 'DELETE',
    path: (i) => `/api/v1/document-store/vectorstore/${i.storeA}`,
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/document-store/chunks/{storeId}/{loaderId}/{pageOrChunkId}',
    method: 'GET',
    path: (i) => `/api/v1/document-store/chunks/${i.storeA}/${i.loaderA}/1`,
    shape: 'flowise',
  },
  {
    route: 'GET /api/v1/document-store/chunks/… (B store, A loader)',
    method: 'GET',
    path: (i) => `/api/v1/document-store/chunks/${i.storeB}/${i.loaderA}/1`,
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/document-store/chunks/{storeId}/{loaderId}/{pageOrChunkId}',
    method: 'PUT',
    path: (i) => `/api/v1/document-store/chunks/${i.storeA}/${i.loaderA}/${i.chunkA}`,
    body: () => ({ pageContent: 'taken over' }),
    shape: 'flowise',
  },
  {
    route: 'PUT /api/v1/document-store/chunks/… (B store, A loader)',
    method: 'PUT',
    path: (i) => `/api/v1/document-store/chunks/${i.storeB}/${i.loaderA}/${i.chunkA}`,
    body: () => ({ pageContent: 'taken over' }),
    shape: 'flowise',
  },
  {
    route: 'DELETE /api/v1/document-store/chunks/{storeId}/{loaderId}/{pageOrChunkId}',
    method: 'DELETE',
    path: (i) => `/api/v1/document-store/chunks/${i.storeA}/${i.loaderA}/${i.chunkA}`,
    shape: 'flowise',
  },
  {
    route: 'POST /api/v1/document-store/refresh/{id}',
    method: 'POST',
    path: (i) => `/api/v1/document-store/refresh/${i.storeA}`,
    body: () => ({}),
    shape: 'flowise',
  },
  {
    route: 'POST /api/v1/vector/upsert/{id}',
    method: 'POST',
    path: (i) => `/api/v1/vector/upsert/${i.ragA}`,
    body: () => ({ documents: [{ pageContent: 'planted by B' }] }),
    shape: 'flowise',
  },
  {
    route: 'POST /api/v1/document-store/upsert/{id}',
    method: 'POST',
    path: (i) => `/api/v1/document-store/upsert/${i.storeA}`,
    body: () => ({ loader: { name: 'plainText', config: { text: 'planted by B' } } }),
    shape: 'flowise',
  },
  // Profiles
  { route: 'GET /api/users/{userId}/profile', method: 'GET', path: () => `/api/users/${CUSTOMER}/profile` },
  // Agents
  { route: 'GET /api/agents/{agentId}', method: 'GET', path: (i) => `/api/agents/${i.agentA}` },
  {
    route: 'PATCH /api/agents/{agentId}',
    method: 'PATCH',
    path: (i) => `/api/agents/${i.agentA}`,
    body: () => ({ name: 'taken over' }),
  },
  { route: 'DELETE /api/agents/{agentId}', method: 'DELETE', path: (i) => `/api/agents/${i.agentA}` },
  {
    route: 'POST /api/agents/{agentId}/messages',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentA}/messages`,
    body: () => ({ content: 'hello' }),
  },
  {
    route: 'GET /api/agents/{agentId}/messages',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/messages?conversationId=${i.convA}`,
  },
  {
    route: 'POST /api/agents/{agentId}/runs/{runId}/tool-outputs',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentA}/runs/${i.runPausedA}/tool-outputs`,
    body: (i) => ({ toolOutputs: [{ toolCallId: i.toolCallA, output: 'x' }] }),
  },
  {
    route: 'POST /api/agents/{agentId}/runs/{runId}/approvals',
    method: 'POST',
    path: (i) => `/api/agents/${i.approvalAgentA}/runs/${i.runApprovalA}/approvals`,
    body: (i) => ({ approvals: [{ toolCallId: i.approvalCallA, approve: true }] }),
  },
  {
    route: 'POST /api/agents/{agentId}/runs/{runId}/cancel',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentA}/runs/${i.runPausedA}/cancel`,
    body: () => ({}),
  },
  {
    route: 'GET /api/agents/{agentId}/runs/{runId}',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/runs/${i.runPausedA}`,
  },
  {
    route: 'GET /api/agents/{agentId}/runs/{runId} (B agent, A run)',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentB}/runs/${i.runPausedA}`,
  },
  {
    route: 'POST …/runs/{runId}/tool-outputs (B agent, A run)',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentB}/runs/${i.runPausedA}/tool-outputs`,
    body: (i) => ({ toolOutputs: [{ toolCallId: i.toolCallA, output: 'x' }] }),
  },
  {
    route: 'POST …/runs/{runId}/cancel (B agent, A run)',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentB}/runs/${i.runPausedA}/cancel`,
    body: () => ({}),
  },
  {
    route: 'PATCH /api/conversations/{id}',
    method: 'PATCH',
    path: (i) => `/api/conversations/${i.convA}`,
    body: () => ({ title: 'taken over' }),
  },
  { route: 'GET /api/conversations/{id}', method: 'GET', path: (i) => `/api/conversations/${i.convA}` },
  { route: 'DELETE /api/conversations/{id}', method: 'DELETE', path: (i) => `/api/conversations/${i.convA}` },
  {
    route: 'GET /api/conversations/{id}/export',
    method: 'GET',
    path: (i) => `/api/conversations/${i.convA}/export`,
  },
  {
    route: 'PATCH /api/conversations/{id}/messages/{messageId}',
    method: 'PATCH',
    path: (i) => `/api/conversations/${i.convA}/messages/${i.msgA}`,
    body: () => ({ content: 'taken over' }),
  },
  {
    route: 'PATCH …/messages/{messageId} (B conversation, A message)',
    method: 'PATCH',
    path: (i) => `/api/conversations/${i.convB}/messages/${i.msgA}`,
    body: () => ({ content: 'taken over' }),
  },
  {
    route: 'DELETE /api/conversations/{id}/messages/{messageId}',
    method: 'DELETE',
    path: (i) => `/api/conversations/${i.convA}/messages/${i.msgA}`,
  },
  {
    route: 'DELETE …/messages/{messageId} (B conversation, A message)',
    method: 'DELETE',
    path: (i) => `/api/conversations/${i.convB}/messages/${i.msgA}`,
  },
  {
    route: 'DELETE /api/conversations/{id}/messages',
    method: 'DELETE',
    path: (i) => `/api/conversations/${i.convA}/messages`,
  },
  {
    route: 'GET /api/agents/{agentId}/memory/blocks',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/memory/blocks`,
  },
  {
    route: 'POST /api/agents/{agentId}/memory/blocks',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentA}/memory/blocks`,
    body: () => ({ label: 'planted', value: 'x' }),
  },
  {
    route: 'GET /api/agents/{agentId}/memory/blocks/{blockId}',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/memory/blocks/${i.blockA}`,
  },
  {
    route: 'GET …/memory/blocks/{blockId} (B agent, A block)',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentB}/memory/blocks/${i.blockA}`,
  },
  {
    route: 'PATCH /api/agents/{agentId}/memory/blocks/{blockId}',
    method: 'PATCH',
    path: (i) => `/api/agents/${i.agentA}/memory/blocks/${i.blockA}`,
    body: () => ({ value: 'taken over' }),
  },
  {
    route: 'PATCH …/memory/blocks/{blockId} (B agent, A block)',
    method: 'PATCH',
    path: (i) => `/api/agents/${i.agentB}/memory/blocks/${i.blockA}`,
    body: () => ({ value: 'taken over' }),
  },
  {
    route: 'DELETE /api/agents/{agentId}/memory/blocks/{blockId}',
    method: 'DELETE',
    path: (i) => `/api/agents/${i.agentA}/memory/blocks/${i.blockA}`,
  },
  {
    route: 'DELETE …/memory/blocks/{blockId} (B agent, A block)',
    method: 'DELETE',
    path: (i) => `/api/agents/${i.agentB}/memory/blocks/${i.blockA}`,
  },
  {
    route: 'GET /api/agents/{agentId}/memory/blocks/{blockId}/history',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/memory/blocks/${i.blockA}/history`,
  },
  {
    route: 'GET …/blocks/{blockId}/history (B agent, A block)',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentB}/memory/blocks/${i.blockA}/history`,
  },
  { route: 'GET /api/agents/{agentId}/export', method: 'GET', path: (i) => `/api/agents/${i.agentA}/export` },
  {
    route: 'GET /api/agents/{agentId}/memory/archival',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/memory/archival`,
  },
  {
    route: 'POST /api/agents/{agentId}/memory/archival',
    method: 'POST',
    path: (i) => `/api/agents/${i.agentA}/memory/archival`,
    body: () => ({ text: 'planted by B' }),
  },
  {
    route: 'GET /api/agents/{agentId}/memory/archival/{passageId}',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentA}/memory/archival/${i.passageA}`,
  },
  {
    route: 'GET …/memory/archival/{passageId} (B agent, A passage)',
    method: 'GET',
    path: (i) => `/api/agents/${i.agentB}/memory/archival/${i.passageA}`,
  },
  {
    route: 'DELETE /api/agents/{agentId}/memory/archival/{passageId}',
    method: 'DELETE',
    path: (i) => `/api/agents/${i.agentA}/memory/archival/${i.passageA}`,
  },
  {
    route: 'DELETE …/memory/archival/{passageId} (B agent, A passage)',
    method: 'DELETE',
    path: (i) => `/api/agents/${i.agentB}/memory/archival/${i.passageA}`,
  },
];

/** Multipart routes (built per call: a FormData body is consumed by one request). */
const MULTIPART: Array<{ route: string; path: (i: Ids) => string; form: () => FormData; shape: Shape }> = [
  {
    route: 'POST /api/v1/attachments/{chatflowId}/{chatId}',
    path: (i) => `/api/v1/attachments/${i.flowA}/${i.chatA}`,
    form: () => {
      const f = new FormData();
      f.append('files', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
      return f;
    },
    shape: 'flowise',
  },
  {
    route: 'POST /api/v1/document-store/upsert/{id} (multipart)',
    path: (i) => `/api/v1/document-store/upsert/${i.storeA}`,
    form: () => {
      const f = new FormData();
      f.append('files', new Blob(['planted by B'], { type: 'text/plain' }), 'b.txt');
      return f;
    },
    shape: 'flowise',
  },
  {
    route: 'POST /api/v1/vector/upsert/{id} (multipart)',
    path: (i) => `/api/v1/vector/upsert/${i.ragA}`,
    form: () => {
      const f = new FormData();
      f.append('files', new Blob(['planted by B'], { type: 'text/plain' }), 'b.txt');
      return f;
    },
    shape: 'flowise',
  },
];

describe('audit: cross-tenant access', () => {
  let bed: LlmTestbed;
  const I: Ids = {};
  let A: string;
  let B: string;
  let bSession: Session;
  let ownerA: Session;
  /** Snapshots of A's things taken before B's probes, compared after. */
  const before: Record<string, string> = {};

  const a = (method: string, path: string, body?: unknown) =>
    call(bed, method, path, body === undefined ? {} : { body });
  const b = (method: string, path: string, body?: unknown) =>
    call(bed, method, path, { key: B, ...(body === undefined ? {} : { body }) });
  const ok = async (res: Promise<Reply> | Reply, label: string): Promise<Record<string, unknown>> => {
    const r = await res;
    if (r.status >= 300) throw new Error(`${label}: ${r.status} ${r.text.slice(0, 500)}`);
    return (r.text ? r.json() : {}) as Record<string, unknown>;
  };
  /** A request with B's member session (cookie + CSRF token). */
  const bAsSession = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const headers: Record<string, string> = {
      cookie: bSession.cookie,
      'x-csrf-token': bSession.csrfToken,
      origin: bed.url,
    };
    let payload: string | undefined;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(`${bed.url}${path}`, {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
  };

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite', { OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' });
    const p = bed.p;
    A = p.adminKey;
    B = await otherAccountKey(p);
    I.keyB = ((await ok(b('GET', '/v1/api-keys'), 'B keys')).data as Array<{ id: string }>)[0]?.id ?? '';

    // ---- Core: a second key, the owner's session, a second member.
    const keyA = await p.createKey({
      name: `${MARK} key`,
      type: 'production',
      services: ['*'],
      role: 'Writer',
    });
    I.keyA = keyA.id;
    I.keyAValue = keyA.key;
    ownerA = await ownerSession(p);
    I.memberA = ownerA.memberId;
    const sessions = await p.request({
      method: 'GET',
      url: '/v1/auth/sessions',
      key: null,
      headers: { cookie: ownerA.cookie },
    });
    I.sessionA =
      (sessions.json() as { data: Array<{ id: string; current: boolean }> }).data.find((s) => s.current)
        ?.id ?? '';
    const invitedA = await ok(
      a('POST', '/v1/members/invites', { email: `viewer-${rand}@a.example`, role: 'viewer' }),
      'invite A',
    );
    const acceptedA = sessionOf(
      await p.request({
        method: 'POST',
        url: '/v1/auth/invites/accept',
        key: null,
        payload: {
          token: tokenOf(invitedA.inviteUrl as string),
          name: `${MARK} viewer`,
          password: 'copper meadow signal 92',
        },
      }),
    );
    I.memberA2 = acceptedA.memberId;
    // B's admin member, invited by B's key.
    const invitedB = await ok(
      b('POST', '/v1/members/invites', { email: `admin-${rand}@b.example`, role: 'admin' }),
      'invite B',
    );
    bSession = sessionOf(
      await p.request({
        method: 'POST',
        url: '/v1/auth/invites/accept',
        key: null,
        payload: {
          token: tokenOf(invitedB.inviteUrl as string),
          name: 'bob',
          password: 'amber harbor violin 38',
        },
      }),
    );

    // ---- Workflows.
    I.wfA = (
      await ok(
        a('POST', '/api/v1/workflows', {
          ...flow(`${MARK} wf`, [
            { name: 'Webhook', type: 'webhook', parameters: { path: HOOK_A, responseMode: 'lastNode' } },
            { name: 'Set', type: 'set', parameters: { values: { secret: `${MARK}-wf-output` } } },
          ]),
          settings: { availableInMCP: true },
        }),
        'wfA',
      )
    ).id as string;
    I.versionA = (await ok(a('GET', `/api/v1/workflows/${I.wfA}`), 'wfA get')).versionId as string;
    I.calleeA = (
      await ok(
        a('POST', '/api/v1/workflows', {
          name: `${MARK} callee`,
          nodes: [
            node('Called', 'executeWorkflowTrigger', { inputSource: 'passthrough' }, 1.1),
            node('Code', 'code', { jsCode: `return [{ json: { secret: '${MARK}-callee' } }];` }, 2),
          ],
          connections: chain('Called', 'Code'),
        }),
        'calleeA',
      )
    ).id as string;
    I.errWfA = (
      await ok(
        a('POST', '/api/v1/workflows', {
          name: `${MARK} error handler`,
          nodes: [node('Error Trigger', 'errorTrigger', {}, 1), node('NoOp', 'noOp', {}, 1)],
          connections: chain('Error Trigger', 'NoOp'),
        }),
        'errWfA',
      )
    ).id as string;
    const waitWf = (
      await ok(
        a('POST', '/api/v1/workflows', {
          name: `${MARK} waits`,
          nodes: [node('Start', 'manualTrigger', {}, 1), node('Wait', 'wait', { resume: 'webhook' }, 1.1)],
          connections: chain('Start', 'Wait'),
        }),
        'waitWf',
      )
    ).id as string;
    I.waitWfA = waitWf;
    const failWf = (
      await ok(
        a('POST', '/api/v1/workflows', {
          name: `${MARK} fails`,
          nodes: [
            node('Start', 'manualTrigger', {}, 1),
            node('Boom', 'code', { jsCode: "throw new Error('boom');" }, 2),
          ],
          connections: chain('Start', 'Boom'),
        }),
        'failWf',
      )
    ).id as string;
    I.execA = ((await ok(a('POST', `/api/v1/workflows/${I.wfA}/run`, {}), 'run wfA')) as { id: string }).id;
    I.execWait = (
      (await ok(a('POST', `/api/v1/workflows/${waitWf}/run`, {}), 'run wait')) as { id: string }
    ).id;
    I.execFail = (
      (await ok(a('POST', `/api/v1/workflows/${failWf}/run`, {}), 'run fail')) as { id: string }
    ).id;
    await until(async () => {
      const e = (await a('GET', `/api/v1/executions/${I.execWait}`)).json() as { status: string };
      return e.status === 'waiting';
    }, 'A execution waiting');
    I.credA = (
      await ok(
        a('POST', '/api/v1/credentials', {
          name: `${MARK} cred`,
          type: 'httpHeaderAuth',
          data: { name: 'X-Alpha', value: `${MARK}-credential-value` },
        }),
        'credA',
      )
    ).id as string;
    const oauth = await a('POST', '/api/v1/credentials', {
      name: `${MARK} oauth`,
      type: 'oAuth2Api',
      data: {
        grantType: 'authorizationCode',
        authUrl: 'https://auth.example.com/authorize',
        accessTokenUrl: 'https://auth.example.com/token',
        clientId: 'alpha-client',
        clientSecret: `${MARK}-client-secret`,
        scope: 'read',
        authentication: 'header',
      },
    });
    I.oauthCredA = oauth.status < 300 ? ((oauth.json() as { id: string }).id as string) : I.credA;
    I.varA = (
      await ok(a('POST', '/api/v1/variables', { key: `${MARK}_VAR`, value: `${MARK}-value` }), 'varA')
    ).id as string;
    I.tagA = (await ok(a('POST', '/api/v1/tags', { name: `${MARK}-tag` }), 'tagA')).id as string;
    await ok(a('PUT', `/api/v1/workflows/${I.wfA}/tags`, [{ id: I.tagA }]), 'wf tags');
    await ok(a('PUT', `/api/v1/executions/${I.execA}/tags`, [{ id: I.tagA }]), 'exec tags');

    // ---- Documents and knowledge.
    I.docA = (
      await ok(
        a('POST', '/api/documents/load', {
          source: 'markdown',
          title: `${MARK} doc`,
          topic: TOPIC_A,
          content: `# Otters\n\nThe ${MARK} otters of the north hold hands while they sleep in kelp forests.`,
        }),
        'docA',
      )
    ).id as string;
    await ok(a('POST', `/api/documents/${I.docA}/process?wait=true`, {}), 'process docA');

    // ---- Flows.
    I.flowA = (
      await ok(
        a('POST', '/api/v1/chatflows', { name: `${MARK} flow`, kind: 'llm', model: 'llama3.2' }),
        'flowA',
      )
    ).id as string;
    const predicted = await ok(
      a('POST', `/api/v1/prediction/${I.flowA}`, { question: `${MARK} question` }),
      'predict',
    );
    I.chatA = predicted.chatId as string;
    I.chatMsgA = predicted.chatMessageId as string;
    I.ragA = (
      await ok(
        a('POST', '/api/v1/chatflows', {
          name: `${MARK} rag`,
          flowData: JSON.stringify({
            nodes: [
              { id: 'chatOllama_0', data: { name: 'chatOllama', inputs: { model: 'llama3.2' } } },
              { id: 'memoryVectorStore_0', data: { name: 'memoryVectorStore', inputs: {} } },
              {
                id: 'retrievalQAChain_0',
                data: {
                  name: 'retrievalQAChain',
                  inputs: {
                    model: '{{chatOllama_0.data.instance}}',
                    vectorStoreRetriever: '{{memoryVectorStore_0.data.instance}}',
                  },
                },
              },
            ],
            edges: [
              { source: 'chatOllama_0', target: 'retrievalQAChain_0' },
              { source: 'memoryVectorStore_0', target: 'retrievalQAChain_0' },
            ],
          }),
        }),
        'ragA',
      )
    ).id as string;
    await ok(
      a('POST', `/api/v1/vector/upsert/${I.ragA}`, {
        documents: [{ pageContent: `${MARK} rag passage about seals.` }],
      }),
      'upsert rag',
    );
    I.upsertA =
      ((await a('GET', `/api/v1/upsert-history/${I.ragA}`)).json() as Array<{ id: string }>)[0]?.id ?? '';
    I.toolA = (
      await ok(
        a('POST', '/api/v1/tools', {
          name: 'alphatool',
          description: `${MARK} tool`,
          color: '#fff',
          schema: '[]',
          func: 'return 1;',
        }),
        'toolA',
      )
    ).id as string;
    I.fvarA = (
      await ok(
        a('POST', '/flowise/api/v1/variables', { name: 'alphavar', value: `${MARK}-fvar`, type: 'static' }),
        'fvarA',
      )
    ).id as string;
    I.assistantA = (
      await ok(
        a('POST', '/api/v1/assistants', {
          details: JSON.stringify({ name: `${MARK} assistant` }),
          type: 'CUSTOM',
        }),
        'assistantA',
      )
    ).id as string;
    I.feedbackA = (
      await ok(
        a('POST', '/api/v1/feedback', {
          chatflowid: I.flowA,
          chatId: I.chatA,
          messageId: I.chatMsgA,
          rating: 'THUMBS_UP',
          content: `${MARK} nice`,
        }),
        'feedbackA',
      )
    ).id as string;
    await ok(
      a('POST', '/api/v1/leads', {
        chatflowid: I.flowA,
        chatId: I.chatA,
        name: `${MARK} lead`,
        email: 'lead@a.example',
      }),
      'leadA',
    );
    I.storeA = (
      await ok(
        a('POST', '/api/v1/document-store/store', { name: `${MARK} store`, description: 'A' }),
        'storeA',
      )
    ).id as string;
    I.loaderA = (
      await ok(
        a('POST', `/api/v1/document-store/upsert/${I.storeA}`, {
          loader: {
            name: 'plainText',
            config: { text: `${MARK} store text: the walrus vault code is 4711.` },
          },
        }),
        'upsert storeA',
      )
    ).docId as string;
    I.chunkA =
      (
        (await a('GET', `/api/v1/document-store/chunks/${I.storeA}/${I.loaderA}/1`)).json() as {
          chunks: Array<{ id: string }>;
        }
      ).chunks[0]?.id ?? '';
    I.storeB = (await ok(b('POST', '/api/v1/document-store/store', { name: 'B store' }), 'storeB'))
      .id as string;
    await ok(
      b('POST', `/api/v1/document-store/upsert/${I.storeB}`, {
        loader: { name: 'plainText', config: { text: 'B text.' } },
      }),
      'upsert storeB',
    );

    // ---- Agents.
    I.agentA = (
      await ok(
        a('POST', '/api/agents', {
          name: `${MARK} agent`,
          model: 'llama3.2',
          instructions: `${MARK} instructions`,
          knowledgeTopics: [TOPIC_A],
        }),
        'agentA',
      )
    ).id as string;
    const turn = await ok(
      a('POST', `/api/agents/${I.agentA}/messages`, { content: `${MARK} hello` }),
      'turn A',
    );
    I.convA = turn.conversationId as string;
    I.msgA = (turn.messages as Array<{ id: string }>)[0]?.id ?? '';
    I.blockA = (
      await ok(
        a('POST', `/api/agents/${I.agentA}/memory/blocks`, { label: 'persona', value: `${MARK} persona` }),
        'blockA',
      )
    ).id as string;
    I.passageA = (
      await ok(
        a('POST', `/api/agents/${I.agentA}/memory/archival`, { text: `${MARK} archival passage` }),
        'passageA',
      )
    ).id as string;
    // A paused run (a client tool), and a run waiting for approval.
    toolCallsThenText(bed.ollama, { name: 'lookup_order', arguments: { id: 7 } });
    const paused = await ok(
      a('POST', `/api/agents/${I.agentA}/messages`, {
        conversationId: I.convA,
        content: `${MARK} where is my order?`,
        tools: [{ type: 'function', name: 'lookup_order', parameters: { type: 'object' } }],
      }),
      'paused A',
    );
    bed.ollama.reset();
    I.runPausedA = paused.runId as string;
    I.toolCallA = ((paused.requiredAction as { toolCalls: Array<{ id: string }> }).toolCalls[0]?.id ??
      '') as string;
    I.approvalAgentA = (
      await ok(
        a('POST', '/api/agents', {
          name: `${MARK} approver`,
          model: 'llama3.2',
          tools: ['user_profile'],
          requiresApproval: ['user_profile'],
        }),
        'approval agent',
      )
    ).id as string;
    toolCallsThenText(bed.ollama, { name: 'user_profile', arguments: {} });
    const waiting = await ok(
      a('POST', `/api/agents/${I.approvalAgentA}/messages`, { content: `${MARK} who am I?` }),
      'approval A',
    );
    bed.ollama.reset();
    I.runApprovalA = waiting.runId as string;
    I.approvalCallA = ((waiting.requiredAction as { approvals: Array<{ id: string }> }).approvals[0]?.id ??
      '') as string;
    I.agentB = (await ok(b('POST', '/api/agents', { name: 'B agent', model: 'llama3.2' }), 'agentB'))
      .id as string;
    I.convB = (await ok(b('POST', '/api/conversations', { agentId: I.agentB }), 'convB')).id as string;
    I.respA = (
      await ok(
        a('POST', '/v1/responses', { model: 'llama3.2', input: `${MARK} responses question` }),
        'respA',
      )
    ).id as string;

    // ---- LLM files and batches, and a made model.
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append(
      'file',
      new Blob([`{"note": "${MARK} file"}\n`], { type: 'application/jsonl' }),
      'alpha.jsonl',
    );
    I.fileA = (await ok(call(bed, 'POST', '/v1/files', { body: form }), 'fileA')).id as string;
    const batchForm = new FormData();
    batchForm.append('purpose', 'batch');
    batchForm.append(
      'file',
      new Blob(
        [
          jsonl([
            {
              custom_id: 'a1',
              method: 'POST',
              url: '/v1/chat/completions',
              body: { model: 'llama3.2', messages: [{ role: 'user', content: `${MARK} batch` }] },
            },
          ]),
        ],
        { type: 'application/jsonl' },
      ),
      'batch.jsonl',
    );
    I.batchFileA = (await ok(call(bed, 'POST', '/v1/files', { body: batchForm }), 'batch file')).id as string;
    I.batchA = (
      await ok(
        a('POST', '/v1/batches', {
          input_file_id: I.batchFileA,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        }),
        'batchA',
      )
    ).id as string;
    // Not fatal to the rest: the made-model probes fail on their own if A cannot make one.
    const made = await a('POST', '/api/create', {
      model: MODEL_A,
      from: 'llama3.2',
      system: `${MARK} system prompt`,
      stream: false,
    });
    I.madeModel = `${made.status} ${made.text.slice(0, 300)}`;

    // ---- Profiles, commerce, cart, orders (a customer id both accounts use).
    await ok(
      a('POST', '/api/users', {
        userId: CUSTOMER,
        email: 'alpha@a.example',
        name: `${MARK} name`,
        registrationSource: 'web',
      }),
      'profile A',
    );
    const blend = (name: string) => ({
      name,
      description: `${MARK} description`,
      isPublic: false,
      composition: {
        notes: [
          { id: 'note_bergamot', ratio: 0.25 },
          { id: 'note_rose', ratio: 0.4 },
          { id: 'note_sandalwood', ratio: 0.35 },
        ],
        baseIntensity: 'medium',
      },
    });
    I.blendA = (await ok(a('POST', '/api/custom-blends', blend(`${MARK} blend`)), 'blendA')).id as string;
    const tokenA = (
      await ok(
        a('POST', '/v1/auth/tokens', {
          customerId: CUSTOMER,
          scopes: ['commerce:read', 'commerce:write', 'agent:read', 'agent:write'],
        }),
        'tokenA',
      )
    ).token as string;
    I.tokenA = tokenA;
    I.custBlendA = (
      await ok(
        call(bed, 'POST', '/api/custom-blends', { key: tokenA, body: blend(`${MARK} customer blend`) }),
        'custBlendA',
      )
    ).id as string;
    await ok(a('PUT', '/v1/inventory/var_candle_4oz', { onHand: 50 }), 'stock');
    I.cartItemA = (
      (
        await ok(
          call(bed, 'POST', '/api/cart/items', {
            key: tokenA,
            body: { productId: 'prod_candle_classic', variantId: 'var_candle_4oz', quantity: 1 },
          }),
          'cart item',
        )
      ).items as Array<{ id: string }>
    )[0]?.id as string;
    I.discountA = (
      await ok(
        a('POST', '/v1/discounts', { code: `ALPHA${rand}`.toUpperCase(), type: 'percentage', value: 10 }),
        'discountA',
      )
    ).id as string;
    await ok(
      call(bed, 'POST', '/api/cart/discounts', { key: tokenA, body: { code: `ALPHA${rand}`.toUpperCase() } }),
      'apply discount',
    );
    I.orderA = (
      await ok(
        a('POST', '/v1/orders', {
          id: `sf-${rand}`,
          email: 'alpha@a.example',
          customer: { id: CUSTOMER, email: 'alpha@a.example' },
          line_items: [
            {
              product_id: 'prod_candle_classic',
              variant_id: 'var_candle_4oz',
              quantity: 1,
              price: '18.00',
              properties: [{ name: 'note', value: `${MARK} gift` }],
            },
          ],
        }),
        'orderA',
      )
    ).id as string;
    I.custConvA = (
      await ok(
        call(bed, 'POST', '/api/conversations', {
          key: tokenA,
          body: { agentId: I.agentA, title: `${MARK} customer chat` },
        }),
        'customer conv',
      )
    ).id as string;

    // What A's things look like before B starts.
    for (const [label, path] of snapshotPaths()) before[label] = (await a('GET', path)).text;
  }, 240_000);
  afterAll(() => bed?.close());

  /** A's things, read back by A before and after B's attempts. */
  const snapshotPaths = (): Array<[string, string]> => [
    ['key', `/v1/api-keys/${I.keyA}`],
    ['workflow', `/api/v1/workflows/${I.wfA}`],
    ['workflow tags', `/api/v1/workflows/${I.wfA}/tags`],
    ['execution', `/api/v1/executions/${I.execA}`],
    ['waiting execution', `/api/v1/executions/${I.execWait}`],
    ['execution tags', `/api/v1/executions/${I.execA}/tags`],
    ['credential', `/api/v1/credentials/${I.credA}`],
    ['credential shares', `/api/v1/credentials/${I.credA}/share`],
    ['tag', `/api/v1/tags/${I.tagA}`],
    ['variables', '/api/v1/variables'],
    ['document', `/api/documents/${I.docA}`],
    ['flow', `/api/v1/chatflows/${I.flowA}`],
    ['flow messages', `/api/v1/chatmessage/${I.flowA}`],
    ['tool', `/api/v1/tools/${I.toolA}`],
    ['flowise variables', '/flowise/api/v1/variables'],
    ['assistant', `/api/v1/assistants/${I.assistantA}`],
    ['feedback', `/api/v1/feedback/${I.flowA}`],
    ['leads', `/api/v1/leads/${I.flowA}`],
    ['upsert history', `/api/v1/upsert-history/${I.ragA}`],
    ['store', `/api/v1/document-store/store/${I.storeA}`],
    ['store chunks', `/api/v1/document-store/chunks/${I.storeA}/${I.loaderA}/1`],
    ['agent', `/api/agents/${I.agentA}`],
    ['conversation', `/api/conversations/${I.convA}`],
    ['memory blocks', `/api/agents/${I.agentA}/memory/blocks`],
    ['archival', `/api/agents/${I.agentA}/memory/archival`],
    ['paused run', `/api/agents/${I.agentA}/runs/${I.runPausedA}`],
    ['approval run', `/api/agents/${I.approvalAgentA}/runs/${I.runApprovalA}`],
    ['file', `/v1/files/${I.fileA}`],
    ['blend', `/api/custom-blends/${I.blendA}`],
    ['order', `/v1/orders/${I.orderA}`],
    ['discounts', '/v1/discounts'],
    ['profile', `/api/users/${CUSTOMER}/profile`],
    ['members', '/v1/members'],
  ];

  /**
   * What B may legitimately move on A's things: a key's lastUsedAt (B naming A's key value in
   * /api/v1/chatflows/apikey/{apikey} verifies it, which records a use: B must hold the value already).
   */
  const normalize = (text: string) => text.replace(/"lastUsedAt":"[^"]*"/g, '"lastUsedAt":null');

  describe('control: A reads its own things by the same ids (the probes name real things)', () => {
    for (const probe of PROBES.filter((p) => p.method === 'GET' && !p.route.includes('(B '))) {
      it(`control: ${probe.route}`, async () => {
        // A customer's blend is its customer's (another customer of the same account gets 404).
        const key = probe.route.includes('customer blend') ? I.tokenA : A;
        const res = await call(bed, 'GET', probe.path(I), { key: key ?? A });
        expect(res.status, res.text.slice(0, 300)).toBe(200);
      });
    }
  });

  describe("B's key on A's ids: every route that takes one", () => {
    for (const probe of PROBES) {
      it(`${probe.route}`, async () => {
        const res = await b(probe.method, probe.path(I), probe.body?.(I));
        expectRefusal(res, probe.shape ?? 'platform', probe.also);
      });
    }
    for (const probe of PROBES.filter((p) => p.method === 'GET')) {
      it(`HEAD ${probe.route.slice(4)}`, async () => {
        const res = await fetch(`${bed.url}${probe.path(I)}`, {
          method: 'HEAD',
          headers: { authorization: `Bearer ${B}` },
        });
        expect(
          [403, 404, 400].filter((s) => s !== 400 || probe.also?.includes(400)),
          `HEAD ${res.status}`,
        ).toContain(res.status);
      });
    }
    for (const probe of MULTIPART) {
      it(`${probe.route}`, async () => {
        const res = await call(bed, 'POST', probe.path(I), { key: B, body: probe.form() });
        expectRefusal(res, probe.shape);
      });
    }
  });

  describe("B's member session on A's ids", () => {
    for (const probe of PROBES) {
      it(`session: ${probe.route}`, async () => {
        const res = await bAsSession(probe.method, probe.path(I), probe.body?.(I));
        expectRefusal(res, probe.shape ?? 'platform', probe.also);
      });
    }
  });

  /** Ids of A's things: none may show in an answer to B. */
  const aIds = () =>
    [
      'keyA',
      'memberA',
      'memberA2',
      'sessionA',
      'wfA',
      'calleeA',
      'errWfA',
      'waitWfA',
      'execA',
      'execWait',
      'execFail',
      'credA',
      'varA',
      'tagA',
      'docA',
      'flowA',
      'chatA',
      'ragA',
      'upsertA',
      'toolA',
      'fvarA',
      'assistantA',
      'feedbackA',
      'storeA',
      'loaderA',
      'chunkA',
      'agentA',
      'convA',
      'msgA',
      'blockA',
      'passageA',
      'runPausedA',
      'approvalAgentA',
      'runApprovalA',
      'respA',
      'fileA',
      'batchFileA',
      'batchA',
      'blendA',
      'custBlendA',
      'cartItemA',
      'discountA',
      'orderA',
      'custConvA',
    ]
      .map((k) => I[k])
      .filter((v): v is string => typeof v === 'string' && v.length > 4);
  /** No marker, no id of A's (but those the request itself named, which an error may echo). */
  const expectNoLeak = (res: Reply, label: string) => {
    expect(res.status, `${label}: ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
    expect(res.text, `${label} leaks ${MARK}`).not.toContain(MARK);
    const leaked = aIds().filter((id) => res.text.includes(id) && !label.includes(id));
    expect(leaked, `${label} lists A's ids: ${res.text.slice(0, 300)}`).toEqual([]);
  };
  const cursor = (sort: string, order: 'asc' | 'desc', value: string | number | null, id: string) =>
    Buffer.from(JSON.stringify([sort, order, value, id])).toString('base64url');

  describe("lists: B never sees A's items, whatever the filters, search or cursor", () => {
    const LISTS: Array<[string, () => string]> = [
      ['/v1/api-keys', (): string => '/v1/api-keys'],
      [
        "/v1/api-keys?name=<A's key name>",
        (): string => `/v1/api-keys?name=${encodeURIComponent(`${MARK} key`)}`,
      ],
      [
        "/v1/api-keys?cursor={cursor 'id', 'asc', null, ''}",
        (): string => `/v1/api-keys?cursor=${cursor('id', 'asc', null, '')}`,
      ],
      [
        "/v1/api-keys?cursor={cursor 'id', 'asc', null, keyA}",
        (): string => `/v1/api-keys?cursor=${cursor('id', 'asc', null, I.keyA ?? '')}`,
      ],
      ['/v1/members', (): string => '/v1/members'],
      ['/v1/audit-events?targetId={wfA}', (): string => `/v1/audit-events?targetId=${I.wfA}`],
      ['/v1/audit-events?actorId={keyA}', (): string => `/v1/audit-events?actorId=${I.keyA}`],
      [
        "/v1/audit-events?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/v1/audit-events?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      ['/v1/usage?keyId={keyA}', (): string => `/v1/usage?keyId=${I.keyA}`],
      ['/api/custom-blends', (): string => '/api/custom-blends'],
      ['/v1/discounts', (): string => '/v1/discounts'],
      [
        "/v1/discounts?cursor={cursor 'id', 'asc', null, ''}",
        (): string => `/v1/discounts?cursor=${cursor('id', 'asc', null, '')}`,
      ],
      ['/v1/orders', (): string => '/v1/orders'],
      [
        "/v1/orders?storefrontOrderId={A's storefront id}",
        (): string => `/v1/orders?storefrontOrderId=sf-${rand}`,
      ],
      [
        "/v1/orders?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/v1/orders?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      ['/api/v1/workflows', (): string => '/api/v1/workflows'],
      [
        "/api/v1/workflows?name=<A's wf name>",
        (): string => `/api/v1/workflows?name=${encodeURIComponent(`${MARK} wf`)}`,
      ],
      [
        "/api/v1/workflows?cursor={cursor 'id', 'asc', null, ''}",
        (): string => `/api/v1/workflows?cursor=${cursor('id', 'asc', null, '')}`,
      ],
      [
        "/api/v1/workflows?cursor={cursor 'id', 'asc', null, wfA}",
        (): string => `/api/v1/workflows?cursor=${cursor('id', 'asc', null, I.wfA ?? '')}`,
      ],
      [
        "/api/v1/workflows?tags=<A's tag name>",
        (): string => `/api/v1/workflows?tags=${encodeURIComponent(`${MARK}-tag`)}`,
      ],
      ['/api/v1/executions', (): string => '/api/v1/executions'],
      ['/api/v1/executions?includeData=true', (): string => '/api/v1/executions?includeData=true'],
      ['/api/v1/executions?workflowId={wfA}', (): string => `/api/v1/executions?workflowId=${I.wfA}`],
      ['/api/v1/executions?status=waiting', (): string => '/api/v1/executions?status=waiting'],
      [
        "/api/v1/executions?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/api/v1/executions?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      [
        '/api/v1/executions?annotationTags={tagA}',
        (): string => `/api/v1/executions?annotationTags=${I.tagA}`,
      ],
      ['/api/v1/credentials', (): string => '/api/v1/credentials'],
      [
        "/api/v1/credentials?name=<A's cred name>",
        (): string => `/api/v1/credentials?name=${encodeURIComponent(`${MARK} cred`)}`,
      ],
      [
        "/api/v1/credentials?cursor={cursor 'id', 'asc', null, ''}",
        (): string => `/api/v1/credentials?cursor=${cursor('id', 'asc', null, '')}`,
      ],
      ['/api/v1/variables', (): string => '/api/v1/variables'],
      [
        "/api/v1/variables?cursor={cursor 'id', 'asc', null, ''}",
        (): string => `/api/v1/variables?cursor=${cursor('id', 'asc', null, '')}`,
      ],
      ['/api/v1/tags', (): string => '/api/v1/tags'],
      [
        "/api/v1/tags?cursor={cursor 'name', 'asc', '', ''}",
        (): string => `/api/v1/tags?cursor=${cursor('name', 'asc', '', '')}`,
      ],
      ['/api/v1/users', (): string => '/api/v1/users'],
      ['/api/v1/projects', (): string => '/api/v1/projects'],
      ['/v1/files', (): string => '/v1/files'],
      ['/v1/batches', (): string => '/v1/batches'],
      ['/v1/llm/requests', (): string => '/v1/llm/requests'],
      [
        "/v1/llm/requests?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/v1/llm/requests?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      ['/api/tags', (): string => '/api/tags'],
      ['/v1/models', (): string => '/v1/models'],
      ['/api/documents', (): string => '/api/documents'],
      ['/api/documents?topic={topicA}', (): string => `/api/documents?topic=${TOPIC_A}`],
      [
        "/api/documents?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/api/documents?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      ['/api/knowledge/topics', (): string => '/api/knowledge/topics'],
      ['/api/v1/chatflows', (): string => '/api/v1/chatflows'],
      ['/api/v1/tools', (): string => '/api/v1/tools'],
      ['/flowise/api/v1/variables', (): string => '/flowise/api/v1/variables'],
      ['/api/v1/assistants', (): string => '/api/v1/assistants'],
      ['/api/v1/document-store/store', (): string => '/api/v1/document-store/store'],
      ['/api/agents', (): string => '/api/agents'],
      [
        "/api/agents?name=<A's agent name>",
        (): string => `/api/agents?name=${encodeURIComponent(`${MARK} agent`)}`,
      ],
      [
        "/api/agents?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/api/agents?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      ['/api/conversations', (): string => '/api/conversations'],
      ['/api/conversations?agentId={agentA}', (): string => `/api/conversations?agentId=${I.agentA}`],
      ['/api/conversations?userId={customer}', (): string => `/api/conversations?userId=${CUSTOMER}`],
      [
        "/api/conversations?cursor={cursor 'id', 'desc', null, 'zzzz'}",
        (): string => `/api/conversations?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
      ],
      [
        '/api/agents/{agentB}/messages?conversationId={convA}',
        (): string => `/api/agents/${I.agentB}/messages?conversationId=${I.convA}`,
      ],
      [
        "/api/conversations/{convB}?cursor={cursor 'id', 'asc', null, ''}",
        (): string => `/api/conversations/${I.convB}?cursor=${cursor('id', 'asc', null, '')}`,
      ],
      ['/v1/files?after={fileA}', (): string => `/v1/files?after=${I.fileA}`],
      ['/v1/batches?after={batchA}', (): string => `/v1/batches?after=${I.batchA}`],
      ['/v1/files?purpose=batch', (): string => '/v1/files?purpose=batch'],
    ];
    it.each(LISTS)('GET %s', async (_name, url) => {
      const res = await b('GET', url());
      expectNoLeak(res, `GET ${url()}`);
    });
    it("request log: B's filter on A's key finds nothing", async () => {
      const res = await b('GET', `/v1/request-logs?keyId=${I.keyA}`);
      expect(res.status, res.text).toBe(200);
      expect((res.json() as { data: unknown[] }).data).toEqual([]);
      const summary = await b('GET', `/v1/request-logs/summary?keyId=${I.keyA}`);
      expect(summary.status, summary.text).toBe(200);
      expect((summary.json() as { requests: number }).requests).toBe(0);
    });
    it("request log and usage: B's own rows only, even past A's id by cursor", async () => {
      const keysA = ((await a('GET', '/v1/api-keys')).json() as { data: Array<{ id: string }> }).data.map(
        (k) => k.id,
      );
      for (const url of [
        '/v1/request-logs?limit=200',
        `/v1/request-logs?cursor=${cursor('id', 'desc', null, 'zzzz')}`,
        '/v1/audit-events?limit=200',
      ]) {
        const res = await b('GET', url);
        expect(res.status, res.text.slice(0, 300)).toBe(200);
        const rows = (
          res.json() as {
            data: Array<{ keyId?: string | null; actorId?: string | null; memberId?: string | null }>;
          }
        ).data;
        const theirs = rows.filter(
          (r) => keysA.includes(r.keyId ?? '') || keysA.includes(r.actorId ?? '') || r.memberId === I.memberA,
        );
        expect(theirs, url).toEqual([]);
      }
      const usage = await b('GET', '/v1/usage');
      expect(usage.status).toBe(200);
      for (const id of keysA) expect(usage.text, `usage names A's key ${id}`).not.toContain(id);
    });
  });

  describe("nested ids: B's bodies naming A's things", () => {
    it("a workflow node naming A's credential (n8n credentials slot, by id and by name) never gets its secret", async () => {
      const seen: string[] = [];
      const { createServer } = await import('node:http');
      const server = createServer((req, res) => {
        seen.push(JSON.stringify(req.headers));
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as { port: number }).port;
      try {
        for (const credentials of [
          { httpHeaderAuth: { id: I.credA, name: 'x' } },
          { httpHeaderAuth: { id: `${MARK} cred`, name: `${MARK} cred` } },
        ]) {
          const saved = await b('POST', '/api/v1/workflows', {
            name: 'borrow credential',
            nodes: [
              node('Start', 'manualTrigger', {}, 1),
              node(
                'Fetch',
                'httpRequest',
                {
                  url: `http://127.0.0.1:${port}/x`,
                  authentication: 'genericCredentialType',
                  genericAuthType: 'httpHeaderAuth',
                  options: {},
                },
                4.2,
                { credentials },
              ),
            ],
            connections: chain('Start', 'Fetch'),
          });
          if (saved.status >= 300) {
            expectRefusal(saved, 'platform', [400]);
            continue;
          }
          const ran = await b('POST', `/api/v1/workflows/${(saved.json() as { id: string }).id}/run`, {});
          expect(ran.status, ran.text).toBeLessThan(500);
          expect(ran.text).not.toContain(`${MARK}-credential-value`);
        }
        // The platform's own HTTP node names its credential in a parameter.
        const platformNode = await b('POST', '/api/v1/workflows', {
          name: 'borrow credential (platform node)',
          nodes: [
            node('Start', 'manualTrigger', {}, 1),
            node(
              'Fetch',
              'n8n-nodes-platform.httpRequest',
              { url: `http://127.0.0.1:${port}/y`, credential: I.credA },
              1,
            ),
          ],
          connections: chain('Start', 'Fetch'),
        });
        if (platformNode.status < 300) {
          const ran = await b(
            'POST',
            `/api/v1/workflows/${(platformNode.json() as { id: string }).id}/run`,
            {},
          );
          expect(ran.status, ran.text).toBeLessThan(500);
          expect(ran.text).not.toContain(`${MARK}-credential-value`);
        } else expectRefusal(platformNode, 'platform', [400]);
        expect(seen.join('\n')).not.toContain(`${MARK}-credential-value`);
      } finally {
        await new Promise((r) => server.close(r));
      }
    });

    it("a sub-workflow call (Execute Workflow) naming A's workflow does not run it", async () => {
      const runsBefore = (
        (await a('GET', `/api/v1/executions?workflowId=${I.calleeA}`)).json() as { data: unknown[] }
      ).data.length;
      const saved = await b('POST', '/api/v1/workflows', {
        name: 'call A',
        nodes: [
          node('Start', 'manualTrigger', {}, 1),
          node(
            'Call',
            'executeWorkflow',
            { workflowId: { __rl: true, value: I.calleeA, mode: 'id' }, options: {} },
            1.2,
          ),
        ],
        connections: chain('Start', 'Call'),
      });
      if (saved.status < 300) {
        const ran = await b('POST', `/api/v1/workflows/${(saved.json() as { id: string }).id}/run`, {});
        expect(ran.status, ran.text).toBeLessThan(500);
        expect(ran.text).not.toContain(`${MARK}-callee`);
      } else expectRefusal(saved, 'platform', [400]);
      const inline = await b('POST', '/api/v1/workflows', {
        name: 'call A (v1 plain id)',
        nodes: [
          node('Start', 'manualTrigger', {}, 1),
          node('Call', 'executeWorkflow', { workflowId: I.calleeA }, 1),
        ],
        connections: chain('Start', 'Call'),
      });
      if (inline.status < 300) {
        const ran = await b('POST', `/api/v1/workflows/${(inline.json() as { id: string }).id}/run`, {});
        expect(ran.text).not.toContain(`${MARK}-callee`);
      }
      const runsAfter = (
        (await a('GET', `/api/v1/executions?workflowId=${I.calleeA}`)).json() as { data: unknown[] }
      ).data.length;
      expect(runsAfter).toBe(runsBefore);
    });

    it("settings.errorWorkflow naming A's workflow never starts it", async () => {
      const runs = async () =>
        ((await a('GET', `/api/v1/executions?workflowId=${I.errWfA}`)).json() as { data: unknown[] }).data
          .length;
      const before = await runs();
      const path = `b-fails-${rand}`;
      const saved = await b('POST', '/api/v1/workflows', {
        name: 'B fails',
        nodes: [
          node('Webhook', 'webhook', { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} }, 2),
          node('Boom', 'code', { jsCode: "throw new Error('B boom');" }, 2),
        ],
        connections: chain('Webhook', 'Boom'),
        settings: { errorWorkflow: I.errWfA },
      });
      if (saved.status >= 300) {
        expectRefusal(saved, 'platform', [400]);
        return;
      }
      const id = (saved.json() as { id: string }).id;
      expect((await b('POST', `/api/v1/workflows/${id}/activate`, {})).status).toBe(200);
      const hit = await call(bed, 'POST', `/webhook/${path}`, { key: null, body: {} });
      expect(hit.status).toBeGreaterThanOrEqual(400);
      // An error workflow is queued before the failed run's answer goes out: none of A's is by now.
      expect(await runs()).toBe(before);
    });

    it("$vars in B's workflow never read A's variables", async () => {
      const saved = await ok(
        b('POST', '/api/v1/workflows', {
          name: 'read vars',
          nodes: [
            node('Start', 'manualTrigger', {}, 1),
            node(
              'Set',
              'set',
              {
                mode: 'manual',
                assignments: {
                  assignments: [
                    { id: 'v', name: 'v', value: `={{ String($vars.${MARK}_VAR) }}`, type: 'string' },
                  ],
                },
                options: {},
              },
              3.4,
            ),
          ],
          connections: chain('Start', 'Set'),
        }),
        'vars wf',
      );
      const ran = await b('POST', `/api/v1/workflows/${saved.id}/run`, {});
      expect(ran.status, ran.text).toBeLessThan(500);
      expect(ran.text).not.toContain(`${MARK}-value`);
    });

    it("a workflow posted with A's workflow id creates B's own (never replaces A's)", async () => {
      const res = await b('POST', '/api/v1/workflows', {
        ...flow('B with A id', [{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }]),
        id: I.wfA,
      });
      expect(res.status, res.text).toBeLessThan(500);
      if (res.status < 300) expect((res.json() as { id: string }).id).not.toBe(I.wfA);
      const mine = await a('GET', `/api/v1/workflows/${I.wfA}`);
      expect(mine.text).toContain(`${MARK} wf`);
    });

    it("B's workflow declaring A's webhook path cannot be activated (the path is A's: 409, README)", async () => {
      const res = await b('POST', '/api/v1/workflows', {
        ...flow('squat', [
          { name: 'Webhook', type: 'webhook', parameters: { path: HOOK_A, responseMode: 'lastNode' } },
        ]),
      });
      if (res.status >= 300) {
        expectRefusal(res, 'platform', [400, 409]);
        return;
      }
      // Saving is allowed (README: another account's activation → 409).
      const squat = (res.json() as { id: string }).id;
      const activated = await b('POST', `/api/v1/workflows/${squat}/activate`, {});
      expectRefusal(activated, 'platform', [409]);
      // Nor may it listen on A's path as a test webhook (a caller of A's test URL would reach B).
      const listened = await b('POST', `/api/v1/workflows/${squat}/listen`, {});
      expectRefusal(listened, 'platform', [409]);
    });

    it("PUT of B's workflow with A's workflow id in the body changes B's only", async () => {
      const mine = await ok(
        b(
          'POST',
          '/api/v1/workflows',
          flow('B own', [{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }]),
        ),
        'B own',
      );
      const res = await b('PUT', `/api/v1/workflows/${mine.id}`, {
        ...flow('B overwrites', [{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }]),
        id: I.wfA,
      });
      expect(res.status, res.text).toBeLessThan(500);
      expect((await a('GET', `/api/v1/workflows/${I.wfA}`)).text).toContain(`${MARK} wf`);
    });

    it("an agent imported from a file naming A's workflow tool is refused", async () => {
      const res = await b('POST', '/api/agents/import', {
        format: 'agent',
        version: 1,
        agent: { name: 'imported', model: 'llama3.2', tools: [`workflow:${I.wfA}`] },
      });
      expectRefusal(res, 'platform', [400]);
    });

    it("tags: B cannot put A's tag on its workflow or execution", async () => {
      const wf = await ok(
        b(
          'POST',
          '/api/v1/workflows',
          flow('B tagged', [{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }]),
        ),
        'B wf',
      );
      const set = await b('PUT', `/api/v1/workflows/${wf.id}/tags`, [{ id: I.tagA }]);
      expectRefusal(set, 'platform', [400]);
      const exec = await ok(b('POST', `/api/v1/workflows/${wf.id}/run`, {}), 'B run');
      const tagged = await b('PUT', `/api/v1/executions/${exec.id}/tags`, [{ id: I.tagA }]);
      expectRefusal(tagged, 'platform', [400]);
    });

    it("bulk stop: B's filter naming A's workflow stops none of A's executions", async () => {
      const res = await b('POST', '/api/v1/executions/stop', {
        status: ['waiting', 'running', 'queued'],
        workflowId: I.waitWfA,
      });
      expect(res.status, res.text).toBeLessThan(500);
      if (res.status === 200) expect(res.json()).toMatchObject({ stopped: 0 });
      const still = (await a('GET', `/api/v1/executions/${I.execWait}`)).json() as { status: string };
      expect(still.status).toBe('waiting');
      const all = await b('POST', '/api/v1/executions/stop', { status: ['waiting', 'running', 'queued'] });
      expect(all.status, all.text).toBe(200);
      expect(((await a('GET', `/api/v1/executions/${I.execWait}`)).json() as { status: string }).status).toBe(
        'waiting',
      );
    });

    it("credential sharing and transfer: A cannot hand its credential to B's key, and B cannot use it", async () => {
      const credA2 = (
        await ok(
          a('POST', '/api/v1/credentials', {
            name: `${MARK} cred 2`,
            type: 'httpHeaderAuth',
            data: { name: 'X-A2', value: `${MARK}-credential-value` },
          }),
          'credA2',
        )
      ).id as string;
      const share = await a('PUT', `/api/v1/credentials/${credA2}/share`, {
        shareWithIds: [`key:${I.keyB}`],
      });
      expectRefusal(share, 'platform', [400]);
      const transfer = await a('PUT', `/api/v1/credentials/${credA2}/transfer`, {
        destinationProjectId: `key:${I.keyB}`,
      });
      expectRefusal(transfer, 'platform', [400]);
      // B's key listing or reading it still finds nothing.
      expectRefusal(await b('GET', `/api/v1/credentials/${credA2}`), 'platform');
      // And B's own credential cannot be shared into A.
      const credB = (
        await ok(
          b('POST', '/api/v1/credentials', {
            name: 'B cred',
            type: 'httpHeaderAuth',
            data: { name: 'X-B', value: 'b' },
          }),
          'credB',
        )
      ).id as string;
      expectRefusal(
        await b('PUT', `/api/v1/credentials/${credB}/share`, { shareWithIds: [`key:${I.keyA}`] }),
        'platform',
        [400],
      );
      expectRefusal(
        await b('PUT', `/api/v1/credentials/${credB}/transfer`, {
          destinationProjectId: `member:${I.memberA}`,
        }),
        'platform',
        [400],
      );
    });

    it("an agent tool naming A's workflow is refused at save", async () => {
      const res = await b('POST', '/api/agents', {
        name: 'B tools',
        model: 'llama3.2',
        tools: [`workflow:${I.wfA}`],
      });
      expectRefusal(res, 'platform', [400]);
      const patched = await b('PATCH', `/api/agents/${I.agentB}`, { tools: [`workflow:${I.wfA}`] });
      expectRefusal(patched, 'platform', [400]);
    });

    it("an agent on A's knowledge topic (or A's document store) retrieves nothing of A's", async () => {
      for (const topic of [TOPIC_A, `docstore:${I.storeA}`]) {
        const saved = await b('POST', '/api/agents', {
          name: 'B reader',
          model: 'llama3.2',
          knowledgeTopics: [topic],
        });
        if (saved.status >= 300) {
          expectRefusal(saved, 'platform', [400]);
          continue;
        }
        bed.ollama.reset();
        const turn = await b('POST', `/api/agents/${(saved.json() as { id: string }).id}/messages`, {
          content: 'Which otters hold hands while they sleep? What is the walrus vault code?',
        });
        expect(turn.status, turn.text).toBe(200);
        expect(turn.text).not.toContain(MARK);
        expect(turn.text).not.toContain('4711');
        expect(JSON.stringify(bed.ollama.requests)).not.toContain(MARK);
      }
    });

    it("flows: a workflow flow on A's workflow is refused; a rag flow on A's topic answers nothing of A's", async () => {
      expectRefusal(
        await b('POST', '/api/v1/chatflows', { name: 'B wf flow', kind: 'workflow', workflowId: I.wfA }),
        'flowise',
        [400],
      );
      const flowB = await ok(
        b('POST', '/api/v1/chatflows', { name: 'B llm', kind: 'llm', model: 'llama3.2' }),
        'B flow',
      );
      expectRefusal(
        await b('PUT', `/api/v1/chatflows/${flowB.id}`, { kind: 'workflow', workflowId: I.wfA }),
        'flowise',
        [400],
      );
      for (const topic of [TOPIC_A, `docstore:${I.storeA}`]) {
        const rag = await b('POST', '/api/v1/chatflows', {
          name: 'B rag',
          kind: 'rag',
          model: 'llama3.2',
          topics: [topic],
        });
        if (rag.status >= 300) {
          expectRefusal(rag, 'flowise', [400]);
          continue;
        }
        bed.ollama.reset();
        const answer = await b('POST', `/api/v1/prediction/${(rag.json() as { id: string }).id}`, {
          question: 'Which otters hold hands? What is the walrus vault code?',
        });
        expect(answer.status, answer.text).toBe(200);
        expect(answer.text).not.toContain(MARK);
        expect(JSON.stringify(bed.ollama.requests)).not.toContain(MARK);
      }
    });

    it("a Flowise chatflow whose document-store node names A's store retrieves nothing of A's", async () => {
      const res = await b('POST', '/api/v1/chatflows', {
        name: 'B docstore flow',
        flowData: JSON.stringify({
          nodes: [
            { id: 'chatOllama_0', data: { name: 'chatOllama', inputs: { model: 'llama3.2' } } },
            {
              id: 'documentStoreVS_0',
              data: { name: 'documentStoreVS', inputs: { selectedStore: I.storeA } },
            },
            {
              id: 'retrievalQAChain_0',
              data: {
                name: 'retrievalQAChain',
                inputs: {
                  model: '{{chatOllama_0.data.instance}}',
                  vectorStoreRetriever: '{{documentStoreVS_0.data.instance}}',
                },
              },
            },
          ],
          edges: [
            { source: 'chatOllama_0', target: 'retrievalQAChain_0' },
            { source: 'documentStoreVS_0', target: 'retrievalQAChain_0' },
          ],
        }),
      });
      if (res.status >= 300) {
        expectRefusal(res, 'flowise', [400]);
        return;
      }
      bed.ollama.reset();
      const answer = await b('POST', `/api/v1/prediction/${(res.json() as { id: string }).id}`, {
        question: 'What is the walrus vault code?',
      });
      expect(answer.status, answer.text).toBeLessThan(500);
      expect(answer.text).not.toContain(MARK);
      expect(JSON.stringify(bed.ollama.requests)).not.toContain(MARK);
    });

    it("knowledge search and the document-store query never reach A's topics or stores", async () => {
      for (const body of [
        { query: 'otters hold hands sleep kelp', topics: [TOPIC_A] },
        { query: 'otters hold hands sleep kelp' },
        { query: 'walrus vault code', topics: [`docstore:${I.storeA}`] },
      ]) {
        const res = await b('POST', '/api/knowledge/query', body);
        expect(res.status, res.text).toBeLessThan(500);
        expect(res.text).not.toContain(MARK);
      }
      expectRefusal(
        await b('POST', '/api/v1/document-store/vectorstore/query', {
          storeId: I.storeA,
          query: 'walrus vault',
        }),
        'flowise',
      );
    });

    it("Flowise feedback and leads naming A's chatflow and message are refused", async () => {
      expectRefusal(
        await b('POST', '/api/v1/feedback', {
          chatflowid: I.flowA,
          chatId: I.chatA,
          messageId: I.chatMsgA,
          rating: 'THUMBS_DOWN',
        }),
        'flowise',
        [400],
      );
      expectRefusal(
        await b('POST', '/api/v1/leads', { chatflowid: I.flowA, chatId: I.chatA, name: 'spam' }),
        'flowise',
        [400],
      );
    });

    it("a document-store upsert into B's store naming A's loader (docId) leaves A's store alone", async () => {
      const res = await b('POST', `/api/v1/document-store/upsert/${I.storeB}`, {
        docId: I.loaderA,
        loader: { name: 'plainText', config: { text: 'B replaces the loader' } },
      });
      expect(res.status, res.text).toBeLessThan(500);
      expect(res.text).not.toContain(MARK);
      const store = (await a('GET', `/api/v1/document-store/store/${I.storeA}`)).text;
      expect(store).toContain(I.loaderA);
      const q = await a('POST', '/api/v1/document-store/vectorstore/query', {
        storeId: I.storeA,
        query: 'walrus vault code',
      });
      expect(q.text).toContain('4711');
    });

    it("agents: B's message, conversation, memory block and archival passage naming A's conversation are refused", async () => {
      expectRefusal(
        await b('POST', `/api/agents/${I.agentB}/messages`, { conversationId: I.convA, content: 'continue' }),
        'platform',
        [400],
      );
      expectRefusal(await b('POST', '/api/conversations', { agentId: I.agentA }), 'platform', [400]);
      expectRefusal(
        await b('POST', `/api/agents/${I.agentB}/memory/blocks`, {
          label: 'sneak',
          value: 'x',
          conversationId: I.convA,
        }),
        'platform',
        [400],
      );
      expectRefusal(
        await b('POST', `/api/agents/${I.agentB}/memory/archival`, {
          text: 'sneak',
          conversationId: I.convA,
        }),
        'platform',
        [400],
      );
    });

    it("OpenAI batches and responses: B cannot use A's file or continue A's response", async () => {
      const batch = await b('POST', '/v1/batches', {
        input_file_id: I.batchFileA,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expectRefusal(batch, 'openai', [400]);
      const resp = await b('POST', '/v1/responses', {
        model: 'llama3.2',
        input: 'and then?',
        previous_response_id: I.respA,
      });
      expectRefusal(resp, 'any', [400]);
    });

    it("orders: B's order reusing A's storefront id, A's blend id and A's discount code touches nothing of A's", async () => {
      const blendBefore = (await a('GET', `/api/custom-blends/${I.blendA}`)).json() as { usageCount: number };
      const res = await b('POST', '/v1/orders', {
        id: `sf-${rand}`,
        email: 'b@b.example',
        customer: { id: 'b-cust', email: 'b@b.example' },
        line_items: [
          {
            product_id: 'prod_candle_classic',
            variant_id: 'var_candle_4oz',
            quantity: 1,
            price: '18.00',
            properties: [{ name: 'fragranceId', value: I.blendA }],
          },
        ],
        discount_codes: [{ code: `ALPHA${rand}`.toUpperCase() }],
      });
      expect(res.status, res.text).toBeLessThan(500);
      expect(res.text).not.toContain(MARK);
      if (res.status < 300) expect((res.json() as { id: string }).id).not.toBe(I.orderA);
      const blendAfter = (await a('GET', `/api/custom-blends/${I.blendA}`)).json() as { usageCount: number };
      expect(blendAfter.usageCount).toBe(blendBefore.usageCount);
      const discount = await call(bed, 'POST', '/api/cart/discounts', {
        key: B,
        body: { code: `ALPHA${rand}`.toUpperCase() },
      });
      expect(discount.status, discount.text).toBeGreaterThanOrEqual(400);
      expect(discount.status, discount.text).toBeLessThan(500);
    });

    it("the built-in extractive model answering from the knowledge base reads only B's (control: A's reads A's)", async () => {
      const question = 'What do the otters of the north hold while they sleep in kelp forests?';
      const ask = (who: 'a' | 'b') =>
        (who === 'a' ? a : b)('POST', '/api/chat', {
          model: 'builtin/extractive',
          stream: false,
          messages: [{ role: 'user', content: question }],
          options: { knowledge_base: true },
        });
      const mine = await ask('a');
      expect(mine.status, mine.text).toBe(200);
      expect(mine.text).toContain(MARK);
      const theirs = await ask('b');
      expect(theirs.status, theirs.text).toBeLessThan(500);
      expect(theirs.text).not.toContain(MARK);
      const openai = await b('POST', '/v1/chat/completions', {
        model: 'builtin/extractive',
        messages: [{ role: 'user', content: `${question.replace('?', '')} (from the knowledge base)?` }],
      });
      expect(openai.status, openai.text).toBeLessThan(500);
      expect(openai.text).not.toContain(MARK);
    });

    it("public routes that take an id answer nothing of A's without their secret", async () => {
      const streaming = await call(bed, 'GET', `/api/v1/chatflows-streaming/${I.flowA}`, { key: null });
      expect(streaming.status).toBe(200);
      expect(Object.keys(streaming.json() as object)).toEqual(['isStreaming']);
      const resume = await call(bed, 'POST', `/webhook-waiting/${I.execWait}`, {
        key: null,
        body: { approve: true },
      });
      expect([401, 403], resume.text).toContain(resume.status);
      expect(resume.text).not.toContain(MARK);
      const forged = await call(bed, 'POST', `/webhook-waiting/${I.execWait}?signature=${'0'.repeat(64)}`, {
        key: B,
        body: {},
      });
      expect([401, 403], forged.text).toContain(forged.status);
      const form = await call(bed, 'GET', `/form-waiting/${I.execWait}`, { key: B });
      expect(form.status, form.text).toBeGreaterThanOrEqual(400);
      expect(form.status, form.text).toBeLessThan(500);
      expect(form.text).not.toContain(MARK);
    });

    it("n8n's security audit (POST /api/v1/audit) reports only B's account", async () => {
      const res = await b('POST', '/api/v1/audit', {});
      expectNoLeak(res, 'POST /api/v1/audit');
    });

    it("MCP: B lists none of A's tools and cannot call them", async () => {
      const rpc = async (message: unknown) => {
        const res = await fetch(`${bed.url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${B}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify(message),
        });
        return { status: res.status, text: await res.text() };
      };
      const listed = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.text).not.toContain(I.wfA);
      expect(listed.text).not.toContain(I.agentA);
      for (const [name, args] of [
        [`workflow_${I.wfA}`, {}],
        [`agent_${I.agentA}`, { question: 'hi', conversationId: I.convA }],
        ['knowledge_search', { query: 'otters hold hands', topics: [TOPIC_A] }],
      ] as const) {
        const res = await rpc({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name, arguments: args },
        });
        expect(res.status, res.text).toBeLessThan(500);
        expect(res.text, `${name}`).not.toContain(MARK);
      }
    });
  });

  describe('customer ids both accounts use: one customer of B sees nothing of the same id in A', () => {
    let tokenB: string;
    beforeAll(async () => {
      tokenB = (
        await ok(
          b('POST', '/v1/auth/tokens', {
            customerId: CUSTOMER,
            scopes: ['commerce:read', 'commerce:write', 'agent:read', 'agent:write'],
          }),
          'tokenB',
        )
      ).token as string;
    });
    it.each([
      ['cart', '/api/cart'],
      ['blends', '/api/custom-blends'],
      ['conversations', '/api/conversations'],
    ])('%s', async (_label, path) => {
      const res = await call(bed, 'GET', path, { key: tokenB });
      expectNoLeak(res, path);
    });
    it("profile: B's token and B's key read no A profile; B's PATCH does not touch A's", async () => {
      expectRefusal(await call(bed, 'GET', `/api/users/${CUSTOMER}/profile`, { key: tokenB }), 'platform');
      const patched = await b('PATCH', `/api/users/${CUSTOMER}/profile`, { displayName: 'B writes' });
      expect(patched.status, patched.text).toBeLessThan(500);
      expect(patched.text).not.toContain(MARK);
      const mine = await a('GET', `/api/users/${CUSTOMER}/profile`);
      expect(mine.text).toContain(MARK);
      expect(mine.text).not.toContain('B writes');
    });
    it("DELETE /api/cart/discounts/{code}: B's token removing A's code leaves A's customer's cart alone", async () => {
      const code = `ALPHA${rand}`.toUpperCase();
      const res = await call(bed, 'DELETE', `/api/cart/discounts/${code}`, { key: tokenB });
      expect(res.status, res.text).toBeLessThan(500);
      expect(res.text).not.toContain(MARK);
      const cartA = await call(bed, 'GET', '/api/cart', { key: I.tokenA });
      expect(cartA.text).toContain(code);
    });
    it("customer blend, cart item and conversation of A's customer: B's token for the same id is refused", async () => {
      expectRefusal(
        await call(bed, 'GET', `/api/custom-blends/${I.custBlendA}`, { key: tokenB }),
        'platform',
      );
      expectRefusal(
        await call(bed, 'PATCH', `/api/cart/items/${I.cartItemA}`, { key: tokenB, body: { quantity: 2 } }),
        'platform',
      );
      expectRefusal(await call(bed, 'GET', `/api/conversations/${I.custConvA}`, { key: tokenB }), 'platform');
      expectRefusal(
        await call(bed, 'POST', `/api/agents/${I.agentA}/messages`, { key: tokenB, body: { content: 'hi' } }),
        'platform',
      );
    });
  });

  describe("made models (Ollama /api/create): B cannot read, copy, replace or delete A's", () => {
    /** What A's model sends upstream as its system prompt (show does not tell the preset). */
    const systemPromptOfA = async (): Promise<string> => {
      bed.ollama.reset();
      const res = await a('POST', '/api/chat', {
        model: MODEL_A,
        stream: false,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.status, res.text).toBe(200);
      return JSON.stringify(bed.ollama.requests.map((r) => r.body));
    };
    it('(set-up) A makes a model with a system prompt of its own', async () => {
      expect(I.madeModel).toMatch(/^200 /);
      expect(await systemPromptOfA()).toContain(`${MARK} system prompt`);
    });
    it('show', async () => {
      expectRefusal(await b('POST', '/api/show', { model: MODEL_A }), 'ollama');
    });
    it('list', async () => {
      const res = await b('GET', '/api/tags');
      expect(res.text).not.toContain(MODEL_A);
    });
    it('GET /v1/models/{model}', async () => {
      expectRefusal(await b('GET', `/v1/models/${MODEL_A}`), 'openai');
    });
    it('use', async () => {
      const res = await b('POST', '/api/chat', {
        model: MODEL_A,
        stream: false,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expectRefusal(res, 'ollama');
    });
    it('copy', async () => {
      expectRefusal(
        await b('POST', '/api/copy', { source: MODEL_A, destination: `b-copy-${rand}` }),
        'ollama',
      );
    });
    it("replace (B's create under A's name makes B's own or is refused; A's stays A's)", async () => {
      const res = await b('POST', '/api/create', {
        model: MODEL_A,
        from: 'llama3.2',
        system: 'B replaced it',
        stream: false,
      });
      expect(res.status, res.text).toBeLessThan(500);
      expect(await systemPromptOfA()).toContain(`${MARK} system prompt`);
    });
    it('delete', async () => {
      const res = await b('DELETE', '/api/delete', { model: MODEL_A });
      const mine = await a('POST', '/api/show', { model: MODEL_A });
      expect(mine.status, `after B's delete (${res.status} ${res.text}), A's show: ${mine.text}`).toBe(200);
      expect(await systemPromptOfA()).toContain(`${MARK} system prompt`);
      // B's own copy (if the replace above made one) may go; A's must not, and the answer is the dialect's.
      expect(res.status, res.text).toBeLessThan(500);
    });
    it("delete again: nothing of B's left, A's is not B's to delete (404)", async () => {
      const res = await b('DELETE', '/api/delete', { model: MODEL_A });
      expectRefusal(res, 'ollama');
      expect((await a('POST', '/api/show', { model: MODEL_A })).status).toBe(200);
    });
  });

  it("A's things are unchanged after B's attempts", async () => {
    const changed: string[] = [];
    for (const [label, path] of snapshotPaths()) {
      const now = normalize((await a('GET', path)).text);
      if (now !== normalize(before[label] ?? '')) changed.push(`${label}: ${before[label]} → ${now}`);
    }
    expect(changed).toEqual([]);
  });

  describe("scopes: A's own key without the route's scope is refused (403)", () => {
    let doc: { paths: Record<string, Record<string, { description?: string }>> };
    beforeAll(async () => {
      doc = (await a('GET', '/openapi.json')).json() as typeof doc;
    });
    const ALL = ['read', 'write', 'delete', 'admin'];
    for (const probe of PROBES) {
      const m = /^(GET|POST|PUT|PATCH|DELETE) (\/\S+)$/.exec(probe.route);
      if (!m) continue;
      const [, method, template] = m as unknown as [string, string, string];
      it(`scope: ${probe.route}`, async () => {
        const op = doc.paths[template]?.[method.toLowerCase()];
        expect(op, `${probe.route} in the document`).toBeDefined();
        const needed = [...(op?.description ?? '').matchAll(/`([a-z]+):([a-z]+)`/g)].map(
          (x) => [x[1], x[2]] as const,
        );
        if (needed.length === 0) return; // no scope (session-only routes)
        const service = needed[0]?.[0] as string;
        const lacking = ALL.filter((s) => !needed.some(([, n]) => n === s) && s !== 'admin').map(
          (s) => `${service}:${s}`,
        );
        const { key } = await bed.p.createKey({
          name: 'narrow',
          type: 'production',
          services: [service],
          role: 'Custom',
          scopes: lacking,
        });
        const res = await call(bed, probe.method, probe.path(I), {
          key,
          ...(probe.body ? { body: probe.body(I) } : {}),
        });
        const where = `${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, `${probe.route} with ${lacking.join(',') || 'no scope'}: ${where}`).toBe(403);
        expect(res.text).not.toContain(MARK);
      });
    }
  });

  describe('removed members, revoked keys, deleted accounts', () => {
    it("a removed member's session is refused at once", async () => {
      const invited = await ok(
        a('POST', '/v1/members/invites', { email: `gone-${rand}@a.example`, role: 'developer' }),
        'invite gone',
      );
      const session = sessionOf(
        await bed.p.request({
          method: 'POST',
          url: '/v1/auth/invites/accept',
          key: null,
          payload: {
            token: tokenOf(invited.inviteUrl as string),
            name: 'gone',
            password: 'granite orchid ferry 63',
          },
        }),
      );
      const asMember = () =>
        bed.p.request({
          method: 'GET',
          url: `/api/agents/${I.agentA}`,
          key: null,
          headers: { cookie: session.cookie },
        });
      expect((await asMember()).statusCode).toBe(200);
      expect((await a('DELETE', `/v1/members/${session.memberId}`)).status).toBe(204);
      const after = await asMember();
      expect(after.statusCode, after.body).toBe(401);
      expect(after.body).not.toContain(MARK);
    });
  });
});
