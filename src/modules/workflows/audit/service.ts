import type { Clock } from '../../../core/clock.js';
import type { Db } from '../../../core/db/database.js';
import { credentialRefs, definitionOf } from '../definitions/definitions.js';
import type { WorkflowStore } from '../definitions/store.js';
import { isExpression, type WorkflowDefinition, type WorkflowNode } from '../engine/index.js';

/**
 * A security audit of one account in the shape of n8n's `POST /api/v1/audit` (its report titles, risk
 * names and location kinds, so n8n tooling reads it), with the platform's own findings beside n8n's:
 * API keys without IP rules, webhook nodes with no authentication. Read-only: it looks at the stored
 * workflows, credentials, executions and keys of the account and changes nothing.
 */

export const AUDIT_CATEGORIES = ['credentials', 'database', 'nodes', 'filesystem', 'instance'] as const;
export type AuditCategory = (typeof AUDIT_CATEGORIES)[number];

export type AuditLocation =
  | {
      kind: 'node';
      workflowId: string;
      workflowName: string;
      nodeId: string;
      nodeName: string;
      nodeType: string;
    }
  | { kind: 'credential'; id: string; name: string }
  | { kind: 'apiKey'; id: string; name: string };

export interface AuditSection {
  title: string;
  description: string;
  recommendation: string;
  location?: AuditLocation[];
  settings?: Record<string, unknown>;
}

export interface AuditReport {
  risk: AuditCategory;
  sections: AuditSection[];
}

export interface AuditOptions {
  /** Days without an execution after which a workflow counts as abandoned (n8n's default: 90). */
  daysAbandonedWorkflow?: number;
  categories?: AuditCategory[];
}

export interface AuditDeps {
  db: Db;
  workflows: WorkflowStore;
  clock: Clock;
  /** The account's active API keys that accept calls from any address. */
  keysWithoutIpRules(accountId: string): Promise<Array<{ id: string; name: string }>>;
  /** Instance settings that bear on security, reported as n8n's "Security settings" section. */
  securitySettings: Record<string, unknown>;
}

const REPORT_NAMES: Record<AuditCategory, string> = {
  credentials: 'Credentials Risk Report',
  database: 'Database Risk Report',
  nodes: 'Nodes Risk Report',
  filesystem: 'Filesystem Risk Report',
  instance: 'Instance Risk Report',
};

const SQL_NODE_TYPES = new Set(
  ['postgres', 'crateDb', 'questDb', 'timescaleDb', 'mySql', 'microsoftSql', 'snowflake'].map(
    (t) => `n8n-nodes-base.${t}`,
  ),
);
const FILESYSTEM_NODE_TYPES = new Set(
  [
    'readPdf',
    'readPDF',
    'readBinaryFile',
    'readBinaryFiles',
    'writeBinaryFile',
    'spreadsheetFile',
    'readWriteFile',
  ].map((t) => `n8n-nodes-base.${t}`),
);
const RISKY_NODE_TYPES = new Set(
  ['executeCommand', 'code', 'function', 'functionItem', 'httpRequest', 'ssh', 'ftp'].map(
    (t) => `n8n-nodes-base.${t}`,
  ),
);
const WEBHOOK_NODE_TYPES = new Set(['n8n-nodes-base.webhook', 'n8n-nodes-platform.webhook']);
/** Nodes that can check a payload before anything acts on it (n8n's list, and the platform's validate). */
const VALIDATOR_NODE_TYPES = new Set([
  'n8n-nodes-base.if',
  'n8n-nodes-base.switch',
  'n8n-nodes-base.code',
  'n8n-nodes-base.function',
  'n8n-nodes-base.functionItem',
  'n8n-nodes-platform.if',
  'n8n-nodes-platform.switch',
  'n8n-nodes-platform.validate',
]);

const DAY_MS = 86_400_000;

interface Stored {
  id: string;
  name: string;
  active: boolean;
  def: WorkflowDefinition;
}

export class AuditService {
  constructor(private readonly deps: AuditDeps) {}

  /** The reports with findings, keyed by n8n's report names; `[]` when nothing was found, as n8n. */
  async generate(
    accountId: string,
    options: AuditOptions = {},
  ): Promise<Record<string, AuditReport> | never[]> {
    const categories = new Set(options.categories?.length ? options.categories : AUDIT_CATEGORIES);
    const days = options.daysAbandonedWorkflow ?? 90;
    const workflows: Stored[] = (await this.deps.workflows.all(accountId)).map((row) => ({
      id: row.id,
      name: row.name,
      active: Boolean(row.active),
      def: definitionOf(row),
    }));
    const reports: Record<string, AuditReport> = {};
    const add = (risk: AuditCategory, sections: AuditSection[]) => {
      if (categories.has(risk) && sections.length > 0) reports[REPORT_NAMES[risk]] = { risk, sections };
    };
    if (categories.has('credentials')) add('credentials', await this.credentials(accountId, workflows, days));
    add('database', databaseSections(workflows));
    add('nodes', nodesSections(workflows));
    add('filesystem', filesystemSections(workflows));
    if (categories.has('instance')) add('instance', await this.instance(accountId, workflows));
    return Object.keys(reports).length > 0 ? reports : [];
  }

  private async credentials(accountId: string, workflows: Stored[], days: number): Promise<AuditSection[]> {
    const creds = await this.deps.db
      .selectFrom('credentials')
      .select(['id', 'name'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    if (creds.length === 0) return [];
    const since = new Date(this.deps.clock.now().getTime() - days * DAY_MS).toISOString();
    const recent = new Set(
      (
        await this.deps.db
          .selectFrom('executions')
          .select('workflow_id')
          .distinct()
          .where('account_id', '=', accountId)
          .where('started_at', '>=', since)
          .execute()
      ).map((r) => r.workflow_id),
    );
    const usedBy = (pick: (w: Stored) => boolean) =>
      new Set(workflows.filter(pick).flatMap((w) => credentialRefs(w.def).map((r) => r.ref)));
    const any = usedBy(() => true);
    const active = usedBy((w) => w.active);
    const executed = usedBy((w) => recent.has(w.id));
    const located = (keep: (id: string) => boolean): AuditLocation[] =>
      creds.filter((c) => keep(c.id)).map((c) => ({ kind: 'credential', id: c.id, name: c.name }));
    const sections: AuditSection[] = [];
    const push = (title: string, description: string, location: AuditLocation[]) => {
      if (location.length > 0)
        sections.push({
          title,
          description,
          recommendation: 'Consider deleting these credentials if you no longer need them.',
          location,
        });
    };
    push(
      'Credentials not used in any workflow',
      'These credentials are not used in any workflow. Keeping unused credentials is an unneeded security risk.',
      located((id) => !any.has(id)),
    );
    push(
      'Credentials not used in any active workflow',
      'These credentials are not used in any active workflow.',
      located((id) => any.has(id) && !active.has(id)),
    );
    push(
      'Credentials not used in recently executed workflows',
      `These credentials are not used in any workflow executed in the last ${days} days.`,
      located((id) => any.has(id) && !executed.has(id)),
    );
    return sections;
  }

  private async instance(accountId: string, workflows: Stored[]): Promise<AuditSection[]> {
    const sections: AuditSection[] = [];
    const unprotected = workflows.flatMap((w) =>
      w.def.nodes
        .filter((n) => !n.disabled && WEBHOOK_NODE_TYPES.has(n.type) && unauthenticated(n))
        .filter((n) => !validatedNext(w.def, n.name))
        .map((n) => nodeLocation(w, n)),
    );
    if (unprotected.length > 0)
      sections.push({
        title: 'Unprotected webhooks in instance',
        description:
          'These webhook nodes have authentication "none" and are not directly followed by a node that validates the payload: anyone who knows the URL can start the workflow.',
        recommendation:
          'Set an authentication (basic, header, JWT, HMAC or API key) on the webhook node, or validate the payload in the next node (If, Switch, Code, Validate).',
        location: unprotected,
      });
    const keys = await this.deps.keysWithoutIpRules(accountId);
    if (keys.length > 0)
      sections.push({
        title: 'API keys without IP rules',
        description: 'These active API keys accept calls from any address.',
        recommendation:
          'Limit each key to the addresses that use it (allowedIps), especially keys with write or admin scopes.',
        location: keys.map((k) => ({ kind: 'apiKey', id: k.id, name: k.name })),
      });
    sections.push({
      title: 'Security settings',
      description: 'The instance settings that bear on the security of workflows.',
      recommendation: 'Review these settings (README, "Settings").',
      settings: this.deps.securitySettings,
    });
    return sections;
  }
}

function nodeLocation(w: Stored, n: WorkflowNode): AuditLocation {
  return {
    kind: 'node',
    workflowId: w.id,
    workflowName: w.name,
    nodeId: n.id,
    nodeName: n.name,
    nodeType: n.type,
  };
}

function unauthenticated(node: WorkflowNode): boolean {
  const auth = node.parameters.authentication;
  return auth === undefined || auth === 'none';
}

/** Whether a node directly after `name` can validate what the webhook received. */
function validatedNext(def: WorkflowDefinition, name: string): boolean {
  const targets = (def.connections[name]?.main ?? []).flat().map((t) => t?.node);
  return def.nodes.some((n) => !n.disabled && targets.includes(n.name) && VALIDATOR_NODE_TYPES.has(n.type));
}

function nodesOfTypes(workflows: Stored[], types: Set<string>, also?: (n: WorkflowNode) => boolean) {
  return workflows.flatMap((w) =>
    w.def.nodes
      .filter((n) => !n.disabled && types.has(n.type) && (also ? also(n) : true))
      .map((n) => nodeLocation(w, n)),
  );
}

function databaseSections(workflows: Stored[]): AuditSection[] {
  const sections: AuditSection[] = [];
  const inQuery = nodesOfTypes(workflows, SQL_NODE_TYPES, (n) => {
    const query = n.parameters.query;
    return n.parameters.operation === 'executeQuery' && typeof query === 'string' && isExpression(query);
  });
  if (inQuery.length > 0)
    sections.push({
      title: 'Expressions in "Execute Query" fields in SQL nodes',
      description:
        'These SQL nodes build their query with an expression: a value from the input may change the query (SQL injection).',
      recommendation:
        'Pass values as query parameters ("Query Parameters") instead of building the query with an expression.',
      location: inQuery,
    });
  return sections;
}

function nodesSections(workflows: Stored[]): AuditSection[] {
  const risky = nodesOfTypes(workflows, RISKY_NODE_TYPES);
  if (risky.length === 0) return [];
  return [
    {
      title: 'Official risky nodes',
      description:
        'These nodes run code, commands or requests chosen by the workflow (Code, Execute Command, HTTP Request, SSH, FTP): a careless or malicious workflow can leak data through them.',
      recommendation: 'Review what each of these nodes does, and who may edit the workflows that hold them.',
      location: risky,
    },
  ];
}

function filesystemSections(workflows: Stored[]): AuditSection[] {
  const files = nodesOfTypes(workflows, FILESYSTEM_NODE_TYPES);
  if (files.length === 0) return [];
  return [
    {
      title: 'Nodes that interact with the filesystem',
      description: 'These nodes read or write files on the host running the platform.',
      recommendation:
        'Keep file access confined to its configured folder, or refactor the workflow so it does not need the host filesystem.',
      location: files,
    },
  ];
}
