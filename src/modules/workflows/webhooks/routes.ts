import { finished, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, validationError } from '../../../core/errors.js';
import { decodedPayload, undecodableBody } from '../../../core/http/content-encoding.js';
import { isValidHeader } from '../../../core/http/header-check.js';
import { assertSafeJson } from '../../../core/http/json-guard.js';
import { decodeUtf8Sliced, JSON_INLINE_BYTES, parseJsonSliced } from '../../../core/http/json-sliced.js';
import { withErrors } from '../../../core/http/schemas.js';
import { type FormInfo, RESERVED_RESPONSE_HEADERS } from '../engine/index.js';
import type { ExecutionResumer } from '../executions/resumer.js';
import { setsPlatformCookie, WEBHOOK_SANDBOX_CSP } from './answer-guard.js';
import { isBotAgent } from './bot-agents.js';
import type { WebhookCall } from './call.js';
import { chatCorsHeaders, chatPage } from './chat-page.js';
import { corsHeaders } from './cors.js';
import { completionPage, formPage, nextPagePending, responseTextPage, submittedPage } from './form-page.js';
import {
  type FormFiles,
  type FormValues,
  formItem,
  submissionFromMultipart,
  submittedAtOf,
  valuesFromForm,
  valuesFromJson,
} from './form-submission.js';
import type { StoredResponse } from './response.js';
import type { WebhookMatch, WebhookService } from './service.js';
import { sendStreamed } from './streamed.js';

declare module 'fastify' {
  interface FastifyRequest {
    webhookMatch?: WebhookMatch;
    rawBody?: Buffer;
    /** The pause a resume URL's verified signature is for. */
    resumeWaitIndex?: number;
  }
}

export interface WebhookRouteDeps {
  webhooks: WebhookService;
  resumer: ExecutionResumer;
  /** Body limit of the resume URL and of requests before their webhook is known. */
  defaultBodyLimit: number;
  /** Largest JSON or form body parsed into items (WEBHOOK_JSON_LIMIT_BYTES), whatever the node's limit. */
  parsedBodyLimit: number;
  /** Largest multipart submission of a form with a file field (FORM_UPLOAD_MAX_BYTES), files included. */
  formUploadLimit: number;
  /** Answers carry n8n's sandbox CSP (WORKFLOW_WEBHOOK_SANDBOX; off only for a single-tenant instance). */
  sandbox: boolean;
}

/** An n8n Form page's submission: few short fields, bounded as the Form Trigger's. */
const FORM_WAITING_URL = '/form-waiting/:executionId';
const FORM_BODY_LIMIT = 262_144;
const FORM_NODE_TYPE = 'n8n-nodes-base.form';

/**
 * Reads a body as bytes up to `limit`; beyond it, 413 (the rest is drained, not kept). A compressed
 * body is read decoded (content-encoding.ts): the limit holds for what it expands to, the decoder is
 * stopped at the limit, and the compressed rest is drained from the socket.
 */
function readLimited(
  request: FastifyRequest,
  raw: NodeJS.ReadableStream,
  limit: number,
  declared: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let payload: NodeJS.ReadableStream;
    try {
      payload = decodedPayload(request, raw);
    } catch (error) {
      raw.resume();
      reject(error);
      return;
    }
    const decoded = payload !== raw;
    // A declared length is of the bytes sent: only an unencoded body is refused by it up front.
    if (!decoded && declared > limit) {
      payload.resume();
      reject(tooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const fail = (error: unknown) => {
      failed = true;
      chunks.length = 0;
      if (decoded) {
        (payload as Readable).destroy();
        raw.unpipe();
        raw.resume();
      }
      reject(error);
    };
    payload.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) return fail(tooLarge(limit));
      chunks.push(chunk);
    });
    if (decoded) {
      // The bytes sent are bounded too: empty deflate blocks decode to nothing, for ever.
      let sent = 0;
      raw.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        if (!failed && sent > limit) fail(tooLarge(limit));
      });
      // A client gone mid-body: `pipe` does not tell the decoder, which would wait for ever.
      finished(raw, (error) => {
        if (error && !failed) fail(error);
      });
    }
    payload.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    payload.on('error', (error) => {
      if (!failed) fail(undecodableBody(error) ?? error);
    });
  });
}

const tooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The body is larger than this webhook accepts (${limit} bytes)`, {
    limit,
  });

const mediaType = (contentType: string | undefined) =>
  (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
const isJsonType = (type: string) => type === '' || type === 'application/json' || type.endsWith('+json');
/** Bodies parsed into objects (JSON, forms), as opposed to text or bytes kept whole. */
const isParsedType = (contentType: string | undefined) => {
  const type = mediaType(contentType);
  return isJsonType(type) || type === 'application/x-www-form-urlencoded';
};

/** JSON, form or text as the content type says; other types arrive as null (the raw body is kept). */
async function parseBody(raw: Buffer, contentType: string | undefined): Promise<unknown> {
  const type = mediaType(contentType);
  if (raw.length === 0) return {};
  if (isJsonType(type)) {
    // A large body (a webhook may accept up to 100 MB) is parsed in slices, leaving the event loop free.
    if (raw.length > JSON_INLINE_BYTES) {
      return parseJsonSliced(await decodeUtf8Sliced(raw, true), { refuseProto: false });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new AppError('VALIDATION_ERROR', 'The body is not valid JSON', {});
    }
    assertSafeJson(parsed);
    return parsed;
  }
  if (type === 'application/x-www-form-urlencoded')
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  if (type.startsWith('text/') || type === 'application/xml') return raw.toString('utf8');
  return null;
}

/** The call as a plain value: what every part below the route works with. */
function callOf(request: FastifyRequest, path: string): WebhookCall {
  return {
    method: request.method,
    path,
    headers: request.headers,
    query: { ...(request.query as Record<string, unknown>) },
    rawBody: request.rawBody ?? Buffer.alloc(0),
    body: request.body,
    clientAddress: request.ip,
  };
}

function send(
  reply: FastifyReply,
  response: StoredResponse,
  head: boolean,
  extra: Record<string, string>,
  sandbox: boolean,
) {
  if (response.kind === 'error') {
    throw new AppError(response.code, response.message, response.details, { ...extra });
  }
  reply.headers(extra);
  reply.code(response.statusCode);
  // The workflow's own body, whatever its status: the route's 4xx/5xx schema is the platform's error
  // shape, which a workflow's 404 or 503 answer need not have. A string under a type that is not JSON
  // is text and goes as it is (Fastify would pass it through the serializer: it came out quoted).
  const type = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  if (typeof response.body !== 'string' || type === undefined || /json/i.test(type))
    reply.serializer((payload: unknown) => JSON.stringify(payload));
  let ownPolicy: string | null = null;
  for (const [name, value] of Object.entries(response.headers)) {
    const lower = name.toLowerCase();
    // The node checks headers; one stored before it did must still not break the response head.
    if (RESERVED_RESPONSE_HEADERS.has(lower) || !isValidHeader(name, value)) continue;
    if (lower === 'set-cookie' && setsPlatformCookie(value)) continue;
    if (lower === 'content-security-policy') ownPolicy = value;
    else reply.header(name, value);
  }
  // Every answer, whatever its type: a policy only acts where a browser renders the answer as a
  // document (HTML, SVG, XML), which is where it must. The workflow's own policy applies as well.
  const policies = [...(sandbox ? [WEBHOOK_SANDBOX_CSP] : []), ...(ownPolicy ? [ownPolicy] : [])];
  if (policies.length === 1) reply.header('content-security-policy', policies[0]);
  else if (policies.length > 1) reply.header('content-security-policy', policies);
  if (head) return reply.send();
  if (response.bodyBase64 !== undefined) return reply.send(Buffer.from(response.bodyBase64, 'base64'));
  if (response.body === null || response.body === undefined) return reply.send();
  return reply.send(response.body);
}

export function webhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // n8n's webhooks inflate gzip and deflate bodies (br too here): this scope's parser decodes them.
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, decodesContentEncoding: true };
    });
    scope.addContentTypeParser('*', async (request: FastifyRequest, payload: NodeJS.ReadableStream) => {
      const uploads = formUploadLimit(request, deps.formUploadLimit);
      if (uploads !== null) {
        const declared = Number(request.headers['content-length'] ?? 0) || 0;
        request.rawBody = await readLimited(request, payload, uploads, declared).catch((error: unknown) => {
          if ((error as AppError).code !== 'PAYLOAD_TOO_LARGE') throw error;
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            `The form submission is larger than forms accept (${uploads} bytes, files included; FORM_UPLOAD_MAX_BYTES)`,
            { limit: uploads },
          );
        });
        return null;
      }
      const nodeLimit =
        request.webhookMatch?.hook.options.bodyLimitBytes ??
        (request.routeOptions.url === FORM_WAITING_URL ? FORM_BODY_LIMIT : deps.defaultBodyLimit);
      // A parsed body becomes objects that every later step (the execution's data, expressions) handles
      // on the server's thread: its size is bounded apart from the bytes a webhook may take.
      const parsed = isParsedType(request.headers['content-type']);
      const limit = parsed ? Math.min(nodeLimit, deps.parsedBodyLimit) : nodeLimit;
      const declared = Number(request.headers['content-length'] ?? 0) || 0;
      let raw: Buffer;
      try {
        raw = await readLimited(request, payload, limit, declared);
      } catch (error) {
        if (!parsed || limit === nodeLimit || (error as AppError).code !== 'PAYLOAD_TOO_LARGE') throw error;
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `A JSON or form body is larger than webhooks parse (${limit} bytes); send larger data as binary (application/octet-stream), up to this webhook's ${nodeLimit} bytes`,
          { limit, webhookLimit: nodeLimit },
        );
      }
      request.rawBody = raw;
      return parseBody(raw, request.headers['content-type']);
    });

    // The webhook is found before the body is read, so its own size limit applies.
    scope.addHook('onRequest', async (request) => {
      const path = (request.params as { '*'?: string })['*'];
      const url = request.routeOptions.url;
      if ((url === '/webhook/*' || url === '/webhook-test/*') && path !== undefined) {
        // A preflight asks about the method that follows (a chat's POST unless it names another).
        const method = request.method === 'OPTIONS' ? preflightMethod(request) : request.method;
        request.webhookMatch = await deps.webhooks.match(method, path, url === '/webhook-test/*');
      }
      if (url === '/mcp/*' && path !== undefined) {
        const noServer = () =>
          new AppError('WEBHOOK_NOT_FOUND', `No active MCP Server Trigger listens on /mcp/${path}`, {
            path,
          });
        const match = await deps.webhooks.match(request.method, path, false).catch((error: unknown) => {
          // A webhook's or a form's path (or method) is no MCP server: the same 404 as no path at all.
          const code = (error as AppError).code;
          throw code === 'WEBHOOK_NOT_FOUND' || code === 'METHOD_NOT_ALLOWED' ? noServer() : error;
        });
        if (!match.hook.mcp) throw noServer();
        request.webhookMatch = match;
      }
      if ((url === '/form/*' || url === '/form-test/*') && path !== undefined) {
        const test = url === '/form-test/*';
        const noForm = () =>
          new AppError(
            'WEBHOOK_NOT_FOUND',
            test
              ? `No form listens on /form-test/${path}: call POST /api/v1/workflows/{id}/listen first`
              : `No active form listens on /form/${path}`,
            { path },
          );
        const match = await deps.webhooks.match(request.method, path, test).catch((error: unknown) => {
          // A webhook's path (or method) is no form: the same 404 as no path at all.
          const code = (error as AppError).code;
          throw code === 'WEBHOOK_NOT_FOUND' || code === 'METHOD_NOT_ALLOWED' ? noForm() : error;
        });
        // A form's path is a form only: its page and submission, never a plain webhook call.
        if (!match.hook.form) throw noForm();
        request.webhookMatch = match;
      }
    });

    // Methods with a body and without: Fastify allows a body schema only on the former.
    for (const [methods, withBody, url] of [
      [['POST', 'PUT', 'PATCH'], true, '/webhook/*'],
      [['GET', 'HEAD', 'DELETE'], false, '/webhook/*'],
      [['POST', 'PUT', 'PATCH'], true, '/webhook-test/*'],
      [['GET', 'HEAD', 'DELETE'], false, '/webhook-test/*'],
    ] as const) {
      scope.route({
        method: [...methods],
        url,
        exposeHeadRoute: false,
        config: { public: true, limited: true },
        schema: {
          tags: ['Webhooks'],
          summary:
            url === '/webhook/*'
              ? 'Start the active workflow whose webhook node holds this path and method'
              : 'Start the workflow listening here after POST /api/v1/workflows/{id}/listen (one call, mode test)',
          description:
            "Authentication, response and body limit are the webhook node's: none, basic, header, query parameter, platform API key (X-API-Key) or HMAC signature of the raw body.",
          params: Type.Object({ '*': Type.String({ description: "The webhook node's path" }) }),
          ...(withBody
            ? {
                body: Type.Unknown({
                  description: 'Any body: JSON, form, text or bytes (kept raw for signatures)',
                }),
              }
            : {}),
          response: withErrors({ 200: Type.Unknown({ description: "The workflow's answer" }) }),
        },
        handler: async (request, reply) => {
          const match = request.webhookMatch;
          if (!match) throw new AppError('WEBHOOK_NOT_FOUND', 'No active workflow listens here');
          // Form Trigger v1: n8n 1.x served its page and submissions here (`{path}/n8n-form`).
          if (match.hook.form?.servedAtWebhook && request.method === 'GET')
            return serveFormPage(request, reply, deps);
          if (match.hook.form?.servedAtWebhook && request.method === 'POST')
            return submitForm(request, reply, deps);
          if (match.hook.form)
            throw new AppError(
              'WEBHOOK_NOT_FOUND',
              `A form listens here: its page is at /form/${match.route.path}`,
            );
          if (match.hook.mcp)
            throw new AppError(
              'WEBHOOK_NOT_FOUND',
              `An MCP Server Trigger listens here: its endpoint is /mcp/${match.route.path}`,
            );
          const path = (request.params as { '*': string })['*'];
          const chat = match.hook.chat;
          if (chat?.page) {
            const page = chatPage(chat);
            const headers = await deps.webhooks.authorize(callOf(request, path), match);
            return reply
              .headers({ ...headers, ...page.headers })
              .send(request.method === 'HEAD' ? '' : page.html);
          }
          const cors = chat
            ? chatCorsHeaders(chat, request.headers.origin)
            : match.hook.cors
              ? corsHeaders(match.hook.cors, request.headers.origin)
              : {};
          if (match.hook.streaming && request.method !== 'HEAD')
            return sendStreamed(reply, match.hook, cors, (sink) =>
              deps.webhooks.handle(callOf(request, path), match, sink),
            );
          const { response, headers } = await deps.webhooks.handle(callOf(request, path), match);
          return send(reply, response, request.method === 'HEAD', { ...headers, ...cors }, deps.sandbox);
        },
      });
    }

    preflightRoutes(scope);
    formRoutes(scope, deps);
    formWaitingRoutes(scope, deps);
    mcpRoutes(scope, deps);

    scope.route({
      method: 'POST',
      url: '/webhook-waiting/:executionId',
      exposeHeadRoute: false,
      config: { public: true, limited: true },
      schema: {
        tags: ['Webhooks'],
        summary:
          "Resume an execution paused at a wait node set to resume by webhook; the call's data flows on",
        description:
          "The full URL is the workflow's `$execution.resumeUrl` (also shown on the waiting execution): the signature is an HMAC of the execution and its pause under a server key. Without it 401, a wrong one 403.",
        params: Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 100 }) }),
        querystring: Type.Object(
          { signature: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: Type.String() },
        ),
        body: Type.Unknown({ description: 'Passed on as the wait node’s output' }),
        response: withErrors({ 200: Type.Object({ message: Type.String(), executionId: Type.String() }) }),
      },
      onRequest: async (request) => {
        const { executionId } = request.params as { executionId: string };
        const { signature } = request.query as { signature?: string };
        request.resumeWaitIndex = deps.resumer.authorize(executionId, signature);
      },
      handler: async (request) => {
        const { executionId } = request.params as { executionId: string };
        const call = callOf(request, executionId);
        await deps.resumer.resumeByWebhook(executionId, request.resumeWaitIndex ?? -1, call);
        return { message: 'Execution resumed', executionId };
      },
    });
  });
}

const PREFLIGHT_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);

/** The method a preflight asks about (`Access-Control-Request-Method`), POST when it names none we serve. */
function preflightMethod(request: FastifyRequest): string {
  const asked = request.headers['access-control-request-method'];
  const method = typeof asked === 'string' ? asked.trim().toUpperCase() : '';
  return PREFLIGHT_METHODS.has(method) ? method : 'POST';
}

/**
 * A browser's preflight before calling a public Chat Trigger or an n8n Webhook from another origin (their
 * `allowedOrigins`): 204 with the CORS headers when the origin is allowed, without them otherwise.
 */
function preflightRoutes(scope: FastifyInstance): void {
  for (const url of ['/webhook/*', '/webhook-test/*'] as const) {
    scope.route({
      method: 'OPTIONS',
      url,
      config: { public: true, limited: true },
      schema: {
        tags: ['Webhooks'],
        summary: "CORS preflight of an n8n Webhook's or a public Chat Trigger's path",
        params: Type.Object({
          '*': Type.String({ description: "The webhook's path, or the chat's ({webhookId}/chat)" }),
        }),
        response: withErrors({
          204: Type.Null({ description: 'The origin may post (headers say so), or not' }),
        }),
      },
      handler: async (request, reply) => {
        const hook = request.webhookMatch?.hook;
        const origin = request.headers.origin;
        if (hook?.chat) return reply.code(204).headers(chatCorsHeaders(hook.chat, origin)).send();
        if (!hook?.cors) throw new AppError('WEBHOOK_NOT_FOUND', 'No webhook here answers a CORS preflight');
        const requestedHeaders = request.headers['access-control-request-headers'];
        const headers = corsHeaders(hook.cors, origin, {
          requestedHeaders: typeof requestedHeaders === 'string' ? requestedHeaders : undefined,
        });
        return reply.code(204).headers(headers).send();
      },
    });
  }
}

/**
 * n8n's Form Trigger: `GET /form/{path}` serves the page, `POST` takes a submission as the trigger's
 * item (`/form-test/` while the workflow listens). A refused submission is the page again with each
 * field's problem (400), or the platform's error for a JSON caller.
 */
function formRoutes(scope: FastifyInstance, deps: WebhookRouteDeps): void {
  for (const url of ['/form/*', '/form-test/*'] as const) {
    const test = url === '/form-test/*';
    const params = Type.Object({ '*': Type.String({ description: "The Form Trigger's path" }) });
    scope.route({
      method: 'GET',
      url,
      exposeHeadRoute: false,
      config: { public: true, limited: true },
      schema: {
        tags: ['Webhooks'],
        summary: test
          ? "The page of a listening workflow's Form Trigger (after POST /api/v1/workflows/{id}/listen)"
          : "The page of an active workflow's Form Trigger (n8n's /form/{path})",
        params,
        response: withErrors({ 200: Type.String({ description: 'The form page (HTML)' }) }),
      },
      handler: (request, reply) => serveFormPage(request, reply, deps),
    });
    scope.route({
      method: 'POST',
      url,
      exposeHeadRoute: false,
      config: { public: true, limited: true },
      schema: {
        tags: ['Webhooks'],
        summary: test
          ? "Submit a listening workflow's form: one call, mode test"
          : "Submit an active workflow's form: starts it with the fields as its item",
        description:
          "The page posts `application/x-www-form-urlencoded`, or `multipart/form-data` when it has a file field (`field-{index}`; files become the item's binary, the whole submission at most FORM_UPLOAD_MAX_BYTES), and gets pages back; a multipart post that does not accept text/html (n8n's page script, a `fetch` with `FormData`) and a JSON object keyed by the fields' labels get JSON. A field's problem is a 400 naming it.",
        params,
        body: Type.Unknown({ description: 'The form fields' }),
        response: withErrors({
          200: Type.Unknown({ description: 'The submitted page, or the workflow’s answer' }),
          303: Type.Null({ description: "Submitted: the workflow's first n8n Form page is at `location`" }),
        }),
      },
      handler: (request, reply) => submitForm(request, reply, deps),
    });
  }
}

/** A form's page: its caller checked first as a submission is (the IP allow-list, basic auth). */
async function serveFormPage(request: FastifyRequest, reply: FastifyReply, deps: WebhookRouteDeps) {
  const match = request.webhookMatch;
  const form = match?.hook.form;
  if (!match || !form) throw new AppError('WEBHOOK_NOT_FOUND', 'No form listens here');
  const path = (request.params as { '*': string })['*'];
  const headers = await deps.webhooks.authorize(callOf(request, path), match);
  const page = formPage(form);
  return reply.headers({ ...headers, ...page.headers }).send(page.html);
}

/**
 * A submission's values and files, and whether the caller is a browser posting the page (answered
 * with pages): a plain form post, or a multipart one that accepts HTML (a `fetch` with `FormData`
 * gets JSON, as n8n's own page script reads it).
 */
async function submissionOf(
  request: FastifyRequest,
  form: FormInfo,
): Promise<{ values: FormValues; files: FormFiles; page: boolean }> {
  const type = mediaType(request.headers['content-type']);
  const raw = request.rawBody ?? Buffer.alloc(0);
  if (type === 'multipart/form-data') {
    const { values, files } = await submissionFromMultipart(form, raw, request.headers['content-type'] ?? '');
    return { values, files, page: acceptsHtml(request) };
  }
  if (type === 'application/x-www-form-urlencoded')
    return { values: valuesFromForm(form, raw), files: [], page: true };
  if (!isJsonType(type))
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'A form submission is a form post (urlencoded or multipart) or a JSON object',
      { contentType: type },
    );
  return { values: valuesFromJson(form, request.body), files: [], page: false };
}

const acceptsHtml = (request: FastifyRequest) => /\btext\/html\b/i.test(request.headers.accept ?? '');

/** The multipart bound of a form's submission (null: not a multipart form post; the usual bounds apply). */
function formUploadLimit(request: FastifyRequest, limit: number): number | null {
  if (mediaType(request.headers['content-type']) !== 'multipart/form-data') return null;
  const url = request.routeOptions.url;
  // A waiting page's fields are known only once its execution is read: any page may take files.
  if (url === FORM_WAITING_URL) return limit;
  const form = request.webhookMatch?.hook.form;
  if (!form) return null;
  return form.fields.some((f) => f.type === 'file') ? limit : FORM_BODY_LIMIT;
}

async function submitForm(request: FastifyRequest, reply: FastifyReply, deps: WebhookRouteDeps) {
  const match = request.webhookMatch;
  const form = match?.hook.form;
  if (!match || !form) throw new AppError('WEBHOOK_NOT_FOUND', 'No form listens here');
  const path = (request.params as { '*': string })['*'];
  // The caller is checked (IP allow-list, basic auth) before the parts of its body are parsed.
  await deps.webhooks.authorize(callOf(request, path), match);
  const { values, files, page } = await submissionOf(request, form);
  let result: Awaited<ReturnType<WebhookRouteDeps['webhooks']['handleForm']>>;
  try {
    result = await deps.webhooks.handleForm(callOf(request, path), match, values, files);
  } catch (error) {
    const problems = (error as AppError).details?.problems;
    if (!page || (error as AppError).code !== 'VALIDATION_ERROR' || !Array.isArray(problems)) throw error;
    const again = formPage(
      form,
      values.map((v) => v ?? []),
      (problems as Array<{ field: number; path: string; message: string }>).map((p) => ({
        field: p.field,
        label: p.path,
        message: p.message,
      })),
    );
    return reply.code(400).headers(again.headers).send(again.html);
  }
  if (page && match.hook.responseMode === 'onReceived' && result.response.kind === 'reply') {
    // n8n's multi-page form: the browser goes on to the first Form node's page (n8n answers 307).
    const started = (result.response.body as { executionId?: unknown } | null)?.executionId;
    if (typeof started === 'string' && match.def.nodes.some((n) => n.type === FORM_NODE_TYPE))
      return reply
        .code(303)
        .headers(result.headers)
        .header('location', deps.resumer.formPath(started, 0))
        .send();
    const done = submittedPage(form);
    return reply.headers({ ...result.headers, ...done.headers }).send(done.html);
  }
  return send(reply, result.response, false, result.headers, deps.sandbox);
}

/**
 * n8n's Form node: the page an execution waits at, `/form-waiting/{executionId}?signature=…` (the
 * signature of the pause, as the resume URL's). GET shows it (a completion shows its ending and lets
 * the execution go on); POST submits a page, checked as the trigger's, and the execution resumes with
 * the fields as its item. The next page is at the next pause's URL (303 for the page, `next` for JSON).
 */
function formWaitingRoutes(scope: FastifyInstance, deps: WebhookRouteDeps): void {
  const params = Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 100 }) });
  const querystring = Type.Object(
    { signature: Type.Optional(Type.String({ maxLength: 200 })) },
    { additionalProperties: Type.String() },
  );
  const authorize = async (request: FastifyRequest) => {
    const { executionId } = request.params as { executionId: string };
    const { signature } = request.query as { signature?: string };
    request.resumeWaitIndex = deps.resumer.authorize(executionId, signature);
  };
  scope.route({
    method: 'GET',
    url: FORM_WAITING_URL,
    exposeHeadRoute: false,
    config: { public: true, limited: true },
    schema: {
      tags: ['Webhooks'],
      summary: "The n8n Form page an execution waits at (n8n's /form-waiting/{executionId})",
      description:
        "Signed as the resume URL: without the signature 401, a wrong one 403, an execution that waits at no form page 404. A completion page lets the execution go on and shows its ending: the completion screen, the node's text (`showText`, a sandboxed page), its file (`returnBinary`, a download) or a redirect to its URL.",
      params,
      querystring,
      response: withErrors({ 200: Type.String({ description: 'The form page (HTML)' }) }),
    },
    onRequest: authorize,
    handler: async (request, reply) => {
      const { executionId } = request.params as { executionId: string };
      const waitIndex = request.resumeWaitIndex ?? -1;
      const waiting = await deps.resumer.formWaiting(executionId, waitIndex);
      if (!waiting) {
        const pending = nextPagePending();
        return reply.headers(pending.headers).send(pending.html);
      }
      if (waiting.operation === 'page') {
        const shown = formPage(waiting.form);
        return reply.headers(shown.headers).send(shown.html);
      }
      if (waiting.operation === 'approval') {
        // A bot fetching the link (a chat's preview) decides nothing, as n8n's sendAndWaitWebhook.
        if (isBotAgent(request.headers['user-agent'])) return reply.type('text/plain').send('');
        const approved = (request.query as { approved?: string }).approved === 'true';
        await deps.resumer.resumeByForm(executionId, waitIndex, [{ json: { data: { approved } } }]);
        const done = completionPage(waiting.form.title, waiting.form.description, waiting.form.submittedText);
        return reply.headers(done.headers).send(done.html);
      }
      await deps.resumer.resumeByForm(executionId, waitIndex, null);
      if (waiting.redirectUrl) return reply.code(302).header('location', waiting.redirectUrl).send('');
      if (waiting.responseText !== undefined) {
        const shown = responseTextPage(waiting.responseText);
        return reply.headers(shown.headers).send(shown.html);
      }
      if (waiting.download) {
        const { data, mimeType, fileName } = waiting.download;
        return reply
          .headers({
            'content-type': mimeType || 'application/octet-stream',
            'content-disposition': `attachment; filename="${fileName.replace(/[^\w.-]/g, '_')}"`,
            'content-security-policy': "sandbox; default-src 'none'",
            'x-content-type-options': 'nosniff',
            'cache-control': 'no-store',
          })
          .send(Buffer.from(data, 'base64'));
      }
      const done = completionPage(waiting.form.title, waiting.form.description, waiting.form.submittedText, {
        customCss: waiting.form.customCss,
        appendAttribution: waiting.form.appendAttribution,
      });
      return reply.headers(done.headers).send(done.html);
    },
  });
  scope.route({
    method: 'POST',
    url: FORM_WAITING_URL,
    exposeHeadRoute: false,
    config: { public: true, limited: true },
    schema: {
      tags: ['Webhooks'],
      summary: 'Submit the n8n Form page an execution waits at: it resumes with the fields as its item',
      description:
        "The page posts `application/x-www-form-urlencoded` (`multipart/form-data` with a file field: files become the item's binary) as `field-{index}` and is sent on (303) to the next page; a JSON object keyed by the fields' labels, or a multipart post that does not accept text/html, gets `next`, the next page's path. A field's problem is a 400 naming it.",
      params,
      querystring,
      body: Type.Unknown({ description: 'The form fields' }),
      response: withErrors({
        200: Type.Object({ message: Type.String(), executionId: Type.String(), next: Type.String() }),
        303: Type.Null({ description: 'Submitted: the next page is at `location`' }),
      }),
    },
    onRequest: authorize,
    handler: async (request, reply) => {
      const { executionId } = request.params as { executionId: string };
      const waitIndex = request.resumeWaitIndex ?? -1;
      const waiting = await deps.resumer.formWaiting(executionId, waitIndex);
      if (!waiting)
        throw new AppError('CONFLICT', 'The execution has not reached this form page yet', { executionId });
      if (waiting.operation !== 'page')
        throw new AppError('CONFLICT', 'This form page is an ending: it is shown, not submitted', {
          executionId,
        });
      const { values, files, page: pagePost } = await submissionOf(request, waiting.form);
      const item = formItem(
        waiting.form,
        values,
        {
          // As n8n's Form node: UTC, or the workflow's zone when its Form Trigger uses it.
          submittedAt: submittedAtOf(
            new Date(),
            waiting.form.useWorkflowTimezone ? (waiting.form.timezone ?? 'UTC') : 'UTC',
          ),
          formMode: 'production',
        },
        files,
      );
      if ('problems' in item) {
        if (pagePost) {
          const again = formPage(
            waiting.form,
            values.map((v) => v ?? []),
            item.problems,
          );
          return reply.code(400).headers(again.headers).send(again.html);
        }
        throw new AppError('VALIDATION_ERROR', 'The form submission is not valid', {
          problems: item.problems.map((p) => ({ field: p.field, path: p.label, message: p.message })),
        });
      }
      let json = item.json;
      if (waiting.sendAndWait) {
        const { submittedAt: _at, formMode: _mode, ...fields } = json;
        json = { data: fields };
      }
      await deps.resumer.resumeByForm(executionId, waitIndex, [
        item.binary ? { json, binary: item.binary } : { json },
      ]);
      const next = deps.resumer.formPath(executionId, waitIndex + 1);
      if (pagePost) return reply.code(303).header('location', next).send();
      return { message: 'Form submitted', executionId, next };
    },
  });
}

/**
 * n8n's MCP Server Trigger at `/mcp/{path}`: a POSTed JSON-RPC message runs the active workflow from
 * its trigger, which answers it (Streamable HTTP, stateless, JSON). GET (a server stream) and DELETE
 * (ending a session) answer 405, which MCP clients read as "no stream, no session".
 */
function mcpRoutes(scope: FastifyInstance, deps: WebhookRouteDeps): void {
  const params = Type.Object({ '*': Type.String({ description: "The MCP Server Trigger's path" }) });
  scope.route({
    method: 'POST',
    url: '/mcp/*',
    exposeHeadRoute: false,
    config: { public: true, limited: true },
    schema: {
      tags: ['Webhooks'],
      summary: "An active workflow's MCP Server Trigger (n8n's /mcp/{path}): one JSON-RPC message",
      description:
        "The tools attached to the trigger, served over MCP's Streamable HTTP transport (stateless, JSON answers). Authentication is the trigger's: none, bearer or header credential.",
      params,
      body: Type.Unknown({ description: 'A JSON-RPC request or notification' }),
      response: {
        ...withErrors({
          200: Type.Unknown({ description: 'The JSON-RPC answer' }),
          202: Type.Null({ description: 'A notification, accepted' }),
        }),
        // The transport's own refusals, as the MCP SDK answers them (a JSON-RPC error body).
        406: Type.Unknown({
          description: 'JSON-RPC error: the Accept header must name application/json and text/event-stream',
        }),
      },
    },
    handler: async (request, reply) => {
      const match = request.webhookMatch;
      if (!match) throw new AppError('WEBHOOK_NOT_FOUND', 'No active MCP Server Trigger listens here');
      // A batch would start up to 100 tool runs for one request the per-IP limit counts once.
      if (Array.isArray(request.body))
        throw validationError('An MCP request carries one JSON-RPC message: batches are refused', [
          { field: 'body', message: 'an array of messages; send each message in its own request' },
        ]);
      const path = (request.params as { '*': string })['*'];
      const { response, headers } = await deps.webhooks.handle(callOf(request, path), match);
      return send(reply, response, false, headers, deps.sandbox);
    },
  });
  scope.route({
    method: ['GET', 'DELETE'],
    url: '/mcp/*',
    exposeHeadRoute: false,
    config: { public: true, limited: true },
    schema: {
      tags: ['Webhooks'],
      summary: "An MCP Server Trigger's stream or session: answers 405 (the server is stateless)",
      params,
      response: withErrors({}),
    },
    handler: async () => {
      throw new AppError(
        'METHOD_NOT_ALLOWED',
        'This MCP server keeps no stream and no session: POST JSON-RPC messages',
        { allowed: 'POST' },
        { allow: 'POST' },
      );
    },
  });
}
