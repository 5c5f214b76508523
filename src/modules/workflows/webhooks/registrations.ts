import { AppError } from '../../../core/errors.js';
import { webhookNodesOf } from '../definitions/definitions.js';
import type { EngineDeps, NodeRegistry, WorkflowDefinition, WorkflowNode } from '../engine/index.js';
import type { NodeType, RegistrationContext } from '../engine/node-type.js';
import { withDefaults } from '../engine/parameters.js';
import { credentialRefOf } from '../engine/types.js';
import type { Log } from '../executions/log.js';

export interface WebhookRegistrationsDeps {
  nodes: NodeRegistry;
  http: EngineDeps['http'];
  /** Decrypted credential data for a node of the workflow (the executions' rule). */
  credential(accountId: string, ref: string, workflowId: string): Promise<Record<string, string>>;
  /** The platform's public base URL (PUBLIC_URL), which outside services deliver to. */
  publicUrl: string;
  log: Pick<Log, 'warn'>;
}

/**
 * n8n's webhook methods of the triggers that tell an outside service where to deliver (the Telegram
 * Trigger's setWebhook): run when a workflow is activated (or saved while active) and when it is
 * deactivated, archived or deleted. An activation whose registration fails is refused with the
 * service's reason (502), the registrations already made withdrawn; a withdrawal that fails is logged.
 */
export class WebhookRegistrations {
  constructor(private readonly d: WebhookRegistrationsDeps) {}

  async activate(accountId: string, def: WorkflowDefinition): Promise<void> {
    const done: Array<{ type: NodeType; ctx: RegistrationContext }> = [];
    for (const { type, ctx } of this.registering(accountId, def)) {
      try {
        await type.registration?.register(ctx);
        done.push({ type, ctx });
      } catch (error) {
        for (const earlier of done) await this.withdraw(earlier.type, earlier.ctx, def.id);
        const reason = error instanceof Error ? error.message : String(error);
        throw new AppError('UPSTREAM_ERROR', `Node '${ctx.node.name}' could not be registered: ${reason}`, {
          node: ctx.node.name,
        });
      }
    }
  }

  async deactivate(accountId: string, def: WorkflowDefinition): Promise<void> {
    for (const { type, ctx } of this.registering(accountId, def)) await this.withdraw(type, ctx, def.id);
  }

  /**
   * An active workflow saved: the registrations its new version no longer has (same path and same
   * credentials: a trigger moved to another bot leaves the old bot's webhook otherwise) are withdrawn first (a
   * service may keep one registration per account, as Telegram one webhook per bot, so a withdrawal
   * after the new registration would undo it), then the new version registers; if that fails, the old
   * version registers again (best effort) and the save is refused.
   */
  async replace(accountId: string, before: WorkflowDefinition, after: WorkflowDefinition): Promise<void> {
    const kept = new Set(this.registering(accountId, after).map(({ ctx }) => registrationKey(ctx)));
    for (const { type, ctx } of this.registering(accountId, before))
      if (!kept.has(registrationKey(ctx))) await this.withdraw(type, ctx, before.id);
    try {
      await this.activate(accountId, after);
    } catch (error) {
      await this.activate(accountId, before).catch((err: unknown) =>
        this.d.log.warn({ err, workflowId: before.id }, 'previous webhook registration not restored'),
      );
      throw error;
    }
  }

  private async withdraw(type: NodeType, ctx: RegistrationContext, workflowId: string): Promise<void> {
    await type.registration
      ?.unregister(ctx)
      .catch((err: unknown) =>
        this.d.log.warn({ err, workflowId, node: ctx.node.name }, 'webhook not withdrawn'),
      );
  }

  private registering(accountId: string, def: WorkflowDefinition) {
    const hooks = webhookNodesOf(def);
    const base = this.d.publicUrl.replace(/\/+$/, '');
    const out: Array<{ type: NodeType; ctx: RegistrationContext }> = [];
    for (const node of def.nodes as WorkflowNode[]) {
      if (node.disabled) continue;
      const type = this.d.nodes.get(node.type, node.typeVersion);
      const hook = hooks.find((h) => h.nodeName === node.name);
      if (!type?.registration || !hook) continue;
      out.push({
        type,
        ctx: {
          node,
          workflowId: def.id,
          parameters: withDefaults(type.schema, node.parameters) as Record<string, unknown>,
          webhook: { url: `${base}/webhook/${hook.path}`, path: hook.path },
          http: this.d.http,
          credential: (ref) => this.d.credential(accountId, ref, def.id),
        },
      });
    }
    return out;
  }
}

/** What a registration is made with: its path and the node's credentials (another bot is another one). */
function registrationKey(ctx: RegistrationContext): string {
  const credentials = Object.entries(ctx.node.credentials ?? {})
    .map(([type, ref]) => [type, credentialRefOf(ref)])
    .sort(([a], [b]) => String(a).localeCompare(String(b)));
  return JSON.stringify([ctx.webhook.path, credentials]);
}
