/**
 * Issue 37: where one game call's time goes inside the platform. Starts GAME_PHASES_APPS platform
 * apps (default 2) in this process, sharing one Redis (so their outbound throttles share the 25/s
 * slots), a fake upstream, and sends the game bench's mix at GAME_PHASES_RATE per second
 * (default 20; 0: one call at a time) for GAME_PHASES_CALLS calls (default 600). Each request's
 * phases are timed with hrtime marks (methods wrapped here, no change to the platform's code) and
 * its Redis commands counted; the upstream counts its TCP connections. Built code: `npm run build`
 * first. `node bench/game-phases.js`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../dist/app.js';
import { parseConfig } from '../dist/config.js';
import { Limiter } from '../dist/core/limits/limiter.js';
import { PlatformAuthenticator } from '../dist/modules/auth/authenticator.js';
import { generateKey } from '../dist/modules/auth/key-format.js';
import { ConnectionCache } from '../dist/modules/game/connection-cache.js';
import { GameClient } from '../dist/modules/game/game-client.js';
import { GameService } from '../dist/modules/game/game-service.js';
import { OutboundThrottle } from '../dist/modules/game/outbound-throttle.js';
import { RedisSlots } from '../dist/modules/game/redis-slots.js';
import { GameStore } from '../dist/modules/game/store.js';
import { platformEnv } from './children.js';
import { fmt, percentile, sleep } from './kit.js';

const CALLS = Number(process.env.GAME_PHASES_CALLS ?? 600);
const RATE = Number(process.env.GAME_PHASES_RATE ?? 20);
const APPS = Number(process.env.GAME_PHASES_APPS ?? 2);
const API_KEY = 'bench-game-key';
const als = new AsyncLocalStorage();
const now = () => performance.now();

/** Times an async method of a prototype into the current request's `phases[name]` (summed). */
function timeMethod(proto, method, name, onDone) {
  const original = proto[method];
  proto[method] = function (...args) {
    const store = als.getStore();
    const t = now();
    const result = original.apply(this, args);
    const done = (value) => {
      if (store) store.phases[name] = (store.phases[name] ?? 0) + (now() - t);
      onDone?.(store, value);
      return value;
    };
    if (result instanceof Promise)
      return result.then(done, (e) => {
        done();
        throw e;
      });
    return done(result);
  };
}

const background = { redis: 0 };
timeMethod(Limiter.prototype, 'check', 'auth limits (Redis)');
timeMethod(ConnectionCache.prototype, 'connectionOf', 'game connection');
timeMethod(OutboundThrottle.prototype, 'acquire', 'throttle acquire');
timeMethod(GameClient.prototype, 'send', 'upstream exchange');
timeMethod(GameService.prototype, 'endpoint', 'service');
const slotsCall = RedisSlots.prototype.call;
RedisSlots.prototype.call = function (need) {
  const store = als.getStore();
  if (store && need === 1) {
    store.slotTakes += 1;
    store.flags.add('slot taken on the path');
  }
  return slotsCall.call(this, need);
};
const realFetch = globalThis.fetch;
/** Marks the current request with `flag` when `proto[method]` runs inside it. */
function flagMethod(proto, method, flag) {
  const original = proto[method];
  proto[method] = function (...args) {
    const store = als.getStore();
    if (store) store.flags.add(flag);
    return original.apply(this, args);
  };
}
flagMethod(GameStore.prototype, 'connectionOf', 'connection from DB');
flagMethod(PlatformAuthenticator.prototype, 'authenticate', 'key verified in full');
const pump = OutboundThrottle.prototype.pump;
OutboundThrottle.prototype.pump = function (...args) {
  als.getStore()?.flags.add('queued for a slot');
  return pump.apply(this, args);
};

function countRedis(redis) {
  const send = redis.sendCommand;
  redis.sendCommand = function (command, ...rest) {
    const store = als.getStore();
    if (store) store.redis.push(command.name);
    else background.redis += 1;
    return send.call(this, command, ...rest);
  };
}

function fakeUpstream() {
  const stats = { connections: 0, arrivals: 0 };
  const server = createServer((req, res) => {
    stats.arrivals += 1;
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const Response = req.url.includes('/Manifest/')
        ? { version: '1' }
        : { path: req.url, size: body.length };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          Response,
          ErrorCode: 1,
          ThrottleSeconds: 0,
          ErrorStatus: 'Success',
          Message: 'Ok',
          MessageData: {},
        }),
      );
    });
  });
  server.on('connection', () => {
    stats.connections += 1;
  });
  return { server, stats };
}

const MIX = [
  ['GET', '/Destiny2/Milestones/'],
  ['GET', '/Destiny2/3/Profile/4611686018467000123/LinkedProfiles/?getAllMemberships=true'],
  ['GET', '/GroupV2/881267/Members/?nameSearch=ab'],
  ['GET', '/Destiny2/Stats/PostGameCarnageReport/12345678901/'],
  [
    'POST',
    '/Destiny2/SearchDestinyPlayerByBungieName/-1/',
    { displayName: 'Guardian', displayNameCode: 1234 },
  ],
  ['GET', '/User/GetMembershipsById/4611686018467000123/3/'],
];

const records = [];

async function main() {
  const fake = fakeUpstream();
  await new Promise((r) => fake.server.listen(0, '127.0.0.1', r));
  const upstream = `http://127.0.0.1:${fake.server.address().port}`;
  const key = generateKey('production');
  const prefix = `bench-game-phases-${process.pid}:`;
  const apps = [];
  const dirs = [];
  for (let i = 0; i < APPS; i++) {
    const dir = mkdtempSync(path.join(tmpdir(), 'platform-game-phases-'));
    dirs.push(dir);
    const env = platformEnv(dir, key, {
      REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: prefix,
      GAME_API_URL: `${upstream}/Platform`,
      GAME_API_KEY: API_KEY,
      GAME_RATE_PER_SECOND: process.env.GAME_PHASES_LIMIT ?? '25',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
    });
    const { app, ctx } = await buildApp({ config: parseConfig({ ...process.env, ...env }), logger: false });
    await ctx.apis.auth.bootstrap();
    countRedis(ctx.redis);
    app.server.prependListener('request', (req, res) => {
      const store = { t0: now(), phases: {}, redis: [], slotTakes: 0, flags: new Set() };
      als.enterWith(store);
      res.once('finish', () => {
        store.total = now() - store.t0;
        if (req.url.startsWith('/game/')) records.push(store);
      });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    apps.push({ app, base: `http://127.0.0.1:${app.server.address().port}` });
  }
  const headers = { authorization: `Bearer ${key}` };
  for (const { base } of apps)
    await realFetch(`${base}/game/Destiny2/Milestones/`, { headers }).then((r) => r.text());
  await sleep(1100);
  records.length = 0;
  const connBefore = fake.stats.connections;
  const bgBefore = background.redis;
  const cpu0 = process.cpuUsage();
  const client = [];
  const started = now();
  const pending = [];
  for (let i = 0; i < CALLS; i++) {
    if (RATE > 0) {
      const wait = started + (i * 1000) / RATE - now();
      if (wait > 0) await sleep(wait);
    }
    const [method, p, body] = MIX[i % MIX.length];
    const url = `${apps[i % apps.length].base}/game${p}`;
    const one = (async () => {
      const t = now();
      const res = await realFetch(url, {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status}`);
      client.push(now() - t);
    })();
    if (RATE > 0) pending.push(one);
    else await one;
  }
  await Promise.all(pending);
  const elapsed = now() - started;
  const cpu = process.cpuUsage(cpu0);
  const names = [
    'auth limits (Redis)',
    'service',
    'game connection',
    'throttle acquire',
    'upstream exchange',
  ];
  const rows = [];
  const stat = (label, values) => {
    const s = values.sort((a, b) => a - b);
    rows.push(
      `  ${label.padEnd(34)} p50 ${fmt(percentile(s, 0.5), 2).padStart(8)}  p90 ${fmt(percentile(s, 0.9), 2).padStart(8)}  p99 ${fmt(percentile(s, 0.99), 2).padStart(8)}  max ${fmt(s.at(-1), 2).padStart(8)} ms`,
    );
  };
  stat('client round trip', client);
  stat(
    'server: request to finish',
    records.map((r) => r.total),
  );
  for (const n of names)
    stat(
      n,
      records.map((r) => r.phases[n] ?? 0),
    );
  stat(
    'before service (routing, hooks)',
    records.map((r) => (r.phases.service === undefined ? 0 : r.total - r.phases.service)),
  );
  stat(
    'service minus upstream exchange',
    records.map(
      (r) =>
        (r.phases.service ?? 0) - (r.phases['upstream exchange'] ?? 0) - (r.phases['throttle acquire'] ?? 0),
    ),
  );
  const redisOnPath = records.reduce((a, r) => a + r.redis.length, 0);
  const commands = {};
  for (const r of records) for (const c of r.redis) commands[c] = (commands[c] ?? 0) + 1;
  const takes = records.reduce((a, r) => a + r.slotTakes, 0);
  const flagCount = (list) => {
    const counts = {};
    for (const r of list) for (const f of r.flags) counts[f] = (counts[f] ?? 0) + 1;
    return JSON.stringify(counts);
  };
  const slowest = [...records]
    .sort((a, b) => b.total - a.total)
    .slice(0, Math.max(1, Math.ceil(records.length / 50)));
  console.log(
    [
      `game phases: ${records.length} calls, ${RATE > 0 ? `${RATE}/s` : 'one at a time'}, ${APPS} app(s) in one process sharing Redis`,
      ...rows,
      `  Redis commands on a call's path: ${fmt(redisOnPath / records.length, 2)} per call ${JSON.stringify(commands)}; off the path ${background.redis - bgBefore}`,
      `  slot takes waiting for Redis on the path: ${takes} of ${records.length} calls`,
      `  flags, all calls: ${flagCount(records)}`,
      `  flags, slowest 2% (${slowest.length}): ${flagCount(slowest)}`,
      `  slowest 2%, mean per phase: ${JSON.stringify(Object.fromEntries(names.map((n) => [n, Number((slowest.reduce((a, r) => a + (r.phases[n] ?? 0), 0) / slowest.length).toFixed(2))])))}`,
      `  upstream TCP connections opened during the run: ${fake.stats.connections - connBefore}`,
      `  process CPU per call (client, fake and platform together): ${fmt((cpu.user + cpu.system) / 1000 / records.length, 2)} ms; wall ${fmt(elapsed / 1000, 1)} s`,
    ].join('\n'),
  );
  // The same calls from the same client straight to the fake: what the platform adds, in CPU.
  const direct = [];
  const cpuDirect0 = process.cpuUsage();
  const startedDirect = now();
  const pendingDirect = [];
  for (let i = 0; i < CALLS; i++) {
    if (RATE > 0) {
      const wait = startedDirect + (i * 1000) / RATE - now();
      if (wait > 0) await sleep(wait);
    }
    const [method, p, body] = MIX[i % MIX.length];
    const one = (async () => {
      const t = now();
      const res = await realFetch(`${upstream}/Platform${p}`, {
        method,
        headers: { 'x-api-key': API_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      await res.text();
      direct.push(now() - t);
    })();
    if (RATE > 0) pendingDirect.push(one);
    else await one;
  }
  await Promise.all(pendingDirect);
  const cpuDirect = process.cpuUsage(cpuDirect0);
  const perCall = (c) => (c.user + c.system) / 1000 / CALLS;
  direct.sort((a, b) => a - b);
  console.log(
    `  direct to the fake: p50 ${fmt(percentile(direct, 0.5), 2)} p99 ${fmt(percentile(direct, 0.99), 2)} ms, CPU per call ${fmt(perCall(cpuDirect), 2)} ms; ` +
      `the platform's own CPU per call ≈ ${fmt(perCall(cpu) - perCall(cpuDirect), 2)} ms`,
  );
  for (const { app } of apps) await app.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  fake.server.close();
}

await main();
