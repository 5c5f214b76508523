/**
 * Fake downstreams of the named workflows: small local HTTP servers speaking each service's wire format
 * and recording what they received. Reusable by engine-level and HTTP end-to-end tests.
 */
import { startFakeDocproc, startFakeFlow, startFakeLlm } from './ai.js';
import { type FakeDocs, startFakeDocs } from './docs.js';
import type { FakeServer } from './fake-server.js';
import { startFakeCallback, startFakeOrders, startFakeUsers } from './platform.js';
import { type FakeWorkspaceOptions, startFakeWorkspace } from './workspace.js';

export { startFakeDocproc, startFakeFlow, startFakeLlm } from './ai.js';
export { type FakeDocs, startFakeDocs } from './docs.js';
export {
  bearerCheck,
  type FakeReply,
  type FakeServer,
  json,
  type ReceivedRequest,
  startFakeServer,
} from './fake-server.js';
export { startFakeCallback, startFakeOrders, startFakeUsers } from './platform.js';
export {
  type FakePage,
  type FakeWorkspaceOptions,
  notionBlock,
  releaseNotesPage,
  richText,
  startFakeWorkspace,
} from './workspace.js';

/** The bearer tokens the fakes expect; give the same values as the credentials' `token`. */
export interface FakeTokens {
  workspace?: string;
  docs?: string;
  platform?: string;
  llm?: string;
  flow?: string;
  docproc?: string;
}

export interface AllFakes {
  workspace: FakeServer;
  docs: FakeDocs;
  orders: FakeServer;
  users: FakeServer;
  llm: FakeServer;
  flow: FakeServer;
  docproc: FakeServer;
  callback: FakeServer;
  /** The downstream settings pointing at the fakes (`WORKSPACE_API_URL`, `DOCS_API_URL`, …). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Every fake at once, with the `$env` the named workflows read. */
export async function startAllFakes(
  tokens: FakeTokens = {},
  workspace: FakeWorkspaceOptions = {},
): Promise<AllFakes> {
  const [ws, docs, orders, users, llm, flow, docproc, callback] = await Promise.all([
    startFakeWorkspace({ ...workspace, ...(tokens.workspace ? { token: tokens.workspace } : {}) }),
    startFakeDocs({ token: tokens.docs }),
    startFakeOrders({ token: tokens.platform }),
    startFakeUsers({ token: tokens.platform }),
    startFakeLlm({ token: tokens.llm }),
    startFakeFlow({ token: tokens.flow }),
    startFakeDocproc({ token: tokens.docproc }),
    startFakeCallback(),
  ]);
  const all = [ws, docs, orders, users, llm, flow, docproc, callback];
  return {
    workspace: ws,
    docs,
    orders,
    users,
    llm,
    flow,
    docproc,
    callback,
    env: {
      WORKSPACE_API_URL: ws.url,
      DOCS_API_URL: docs.url,
      ORDERS_URL: orders.url,
      USERS_URL: users.url,
      LLM_URL: llm.url,
      FLOW_URL: flow.url,
      DOCPROC_URL: docproc.url,
    },
    close: async () => {
      await Promise.all(all.map((f) => f.close()));
    },
  };
}
