import type { NodeExecutionContext } from '../../engine/node-type.js';
import { type PlatformCallParams, platformPost } from './platform-call.js';

/**
 * The knowledge base's nodes (document-load/, knowledge-query/) call it like any other platform
 * service (platform-call.ts): at `DOCPROC_URL` with a credential holding a platform key of `docproc`.
 */
const DOCPROC = { service: 'docproc', label: 'document service', urlEnv: 'DOCPROC_URL' } as const;

export const docprocPost = <P>(
  ctx: NodeExecutionContext<P>,
  p: PlatformCallParams,
  path: string,
  body: unknown,
) => platformPost(ctx, DOCPROC, p, path, body);
