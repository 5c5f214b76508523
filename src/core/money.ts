/** Money is held in integer minor units; JSON shows numbers with two decimals. */
export const toMinor = (amount: number): number => Math.round(amount * 100);
export const fromMinor = (minor: number): number => Math.round(minor) / 100;
