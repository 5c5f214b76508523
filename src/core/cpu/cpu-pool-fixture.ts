/** Tasks for cpu-pool.test.ts: a quick one, a runaway, a memory hog, and one that throws. */
export function double(n: number): number {
  return n * 2;
}

export function spin(ms: number): number {
  const until = Date.now() + ms;
  let n = 0;
  while (Date.now() < until) n++;
  return n;
}

export function hog(): number {
  const kept: number[][] = [];
  for (;;) kept.push(new Array(1_000_000).fill(kept.length));
}

export function fail(message: string): never {
  throw new Error(message);
}

export function floats(n: number): { values: Float32Array; n: number } {
  return { values: new Float32Array(n).fill(1.5), n };
}
