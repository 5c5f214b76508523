import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../core/http/auth-hook.js';
import { clientGone, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import { MESSAGE_BODY_LIMIT } from './content-parts.js';
import {
  ResponseObject,
  type ResponseObjectT,
  ResponseParams,
  ResponsesBody,
  type ResponsesBodyT,
  withResponseErrors,
} from './responses-schemas.js';
import type { ResponsesService } from './responses-service.js';
import { responseEvents } from './responses-stream.js';

const tags = ['Language models: OpenAI API'];
/** OpenAI's clients call it with a model key, and read OpenAI's error body. */
const call = { auth: { service: 'llm' }, errorFormat: 'openai' } as const;

/** `POST /v1/responses` and `GET /v1/responses/{id}`: OpenAI's Responses API over the agent runtime. */
export function responsesRoutes(app: FastifyInstance, responses: ResponsesService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    '/v1/responses',
    {
      config: call,
      bodyLimit: MESSAGE_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Create a model response (OpenAI Responses API; function tools are answered by the client)',
        body: ResponsesBody,
        response: withResponseErrors({ 200: ResponseObject }),
      },
    },
    async (request, reply) => {
      const body = request.body as ResponsesBodyT;
      if (body.stream) holdStreamSlot(request, reply);
      const turn = await responses.start(principalOf(request), body);
      const signal = clientGone(reply);
      if (body.stream) {
        const log = (err: unknown) => request.log.error({ err }, 'response failed');
        return sendLines(reply, 'text/event-stream; charset=utf-8', responseEvents(turn, signal, log));
      }
      const run = turn.run(signal);
      for (;;) {
        const next = await run.next();
        if (next.done) return next.value as ResponseObjectT;
      }
    },
  );

  r.get(
    '/v1/responses/:id',
    {
      config: call,
      schema: {
        tags,
        summary: 'A stored model response',
        params: ResponseParams,
        response: withResponseErrors({ 200: ResponseObject }),
      },
    },
    async (request) => (await responses.get(principalOf(request), request.params.id)) as ResponseObjectT,
  );
}
