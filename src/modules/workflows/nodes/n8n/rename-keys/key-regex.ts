import { RE2JS } from 're2js';
import { jsToRe2 } from '../../../../../core/regex/js-to-re2.js';
import { NodeOperationError } from '../../../engine/node-type.js';

/** Longest pattern Rename Keys accepts. */
const MAX_PATTERN = 1_000;

/**
 * A key-renaming regular expression (JavaScript syntax, as n8n takes it) run on RE2, in time linear in
 * the key: keys are renamed one by one over whole items, so a backtracking pattern could stall the
 * server. A pattern only a backtracking engine can run (backreferences, lookaround) is refused.
 */
export function keyRegex(
  pattern: string,
  caseInsensitive: boolean,
): (key: string, replacement: string) => string | null {
  if (pattern.length > MAX_PATTERN)
    throw new NodeOperationError(`The regular expression is longer than ${MAX_PATTERN} characters`);
  const flags = caseInsensitive ? 'i' : '';
  try {
    new RegExp(pattern, flags);
  } catch (err) {
    throw new NodeOperationError(
      `Invalid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`,
    );
  }
  const t = jsToRe2(pattern, flags);
  if (!t)
    throw new NodeOperationError(`The regular expression /${pattern}/ is not supported here`, {
      description:
        'Rename Keys matches without backtracking: backreferences and lookaround are not available',
    });
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(t.pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new NodeOperationError(`Invalid regular expression: ${(err as Error).message}`);
  }
  return (key, replacement) => {
    const m = compiled.matcher(key);
    if (!m.find()) return null;
    return compiled.matcher(key).replaceFirst(replacement);
  };
}
