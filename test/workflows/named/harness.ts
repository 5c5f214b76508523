import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createOutboundHttp } from '../../../src/core/http/outbound.js';
import {
  type EngineDeps,
  type ExecutionOutcome,
  type Json,
  type RunContext,
  type WorkflowDefinition,
  WorkflowEngine,
} from '../../../src/modules/workflows/engine/index.js';

/** The credentials the named workflows name, with test values (data shapes as the service stores them). */
export const CREDENTIALS: Record<string, Record<string, string>> = {
  'workspace-to-docs-webhook-key': { name: 'X-Webhook-Key', value: 'wh-key-1' },
  'store-order-processing-hmac': { secret: 'store-signing-secret' },
  'workspace-api-token': { token: 'secret_workspace' },
  'docs-api-token': { token: 'docs-token' },
  'platform-api-key': { token: 'PROD_API_for_the_platform' },
  'llm-api-key': { token: 'llm-token' },
  'flow-api-key': { token: 'flow-token' },
  'docproc-api-key': { token: 'docproc-token' },
};

/** The bearer tokens the fakes check, matching CREDENTIALS. */
export const TOKENS = {
  workspace: 'secret_workspace',
  docs: 'docs-token',
  platform: 'PROD_API_for_the_platform',
  llm: 'llm-token',
  flow: 'flow-token',
  docproc: 'docproc-token',
};

export const NOW = new Date('2030-01-02T03:04:05.000Z');

export const runContext: RunContext = {
  executionId: 'exe_named_1',
  mode: 'webhook',
  resumeUrlBase: 'http://127.0.0.1:3000/webhook-waiting',
};

const WORKFLOWS_DIR = path.resolve(import.meta.dirname, '../../../workflows');

export async function loadWorkflow(slug: string): Promise<WorkflowDefinition> {
  return JSON.parse(await readFile(path.join(WORKFLOWS_DIR, `${slug}.json`), 'utf8')) as WorkflowDefinition;
}

/** Engine deps as the service builds them: guarded outbound HTTP (loopback allowed), credentials by name. */
export function namedDeps(env: Record<string, string>): EngineDeps {
  return {
    now: () => NOW,
    credential: async (ref) => {
      const found = CREDENTIALS[ref];
      if (!found) throw new Error(`Credential '${ref}' not found`);
      return found;
    },
    http: createOutboundHttp({ allowHosts: ['127.0.0.1', 'localhost'], timeoutMs: 5_000 }),
    env,
    expressionTimeoutMs: 1_000,
  };
}

/** Runs a named workflow from its webhook with the item the service would build. */
export async function runWebhook(
  engine: WorkflowEngine,
  def: WorkflowDefinition,
  body: Json,
  headers: Record<string, string> = {},
): Promise<ExecutionOutcome> {
  return engine.run(
    def,
    {
      nodeName: 'Webhook',
      items: [
        {
          json: {
            headers: { 'content-type': 'application/json', host: '127.0.0.1:3000', ...headers },
            params: {},
            query: {},
            body,
          },
        },
      ],
    },
    runContext,
  );
}

/** The json of the first item of the last node that ran (what a `lastNode` webhook answers). */
export const answerOf = (outcome: ExecutionOutcome) => outcome.lastItems[0]?.json;

/** The problem paths of a failed validate node, sorted. */
export const problemPaths = (outcome: ExecutionOutcome) =>
  (outcome.state.error?.problems ?? []).map((p) => p.path).sort();

export { WorkflowEngine };

/** The webhook node's dedupe-key expression. */
export function dedupeKeyOf(def: WorkflowDefinition): string {
  const options = def.nodes.find((n) => n.type === 'n8n-nodes-platform.webhook')?.parameters.options as
    | { dedupeKey?: string }
    | undefined;
  if (!options?.dedupeKey) throw new Error(`${def.name} has no dedupe key`);
  return options.dedupeKey;
}
