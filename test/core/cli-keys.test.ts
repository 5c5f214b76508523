import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCliError, keysCommand } from '../../src/cli/keys.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

describe('keys command input checks', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(async () => {
    await p.close();
  });

  const run = async (args: string[]) => {
    const lines: string[] = [];
    try {
      const code = await keysCommand(p.ctx.apis.auth!, args, (l) => lines.push(l));
      return { code, out: lines.join('\n') };
    } catch (error) {
      return { code: 1, out: describeCliError(error) };
    }
  };
  const create = (extra: string[]) =>
    run([
      'create',
      '--type',
      'development',
      '--role',
      'Reader',
      '--services',
      'core',
      '--name',
      'c',
      ...extra,
    ]);

  it('creates a key with the settings the flags give', async () => {
    const expiresAt = new Date(p.clock.now().getTime() + 86_400_000).toISOString();
    const { code, out } = await create([
      '--daily-quota',
      '12',
      '--allowed-ips',
      '10.0.0.0/8',
      '--expires-at',
      expiresAt,
      '--json',
    ]);
    expect(code).toBe(0);
    const created = JSON.parse(out);
    expect(created).toMatchObject({
      dailyQuota: 12,
      allowedIps: ['10.0.0.0/8'],
      services: ['core'],
      expiresAt,
    });
    const res = await p.request({
      method: 'GET',
      url: '/v1/api-keys?limit=1',
      key: created.key,
      remoteAddress: '10.1.1.1',
    });
    expect(res.statusCode).toBe(403); // a Reader of core may not manage keys: the key is real and bounded
    expect(
      (await p.request({ method: 'GET', url: '/v1/usage', key: created.key, remoteAddress: '10.1.1.1' }))
        .statusCode,
    ).toBe(200);
  });

  it('refuses what the API would refuse, naming the setting, and stores nothing', async () => {
    const before = (await p.request({ method: 'GET', url: '/v1/api-keys' })).json().data.length;
    for (const [flags, field] of [
      [['--daily-quota', 'abc'], 'dailyQuota'],
      [['--daily-quota', '0'], 'dailyQuota'],
      [['--daily-quota', '1.5'], 'dailyQuota'],
      [['--expires-at', 'tomorrow'], 'expiresAt'],
      [['--allowed-ips', '999.1.1.1'], 'allowedIps'],
      [['--name', 'x'.repeat(101)], 'name'],
      [['--scopes', 'core:read'], 'scopes'],
    ] as const) {
      const { code, out } = await create([...flags]);
      expect(code, flags.join(' ')).not.toBe(0);
      expect(out, flags.join(' ')).toContain(field);
    }
    const rotate = await run(['rotate', 'key_nope', '--grace-seconds', '99999999']);
    expect(rotate.code).not.toBe(0);
    expect((await p.request({ method: 'GET', url: '/v1/api-keys' })).json().data.length).toBe(before);
  });

  it('a bad or missing --type, --role or --name is named, with the usage, exit 2', async () => {
    const bad = await run(['create', '--type', 'bogus', '--services', 'core', '--name', 'n']);
    expect(bad.code).toBe(2);
    expect(bad.out).toContain("--type must be development or production (got 'bogus')");
    expect(bad.out).toContain('--role must be one of Reader, Writer, Admin, Custom');
    expect(bad.out).not.toContain('--name is required');
    expect(bad.out).toContain('usage:');
    const unnamed = await run(['create', '--type', 'development', '--role', 'Reader']);
    expect(unnamed.code).toBe(2);
    expect(unnamed.out).toContain('--name is required');
  });

  it('rotation grace is bounded like the API (at most 7 days) and must be a whole number', async () => {
    const { out } = await create(['--json']);
    const { id } = JSON.parse(out);
    for (const grace of ['604801', '-1', 'soon']) {
      const res = await run(['rotate', id, `--grace-seconds=${grace}`]);
      expect(res.code, grace).not.toBe(0);
      expect(res.out).toContain('gracePeriodSeconds');
    }
    expect((await run(['rotate', id, '--grace-seconds', '604800'])).code).toBe(0);
  });

  it('unknown ids are reported, not silently accepted', async () => {
    const res = await run(['revoke', 'key_unknown']);
    expect(res.code).not.toBe(0);
    expect(res.out).toMatch(/API_KEY_NOT_FOUND/);
  });
});
