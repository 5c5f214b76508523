// A bare node:http reverse proxy, the yardstick of the gateway bench: it forwards each request to
// UPSTREAM_URL as it is and streams the answer back, with a keep-alive pool and nothing else (no
// auth, no validation, no logging). Runs as a child process (forked by bench/scenarios/llm.js) and
// reports its port over IPC.
import { Agent, createServer, request } from 'node:http';

const upstream = new URL(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:1');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const out = request(
    {
      agent,
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: upstream.host },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
