// The platform as `npm start` runs it, plus a second account with its own key (the fairness
// scenario's account B), reporting its port and that key to the runner.
import { buildApp } from '../dist/app.js';
import { parseConfig } from '../dist/config.js';

const { app, ctx } = await buildApp({ config: parseConfig(process.env) });
await ctx.apis.auth.bootstrap();
const other = 'acct_bench_b';
await ctx.db
  .insertInto('accounts')
  .values({
    id: other,
    email: `${other}@example.com`,
    name: 'B',
    password_hash: null,
    created_at: new Date().toISOString(),
  })
  .execute();
const { key } = await ctx.apis.auth.keys.create(
  other,
  { name: 'bench b', type: 'production', role: 'Admin', services: ['*'] },
  null,
);
await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ port: app.server.address().port, otherKey: key });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
