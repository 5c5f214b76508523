// A worker process of the fair Redis queue that takes jobs and never finishes them: the test kills
// it (SIGKILL) to show that its leases expire and its account's slot comes back, or stops it (SIGSTOP)
// through a Redis outage. Arguments: Redis URL, prefix, lease seconds (default 2).
import { FairRedisQueue } from '../../../src/core/queue/fair-redis-queue.js';
import { testJobs } from './test-jobs.js';

const [redisUrl, prefix, lease] = process.argv.slice(2) as [string, string, string?];
const queue = new FairRedisQueue({
  redisUrl,
  prefix,
  job: testJobs.grouped,
  onError: () => {},
  fairness: { groupOf: (data) => data.group, perGroup: 1 },
  stallSeconds: Number(lease ?? 2),
});
queue.work(async (_data, jobId) => {
  process.stdout.write(`took ${jobId}\n`);
  await new Promise(() => {});
}, 1);
process.stdout.write('ready\n');
