/**
 * Issue 35: client tools (the turn pauses `requires_action`, the client submits outputs, the turn
 * continues, mixed with server tools), `toolChoice` and structured output (`responseFormat`), with
 * their bad inputs; on both databases, against the fake OpenAI upstream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { echoReply } from '../support/fake-llm/index.js';
import {
  call,
  chatCalls,
  createAgent,
  expectError,
  expectNamesField,
  sseEvents,
  textOf,
  toolCallsThenText,
} from './support.js';

const MODEL = 'gpt-4o-mini';
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

interface Answer {
  conversationId: string;
  runId: string;
  status: 'completed' | 'requires_action';
  messages: Array<{ role: string; content: string; steps: Array<{ type: string; name: string }> }>;
  output?: unknown;
  requiredAction?: { type: string; toolCalls: Array<{ id: string; name: string; arguments: unknown }> };
}

describe.each(await testDialects())(
  'agents: client tools, tool choice, structured output on %s',
  (dialect) => {
    let bed: LlmTestbed;
    beforeAll(async () => {
      bed = await startLlmTestbed(dialect);
    });
    afterAll(() => bed?.close());
    beforeEach(() => bed.openai.reset());

    const post = async (path: string, body: Record<string, unknown>) => call(bed, 'POST', path, { body });

    it('pauses on client tool calls (server tools of the same answer run), continues with their outputs', async () => {
      const agent = await createAgent(bed, { model: MODEL, tools: ['user_profile', WEATHER] });
      const order = { type: 'function', name: 'lookup_order', parameters: { type: 'object' } };
      toolCallsThenText(bed.openai, [
        { name: 'user_profile', arguments: {} },
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { name: 'lookup_order', arguments: { id: 7 } },
      ]);
      const res = await post(`/api/agents/${agent.id}/messages`, { content: 'Weather?', tools: [order] });
      expect(res.status, res.text).toBe(200);
      const paused = res.json() as Answer;
      expect(paused.status).toBe('requires_action');
      expect(paused.messages.map((m) => m.role)).toEqual(['user']);
      const pending = paused.requiredAction?.toolCalls ?? [];
      expect(pending.map((c) => [c.name, c.arguments])).toEqual([
        ['get_weather', { city: 'Oslo' }],
        ['lookup_order', { id: 7 }],
      ]);
      // The first model call offered the agent's tools and the request's.
      expect(
        chatCalls(bed.openai)[0]
          ?.tools.map((t) => t.name)
          .sort(),
      ).toEqual(['get_weather', 'lookup_order', 'user_profile']);
      const runPath = `/api/agents/${agent.id}/runs/${paused.runId}`;
      const run = await call(bed, 'GET', runPath);
      expect(run.json()).toMatchObject({ status: 'requires_action', requiredAction: { toolCalls: pending } });

      // An output for a call never made, or one missing: 400, and the run still waits.
      expectNamesField(
        await post(`${runPath}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_nope', output: 'x' }] }),
        'toolOutputs[0].toolCallId',
      );
      expectNamesField(
        await post(`${runPath}/tool-outputs`, { toolOutputs: [{ toolCallId: pending[0]?.id, output: 'x' }] }),
        'toolOutputs',
      );
      expect((await call(bed, 'GET', runPath)).json()).toMatchObject({ status: 'requires_action' });

      const done = await post(`${runPath}/tool-outputs`, {
        toolOutputs: [
          { toolCallId: pending[0]?.id, output: { celsius: 21 } },
          { toolCallId: pending[1]?.id, output: 'shipped' },
        ],
      });
      expect(done.status, done.text).toBe(200);
      const answer = done.json() as Answer;
      expect(answer.status).toBe('completed');
      expect(answer.messages.map((m) => m.role)).toEqual(['assistant']);
      expect(answer.messages[0]?.content).toBe(echoReply('Weather?'));
      expect(answer.messages[0]?.steps.filter((s) => s.type === 'tool_call').map((s) => s.name)).toEqual([
        'user_profile',
        'get_weather',
        'lookup_order',
      ]);
      // The second model call carries the three results, each answering its call.
      const second = chatCalls(bed.openai)[1];
      const results = (second?.messages ?? []).filter((m) => m.role === 'tool');
      expect(results.map((m) => textOf(m.content))).toEqual([
        expect.stringContaining('found'),
        '{"celsius":21}',
        'shipped',
      ]);
      expect((await call(bed, 'GET', runPath)).json()).toMatchObject({
        status: 'completed',
        requiredAction: null,
        messageId: expect.any(String),
      });
      // A second submission for a finished run: 409.
      expectError(
        await post(`${runPath}/tool-outputs`, { toolOutputs: [{ toolCallId: pending[0]?.id, output: 1 }] }),
        409,
        'CONFLICT',
      );
      // The conversation holds the question and the one answer.
      const conv = await call(bed, 'GET', `/api/conversations/${answer.conversationId}`);
      expect((conv.json() as { messages: { data: unknown[] } }).messages.data).toHaveLength(2);
    });

    it('streams the pause as run.requires_action and the continuation as message.completed', async () => {
      const agent = await createAgent(bed, { model: MODEL, tools: [WEATHER] });
      toolCallsThenText(bed.openai, { name: 'get_weather', arguments: { city: 'Rome' } });
      const res = await post(`/api/agents/${agent.id}/messages`, { content: 'Rome?', stream: true });
      const events = sseEvents(res.text);
      expect(events.map((e) => e.event)).toEqual(['message.created', 'tool.call', 'run.requires_action']);
      const last = events.at(-1)?.data as { runId: string; toolCalls: Array<{ id: string }> };
      const more = await post(`/api/agents/${agent.id}/runs/${last.runId}/tool-outputs`, {
        stream: true,
        toolOutputs: [{ toolCallId: last.toolCalls[0]?.id, output: 'sunny' }],
      });
      const after = sseEvents(more.text);
      expect(after[0]?.event).toBe('message.delta');
      expect(after.at(-1)).toMatchObject({ event: 'message.completed', data: { runId: last.runId } });
    });

    it('toolChoice: none offers no tools, required and a name bind the first call only; bad ones are 400', async () => {
      const agent = await createAgent(bed, { model: MODEL, tools: ['user_profile'] });
      const path = `/api/agents/${agent.id}/messages`;
      expect((await post(path, { content: 'hi', toolChoice: 'none' })).status).toBe(200);
      expect(chatCalls(bed.openai)[0]?.body.tools).toBeUndefined();

      bed.openai.reset();
      toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
      expect((await post(path, { content: 'hi', toolChoice: 'required' })).status).toBe(200);
      const [first, second] = chatCalls(bed.openai);
      expect(first?.body.tool_choice).toBe('required');
      expect(second?.body.tool_choice).toBeUndefined();

      bed.openai.reset();
      toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
      expect((await post(path, { content: 'hi', toolChoice: { name: 'user_profile' } })).status).toBe(200);
      expect(chatCalls(bed.openai)[0]?.body.tool_choice).toEqual({
        type: 'function',
        function: { name: 'user_profile' },
      });

      expectNamesField(await post(path, { content: 'hi', toolChoice: { name: 'nope' } }), 'toolChoice.name');
      expectNamesField(
        await post(path, { content: 'hi', tools: [{ ...WEATHER, name: 'user_profile' }] }),
        'tools[0].name',
      );
      expectNamesField(
        await post(path, { content: 'hi', tools: [{ ...WEATHER, parameters: { type: 'string' } }] }),
        'tools[0]',
      );
    });

    it('responseFormat: the answer validated and parsed; one repair; a schema nothing satisfies is a 422 and a failed run', async () => {
      const agent = await createAgent(bed, { model: MODEL });
      const path = `/api/agents/${agent.id}/messages`;
      const schema = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] };
      const ok = await post(path, { content: 'shape me', responseFormat: { name: 'echo', schema } });
      expect(ok.status, ok.text).toBe(200);
      expect((ok.json() as Answer).output).toEqual({ echo: 'shape me' });
      expect(chatCalls(bed.openai)[0]?.body.response_format).toMatchObject({
        type: 'json_schema',
        json_schema: { name: 'echo', schema },
      });

      bed.openai.reset();
      const never = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
      const bad = await post(path, { content: 'impossible', responseFormat: { schema: never } });
      const body = expectError(bad, 422, 'UNPROCESSABLE');
      // The model was asked once, then once more with the problems.
      const calls = chatCalls(bed.openai);
      expect(calls).toHaveLength(2);
      expect(textOf(calls[1]?.messages.at(-1)?.content)).toContain('does not follow');
      const runId = (body.details as { runId: string }).runId;
      const run = await call(bed, 'GET', `/api/agents/${agent.id}/runs/${runId}`);
      expect(run.json()).toMatchObject({ status: 'failed', error: { code: 'UNPROCESSABLE' } });

      expectNamesField(
        await post(path, {
          content: 'x',
          responseFormat: { schema: { type: 'object', patternProperties: {} } },
        }),
        'responseFormat.schema',
      );
    });

    it("another account's run is a 404; a waiting run is cancelled once", async () => {
      const agent = await createAgent(bed, { model: MODEL, tools: [WEATHER] });
      toolCallsThenText(bed.openai, { name: 'get_weather', arguments: { city: 'Rome' } });
      const paused = (await post(`/api/agents/${agent.id}/messages`, { content: 'x' })).json() as Answer;
      const other = await otherAccountKey(bed.p);
      const res = await call(bed, 'POST', `/api/agents/${agent.id}/runs/${paused.runId}/tool-outputs`, {
        key: other,
        body: { toolOutputs: [{ toolCallId: paused.requiredAction?.toolCalls[0]?.id, output: 'x' }] },
      });
      expect(res.status, res.text).toBe(404);
    });
  },
);
