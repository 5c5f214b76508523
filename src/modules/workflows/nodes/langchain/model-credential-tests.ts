import type { OutboundHttp } from '../../../../core/http/outbound.js';
import type { CredentialTestResult } from '../credential-tests.js';
import { errorText, parseBody } from './openai-wire.js';

/**
 * n8n's tests of the AI model credentials that have one: list the provider's models (`GET …/models`)
 * with the key, through the guarded outbound client, as n8n's `test.request` does; for the vector store
 * credentials, Qdrant's collections and Pinecone's indexes.
 */

const TIMEOUT_MS = 10_000;

interface ModelsTest {
  label: string;
  url(data: Record<string, string>): string;
  headers(data: Record<string, string>): Record<string, string>;
}

const bearer = (data: Record<string, string>) => ({ authorization: `Bearer ${data.apiKey ?? ''}` });
const base = (url: string | undefined, fallback: string) => (url?.trim() || fallback).replace(/\/+$/, '');

const TESTS: Record<string, ModelsTest> = {
  mistralCloudApi: {
    label: 'Mistral',
    url: (d) => `${base(d.url, 'https://api.mistral.ai/v1')}/models`,
    headers: bearer,
  },
  groqApi: {
    label: 'Groq',
    url: (d) => `${base(d.url, 'https://api.groq.com/openai/v1')}/models`,
    headers: bearer,
  },
  openRouterApi: {
    label: 'OpenRouter',
    url: (d) => `${base(d.url, 'https://openrouter.ai/api/v1')}/models`,
    headers: bearer,
  },
  qdrantApi: {
    label: 'Qdrant',
    url: (d) => `${base(d.qdrantUrl || d.apiUrl, '')}/collections`,
    headers: (d): Record<string, string> => (d.apiKey ? { 'api-key': d.apiKey } : {}),
  },
  pineconeApi: {
    label: 'Pinecone',
    url: () => 'https://api.pinecone.io/indexes',
    headers: (d) => ({ 'api-key': d.apiKey ?? '' }),
  },
  googlePalmApi: {
    label: 'Google Gemini',
    url: (d) => `${base(d.host, 'https://generativelanguage.googleapis.com')}/v1beta/models`,
    headers: (d) => ({ 'x-goog-api-key': d.apiKey ?? '' }),
  },
};

/** Lists the models with the credential: OK on a 2xx answer, else the provider's message. */
export async function testModelCredential(
  type: string,
  data: Record<string, string>,
  http: OutboundHttp | undefined,
): Promise<CredentialTestResult> {
  const test = TESTS[type];
  if (!test) return { status: 'Error', message: `Credentials of type '${type}' have no test here` };
  if (!http) return { status: 'Error', message: 'Credential tests over HTTP are not available here' };
  const url = test.url(data);
  if (!/^https?:\/\/[^/]/.test(url)) return { status: 'Error', message: `The URL '${url}' is not http(s)` };
  const headers = test.headers(data);
  const res = await http({
    method: 'GET',
    url,
    headers: { ...headers, accept: 'application/json' },
    timeoutMs: TIMEOUT_MS,
    credentialHeaders: Object.keys(headers),
    maxResponseBytes: 4 * 1024 * 1024,
  });
  if (res.status >= 200 && res.status < 300)
    return { status: 'OK', message: 'Connection tested successfully' };
  return {
    status: 'Error',
    message: `${test.label} refused the key (${res.status}): ${errorText(parseBody(res.body, test.label))}`,
  };
}
