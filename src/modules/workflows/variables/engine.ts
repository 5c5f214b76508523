import { type EngineDeps, type NodeRegistry, WorkflowEngine } from '../engine/index.js';
import type { VariableService } from './service.js';

/**
 * An account's engine whose `$vars` are that account's variables: each run and resume first
 * reads them (through the service's short cache), and the engine reads `deps.vars` as it goes.
 */
export class VariablesEngine extends WorkflowEngine {
  constructor(
    deps: EngineDeps,
    registry: NodeRegistry,
    private readonly variables: VariableService,
    private readonly accountId: string,
  ) {
    super(
      {
        ...deps,
        get vars() {
          return variables.cachedVarsOf(accountId);
        },
      },
      registry,
    );
  }

  override async run(...args: Parameters<WorkflowEngine['run']>): ReturnType<WorkflowEngine['run']> {
    await this.variables.varsOf(this.accountId);
    return super.run(...args);
  }

  override async resume(...args: Parameters<WorkflowEngine['resume']>): ReturnType<WorkflowEngine['resume']> {
    await this.variables.varsOf(this.accountId);
    return super.resume(...args);
  }
}
