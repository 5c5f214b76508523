import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The tsc to run: TypeScript 7's native compiler (`@typescript/native`, 4–5× faster here, the same
 * JavaScript out), else TypeScript 5.9's, which stays installed as `typescript` for the tools that
 * import its API (openapi-typescript, scripts/game-endpoints.mjs). docs/decisions.md, "TypeScript 7".
 */
export function tscPath(root) {
  const require = createRequire(path.join(root, 'package.json'));
  for (const candidate of ['@typescript/native/package.json', 'typescript/package.json']) {
    try {
      const bin = path.join(path.dirname(require.resolve(candidate)), 'bin', 'tsc');
      // The native package's launcher needs its platform binary (an optional dependency).
      if (candidate.startsWith('@typescript/native') && !hasNativeBinary(require)) continue;
      return bin;
    } catch {
      // not installed: the next one
    }
  }
  return null;
}

function hasNativeBinary(require) {
  try {
    const nativeRequire = createRequire(require.resolve('@typescript/native/package.json'));
    nativeRequire.resolve(`@typescript/typescript-${process.platform}-${process.arch}/package.json`);
    return true;
  } catch {
    return false;
  }
}
