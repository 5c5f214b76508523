import {
  parseUserRegex,
  type UserRegex,
  UserRegexError,
  userRegexTest,
} from '../../../../../core/regex/user-regex.js';
import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * The `regex`/`notRegex` operators of n8n's filter conditions. The pattern is n8n's (`/body/flags` or a
 * bare body; ignoring case adds `i`) and is matched through the platform's user-regex module: linear
 * time where RE2 can express it, else on a worker thread stopped at REGEX_TIMEOUT_MS, never on the
 * event loop. A refusal or a timeout fails the node, naming the condition and the item.
 */
export async function filterRegexTest(
  pattern: string,
  input: string,
  ignoreCase: boolean,
  at: { index: number; itemIndex: number },
): Promise<boolean> {
  let re: UserRegex | undefined;
  try {
    re = parseUserRegex(pattern, ignoreCase);
    return await userRegexTest(re, input);
  } catch (err) {
    if (!(err instanceof UserRegexError)) throw err;
    const where = `[condition ${at.index}, item ${at.itemIndex}]`;
    if (err.reason === 'syntax' || err.reason === 'too-long') {
      throw new NodeOperationError(`${err.message} ${where}`);
    }
    throw new NodeOperationError(
      `${err.message.replace('The regular expression', `The regular expression ${re}`)} ${where}`,
      {
        description:
          'Simplify the expression: nested repetition such as (a+)+ with a backreference or lookaround can take exponential time.',
      },
    );
  }
}
