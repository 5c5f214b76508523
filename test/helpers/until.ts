/**
 * Polls `probe` until it gives a value other than undefined or false, and returns it; fails after
 * `timeoutMs` naming what it waited for. Tests wait for conditions, never for a fixed time.
 */
export async function until<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what = 'a condition',
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
