/** Money is held in integer minor units; JSON shows numbers with two decimals. */
export const toMinor = (amount: number): number => Math.round(amount * 100);
export const fromMinor = (minor: number): number => Math.round(minor) / 100;

/**
 * A non-negative amount with at most two decimals and nine integer digits, judged by the number's
 * shortest decimal form (what JSON sent): 0.29 passes, 0.285, 1e20 and 1e308 do not.
 */
export const isMoneyAmount = (amount: number): boolean => /^\d{1,9}(\.\d{1,2})?$/.test(String(amount));
