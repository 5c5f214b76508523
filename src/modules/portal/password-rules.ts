import commonList from './data/common-passwords.json' with { type: 'json' };

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

const COMMON: ReadonlySet<string> = new Set(commonList as string[]);

/** Digits and symbols people put for letters (p@ssw0rd). */
const LEET: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '8': 'b',
  '@': 'a',
  $: 's',
  '!': 'i',
};
const unleet = (text: string) => text.replace(/[0134578@$!]/g, (c) => LEET[c] ?? c);

/** Keyboard rows and runs a password is often a stretch of. */
const RUNS = [
  'abcdefghijklmnopqrstuvwxyz',
  '0123456789',
  'qwertyuiopasdfghjklzxcvbnm',
  'qwertzuiopasdfghjklyxcvbnm',
  'azertyuiopqsdfghjklmwxcvbn',
  '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p',
];

/** The shortest unit the text repeats (`abcabcabc` → `abc`); the text itself if none. */
function repeatedUnit(text: string): string {
  for (let size = 1; size <= text.length / 2; size++) {
    if (text.length % size !== 0) continue;
    const unit = text.slice(0, size);
    if (unit.repeat(text.length / size) === text) return unit;
  }
  return text;
}

function isRun(text: string): boolean {
  if (text.length < 4) return false;
  return RUNS.some((run) => {
    const twice = run + run;
    const reversed = [...twice].reverse().join('');
    return twice.includes(text) || reversed.includes(text);
  });
}

/** Whether a lower-cased candidate is a listed password, in its plain or de-leeted form, or repeated. */
function isCommon(candidate: string): boolean {
  if (candidate.length === 0) return false;
  for (const form of new Set([candidate, unleet(candidate)])) {
    const unit = repeatedUnit(form);
    if (COMMON.has(form) || COMMON.has(unit) || isRun(unit)) return true;
  }
  return false;
}

/**
 * What is wrong with a new password, in words; null when it passes. Length counts characters, not
 * bytes. Refused: a listed common password, or one built from it by capitals, leetspeak, digits or
 * symbols around it, or repetition (`Password2024!`, `p@ssw0rdp@ssw0rd`); a keyboard or alphabet run;
 * fewer than five different characters; anything containing the email or its name part.
 */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `Password must be at least ${PASSWORD_MIN} characters long`;
  if (length > PASSWORD_MAX) return `Password must be at most ${PASSWORD_MAX} characters long`;
  const lower = password.toLowerCase();
  const address = email.trim().toLowerCase();
  const local = address.split('@')[0] ?? '';
  const compact = lower.replace(/[^\p{L}\p{N}]/gu, '');
  if (lower.includes(address) || (local.length >= 3 && (lower.includes(local) || compact.includes(local))))
    return 'Password must not contain your email address or its name part';
  if (new Set(lower).size < 5) return 'Password uses too few different characters; choose a longer phrase';
  // The core people dress up with digits and symbols at either end: `!!Summer2024` → `summer`.
  const core = lower.replace(/^[^\p{L}]+/u, '').replace(/[^\p{L}]+$/u, '');
  const withoutSpaces = lower.replace(/\s+/g, '');
  if ([lower, withoutSpaces, core, core.replace(/\s+/g, '')].some(isCommon))
    return 'Password is too common: it is, or is built from, a password found in breach lists. Choose a phrase of several unrelated words';
  return null;
}
