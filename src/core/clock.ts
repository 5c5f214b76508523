/** Injectable time source, so tests can move the clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const isoNow = (clock: Clock): string => clock.now().toISOString();

/** The UTC day of a time, as YYYY-MM-DD. */
export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

/** Unix epoch seconds of the next UTC midnight after `date`. */
export function nextUtcMidnight(date: Date): number {
  const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return Math.floor(next / 1000);
}

export const addSeconds = (date: Date, seconds: number): Date => new Date(date.getTime() + seconds * 1000);
