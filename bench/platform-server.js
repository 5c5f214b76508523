// The platform as `npm start` runs it (built code, SQLite file), reporting its port to the runner.
import { buildApp } from '../dist/app.js';
import { parseConfig } from '../dist/config.js';

const { app, ctx } = await buildApp({ config: parseConfig(process.env) });
await ctx.apis.auth.bootstrap();
await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ port: app.server.address().port });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
