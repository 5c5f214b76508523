import { validationError } from '../../core/errors.js';
import { boundedOutput, type ChatMessage } from '../llm/index.js';
import type { PendingCall, StepView, TurnRequest } from './agent-events.js';
import type { AgentDefinition } from './agent-service.js';
import { checkResponseFormat } from './structured-output.js';
import { clientToolProblem, resolveTools } from './tool-specs.js';

/** A client's output for one of a paused run's tool calls. */
export interface ToolOutput {
  toolCallId: string;
  /** Text, or any JSON value (sent to the model as its JSON text). */
  output: unknown;
}

const MAX_TOOL_OUTPUT_CHARS = 20_000;

/**
 * Refuses a turn's options that cannot work with its agent (400 naming the field): a client tool with
 * a bad name or schema or the name of one of the agent's tools, a named tool choice that names no
 * tool, a response format whose schema is refused.
 */
export function checkTurnRequest(agent: AgentDefinition, request: TurnRequest): void {
  const problems: Array<{ field: string; message: string }> = [];
  const names = new Set(resolveTools(agent.tools).map((t) => t.functionName));
  for (const [i, tool] of (request.tools ?? []).entries()) {
    const problem = clientToolProblem(tool);
    if (problem) problems.push({ field: `tools[${i}]`, message: problem });
    else if (names.has(tool.name))
      problems.push({
        field: `tools[${i}].name`,
        message: `'${tool.name}' is already a tool of the agent or listed twice`,
      });
    names.add(tool.name);
  }
  const choice = request.toolChoice;
  if (typeof choice === 'object' && !names.has(choice.name))
    problems.push({
      field: 'toolChoice.name',
      message: `names '${choice.name}', which is not a tool of this turn`,
    });
  if (choice === 'required' && names.size === 0)
    problems.push({ field: 'toolChoice', message: "is 'required' but the turn has no tools" });
  if (problems.length > 0) throw validationError('Invalid turn options', problems);
  if (request.responseFormat) checkResponseFormat(request.responseFormat, 'responseFormat');
}

/**
 * The tool results a client's outputs make, in the order of the calls: each output must answer a
 * pending call (a call never made is a 400), once, and every pending call must be answered.
 */
export function clientOutputMessages(
  pending: PendingCall[],
  outputs: ToolOutput[],
): { messages: ChatMessage[]; steps: StepView[] } {
  const problems: Array<{ field: string; message: string }> = [];
  const byId = new Map<string, unknown>();
  const waiting = new Set(pending.map((c) => c.id));
  for (const [i, o] of outputs.entries()) {
    if (!waiting.has(o.toolCallId))
      problems.push({
        field: `toolOutputs[${i}].toolCallId`,
        message: `'${o.toolCallId}' is not a tool call this run waits for`,
      });
    else if (byId.has(o.toolCallId))
      problems.push({
        field: `toolOutputs[${i}].toolCallId`,
        message: `'${o.toolCallId}' is answered twice`,
      });
    else byId.set(o.toolCallId, o.output);
  }
  for (const call of pending)
    if (!byId.has(call.id))
      problems.push({ field: 'toolOutputs', message: `the call '${call.id}' (${call.name}) has no output` });
  if (problems.length > 0) throw validationError('Invalid tool outputs', problems);
  const messages: ChatMessage[] = [];
  const steps: StepView[] = [];
  for (const call of pending) {
    const shown = boundedOutput(byId.get(call.id), MAX_TOOL_OUTPUT_CHARS);
    messages.push({
      role: 'tool',
      content: typeof shown === 'string' ? shown : JSON.stringify(shown),
      toolCallId: call.id,
      toolName: call.name,
    });
    steps.push({ type: 'tool_call', name: call.name, input: call.arguments, output: shown, ms: 0 });
  }
  return { messages, steps };
}
