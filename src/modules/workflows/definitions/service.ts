import type { Principal } from '../../../core/auth/principal.js';
import { type Clock, isoNow } from '../../../core/clock.js';
import { isUniqueViolation } from '../../../core/db/database.js';
import { runList } from '../../../core/db/list.js';
import { AppError, notFound } from '../../../core/errors.js';
import { findJsonProblem, MAX_JSON_DEPTH } from '../../../core/http/json-guard.js';
import { parseListQuery } from '../../../core/http/list-query.js';
import { newId } from '../../../core/ids.js';
import { assertCredentialsUsable, savedByOf, unusableRefs } from '../credentials/access.js';
import type { CredentialStore } from '../credentials/store.js';
import type { ValidationProblem, WorkflowDefinition, WorkflowEngine } from '../engine/index.js';
import { saveSettingProblems } from '../executions/save-policy.js';
import { WORKFLOW_LIST_SPEC, type WorkflowBodyT } from '../schemas.js';
import {
  assertNotArchived,
  credentialRefs,
  definitionFromBody,
  definitionOf,
  n8nColumnsFromBody,
  tagsOf,
  WEBHOOK_CREDENTIAL_TYPE,
  webhookNodesOf,
} from './definitions.js';
import type { SavedVersion, WorkflowRow, WorkflowStore } from './store.js';

/** A workflow offered as an MCP tool. */
export interface McpWorkflowTool {
  id: string;
  name: string;
  description: string | null;
}

export interface WorkflowServiceDeps {
  store: WorkflowStore;
  credentials: CredentialStore;
  engine: WorkflowEngine;
  clock: Clock;
  /** Registers and clears Schedule Trigger rules with the activation's transaction. */
  schedules?: {
    register(trx: Trx, accountId: string, def: WorkflowDefinition): Promise<void>;
    clear(trx: Trx, workflowId: string): Promise<void>;
  };
  /** Save-time problems of Execute Workflow nodes whose fixed calls come back to the workflow. */
  callCycles?(accountId: string, def: WorkflowDefinition): Promise<ValidationProblem[]>;
  /** How long `listen` keeps a workflow's test webhooks (default 120 s, n8n's). */
  testWebhookSeconds?: number;
  /**
   * n8n's webhook methods of registering triggers (the Telegram Trigger's setWebhook): `activate` before
   * an activation (or a save of an active workflow) is committed, refusing it when one fails;
   * `deactivate` after a deactivation, archive or deletion (best effort).
   */
  registrations?: {
    activate(accountId: string, def: WorkflowDefinition): Promise<void>;
    deactivate(accountId: string, def: WorkflowDefinition): Promise<void>;
    /** An active workflow saved: what its new version no longer registers is withdrawn, the rest registered. */
    replace(accountId: string, before: WorkflowDefinition, after: WorkflowDefinition): Promise<void>;
  };
  /** Called after webhook registrations change (drops cached routes). */
  onRoutesChanged(paths: string[]): void;
  /** Called after a workflow was saved, activated, deactivated or deleted (listening triggers follow). */
  onWorkflowChanged?(accountId: string, workflowId: string): void;
  /** Called with the tag names of a saved workflow (the account's tag list learns new ones). */
  onTagsSaved?(accountId: string, names: string[]): Promise<void>;
}

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** A workflow in n8n's shape (its public API's workflow object), for GET and list entries alike. */
function workflowView(row: WorkflowRow) {
  const def = definitionOf(row);
  const active = row.active === 1;
  return {
    id: row.id,
    name: row.name,
    active,
    isArchived: row.archived === 1,
    versionId: row.version_id,
    triggerCount: active ? webhookNodesOf(def).length : 0,
    nodes: def.nodes,
    connections: def.connections,
    settings: def.settings ?? {},
    staticData: parsed(row.static_data) as string | Record<string, unknown> | null,
    // Absent: {} as n8n answers; an explicit null stays null.
    pinData: (row.pin_data === null ? {} : JSON.parse(row.pin_data)) as Record<string, unknown> | null,
    meta: parsed(row.meta) as Record<string, unknown> | null,
    tags: tagsOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * What `workflows export` writes: n8n's download shape, which imports again unchanged (the
 * server's own bookkeeping — createdAt, updatedAt, triggerCount — is left out).
 */
function exportOf(row: WorkflowRow) {
  const { id, name, active, nodes, connections, settings, staticData, pinData, meta, tags, versionId } =
    workflowView(row);
  return { id, name, active, nodes, connections, settings, staticData, pinData, meta, tags, versionId };
}

/**
 * Every problem of a definition about to be saved: it must also read back as it was given. HTTP
 * bodies were checked at the edge; files the CLI imports get the same check here.
 */
function problemsOf(
  engine: WorkflowEngine,
  def: WorkflowDefinition,
  body: WorkflowBodyT,
): ValidationProblem[] {
  const { pinData, staticData, meta, tags } = body;
  const { nodes, connections, settings } = def;
  const problem = findJsonProblem({ nodes, connections, settings, pinData, staticData, meta, tags });
  if (problem) {
    const message =
      problem.kind === 'depth'
        ? `must not nest deeper than ${MAX_JSON_DEPTH} levels`
        : problem.kind === 'nul'
          ? 'must not contain the NUL character (U+0000)'
          : 'must be a finite number';
    return [{ path: problem.kind === 'depth' ? 'nodes' : problem.path, message }];
  }
  return [...engine.validate(def), ...saveSettingProblems(def.settings)];
}

const tagNames = (row: Pick<WorkflowRow, 'tags'>): string[] => tagsOf(row).map((t) => t.name);

/** A webhook id that can stand as one URL segment. */
const WEBHOOK_ID = /^[A-Za-z0-9_-]{1,100}$/;

const pathsOf = (def: WorkflowDefinition): string[] => [...new Set(webhookNodesOf(def).map((h) => h.path))];

type Trx = Parameters<Parameters<WorkflowStore['transaction']>[0]>[0];

function invalid(problems: ValidationProblem[]): AppError {
  return new AppError('VALIDATION_ERROR', `The workflow is not valid: ${problems.length} problem(s)`, {
    problems,
  });
}

/** n8n's workflow version object (`authors`: who saved it, `key:<id>`, `member:<id>` or `account`). */
function versionView(v: SavedVersion) {
  return {
    versionId: v.versionId,
    workflowId: v.workflowId,
    nodes: v.definition.nodes,
    connections: v.definition.connections,
    authors: v.savedBy ?? 'account',
    name: v.definition.name,
    description: null,
    createdAt: v.createdAt,
    updatedAt: v.createdAt,
  };
}

/** A whole-number query parameter given as text (n8n's `take`, `skip`), within bounds. */
function countParam(
  field: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback;
  const n = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new AppError('VALIDATION_ERROR', `${field} must be a whole number from ${min} to ${max}`, {
      field,
      value: raw,
    });
  }
  return n;
}

/** Workflows: create, replace, delete, activate (registering webhook paths), import and export. */
export class WorkflowService {
  constructor(private readonly deps: WorkflowServiceDeps) {}

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, WORKFLOW_LIST_SPEC);
    return runList(this.deps.store.listQuery(accountId), query, WORKFLOW_LIST_SPEC, workflowView);
  }

  async get(accountId: string, id: string) {
    return workflowView(await this.mustGet(accountId, id));
  }

  /** n8n's workflow history: the saved versions, newest first (`take` 10, max 250; `skip`). */
  async history(accountId: string, id: string, query: { take?: string; skip?: string }) {
    await this.mustGet(accountId, id);
    const take = countParam('take', query.take, 10, 1, 250);
    const skip = countParam('skip', query.skip, 0, 0, 1_000_000);
    const versions = await this.deps.store.history(id, take, skip);
    return versions.map((v) => {
      const { nodes: _nodes, connections: _connections, ...item } = versionView(v);
      return item;
    });
  }

  /** One saved version by n8n's versionId (or the platform's version number): n8n's workflow version. */
  async version(accountId: string, id: string, versionId: string) {
    const row = await this.mustGet(accountId, id);
    const found = await this.deps.store.versionByN8nId(id, versionId, {
      versionId: row.version_id,
      version: row.version,
    });
    if (!found) throw notFound('NOT_FOUND', 'Workflow version', versionId);
    return versionView(found);
  }

  /**
   * The workflows an account offers as MCP tools: `settings.availableInMCP: true` (n8n's setting) and a
   * webhook node to start from (they run like a direct run). `settings.mcpDescription` describes one.
   */
  async mcpTools(accountId: string, limit: number): Promise<McpWorkflowTool[]> {
    const rows = await this.deps.store.markedForMcp(accountId, limit);
    return rows.flatMap((row) => {
      const def = definitionOf(row);
      if (def.settings?.availableInMCP !== true || webhookNodesOf(def).length === 0) return [];
      const described = def.settings.mcpDescription;
      return [
        {
          id: row.id,
          name: row.name,
          description: typeof described === 'string' ? described.slice(0, 2_000) : null,
        },
      ];
    });
  }

  /** The problems a definition would be refused for (empty: valid), without saving it. */
  check(body: WorkflowBodyT & { id?: string }): ValidationProblem[] {
    return problemsOf(this.deps.engine, definitionFromBody(body.id ?? 'wf_check', body), body);
  }

  /** Saved by `principal` (none: the operator): the workflow runs with its credential rights. */
  async create(
    accountId: string,
    body: WorkflowBodyT,
    id: string = newId('wf'),
    principal: Principal | null = null,
  ) {
    const def = definitionFromBody(id, body);
    const problems = problemsOf(this.deps.engine, def, body);
    if (problems.length === 0) problems.push(...((await this.deps.callCycles?.(accountId, def)) ?? []));
    if (problems.length > 0) throw invalid(problems);
    const savedBy = savedByOf(principal);
    await assertCredentialsUsable(this.deps.credentials, accountId, savedBy, credentialRefs(def));
    const at = isoNow(this.deps.clock);
    const row: WorkflowRow = {
      id,
      account_id: accountId,
      name: def.name,
      active: 0,
      version: 1,
      nodes: JSON.stringify(def.nodes),
      connections: JSON.stringify(def.connections),
      settings: JSON.stringify(def.settings ?? {}),
      ...n8nColumnsFromBody(body),
      saved_by: savedBy,
      archived: 0,
      created_at: at,
      updated_at: at,
    };
    try {
      await this.deps.store.insert(row, def);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `Workflow '${id}' already exists`, { id });
      throw error;
    }
    // Saving claims its paths where free; activation is refused where another account holds one.
    await this.deps.store.transaction((trx) => this.deps.store.claimPaths(trx, accountId, pathsOf(def), at));
    await this.deps.onTagsSaved?.(accountId, tagNames(row));
    return this.get(accountId, id);
  }

  /** The new version runs with the credential rights of `principal`, who saved it (none: the operator). */
  async replace(accountId: string, id: string, body: WorkflowBodyT, principal: Principal | null = null) {
    const current = await this.mustGet(accountId, id);
    assertNotArchived(current);
    const def = definitionFromBody(id, body);
    const savedBy = savedByOf(principal);
    const problems = problemsOf(this.deps.engine, def, body);
    if (problems.length === 0) problems.push(...((await this.deps.callCycles?.(accountId, def)) ?? []));
    if (problems.length > 0) throw invalid(problems);
    await assertCredentialsUsable(this.deps.credentials, accountId, savedBy, credentialRefs(def));
    if (current.active === 1)
      problems.push(
        ...(await this.activationProblems(accountId, def, savedBy)),
        ...(await this.listenerCapProblems(accountId, def)),
      );
    if (problems.length > 0) throw invalid(problems);
    const registrations = current.active === 1 ? this.deps.registrations : undefined;
    await registrations?.replace(accountId, definitionOf(current), def);
    const at = isoNow(this.deps.clock);
    const saving = this.deps.store.transaction(async (trx) => {
      await this.deps.store.replace(
        trx,
        {
          id,
          name: def.name,
          version: current.version + 1,
          nodes: JSON.stringify(def.nodes),
          connections: JSON.stringify(def.connections),
          settings: JSON.stringify(def.settings ?? {}),
          ...n8nColumnsFromBody(body),
          saved_by: savedBy,
          updated_at: at,
        },
        def,
      );
      await this.deps.store.claimPaths(trx, accountId, pathsOf(def), at);
      await this.releaseUnused(trx, accountId, pathsOf(definitionOf(current)));
      return current.active === 1 ? this.registerWebhooks(trx, accountId, def) : [];
    });
    // A save that fails after the outside services moved to the new version moves them back (as
    // `activate` withdraws), so they deliver to what is stored.
    const paths = await saving.catch(async (error: unknown) => {
      // Best effort: the save's own error is what the caller must see (withdrawals log their failures).
      await registrations?.replace(accountId, def, definitionOf(current)).catch(() => undefined);
      throw error;
    });
    this.deps.onRoutesChanged(paths);
    this.deps.onWorkflowChanged?.(accountId, id);
    await this.deps.onTagsSaved?.(accountId, tagNames(n8nColumnsFromBody(body)));
    return this.get(accountId, id);
  }

  async delete(accountId: string, id: string) {
    const row = await this.mustGet(accountId, id);
    // Withdrawn first: the credential's use is checked against the stored workflow.
    if (row.active === 1) await this.deps.registrations?.deactivate(accountId, definitionOf(row));
    await this.deps.store.delete(id);
    const paths = pathsOf(definitionOf(row));
    await this.deps.store.transaction((trx) => this.releaseUnused(trx, accountId, paths));
    this.deps.onRoutesChanged(paths);
    this.deps.onWorkflowChanged?.(accountId, id);
    return workflowView(row);
  }

  /** The stored workflow and its definition, refused with every problem that keeps it from running. */
  private async runnable(accountId: string, id: string) {
    const row = await this.mustGet(accountId, id);
    assertNotArchived(row);
    const def = definitionOf(row);
    const problems = [
      ...this.deps.engine.validate(def),
      ...(await this.activationProblems(accountId, def, row.saved_by)),
    ];
    if (problems.length > 0) throw invalid(problems);
    return { row, def };
  }

  async activate(accountId: string, id: string) {
    const { row, def } = await this.runnable(accountId, id);
    const capped = await this.listenerCapProblems(accountId, def);
    if (capped.length > 0) throw invalid(capped);
    const at = isoNow(this.deps.clock);
    // The outside service first: an activation it refuses changes nothing here.
    await this.deps.registrations?.activate(accountId, def);
    let paths: string[];
    try {
      paths = await this.deps.store.transaction(async (trx) => {
        // On the locked row: a deactivation that committed meanwhile is seen, not undone by halves.
        const active = await this.deps.store.lockActive(trx, id);
        const registered = await this.registerWebhooks(trx, accountId, def);
        if (!active) await this.deps.store.setActive(trx, id, true, at);
        return registered;
      });
    } catch (error) {
      if (row.active !== 1) await this.deps.registrations?.deactivate(accountId, def);
      throw error;
    }
    this.deps.onRoutesChanged(paths);
    this.deps.onWorkflowChanged?.(accountId, id);
    return workflowView(await this.mustGet(accountId, id));
  }

  /**
   * n8n's test webhooks: the workflow's webhook nodes answer at `/webhook-test/{path}`, active or
   * not, for one call or until the window ends; listening again restarts the window.
   */
  async listen(accountId: string, id: string) {
    const { def } = await this.runnable(accountId, id);
    const hooks = webhookNodesOf(def);
    if (hooks.length === 0)
      throw new AppError('VALIDATION_ERROR', `Workflow '${id}' has no webhook node to listen with`, { id });
    const now = this.deps.clock.now();
    const expiresAt = new Date(now.getTime() + (this.deps.testWebhookSeconds ?? 120) * 1000).toISOString();
    await this.deps.store.transaction(async (trx) => {
      const holders = await this.deps.store.claimPaths(trx, accountId, pathsOf(def), now.toISOString());
      for (const path of pathsOf(def)) {
        if (holders.get(path) !== accountId)
          throw new AppError('CONFLICT', `Webhook path /webhook/${path} is held by another account`, {
            path,
          });
      }
      const rows = hooks.map((h) => ({
        path: h.path,
        method: h.httpMethod,
        node_name: h.nodeName,
        account_id: accountId,
        dynamic_prefix: h.dynamicPrefix,
        expires_at: expiresAt,
      }));
      const other = await this.deps.store.listenTest(trx, id, rows, now.toISOString());
      if (other)
        throw new AppError('CONFLICT', `Workflow '${other}' is listening on one of these test webhooks`, {
          workflowId: other,
        });
    });
    return {
      id,
      expiresAt,
      webhooks: hooks.map((h) => ({ method: h.httpMethod, path: `/webhook-test/${h.path}` })),
    };
  }

  async deactivate(accountId: string, id: string) {
    const row = await this.mustGet(accountId, id);
    if (row.active === 1) {
      const at = isoNow(this.deps.clock);
      const deactivated = await this.deps.store.transaction(async (trx) => {
        // On the locked row: of deactivations racing an activation, each sees the other's end.
        if (!(await this.deps.store.lockActive(trx, id))) return false;
        await this.deps.store.clearWebhooks(trx, id);
        await this.deps.schedules?.clear(trx, id);
        await this.deps.store.setActive(trx, id, false, at);
        return true;
      });
      if (!deactivated) return workflowView(await this.mustGet(accountId, id));
      await this.deps.registrations?.deactivate(accountId, definitionOf(row));
      this.deps.onRoutesChanged(webhookNodesOf(definitionOf(row)).map((h) => h.path));
      this.deps.onWorkflowChanged?.(accountId, id);
    }
    return workflowView(await this.mustGet(accountId, id));
  }

  /**
   * n8n's archive: deactivates the workflow (its webhooks and schedules released) and marks it
   * archived; it keeps its executions and versions. Archiving an archived workflow answers it as is.
   */
  async archive(accountId: string, id: string) {
    const row = await this.mustGet(accountId, id);
    if (row.archived === 1) return workflowView(row);
    const at = isoNow(this.deps.clock);
    await this.deps.store.transaction(async (trx) => {
      if (row.active === 1) {
        await this.deps.store.clearWebhooks(trx, id);
        await this.deps.schedules?.clear(trx, id);
      }
      await this.deps.store.setArchived(trx, id, true, at);
    });
    if (row.active === 1) await this.deps.registrations?.deactivate(accountId, definitionOf(row));
    if (row.active === 1) this.deps.onRoutesChanged(webhookNodesOf(definitionOf(row)).map((h) => h.path));
    this.deps.onWorkflowChanged?.(accountId, id);
    return workflowView(await this.mustGet(accountId, id));
  }

  /** Unarchives (inactive: activating it again is a separate call). */
  async unarchive(accountId: string, id: string) {
    const row = await this.mustGet(accountId, id);
    if (row.archived === 0) return workflowView(row);
    await this.deps.store.transaction((trx) =>
      this.deps.store.setArchived(trx, id, false, isoNow(this.deps.clock)),
    );
    return workflowView(await this.mustGet(accountId, id));
  }

  /**
   * Imports a definition once: a workflow id imported before (even if since deleted) is skipped,
   * so shipped workflows arrive on first start and never come back after a deletion.
   */
  async importOnce(
    accountId: string,
    body: WorkflowBodyT & { id?: string },
  ): Promise<'imported' | 'skipped'> {
    const id = body.id ?? newId('wf');
    const at = isoNow(this.deps.clock);
    const fresh = await this.deps.store.transaction((trx) => this.deps.store.markImported(trx, id, at));
    if (!fresh || (await this.deps.store.exists(id))) return 'skipped';
    await this.create(accountId, body, id);
    return 'imported';
  }

  /**
   * Imports or replaces (CLI `workflows import`, source-control pull): same id → replaced, else created.
   * With a principal, the workflow is saved as theirs: it may use only the credentials they may use.
   */
  async upsert(
    accountId: string,
    body: WorkflowBodyT & { id?: string },
    principal: Principal | null = null,
  ): Promise<'created' | 'replaced'> {
    if (body.id && (await this.deps.store.get(accountId, body.id))) {
      await this.replace(accountId, body.id, body, principal);
      return 'replaced';
    }
    if (body.id && (await this.deps.store.exists(body.id)))
      throw new AppError('CONFLICT', `Workflow '${body.id}' belongs to another account`, { id: body.id });
    await this.create(accountId, body, body.id, principal);
    return 'created';
  }

  async export(accountId: string | null, id: string | null): Promise<unknown[]> {
    const rows = await this.deps.store.all(accountId);
    return rows.filter((r) => id === null || r.id === id).map(exportOf);
  }

  private async mustGet(accountId: string, id: string): Promise<WorkflowRow> {
    const row = await this.deps.store.get(accountId, id);
    if (!row) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow', id);
    return row;
  }

  /** What must hold before a workflow may run: its credentials exist and fit, paths unique within it. */
  private async activationProblems(
    accountId: string,
    def: WorkflowDefinition,
    savedBy: string,
  ): Promise<ValidationProblem[]> {
    const problems: ValidationProblem[] = [];
    const refs = credentialRefs(def);
    const found = await this.deps.credentials.existing(
      accountId,
      refs.map((r) => r.ref),
    );
    for (const { ref, path } of refs) {
      if (!found.has(ref))
        problems.push({ path, message: `credential '${ref}' does not exist; create it first` });
    }
    // A share withdrawn since the save: the workflow would fail at its first use of the credential.
    for (const { ref, path } of await unusableRefs(this.deps.credentials, accountId, savedBy, refs))
      problems.push({
        path,
        message: `credential '${ref}' is not shared with ${savedBy}, who saved this workflow`,
      });
    const seen = new Set<string>();
    for (const hook of webhookNodesOf(def)) {
      const where = `nodes[${def.nodes.findIndex((n) => n.name === hook.nodeName)}]`;
      const key = `${hook.httpMethod} ${hook.path}`;
      if (seen.has(key)) problems.push({ path: where, message: `webhook ${key} is declared twice` });
      seen.add(key);
      if (hook.dynamicPrefix !== null && !WEBHOOK_ID.test(hook.dynamicPrefix))
        problems.push({
          path: `${where}.webhookId`,
          message:
            'a path with parameters is reached at /webhook/{webhookId}/…: the webhook id must be letters, digits, - and _',
        });
      const wanted = WEBHOOK_CREDENTIAL_TYPE[hook.authentication as keyof typeof WEBHOOK_CREDENTIAL_TYPE];
      if (!wanted) continue;
      if (!hook.credentialId) {
        problems.push({
          path: `${where}.parameters.credential`,
          message: `${hook.authentication} needs a credential`,
        });
        continue;
      }
      const cred = await this.deps.credentials.find(accountId, hook.credentialId);
      if (cred && cred.type !== wanted) {
        problems.push({
          path: `${where}.parameters.credential`,
          message: `${hook.authentication} needs a credential of type ${wanted}, not ${cred.type}`,
        });
      }
    }
    return problems;
  }

  /**
   * Listening triggers bounded per account (the Local File Trigger): the workflow's own, counted with
   * those of the account's other active workflows, past the type's bound. Two activations racing may
   * both pass; the listeners hold the bound again in each process.
   */
  private async listenerCapProblems(
    accountId: string,
    def: WorkflowDefinition,
  ): Promise<ValidationProblem[]> {
    const mine = this.deps.engine.cappedListeners(def);
    if (mine.length === 0) return [];
    const types = [...new Set(mine.map((c) => c.node.type))];
    const counts = new Map<string, number>();
    for (const row of await this.deps.store.activeNaming(accountId, types)) {
      if (row.id === def.id) continue;
      const nodes = JSON.parse(row.nodes) as WorkflowDefinition['nodes'];
      for (const { node } of this.deps.engine.cappedListeners({
        id: row.id,
        name: '',
        nodes,
        connections: {},
      }))
        counts.set(node.type, (counts.get(node.type) ?? 0) + 1);
    }
    const problems: ValidationProblem[] = [];
    for (const { node, maxPerAccount } of mine) {
      const count = (counts.get(node.type) ?? 0) + 1;
      counts.set(node.type, count);
      if (count > maxPerAccount)
        problems.push({
          path: `nodes[${def.nodes.indexOf(node)}]`,
          message: `an account may have at most ${maxPerAccount} active ${node.type} nodes; deactivate one first`,
        });
    }
    return problems;
  }

  /** Releases the account's claims on those of `paths` that none of its workflows declares now. */
  private async releaseUnused(trx: Trx, accountId: string, paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    const declared = new Set<string>();
    for (const row of await this.deps.store.nodesOf(trx, accountId)) {
      const nodes = JSON.parse(row.nodes) as WorkflowDefinition['nodes'];
      for (const path of pathsOf({ id: row.id, name: '', nodes, connections: {} })) declared.add(path);
    }
    await this.deps.store.releasePaths(
      trx,
      accountId,
      paths.filter((p) => !declared.has(p)),
    );
  }

  /** Registers what starts an active workflow: its webhook paths (returned) and its schedules. */
  private async registerWebhooks(trx: Trx, accountId: string, def: WorkflowDefinition): Promise<string[]> {
    await this.deps.schedules?.register(trx, accountId, def);
    const before = await this.deps.store.webhooksOf(trx, def.id);
    await this.deps.store.clearWebhooks(trx, def.id);
    const hooks = webhookNodesOf(def);
    // A path is one account's, whatever the method and even while its workflow is inactive: another
    // account's caller must never reach this account's workflow by a URL it was given for theirs.
    const holders = await this.deps.store.claimPaths(trx, accountId, pathsOf(def), isoNow(this.deps.clock));
    for (const path of pathsOf(def)) {
      if (holders.get(path) !== accountId) {
        throw new AppError('CONFLICT', `Webhook path /webhook/${path} is held by another account`, { path });
      }
    }
    for (const hook of hooks) {
      const holder = await this.deps.store.holderOf(trx, hook.path, hook.httpMethod);
      if (holder) {
        throw new AppError(
          'CONFLICT',
          `Webhook ${hook.httpMethod} /webhook/${hook.path} is held by active workflow '${holder.workflow_id}'`,
          { path: hook.path, method: hook.httpMethod, workflowId: holder.workflow_id },
        );
      }
      try {
        await this.deps.store.addWebhook(trx, {
          path: hook.path,
          method: hook.httpMethod,
          workflow_id: def.id,
          node_name: hook.nodeName,
          account_id: accountId,
          dynamic_prefix: hook.dynamicPrefix,
        });
      } catch (error) {
        // Two activations racing for one path: the loser gets the conflict.
        if (isUniqueViolation(error))
          throw new AppError('CONFLICT', `Webhook ${hook.httpMethod} /webhook/${hook.path} is taken`, {
            path: hook.path,
            method: hook.httpMethod,
          });
        throw error;
      }
    }
    return [...new Set([...before.map((b) => b.path), ...hooks.map((h) => h.path)])];
  }
}
