/**
 * Issue 37, the game platform's endpoints: BENCH_GAME_CALLS (1,000) mixed calls (reads by GET,
 * a search by POST, the manifest) paced at BENCH_GAME_RATE per second across two platform
 * processes sharing one Redis (the shared outbound throttle, GAME_RATE_PER_SECOND 25), against a
 * fake upstream started here. Reports the largest count of upstream requests in any 1 s window
 * (goal ≤ 25) and the p99 the platform adds over the same calls sent to the fake directly
 * (goal ≤ 5 ms). Run alone: `BENCH_ONLY=game node bench/run.js`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, start, stop, waitHealthy } from '../children.js';
import { fmt, percentile, sleep } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CALLS = Number(process.env.BENCH_GAME_CALLS ?? 1000);
const RATE = Number(process.env.BENCH_GAME_RATE ?? 20);
const API_KEY = 'bench-game-key';

export default [];

/** The upstream's envelope around what it received; arrival times kept for the rate. */
function fakeUpstream() {
  const arrivals = [];
  const server = createServer((req, res) => {
    arrivals.push(performance.now());
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const ok = req.headers['x-api-key'] === API_KEY;
      const Response = req.url.includes('/Manifest/')
        ? { version: '1' }
        : { path: req.url, size: body.length };
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          Response,
          ErrorCode: ok ? 1 : 2102,
          ThrottleSeconds: 0,
          ErrorStatus: 'Success',
          Message: 'Ok',
          MessageData: {},
        }),
      );
    });
  });
  return { server, arrivals };
}

/** The mix: the upstream path and the platform path of each kind of call. */
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

/** CALLS calls paced at RATE/s, round-robin over `bases`; each call's latency in ms. */
async function paced(bases, prefix, headers) {
  const latencies = [];
  const pending = [];
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const [method, p, body] = MIX[i % MIX.length];
    const url = `${bases[i % bases.length]}${prefix}${p}`;
    pending.push(
      (async () => {
        const t0 = performance.now();
        const res = await fetch(url, {
          method,
          headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        await res.text();
        if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status}`);
        latencies.push(performance.now() - t0);
      })(),
    );
  }
  await Promise.all(pending);
  return latencies.sort((a, b) => a - b);
}

/** The largest number of arrivals within any 1,000 ms window. */
function peakPerSecond(arrivals) {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let peak = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while (sorted[to] - sorted[from] >= 1000) from++;
    peak = Math.max(peak, to - from + 1);
  }
  return peak;
}

export async function report() {
  const fake = fakeUpstream();
  await new Promise((r) => fake.server.listen(0, '127.0.0.1', r));
  const upstream = `http://127.0.0.1:${fake.server.address().port}`;
  const key = generateKey('production');
  const prefix = `bench-game-${process.pid}:`;
  const dirs = [];
  const children = [];
  try {
    // Direct calls first: the fake's own latency for the same mix and pacing.
    const direct = await paced([upstream], '/Platform', { 'x-api-key': API_KEY });
    fake.arrivals.length = 0;
    const bases = [];
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(path.join(tmpdir(), 'platform-bench-game-'));
      dirs.push(dir);
      const env = platformEnv(dir, key, {
        REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
        REDIS_PREFIX: prefix,
        GAME_API_URL: `${upstream}/Platform`,
        GAME_API_KEY: API_KEY,
        GAME_RATE_PER_SECOND: '25',
        OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
      });
      const child = await start(path.join(here, '..', 'platform-server.js'), env, PLATFORM_NODE_FLAGS);
      children.push(child.child);
      const base = `http://127.0.0.1:${child.port}`;
      await waitHealthy(base);
      bases.push(base);
    }
    // Warm-up (route compilation, connections), not counted.
    await Promise.all(
      bases.map((b) =>
        fetch(`${b}/game/Destiny2/Milestones/`, { headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    await sleep(1100);
    fake.arrivals.length = 0;
    const through = await paced(bases, '/game', { authorization: `Bearer ${key}` });
    const peak = peakPerSecond(fake.arrivals);
    const added = percentile(through, 0.99) - percentile(direct, 0.99);
    return [
      '',
      `game platform: ${CALLS} mixed calls at ${RATE}/s over two processes sharing Redis (throttle 25/s)`,
      `  upstream requests in any 1 s window: max ${peak} (goal ≤ 25); upstream requests ${fake.arrivals.length}`,
      `  p50 ${fmt(percentile(through, 0.5), 1)} ms, p99 ${fmt(percentile(through, 0.99), 1)} ms through the platform; p99 ${fmt(percentile(direct, 0.99), 1)} ms direct`,
      `  added p99 ${fmt(added, 1)} ms (goal ≤ 5 ms)`,
    ];
  } finally {
    for (const child of children) await stop(child);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    fake.server.close();
  }
}
