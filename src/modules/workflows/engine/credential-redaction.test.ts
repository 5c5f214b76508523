import { describe, expect, it } from 'vitest';
import { credentialSecrets, withoutSecrets, withoutSecretsInErrorItems } from './credential-redaction.js';
import { NodeOperationError } from './node-type.js';

describe('credentialSecrets: what a node error may not show', () => {
  it('every value but where-to fields, switches and ports; a URL keeps its password and query secret', () => {
    const secrets = credentialSecrets({
      host: 'db.internal',
      port: '5432',
      database: 'shop',
      user: 'app',
      password: 'hunter2-pass',
      ssl: 'false',
      qdrantUrl: 'https://admin:s3cr3t-pw@qdrant.example.com/?api-key=query-key-1',
      resourceName: 'contoso',
      apiKey: 'sk-live-123456',
    });
    expect(secrets).toEqual(
      expect.arrayContaining([
        'app',
        'hunter2-pass',
        's3cr3t-pw',
        'query-key-1',
        'sk-live-123456',
        'app:hunter2-pass',
      ]),
    );
    for (const plain of ['db.internal', '5432', 'shop', 'false', 'contoso', 'qdrant.example.com'])
      expect(
        secrets.some((s) => s.includes(plain) && !s.includes('@')),
        plain,
      ).toBe(false);
  });

  it('values inside a custom auth JSON are secrets too', () => {
    const secrets = credentialSecrets({ json: JSON.stringify({ headers: { 'X-Key': 'inner-secret-1' } }) });
    expect(secrets).toContain('inner-secret-1');
  });
});

describe('withoutSecrets: a node error without the values it was handed', () => {
  it('redacts values (and their base64) from message and description, but not words shaped like keys', () => {
    const error = new NodeOperationError('OpenAI refused: Incorrect API key provided: sk-live-123456', {
      description: `auth ${Buffer.from('sk-live-123456').toString('base64')}; Daily token budget exceeded`,
    });
    const clean = withoutSecrets(error, ['sk-live-123456'], { shapes: false }) as NodeOperationError;
    expect(clean).toBeInstanceOf(NodeOperationError);
    expect(clean.message).toBe('OpenAI refused: Incorrect API key provided: [redacted]');
    expect(clean.description).toBe('auth [redacted]; Daily token budget exceeded');
  });

  it('leaves an error without any of the values as it is', () => {
    const error = new Error('connect ECONNREFUSED db.internal:5432');
    expect(withoutSecrets(error, ['hunter2-pass'], { shapes: false })).toBe(error);
  });
});

describe('withoutSecretsInErrorItems: error items a node made itself', () => {
  it("redacts the values in an item's error and its message, and leaves other items alone", () => {
    const out = withoutSecretsInErrorItems(
      [
        [
          { json: { error: 'bad key sk-live-123456' } },
          {
            json: {
              message: 'sk-live-123456 refused',
              error: { message: 'x sk-live-123456', description: 'sk-live-123456' },
            },
          },
          { json: { output: 'echo sk-live-123456' } },
        ],
      ],
      ['sk-live-123456'],
    );
    expect(out[0]?.[0]?.json).toEqual({ error: 'bad key [redacted]' });
    expect(out[0]?.[1]?.json).toEqual({
      message: '[redacted] refused',
      error: { message: 'x [redacted]', description: '[redacted]' },
    });
    expect(out[0]?.[2]?.json).toEqual({ output: 'echo sk-live-123456' });
  });
});

describe('credentialSecrets: the review’s cases', () => {
  it('a token as a URL’s user name, a stray % in a password, a four-digit PIN, OAuth token data', () => {
    expect(credentialSecrets({ baseUrl: 'https://tok-en-123@api.example.com' })).toContain('tok-en-123');
    expect(() => credentialSecrets({ baseUrl: 'https://u:p%ss@h.example.com/' })).not.toThrow();
    expect(credentialSecrets({ pin: '1234', port: '5432' })).toEqual(['1234']);
    const token = JSON.stringify({ access_token: 'access-abc-1', refresh_token: 'refresh-abc-1' });
    expect(credentialSecrets({ oauthTokenData: token })).toEqual(
      expect.arrayContaining(['access-abc-1', 'refresh-abc-1']),
    );
  });
});
