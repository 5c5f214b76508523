import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { createOutboundHostGuard } from '../../src/core/http/outbound-host.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { loadFixture } from './support/n8n-fixtures.js';

/**
 * The Think tool in a real export (template 3790, "Advance Stock Analysis", test/fixtures/n8n/
 * SOURCES-templates.md), imported unmodified: a Form Trigger v2.2 starts an AI Agent v1.7 with a
 * Window Buffer Memory, the Think tool v1, two Call n8n Workflow tools and a Structured Output Parser;
 * the OpenAI node v1.8 rewrites two fields as JSON; the HTML node fills the report, a Code node colours
 * it, and Send Email v2.1 mails it to the address of the form, through a local SMTP server.
 */

const openai = new FakeOpenAi();
const mails: ParsedMail[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, _session, cb) {
    simpleParser(stream)
      .then((mail) => {
        mails.push(mail);
        cb();
      })
      .catch(cb);
  },
});
let smtpPort = 0;

beforeAll(async () => {
  await openai.start();
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await openai.stop();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

/** The report the agent answers, in the shape of the template's output parser example. */
const report = {
  stockSymbol: 'TSLA',
  analysisDate: '28/11/2026',
  recommendationClass: 'positive',
  recommendationTitle: 'מגמה חיובית',
  recommendationText: 'טקסט',
  bullishCount: 3,
  neutralCount: 1,
  bearishCount: 1,
  bullishHeight: 60,
  neutralHeight: 20,
  bearishHeight: 20,
  overallSentiment: 'חיובי',
  Recommendation: 'ממליץ לקנות',
  sentimentScore: 0.42,
  chartImageUrl: 'https://charts.example/tsla.png',
  technicalAnalysis: '<p>ניתוח</p>',
  // The template's HTML reads five of each; with fewer, n8n renders the missing ones empty.
  topArticles: [1, 2, 3].map((n) => ({
    title: `כותרת ${n}`,
    url: `https://news.example/${n}`,
    source: 'Reuters',
    date: '27/11/2026',
    sentimentHebrew: 'חיובי-חזק',
  })),
  hotTopics: [1, 2].map((n) => ({ topic: `Topic ${n}`, article_count: 2, average_relevance: 0.8 })),
};

describe('Think tool v1 (template 3790)', () => {
  it('the form’s ticker reaches the agent, which thinks, answers its report; the mail goes to the form’s address', async () => {
    const def = loadFixture('templates/agent-v1.7-think-form-email.json');
    const calls: string[] = [];
    openai.queue(
      toolCalls([
        { id: 'call_t', name: 'thinking_tool', arguments: JSON.stringify({ input: 'TSLA: chart first.' }) },
      ]),
      completion(`\`\`\`json\n${JSON.stringify({ output: report })}\n\`\`\``),
      completion(JSON.stringify({ technicalAnalysis: 'ניתוח משופר', recommendationText: 'המלצה משופרת' })),
    );
    const guarded = createOutboundHttp({ allowHosts: [new URL(openai.base).host], timeoutMs: 10_000 });
    const engine = new WorkflowEngine(
      testDeps({
        http: guarded,
        outboundHost: createOutboundHostGuard({ allowHosts: ['127.0.0.1'] }),
        tenant: 'acct_templates_think',
        // The two workflow tools name workflows of the author's instance; this run does not call them.
        subWorkflow: async (call) => {
          calls.push(call.workflowId);
          throw new Error(`Workflow '${call.workflowId}' was not found`);
        },
        // The export's credential ids.
        credential: async (id): Promise<Record<string, string>> => {
          if (id === '2m1HH5crgPAhTJlv') return { apiKey: 'oa-key', url: `${openai.base}/v1` };
          if (id === '583PMpoYf46gbncd')
            return { host: '127.0.0.1', port: String(smtpPort), secure: 'false', disableStartTls: 'true' };
          throw new Error(`Credential '${id}' not found`);
        },
      }),
      defaultNodeRegistry,
    );
    expect(engine.validate(def)).toEqual([]);
    const done = await engine.run(
      def,
      {
        nodeName: 'On form submission',
        items: [
          {
            json: {
              'Ticker symbol:': 'TSLA',
              'Email:': 'reader@example.com',
              submittedAt: '2026-11-30T10:00:00.000Z',
              formMode: 'production',
            },
          },
        ],
      },
      runContext,
    );
    expect(done.state.error).toBeNull();
    expect(calls).toEqual([]);

    // The agent: the form's field in its prompt, the Think tool offered under v1's name.
    const first = openai.requests[0] as {
      messages: Array<{ role: string; content: string }>;
      tools: unknown[];
    };
    expect(first.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(first.messages.at(-1)?.content).toContain('Ticker = TSLA');
    const names = (first.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(['thinking_tool', 'technical_analysis', 'trends_analysis']));
    // The thought comes back to the model as the tool's answer, as it was written.
    const second = openai.requests[1] as { messages: Array<{ role: string; content: string }> };
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: 'TSLA: chart first.' });

    // The parsed report is the agent's output; the OpenAI node answers parsed JSON (jsonOutput).
    const agent = done.state.runData['AI Agent']?.[0]?.output[0]?.[0]?.json as { output: typeof report };
    expect(agent.output).toEqual(report);
    const refined = done.state.runData['Refine Text']?.[0]?.output[0]?.[0]?.json as {
      message: { content: Record<string, string> };
    };
    expect(refined.message.content).toEqual({
      technicalAnalysis: 'ניתוח משופר',
      recommendationText: 'המלצה משופרת',
    });

    // One mail, to the form's address, its subject from the agent's report, its HTML the filled template.
    expect(mails).toHaveLength(1);
    const mail = mails[0] as ParsedMail;
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : '').toBe('reader@example.com');
    expect(mail.subject).toBe('הסקירה היומית של מניית TSLA: 28/11/2026');
    expect(mail.html).toContain('ניתוח משופר');
    expect(mail.html).toContain('https://charts.example/tsla.png');
    // The Code node coloured the positive recommendation's button green.
    expect(mail.html).toContain('#29cc7a');
  }, 60_000);
});
