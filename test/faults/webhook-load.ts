import { sleep } from '../workflows/process/processes.js';

export interface Answer {
  n: number;
  /** 0: no answer (connection cut, or the client's own time limit). */
  status: number;
  retryAfter: string | null;
  code: string | null;
  dependency: string | null;
  startedAt: number;
  ms: number;
}

/**
 * webhook (answers when received) → GET a slow downstream → Set `{n}`: executions are running when
 * the fault comes, and each stored one says which call made it.
 */
export function acceptedFlow(name: string, path: string, downstreamUrl: string) {
  return {
    name,
    nodes: [
      {
        name: 'Webhook',
        type: 'webhook',
        position: [0, 0],
        parameters: { path, responseMode: 'onReceived' },
      },
      {
        name: 'Call',
        type: 'httpRequest',
        position: [200, 0],
        parameters: { method: 'GET', url: `${downstreamUrl}/call`, query: { n: '={{ $json.body.n }}' } },
      },
      { name: 'Set', type: 'set', position: [400, 0], parameters: { values: { n: '={{ $json.n }}' } } },
    ],
    connections: {
      Webhook: { main: [[{ node: 'Call', type: 'main', index: 0 }]] },
      Call: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
    },
  };
}

/**
 * Callers POSTing `{n}` to webhooks, `concurrency` at a time, each `n` once, until stopped; every
 * answer is recorded with its time. A caller waits at most `clientLimitMs` (then status 0).
 */
export function webhookLoad(urls: string[], path: string, concurrency: number, clientLimitMs = 30_000) {
  const answers: Answer[] = [];
  let next = 0;
  let running = true;
  const loop = async (lane: number) => {
    while (running) {
      const n = next++;
      const base = urls[(n + lane) % urls.length] as string;
      const startedAt = Date.now();
      const answer: Answer = {
        n,
        status: 0,
        retryAfter: null,
        code: null,
        dependency: null,
        startedAt,
        ms: 0,
      };
      try {
        const res = await fetch(`${base}/webhook/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ n }),
          signal: AbortSignal.timeout(clientLimitMs),
        });
        answer.status = res.status;
        answer.retryAfter = res.headers.get('retry-after');
        const text = await res.text();
        if (res.status >= 400) {
          const body = JSON.parse(text) as { code?: string; details?: { dependency?: string } };
          answer.code = body.code ?? null;
          answer.dependency = body.details?.dependency ?? null;
        }
      } catch {
        answer.status = 0;
      }
      answer.ms = Date.now() - startedAt;
      answers.push(answer);
      // A 503 says when to come back; a load generator that honoured it fully would idle the test.
      if (answer.status !== 200) await sleep(100);
    }
  };
  const lanes = Array.from({ length: concurrency }, (_, i) => loop(i));
  return {
    answers,
    /** Waits until `check` holds on the answers so far (polled every 50 ms), or fails after `timeoutMs`. */
    async until(check: (answers: Answer[]) => boolean, timeoutMs: number, what: string): Promise<number> {
      const end = Date.now() + timeoutMs;
      while (!check(answers)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(50);
      }
      return Date.now();
    },
    async stop(): Promise<Answer[]> {
      running = false;
      await Promise.all(lanes);
      return answers;
    },
  };
}

/** Calls of n that were answered 2xx, and their count of stored executions. */
export function tally(answers: Answer[], stored: number[]) {
  const counts = new Map<number, number>();
  for (const n of stored) counts.set(n, (counts.get(n) ?? 0) + 1);
  const accepted = answers.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.n);
  const sent = new Set(answers.map((a) => a.n));
  return {
    accepted: accepted.length,
    lost: accepted.filter((n) => (counts.get(n) ?? 0) === 0),
    duplicated: [...counts].filter(([, c]) => c > 1).map(([n]) => n),
    unknown: [...counts.keys()].filter((n) => !sent.has(n)),
  };
}
