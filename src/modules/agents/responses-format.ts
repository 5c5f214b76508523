import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { ChatMessage } from '../llm/index.js';
import type { ToolChoice } from './agent-runner.js';
import { type FileRef, messageContent, type PartRef } from './content-parts.js';
import type { ResponseFormat } from './structured-output.js';
import type { ClientTool } from './tool-specs.js';

/**
 * OpenAI's Responses API in the agent runtime's terms: input items become the conversation, function
 * tools become client tools (the response ends with their calls, the client sends their outputs in
 * the next request), and the turn's outcome becomes output items.
 */

type Item = Record<string, unknown>;

const bad = (param: string, message: string): AppError =>
  new AppError('VALIDATION_ERROR', `${param} ${message}`, { fields: [{ field: param, message }] });

const str = (value: unknown, param: string): string => {
  if (typeof value !== 'string') throw bad(param, 'must be a string');
  return value;
};

/** A message's text: a string, or its text parts joined (images and files are not taken here). */
function textOf(content: unknown, param: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw bad(param, 'must be a string or an array of content parts');
  return content
    .map((part, i) => {
      const p = (part ?? {}) as Item;
      if (p.type === 'input_text' || p.type === 'output_text' || p.type === 'text')
        return str(p.text, `${param}[${i}].text`);
      if (p.type === 'refusal') return str(p.refusal, `${param}[${i}].refusal`);
      throw bad(`${param}[${i}].type`, `'${String(p.type)}' is not supported here (text parts only)`);
    })
    .join('');
}

function argumentsOf(text: string, param: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text === '' ? '{}' : text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw bad(param, 'must be a JSON object text');
}

/** The input items as chat messages (function calls of one turn joined into one assistant message). */
export function inputMessages(
  input: string | Item[] | undefined,
  earlier: ChatMessage[],
  /** Where the first image and document were (the model may take text only). */
  seen: { firstImage?: PartRef; firstFile?: FileRef } = {},
): ChatMessage[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: ChatMessage[] = [];
  const names = new Map<string, string>();
  for (const m of earlier) for (const c of m.toolCalls ?? []) if (c.id) names.set(c.id, c.name);
  for (const [i, item] of input.entries()) {
    const at = `input[${i}]`;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer')
        throw bad(`${at}.role`, 'must be user, assistant, system or developer');
      if (role === 'user' && Array.isArray(item.content)) {
        // A user's parts may carry images and files (input_image, input_file).
        const parts = messageContent(item.content as Item[], [], `${at}.content`);
        seen.firstImage ??= parts.firstImage;
        seen.firstFile ??= parts.firstFile;
        out.push({
          role,
          content: parts.text,
          ...(parts.images.length ? { images: parts.images } : {}),
          ...(parts.files.length ? { files: parts.files } : {}),
        });
        continue;
      }
      const content = textOf(item.content, `${at}.content`);
      out.push({ role: role === 'developer' ? 'system' : role, content });
    } else if (type === 'function_call') {
      const id = str(item.call_id, `${at}.call_id`);
      const name = str(item.name, `${at}.name`);
      const call = {
        id,
        name,
        arguments: argumentsOf(str(item.arguments, `${at}.arguments`), `${at}.arguments`),
      };
      names.set(id, name);
      const last = out.at(-1);
      // OpenAI's chat form: an answer's text and its calls are one assistant message.
      if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
      else out.push({ role: 'assistant', content: '', toolCalls: [call] });
    } else if (type === 'function_call_output') {
      const id = str(item.call_id, `${at}.call_id`);
      const name = names.get(id);
      if (!name) throw bad(`${at}.call_id`, `'${id}' answers no function call of this conversation`);
      const output = typeof item.output === 'string' ? item.output : textOf(item.output, `${at}.output`);
      out.push({ role: 'tool', content: output, toolCallId: id, toolName: name });
    } else if (type === 'reasoning') {
      // A reasoning item of an earlier answer: nothing a model here reads.
    } else throw bad(`${at}.type`, `'${String(type)}' items are not supported`);
  }
  return out;
}

/** The request's function tools as client tools; other tool types are refused by name. */
export function clientToolsOf(tools: Item[] | null | undefined): ClientTool[] {
  return (tools ?? []).map((tool, i) => {
    if (tool.type !== 'function')
      throw bad(`tools[${i}].type`, `'${String(tool.type)}' tools are not supported: function tools only`);
    const name = str(tool.name, `tools[${i}].name`);
    const parameters = tool.parameters;
    if (
      parameters !== undefined &&
      parameters !== null &&
      (typeof parameters !== 'object' || Array.isArray(parameters))
    )
      throw bad(`tools[${i}].parameters`, 'must be a JSON schema object');
    return {
      type: 'function',
      name,
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      ...(parameters ? { parameters: parameters as Record<string, unknown> } : {}),
    };
  });
}

export function toolChoiceOf(choice: unknown): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  const c = (choice ?? {}) as Item;
  if (typeof choice === 'object' && c.type === 'function' && typeof c.name === 'string')
    return { name: c.name };
  throw bad('tool_choice', "must be 'auto', 'none', 'required' or {type: 'function', name}");
}

export function responseFormatOf(text: { format?: Item } | null | undefined): ResponseFormat | undefined {
  const format = text?.format;
  if (!format || format.type === 'text') return undefined;
  if (format.type !== 'json_schema')
    throw bad('text.format.type', "must be 'text' or 'json_schema' (json_object takes no schema to check)");
  const schema = format.schema;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema))
    throw bad('text.format.schema', 'must be a JSON schema object');
  return {
    schema: schema as Record<string, unknown>,
    ...(typeof format.name === 'string' ? { name: format.name } : {}),
  };
}

/** An assistant text as an output message item. */
export const messageItem = (text: string, id = newId('msg')): Item => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

/** A client tool call as an output item; its item id follows from the call's (streamed and stored alike). */
export const functionCallItem = (call: { id: string; name: string; arguments: unknown }): Item => ({
  type: 'function_call',
  id: `fc_${call.id}`,
  call_id: call.id,
  name: call.name,
  arguments: JSON.stringify(call.arguments ?? {}),
  status: 'completed',
});
