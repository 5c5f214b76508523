// The baseline: a bare Fastify route answering a small JSON object, in its own process.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ id: 'bare', ok: true }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.send?.({ port: app.server.address().port });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
