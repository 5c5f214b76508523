import type { ExpressionLanguage } from './expressions.js';
import type { EngineDeps, RunContext, WorkflowDefinition } from './types.js';

/** `settings.expressionLanguage`: JavaScript (n8n's) unless the workflow chose JSONata. */
export function expressionLanguageOf(def: WorkflowDefinition): ExpressionLanguage {
  return def.settings?.expressionLanguage === 'jsonata' ? 'jsonata' : 'javascript';
}

/** The expression data that depends on the workflow only (`$workflow`, `$env`, `$vars`, …). */
export function workflowData(def: WorkflowDefinition, deps: Pick<EngineDeps, 'env' | 'vars'>) {
  const settings = def.settings ?? {};
  return {
    workflow: { id: def.id, name: def.name, active: (def as { active?: boolean }).active ?? false },
    nodeNames: def.nodes.map((n) => n.name),
    env: deps.env,
    vars: deps.vars ?? {},
    language: expressionLanguageOf(def),
    ...(typeof settings.timezone === 'string' && settings.timezone !== 'DEFAULT'
      ? { timezone: settings.timezone }
      : {}),
  };
}

/**
 * `$execution` of the execution's `waitIndex`-th stretch; a blank one outside an execution. The resume
 * URL's signature (an HMAC) is made when something reads it, once: most node runs never do.
 */
export function executionInfo(
  ctx: RunContext | undefined,
  waitIndex: number,
): { id: string; mode: string; resumeUrl: string } {
  if (!ctx) return { id: '', mode: 'manual', resumeUrl: '' };
  let resumeUrl: string | undefined;
  return {
    id: ctx.executionId,
    mode: ctx.mode,
    get resumeUrl() {
      resumeUrl ??= resumeUrlOf(ctx.resumeUrlBase, ctx.executionId, ctx.resumeSignature?.(waitIndex));
      return resumeUrl;
    },
  };
}

/** `{base}/{executionId}?signature=…`: what `$execution.resumeUrl` and the execution view show. */
export function resumeUrlOf(base: string, executionId: string, signature: string | undefined): string {
  const url = `${base.replace(/\/+$/, '')}/${executionId}`;
  return signature ? `${url}?signature=${signature}` : url;
}
