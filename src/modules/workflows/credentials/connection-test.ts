import type { AddressGuard, OutboundHttp } from '../../../core/http/outbound.js';
import { redactSecrets } from '../../../core/redact.js';
import { credentialSecrets } from '../engine/credential-redaction.js';
import type { CredentialTestResult } from '../nodes/credential-tests.js';

export type { CredentialTestResult };

/**
 * n8n's credential test: `{status: 'OK'}` when the server answered, else the reason. The tests are
 * one table beside the nodes (nodes/credential-tests.ts), loaded on the first test; each gets the
 * guards (the TCP one, and the host one keeping the name for TLS) and `http`, the guarded outbound
 * client for the types tested over HTTP. Bounded in time, whatever the test does.
 */
export async function testCredential(
  type: string,
  data: Record<string, string | undefined>,
  guard: AddressGuard,
  http?: OutboundHttp,
): Promise<CredentialTestResult> {
  const { credentialTests, CREDENTIAL_TEST_TIMEOUT_MS } = await import('../nodes/credential-tests.js');
  const test = Object.hasOwn(credentialTests, type) ? credentialTests[type] : undefined;
  if (!test) return { status: 'Error', message: `Credentials of type '${type}' have no test here` };
  // A server that echoes what it was sent (a key in its refusal) must not show it back to the caller.
  const secrets = credentialSecrets(data);
  const outboundHost = async (host: string, port: number) => ({
    address: await guard(host, port),
    servername: host.trim(),
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      test(data as Record<string, string>, {
        outboundHost,
        connectAddress: guard,
        ...(http ? { http } : {}),
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`No answer within ${CREDENTIAL_TEST_TIMEOUT_MS / 1000} s`)),
          CREDENTIAL_TEST_TIMEOUT_MS,
        );
      }),
    ]);
    // One answer for every type that passed, as n8n's API gives.
    if (result.status === 'OK') return { status: 'OK', message: 'Connection tested successfully' };
    return { status: 'Error', message: redactSecrets(result.message, secrets) };
  } catch (err) {
    const e = err as Error & { description?: string };
    const message = e.description ? `${e.message}: ${e.description}` : e.message;
    return { status: 'Error', message: redactSecrets(message, secrets) };
  } finally {
    clearTimeout(timer);
  }
}
