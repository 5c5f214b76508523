import { describe, expect, it } from 'vitest';
import { headerSecrets, REDACTED, redactSecrets, safeCause, shorten } from './redact.js';

describe('redactSecrets', () => {
  it('replaces a known secret, its URL-encoded and base64 forms', () => {
    const secret = 'p@ss word/42';
    const text = `raw ${secret} url ${encodeURIComponent(secret)} b64 ${Buffer.from(secret).toString('base64')}`;
    const out = redactSecrets(text, [secret]);
    expect(out).not.toContain('p@ss');
    expect(out).not.toContain(encodeURIComponent(secret));
    expect(out).not.toContain(Buffer.from(secret).toString('base64'));
    expect(out.split(REDACTED)).toHaveLength(4);
  });

  it('removes key-shaped tokens nobody named, keeping their labels', () => {
    const out = redactSecrets(
      'Authorization: Bearer abcdef123456 and sk-proj-0123456789abcdef; api_key=zzzz9999',
    );
    expect(out).toBe(`Authorization: Bearer ${REDACTED} and ${REDACTED}; api_key=${REDACTED}`);
  });

  it('leaves ordinary messages alone and ignores tiny or missing secrets', () => {
    const text = "This model's maximum context length is 8192 tokens; you requested 9000 tokens";
    expect(redactSecrets(text, ['', 'a', null, undefined])).toBe(text);
  });

  it('redacts the longest secret first, so a secret that contains another leaves no tail', () => {
    expect(redactSecrets('key=abcd1234efgh', ['abcd', 'abcd1234efgh'])).not.toContain('1234efgh');
  });
});

describe('safeCause', () => {
  it('redacts before it shortens: no prefix of a secret is left at the cut', () => {
    const secret = 'S3CR3T-VALUE-THAT-IS-LONG';
    const out = safeCause(`${'x'.repeat(190)} ${secret}`, [secret]);
    expect(out.length).toBeLessThanOrEqual(200);
    expect(out).not.toContain('S3CR3T');
  });

  it('puts a body on one line', () => {
    expect(shorten('a\n  b\tc')).toBe('a b c');
  });
});

describe('headerSecrets', () => {
  it('takes Authorization (with and without its scheme) and X-API-Key, nothing else', () => {
    expect(
      headerSecrets({ Authorization: 'Bearer tok-1', 'x-api-key': 'k-2', accept: 'application/json' }),
    ).toEqual(['Bearer tok-1', 'tok-1', 'k-2']);
  });
});
