import { AppError } from '../../core/errors.js';
import { schemaProblem, validatorOf } from './tool-specs.js';

/** The JSON schema a turn's answer must follow (OpenAI's `response_format: {type: 'json_schema'}`). */
export interface ResponseFormat {
  name?: string;
  schema: Record<string, unknown>;
}

/** Refuses a response format whose schema could not be checked safely (400 naming the field). */
export function checkResponseFormat(format: ResponseFormat, field: string): void {
  const problem = schemaProblem(format.schema);
  if (problem)
    throw new AppError('VALIDATION_ERROR', `${field}.schema ${problem}`, {
      fields: [{ field: `${field}.schema`, message: problem }],
    });
}

/** The answer parsed and checked against the schema: its value, or why it does not follow it. */
export function structuredAnswer(
  content: string,
  format: ResponseFormat,
): { ok: true; value: unknown } | { ok: false; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(stripFence(content));
  } catch {
    return { ok: false, problems: ['the answer is not JSON'] };
  }
  const validate = validatorOf(format.schema);
  if (validate(value)) return { ok: true, value };
  return {
    ok: false,
    problems: (validate.errors ?? []).map(
      (e) => `${e.instancePath || '(answer)'} ${e.message ?? 'is invalid'}`,
    ),
  };
}

/** Models often wrap JSON in a Markdown code fence; the fence is not the answer. */
function stripFence(text: string): string {
  const match = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return match ? (match[1] as string) : text;
}

/** What the model is told when its answer did not validate (the one repair attempt). */
export function repairPrompt(problems: string[]): string {
  return `Your answer does not follow the required JSON schema: ${problems.slice(0, 10).join('; ')}. Answer again with only a JSON value that follows the schema.`;
}

export const unsatisfiable = (problems: string[]): AppError =>
  new AppError(
    'UNPROCESSABLE',
    "The model's answer did not follow the response format, even after one repair",
    {
      problems: problems.slice(0, 10),
    },
  );
