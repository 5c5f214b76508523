import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * scrypt with N=2^15, r=8, p=1: 32 MiB and ~85 ms per hash on the CI machine (OWASP's floor is
 * N=2^17 with r=8 at p=1 or N=2^15 at 32 MiB; login is rate-limited besides). Parameters travel in
 * the stored value, so raising them later leaves existing hashes verifiable.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Node's default maxmem (32 MiB) is exactly 128·N·r at N=2^15; leave room above it. */
const maxmemFor = (N: number, r: number) => 256 * N * r;

function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: maxmemFor(N, r) };
  // The async form runs on libuv's pool: a login never blocks the event loop for ~85 ms.
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS.N, PARAMS.r, PARAMS.p);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** Whether `password` matches `stored`; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const [N, R, P] = [Number(n), Number(r), Number(p)];
  // Bounds keep a tampered row from asking for gigabytes.
  if (!Number.isInteger(N) || N < 2 || N > 2 ** 20 || !Number.isInteger(R) || R < 1 || R > 32) return false;
  if (!Number.isInteger(P) || P < 1 || P > 16) return false;
  const expected = Buffer.from(hash, 'base64url');
  if (expected.length !== KEY_BYTES) return false;
  const actual = await derive(password, Buffer.from(salt, 'base64url'), N, R, P);
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of a real verification on a hash no password matches: an unknown email, or a
 * member with no password yet, answers as slowly as a wrong password.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(24).toString('base64url'));
  await verifyPassword(password, await dummy);
  return false;
}
