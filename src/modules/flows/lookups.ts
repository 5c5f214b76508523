import type { AppContext } from '../../core/context.js';
import type { LlmApi } from '../llm/index.js';

/** What saving a flow or an agent checks against other modules: the model registry, topics, workflows. */
export interface DefinitionLookups {
  /** `null` when the name is a chat model of the registry; else why it is not usable. */
  /** Why `name` cannot be the chat model of a definition of `accountId` (which finds its own made models). */
  chatModelProblem(accountId: string, name: string): string | null;
  topics(accountId: string): Promise<Set<string>>;
  /** `null` when the workflow can be run for a flow or an agent; else why not. */
  workflowProblem(accountId: string, workflowId: string): Promise<string | null>;
}

/** The lookups flows and agents share, read from the other modules at call time. */
export function definitionLookups(ctx: AppContext, llm: LlmApi): DefinitionLookups {
  return {
    chatModelProblem(accountId, name) {
      const model = llm.registry.get(name, accountId);
      if (!model) return `model '${name}' is not in the registry`;
      return model.kind === 'chat' ? null : `'${name}' is an ${model.kind} model, not a chat model`;
    },
    async topics(accountId) {
      const knowledge = ctx.apis.documents?.knowledge;
      if (!knowledge) return new Set();
      return new Set((await knowledge.topics(accountId)).map((t) => t.topic));
    },
    async workflowProblem(accountId, workflowId) {
      const workflows = ctx.apis.workflows;
      if (!workflows) return 'the workflow service is not enabled on this server';
      return workflows.direct.runnable(accountId, workflowId);
    },
  };
}
