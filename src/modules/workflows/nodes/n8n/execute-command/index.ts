import { mkdir } from 'node:fs/promises';
import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { EngineDeps, Item } from '../../../engine/types.js';
import { CommandStopped, runCommand } from './run-command.js';

const ExecuteCommandParameters = Type.Object(
  {
    executeOnce: Type.Boolean({ default: true }),
    command: Type.String({ default: '' }),
  },
  { additionalProperties: false },
);

/** The problem (at save) or error (at run) of this node while the instance has it off. */
export const EXECUTE_COMMAND_OFF =
  'Execute Command is off on this instance: set WORKFLOW_EXECUTE_COMMAND_ENABLED=true to allow it (it runs shell commands on the server)';

function bounds(deps: EngineDeps) {
  const access = deps.host;
  if (!access?.executeCommand.enabled) throw new NodeOperationError(EXECUTE_COMMAND_OFF);
  return {
    timeoutMs: access.executeCommand.timeoutMs,
    maxOutputBytes: access.executeCommand.maxOutputBytes,
    cwd: access.filesDir ?? undefined,
  };
}

/**
 * n8n's Execute Command (v1): runs a shell command on this server, once or per item, and outputs its
 * exit code, stdout and stderr (trimmed); a non-zero exit fails the node as in n8n. Off unless
 * WORKFLOW_EXECUTE_COMMAND_ENABLED; bounded in time and output, its process group killed past either.
 */
export const executeCommandNode = defineNode({
  type: 'n8n-nodes-base.executeCommand',
  versions: [1],
  schema: ExecuteCommandParameters,
  check: (_params, limits) =>
    limits.host?.executeCommand.enabled ? [] : [{ path: 'parameters', message: EXECUTE_COMMAND_OFF }],
  async execute(ctx) {
    const b = bounds(ctx.deps);
    // The account's folder is the working directory; it appears on first use.
    if (b.cwd) await mkdir(b.cwd, { recursive: true });
    const first = await ctx.params(0);
    const count = first.executeOnce ? Math.min(1, ctx.items.length) : ctx.items.length;
    const out: Item[] = [];
    for (let i = 0; i < count; i++) {
      const p = i === 0 ? first : await ctx.params(i);
      if (p.command.trim() === '') throw new NodeOperationError("The parameter 'Command' is empty");
      const result = await runCommand(p.command, b).catch((err: unknown) => {
        if (err instanceof CommandStopped) throw new NodeOperationError(err.message);
        throw new NodeOperationError(`The command could not start: ${(err as Error).message}`);
      });
      if (result.exitCode !== 0)
        throw new NodeOperationError(`Command failed: ${p.command}\n${result.stderr}`, {
          description: `Exit code ${result.exitCode}`,
        });
      out.push({ json: { exitCode: result.exitCode, stderr: result.stderr, stdout: result.stdout } });
    }
    return output(out);
  },
});
