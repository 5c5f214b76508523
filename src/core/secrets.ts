import {
  createCipheriv,
  createDecipheriv,
  createHash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The master secret (ENCRYPTION_KEY, or a key generated into DATA_DIR on first start) and
 * the purpose-bound keys derived from it: one for data at rest, one for token signatures, …
 */
export class Secrets {
  private readonly master: Buffer;

  constructor(master: Buffer) {
    if (master.length < 32) throw new Error('ENCRYPTION_KEY must hold at least 32 bytes');
    this.master = master;
  }

  /** A 32-byte key for one purpose; different purposes never share a key. */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.master, Buffer.alloc(0), `platform:${purpose}`, 32));
  }

  /** AES-256-GCM box for secrets at rest (credentials, OAuth tokens). */
  box(purpose: string): SecretBox {
    return new SecretBox(this.derive(`box:${purpose}`));
  }
}

export class SecretBox {
  constructor(private readonly key: Buffer) {}

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('Unrecognised sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}

function parseKey(value: string): Buffer {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64,}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  return Buffer.from(trimmed, 'base64');
}

/**
 * ENCRYPTION_KEY if set; else `DATA_DIR/encryption.key`, created 0600 on first start, and an
 * existing one readable by others tightened to 0600 (it unseals every stored credential).
 */
export function loadSecrets(encryptionKey: string, dataDir: string): Secrets {
  if (encryptionKey) return new Secrets(parseKey(encryptionKey));
  if (dataDir === ':memory:') return new Secrets(randomBytes(32));
  const file = path.join(dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  } else {
    try {
      chmodSync(file, 0o600);
    } catch {
      // A key mounted read-only (a container secret) is the operator's to protect.
    }
  }
  return new Secrets(parseKey(readFileSync(file, 'utf8')));
}

/**
 * Whether a presented secret equals the expected one, in time that depends on neither: both are
 * hashed first, so their lengths are not revealed either.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
