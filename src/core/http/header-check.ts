import { validateHeaderName, validateHeaderValue } from 'node:http';

/** True if Node would write this header: a token name and a value without CR, LF or other controls. */
export function isValidHeader(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}
