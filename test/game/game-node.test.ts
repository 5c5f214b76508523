import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { type Item, WorkflowEngine } from '../../src/modules/workflows/engine/index.js';
import { workflow } from '../../src/modules/workflows/engine/testing.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { connectAccount } from './connect.js';
import { FakeGamePlatform } from './fake-game-platform.js';

const MEMBER = '4611686018400000055';
const ID = '4611686018467000123';
const runContext = {
  executionId: 'exe_game_1',
  mode: 'webhook' as const,
  resumeUrlBase: 'http://127.0.0.1/webhook-waiting',
};

/** The gamePlatform node run by the engine against a platform (and its fake upstream), with a key credential. */
describe('gamePlatform node', () => {
  let p: TestPlatform;
  let fake: FakeGamePlatform;
  let engine: WorkflowEngine;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({
      dialect: 'sqlite',
      modules: [authModule, healthModule, gameModule],
      env: fake.env(),
    });
    await connectAccount(p, fake, MEMBER);
    const origin = await p.app.listen({ port: 0, host: '127.0.0.1' });
    engine = new WorkflowEngine(
      {
        now: () => new Date(),
        credential: async (ref) => {
          if (ref !== 'game-key') throw new Error(`Credential '${ref}' not found`);
          return { token: p.adminKey };
        },
        http: createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 }),
        env: { PUBLIC_URL: origin },
        expressionTimeoutMs: 1_000,
      },
      defaultNodeRegistry,
    );
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  const run = (parameters: Record<string, unknown>, bodies: Array<Record<string, unknown>>) => {
    const def = workflow(
      [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'g' } },
        { name: 'Game', type: 'gamePlatform', parameters: { credential: 'game-key', ...parameters } },
      ],
      [['Webhook', 'Game']],
    );
    const items = bodies.map((body) => ({ json: { headers: {}, params: {}, query: {}, body } }) as Item);
    return engine.run(def, { nodeName: 'Webhook', items }, runContext);
  };

  it('reads with typed path and query parameters, one call per item', async () => {
    const before = fake.apiRequests().length;
    const outcome = await run(
      {
        operation: 'getLinkedProfiles',
        pathParams: { membershipType: 3, membershipId: '={{ $json.body.id }}' },
        query: { getAllMemberships: true },
      },
      [{ id: ID }, { id: '4611686018467000999' }],
    );
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    const calls = fake.apiRequests().slice(before);
    expect(calls.map((c) => c.path)).toEqual([
      `/Platform/Destiny2/3/Profile/${ID}/LinkedProfiles/`,
      '/Platform/Destiny2/3/Profile/4611686018467000999/LinkedProfiles/',
    ]);
    expect(calls[0]?.query.get('getAllMemberships')).toBe('true');
    expect(outcome.lastItems[0]?.json).toMatchObject({ user: MEMBER });
  });

  it("takes an item action with the account's connection; a wrong body fails the node with the platform's 400", async () => {
    const body = {
      itemReferenceHash: 1363886209,
      stackSize: 1,
      transferToVault: true,
      itemId: ID,
      characterId: ID,
      membershipType: 3,
    };
    const ok = await run({ operation: 'transferItem', body }, [{}]);
    expect(ok.status, JSON.stringify(ok.state.error)).toBe('success');
    expect(JSON.parse(fake.apiRequests().at(-1)?.body ?? '')).toEqual(body);

    const before = fake.apiRequests().length;
    const bad = await run({ operation: 'transferItem', body: { ...body, stackSize: 'one' } }, [{}]);
    expect(bad.status).toBe('error');
    expect(JSON.stringify(bad.state.error)).toContain('transferItem');
    expect(fake.apiRequests().length).toBe(before);
  });
});
