// The least a gateway that reads what it relays can do, the second yardstick of the gateway bench:
// it reads the client's whole body and parses it, posts it to UPSTREAM_URL on a keep-alive pool,
// reads and parses the whole answer (where a gateway finds the usage), and sends it back with a
// content length. No auth, limits, validation or log. Against the bare proxy (which pipes bytes it
// never reads) it shows what reading and parsing both bodies costs; against the gateway, what the
// gateway's own work costs. Runs as a child process (forked by bench/scenarios/llm.js).
import { Agent, createServer, request } from 'node:http';

const upstream = new URL(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:1');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function readAll(stream, then) {
  const chunks = [];
  stream.on('data', (chunk) => chunks.push(chunk));
  stream.on('end', () => then(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
}

const server = createServer((req, res) => {
  readAll(req, (body) => {
    JSON.parse(body.toString('utf8'));
    const out = request(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        method: 'POST',
        path: req.url,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (answer) =>
        readAll(answer, (bytes) => {
          // A streamed answer is relayed whole here (the fake sends it in one write): this is a floor.
          if (!String(answer.headers['content-type']).startsWith('text/event-stream'))
            JSON.parse(bytes.toString('utf8'));
          res.writeHead(answer.statusCode ?? 502, {
            'content-type': answer.headers['content-type'] ?? 'application/json',
            'content-length': String(bytes.length),
          });
          res.end(bytes);
        }),
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    out.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
