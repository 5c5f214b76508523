import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatMessage, ChatRequest, ModelEntry, Passage, Retriever } from '../types.js';
import {
  MAX_CANDIDATES,
  MAX_CONTEXT_CHARS,
  NOTHING_FOUND,
  NOTHING_FOUND_IN_KNOWLEDGE,
} from './extractive.js';
import { BuiltinProvider } from './index.js';
import { splitSentences } from './sentences.js';
import { estimateTokens } from './tokens.js';

const extractive: ModelEntry = {
  name: 'builtin/extractive',
  provider: 'builtin',
  upstreamModel: 'extractive',
  kind: 'chat',
  contextWindow: 32_768,
  fallbacks: [],
  timeoutMs: 30_000,
};

const CONTEXT = [
  'The Eiffel Tower is in Paris. It was completed in 1889 for the World Fair.',
  'The tower is 330 metres tall. Berlin is the capital of Germany.',
  'Photosynthesis converts light into chemical energy. Paris is the capital of France.',
].join('\n');

function ask(question: string, extra: Partial<ChatRequest> = {}, history: ChatMessage[] = []): ChatRequest {
  return {
    model: 'extractive',
    messages: [{ role: 'system', content: CONTEXT }, ...history, { role: 'user', content: question }],
    options: {},
    ...extra,
  };
}

async function collect(stream: AsyncIterable<ChatEvent>): Promise<{ text: string; events: ChatEvent[] }> {
  const events: ChatEvent[] = [];
  for await (const event of stream) events.push(event);
  const text = events.map((e) => (e.type === 'delta' ? (e.content ?? '') : '')).join('');
  return { text, events };
}

const signal = new AbortController().signal;

describe('sentence splitter', () => {
  it('splits at sentence ends and line breaks', () => {
    expect(splitSentences('One here. Two there! Three? Four\nFive\n\n- six')).toEqual([
      'One here.',
      'Two there!',
      'Three?',
      'Four',
      'Five',
      '- six',
    ]);
  });

  it('keeps abbreviations, initials, acronyms and decimals inside the sentence', () => {
    expect(
      splitSentences(
        'Pi is about 3.14159 here. Fruit, e.g. apples, i.e. food. Dr. Smith met J. R. Tolkien. ' +
          'He moved to the U.S. in May. It costs approx. 5 euros. Done',
      ),
    ).toEqual([
      'Pi is about 3.14159 here.',
      'Fruit, e.g. apples, i.e. food.',
      'Dr. Smith met J. R. Tolkien.',
      'He moved to the U.S. in May.',
      'It costs approx. 5 euros.',
      'Done',
    ]);
  });

  it('handles closing quotes, ellipses and CJK full stops, and drops punctuation-only lines', () => {
    expect(splitSentences('"Really?!" she asked. Wait… and then. (Aside.) ---\n***')).toEqual([
      '"Really?!" she asked.',
      'Wait… and then.',
      '(Aside.)',
    ]);
    expect(splitSentences('東京は首都です。大阪は大きい！本当？')).toEqual([
      '東京は首都です。',
      '大阪は大きい！',
      '本当？',
    ]);
  });
});

describe('sentence splitter on hard-wrapped Markdown', () => {
  it('joins the lines of a wrapped paragraph or list item, and keeps short lines, lists and tables apart', () => {
    const wrapped = [
      "The manifest is served from the cache (keyed by game and the manifest's",
      '`version`) for 5 minutes after the last check; then the upstream manifest is fetched again.',
      '- **Expressions** (any holder of `workflow:write`, e.g. a Writer, writes them): they run',
      '  in QuickJS compiled to WebAssembly on worker threads.',
      '| a table row that is long enough to look like a wrapped line of prose | x |',
      '| another row |',
      'Short line',
      'Another short line',
    ].join('\n');
    expect(splitSentences(wrapped)).toEqual([
      "The manifest is served from the cache (keyed by game and the manifest's `version`) for 5 minutes after the last check; then the upstream manifest is fetched again.",
      '- **Expressions** (any holder of `workflow:write`, e.g. a Writer, writes them): they run in QuickJS compiled to WebAssembly on worker threads.',
      '| a table row that is long enough to look like a wrapped line of prose | x |',
      '| another row |',
      'Short line',
      'Another short line',
    ]);
  });
});

describe('token estimate', () => {
  it('is zero for nothing, about a token per four characters or 0.75 words, and per CJK character', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('a')).toBe(1);
    const english = 'The quick brown fox jumps over the lazy dog near the river bank today.';
    expect(estimateTokens(english)).toBeGreaterThanOrEqual(14);
    expect(estimateTokens(english)).toBeLessThanOrEqual(21);
    expect(estimateTokens('東京は日本の首都です')).toBeGreaterThanOrEqual(10);
  });
});

describe('builtin/extractive', () => {
  const provider = new BuiltinProvider();

  it('quotes the best sentences verbatim, in their original order, with their sources', async () => {
    const { text } = await collect(
      await provider.chat(ask('How tall is the Eiffel Tower?'), extractive, signal),
    );
    expect(text).toBe(
      'The Eiffel Tower is in Paris. The tower is 330 metres tall.\n\nSources: message 0 (from the conversation)',
    );

    const { text: capital } = await collect(
      await provider.chat(ask('What is the capital of France?'), extractive, signal),
    );
    expect(capital).toBe('Paris is the capital of France.\n\nSources: message 0 (from the conversation)');
  });

  it('names each message it quotes and never quotes the question itself', async () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'Tell me about volcanoes.' },
      { role: 'assistant', content: 'Mount Etna is an active volcano in Sicily.' },
      { role: 'tool', content: 'Etna erupted most recently in 2024.', toolName: 'search' },
    ];
    const { text } = await collect(
      await provider.chat(ask('When did Etna erupt?', {}, history), extractive, signal),
    );
    expect(text).toContain('Etna erupted most recently in 2024.');
    expect(text).toMatch(/\n\nSources: (message 2, )?message 3 \(from the conversation\)$/);
    expect(text).not.toContain('When did');
  });

  it('says plainly that it found nothing, and never answers function words alone', async () => {
    for (const question of ['Who won the 2018 football world cup?', 'What is it?']) {
      const { text } = await collect(await provider.chat(ask(question), extractive, signal));
      expect(text).toBe(NOTHING_FOUND);
    }
    const alone = await collect(
      await provider.chat(
        { model: 'extractive', messages: [{ role: 'user', content: 'Eiffel?' }], options: {} },
        extractive,
        signal,
      ),
    );
    expect(alone.text).toBe(NOTHING_FOUND);
  });

  it('streams a delta per sentence, then the sources, then done with estimated usage', async () => {
    const request = ask('When was the tower completed and how tall is it?', {
      tools: [{ type: 'function', function: { name: 'lookup' } }], // ignored: it cannot call tools
    });
    const { events, text } = await collect(await provider.chat(request, extractive, signal));
    const deltas = events.filter((e) => e.type === 'delta');
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.at(-1)).toEqual({
      type: 'delta',
      content: '\n\nSources: message 0 (from the conversation)',
    });
    expect(deltas.every((d) => d.toolCalls === undefined)).toBe(true);
    const done = events.at(-1);
    expect(done).toEqual({
      type: 'done',
      doneReason: 'stop',
      usage: {
        promptTokens: estimateTokens(CONTEXT) + estimateTokens(request.messages[1]!.content),
        completionTokens: estimateTokens(text),
        estimated: true,
      },
    });
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  });

  it('answers JSON-mode requests with a JSON object', async () => {
    for (const format of ['json', { type: 'object' }] as const) {
      const { text } = await collect(
        await provider.chat(ask('How tall is the tower?', { format }), extractive, signal),
      );
      expect(JSON.parse(text)).toEqual({
        answer: 'The tower is 330 metres tall.',
        sources: ['message 0'],
        from: 'conversation',
      });
    }
    const { text } = await collect(
      await provider.chat(ask('Who is the pope?', { format: 'json' }), extractive, signal),
    );
    expect(JSON.parse(text)).toEqual({ answer: NOTHING_FOUND, sources: [], from: 'conversation' });
  });

  it('cuts the answer at maxTokens and says so', async () => {
    const question = 'When was the tower completed and how tall is it?';
    const full = await collect(await provider.chat(ask(question), extractive, signal));
    const first = full.events[0];
    expect(first?.type).toBe('delta');
    const firstText = first?.type === 'delta' ? (first.content ?? '') : '';
    expect(full.text.length).toBeGreaterThan(firstText.length);

    const request = ask(question, { options: { maxTokens: estimateTokens(firstText) } });
    const { events, text } = await collect(await provider.chat(request, extractive, signal));
    expect(text).toBe(firstText);
    expect(events.at(-1)).toMatchObject({ type: 'done', doneReason: 'length' });

    const tiny = await collect(
      await provider.chat(ask(question, { options: { maxTokens: 2 } }), extractive, signal),
    );
    expect(tiny.text).toBe(firstText.slice(0, 8));
  });

  it('stops on abort: before the answer it rejects, during the stream it ends without done', async () => {
    const before = new AbortController();
    before.abort();
    await expect(
      provider.chat(ask('How tall is the tower?'), extractive, before.signal),
    ).rejects.toMatchObject({
      name: 'AbortError',
    });

    const during = new AbortController();
    const events: ChatEvent[] = [];
    for await (const event of await provider.chat(ask('How tall is the tower?'), extractive, during.signal)) {
      events.push(event);
      during.abort();
    }
    expect(events).toHaveLength(1);
    expect(events[0]?.type).toBe('delta');
  });

  it(`considers at most ${MAX_CANDIDATES} sentences`, async () => {
    const filler = Array.from({ length: 3_000 }, (_, i) => `Filler line number ${i} about nothing.`);
    const late = [...filler, 'The secret password is swordfish.'].join('\n');
    const early = ['The secret password is swordfish.', ...filler].join('\n');
    const question = (content: string): ChatRequest => ({
      model: 'extractive',
      messages: [
        { role: 'system', content },
        { role: 'user', content: 'What is the secret password?' },
      ],
      options: {},
    });
    expect((await collect(await provider.chat(question(late), extractive, signal))).text).toBe(NOTHING_FOUND);
    expect((await collect(await provider.chat(question(early), extractive, signal))).text).toBe(
      'The secret password is swordfish.\n\nSources: message 0 (from the conversation)',
    );
  });

  it('reads a huge lone message in bounded parts: context from its start, the question from its end', async () => {
    const filler = 'Meadows are green in spring and quiet in winter. '.repeat(20_000);
    const content = `The granite tower stands in Oslo. ${filler}\nWhere does the granite tower stand?`;
    expect(content.length).toBeGreaterThan(MAX_CONTEXT_CHARS * 4);
    const request: ChatRequest = { model: 'extractive', messages: [{ role: 'user', content }], options: {} };
    const started = performance.now();
    const { text } = await collect(await provider.chat(request, extractive, signal));
    expect(text).toBe('The granite tower stands in Oslo.\n\nSources: message 0 (from the conversation)');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('refuses to embed', async () => {
    await expect(
      provider.embed({ model: 'extractive', input: ['x'] }, extractive, signal),
    ).rejects.toMatchObject({
      name: 'UpstreamError',
      retryable: false,
      status: 400,
    });
  });
});

describe('builtin/extractive with a registered retriever', () => {
  class ListRetriever implements Retriever {
    readonly calls: { query: string; accountId: string; limit: number }[] = [];
    constructor(private readonly passages: Passage[]) {}
    async retrieve(query: string, options: { accountId: string; limit: number }): Promise<Passage[]> {
      this.calls.push({ query, accountId: options.accountId, limit: options.limit });
      return this.passages;
    }
  }
  const passages: Passage[] = [
    {
      text: 'Returns are accepted within 30 days. Shipping is free above 50 euros.',
      source: 'Shop policy',
      score: 2,
    },
    { text: 'Refunds for returns reach your card within 5 days.', source: 'FAQ', score: 1 },
  ];
  const lone = (question: string): ChatRequest => ({
    model: 'extractive',
    messages: [{ role: 'user', content: question }],
    options: {},
    accountId: 'acc_1',
  });

  it("quotes the account's documents with their titles as sources", async () => {
    const retriever = new ListRetriever(passages);
    const warnings: string[] = [];
    const provider = new BuiltinProvider({
      retriever: () => retriever,
      log: { warn: (_obj, msg) => warnings.push(msg) },
    });
    const request = lone('How many days do I have for returns?');
    const { text } = await collect(await provider.chat(request, extractive, signal));
    // The sentence that answers, not its neighbour from another document.
    expect(text).toBe(
      'Returns are accepted within 30 days.\n\nSources: Shop policy (from the knowledge base)',
    );
    expect(retriever.calls).toEqual([
      { query: 'How many days do I have for returns?', accountId: 'acc_1', limit: 8 },
    ]);
    expect(warnings).toEqual([]);
  });

  it('falls back to a lone message that holds its own context when the retriever finds nothing', async () => {
    const provider = new BuiltinProvider({ retriever: () => new ListRetriever([]) });
    const request = lone('The tower is 330 metres tall. It opened in 1889. How tall is the tower?');
    const { text } = await collect(await provider.chat(request, extractive, signal));
    expect(text).toBe('The tower is 330 metres tall.\n\nSources: message 0 (from the conversation)');
  });

  it('reads the best passages up to 8,000 characters: four chunks of 2,000, not all eight retrieved', async () => {
    /** A passage of ~1,990 characters about crates, with `lead` first. */
    const passage = (i: number, lead = ''): Passage => {
      let text = lead;
      for (let n = 0; text.length < 1_950; n++)
        text += `Crates of batch ${i}-${n} wait on pallets in aisle ${n}. `;
      return { text: text.trim(), source: `Depot ${i}`, score: 10 - i };
    };
    const answer = 'The lighthouse on Quillan Point is painted red and white.';
    const withAnswerAt = (at: number) =>
      Array.from({ length: 8 }, (_, i) => passage(i, i === at ? `${answer} ` : ''));
    const question = lone('What colour is the lighthouse on Quillan Point?');
    const fourth = new BuiltinProvider({ retriever: () => new ListRetriever(withAnswerAt(3)) });
    expect((await collect(await fourth.chat(question, extractive, signal))).text).toBe(
      `${answer}\n\nSources: Depot 3 (from the knowledge base)`,
    );
    // The fifth passage is past the budget: a sentence there is not read.
    const fifth = new BuiltinProvider({ retriever: () => new ListRetriever(withAnswerAt(4)) });
    expect((await collect(await fifth.chat(question, extractive, signal))).text).toBe(
      NOTHING_FOUND_IN_KNOWLEDGE,
    );
  });

  it('does not search documents for a request that names no account', async () => {
    const retriever = new ListRetriever(passages);
    const warnings: string[] = [];
    const provider = new BuiltinProvider({
      retriever: () => retriever,
      log: { warn: (_obj, msg) => warnings.push(msg) },
    });
    const { text } = await collect(
      await provider.chat(ask('How many days for returns?'), extractive, signal),
    );
    expect(text).toBe(NOTHING_FOUND);
    expect(retriever.calls).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  it('turns a retriever failure into a retryable upstream error', async () => {
    const failing: Retriever = {
      retrieve: async () => {
        throw new Error('index offline');
      },
    };
    const provider = new BuiltinProvider({ retriever: () => failing });
    const request = lone('How tall is the tower?');
    await expect(provider.chat(request, extractive, signal)).rejects.toMatchObject({
      name: 'UpstreamError',
      retryable: true,
      message: expect.stringContaining('index offline'),
    });
  });
});

describe('builtin/extractive answers honestly', () => {
  const provider = new BuiltinProvider();
  const SHOP = [
    '# Shipping',
    'We ship to all fifty states, to Puerto Rico and to military addresses.',
    'Orders of $60 or more ship free with standard shipping.',
    '## Express',
    'Express delivery takes two business days.',
    '# Returns',
    'Unused candles can be returned within 30 days of delivery.',
  ].join('\n');
  const shop = (question: string): ChatRequest => ({
    model: 'extractive',
    messages: [
      { role: 'system', content: SHOP },
      { role: 'user', content: question },
    ],
    options: {},
  });

  it('abstains when the telling word of the question is nowhere, even if common ones are', async () => {
    for (const question of [
      'Do you ship to Canada?',
      'Can I pay with Bitcoin?',
      'Is there a student discount?',
    ]) {
      const { text } = await collect(await provider.chat(shop(question), extractive, signal));
      expect(text, question).toBe(NOTHING_FOUND);
    }
  });

  it('quotes the one sentence that answers, never a heading, never glued to one', async () => {
    const { text } = await collect(
      await provider.chat(shop('How long does express delivery take?'), extractive, signal),
    );
    expect(text).toBe(
      'Express delivery takes two business days.\n\nSources: message 0 (from the conversation)',
    );
    const returns = await collect(
      await provider.chat(shop('Can unused candles be returned?'), extractive, signal),
    );
    expect(returns.text).toBe(
      'Unused candles can be returned within 30 days of delivery.\n\nSources: message 0 (from the conversation)',
    );
    const headingOnly = await collect(await provider.chat(shop('Shipping?'), extractive, signal));
    expect(headingOnly.text).not.toMatch(/^#|Shipping\s*\n/);
  });

  it('matches words by their stem ("shipping" finds "ship")', async () => {
    const { text } = await collect(
      await provider.chat(shop('Which orders get free shipping?'), extractive, signal),
    );
    expect(text).toBe(
      'Orders of $60 or more ship free with standard shipping.\n\nSources: message 0 (from the conversation)',
    );
  });
});

describe('builtin/extractive quotes the smallest span that answers', () => {
  const retrieved = (passages: Passage[]) => ({
    async retrieve(): Promise<Passage[]> {
      return passages;
    },
  });
  const lone = (question: string): ChatRequest => ({
    model: 'extractive',
    messages: [{ role: 'user', content: question }],
    options: {},
    accountId: 'acc_1',
  });

  it('never quotes the half sentence a chunk starts or ends with', async () => {
    // Chunks of a hard-wrapped document cut between lines: both edges are pieces of sentences.
    const chunk = [
      'cached copy of the manifest is served when the upstream fails, and the failure is logged in',
      'the request log. The manifest cache keeps a copy for 5 minutes after the last check. When the',
      'upstream answers with a new version, the cached copy of the manifest is replaced and served',
    ].join('\n');
    const provider = new BuiltinProvider({
      retriever: () => retrieved([{ text: chunk, source: 'game.md', score: 1 }]),
    });
    const { text } = await collect(
      await provider.chat(lone('How long is the manifest cached copy served?'), extractive, signal),
    );
    expect(text).toBe(
      'The manifest cache keeps a copy for 5 minutes after the last check.\n\nSources: game.md (from the knowledge base)',
    );
  });

  it('prefers a short sentence to a long list that happens to hold the same words', async () => {
    const provider = new BuiltinProvider({
      retriever: () =>
        retrieved([
          {
            text:
              'Parts: graph (parents and children), node runner (resolves parameters per item, checks them against ' +
              'the schema, times the node, captures its error), expressions, parameters (schema check and ' +
              'defaults), run state, validate, webhook nodes, the workflow engine (the loop over results).',
            source: 'engine.md',
            score: 2,
          },
          {
            text: 'Workflow expressions run in a sandbox on worker threads.',
            source: 'security.md',
            score: 1,
          },
        ]),
    });
    const { text } = await collect(
      await provider.chat(lone('Where do workflow expressions run?'), extractive, signal),
    );
    expect(text).toBe(
      'Workflow expressions run in a sandbox on worker threads.\n\nSources: security.md (from the knowledge base)',
    );
  });

  it('reads number words as digits and "how long does it take" as asking for a duration', async () => {
    const provider = new BuiltinProvider();
    const context = [
      'The percentages of a blend must add up to 100.',
      'A refund takes effect once we open the parcel.',
      'A refund reaches your card within 5 business days.',
    ].join('\n');
    const ask = async (question: string) =>
      (
        await collect(
          await provider.chat(
            {
              model: 'extractive',
              messages: [
                { role: 'system', content: context },
                { role: 'user', content: question },
              ],
              options: {},
            },
            extractive,
            signal,
          ),
        )
      ).text.split('\n\n')[0];
    expect(await ask('Must blend percentages add up to one hundred?')).toBe(
      'The percentages of a blend must add up to 100.',
    );
    expect(await ask('How long does a refund take?')).toBe(
      'A refund reaches your card within 5 business days.',
    );
  });
});

describe('builtin/extractive: the conversation or the knowledge base', () => {
  const kb: Passage[] = [
    { text: '# Foxes\nA fox eats mice under the snow in winter.', source: 'Foxes', score: 1 },
    { text: 'Owls hunt voles at night.', source: 'Owls', score: 0.5 },
  ];
  const retriever = () => {
    const calls: string[] = [];
    const r: Retriever = {
      retrieve: async (query) => {
        calls.push(query);
        return kb;
      },
    };
    return { r, calls };
  };

  it('answers from the conversation when it carries context, without searching the knowledge base', async () => {
    const { r, calls } = retriever();
    const provider = new BuiltinProvider({ retriever: () => r });
    const request: ChatRequest = {
      model: 'extractive',
      messages: [
        { role: 'system', content: 'Orders ship in 2 days. Returns are free.' },
        { role: 'user', content: 'When do orders ship?' },
      ],
      options: {},
      accountId: 'acc_1',
    };
    const { text } = await collect(await provider.chat(request, extractive, signal));
    expect(text).toBe('Orders ship in 2 days.\n\nSources: message 0 (from the conversation)');
    expect(calls).toEqual([]);
  });

  it('searches the knowledge base when the context is empty, and says so', async () => {
    const { r, calls } = retriever();
    const provider = new BuiltinProvider({ retriever: () => r });
    const request: ChatRequest = {
      model: 'extractive',
      messages: [{ role: 'user', content: 'What does a fox eat in winter?' }],
      options: {},
      accountId: 'acc_1',
    };
    const { text } = await collect(await provider.chat(request, extractive, signal));
    expect(text).toBe(
      'A fox eats mice under the snow in winter.\n\nSources: Foxes (from the knowledge base)',
    );
    expect(calls).toEqual(['What does a fox eat in winter?']);
    const json = await collect(await provider.chat({ ...request, format: 'json' }, extractive, signal));
    expect(JSON.parse(json.text)).toEqual({
      answer: 'A fox eats mice under the snow in winter.',
      sources: ['Foxes'],
      from: 'knowledge base',
    });
    const none = await collect(
      await provider.chat(
        { ...request, messages: [{ role: 'user', content: 'Do you sell wax melts?' }] },
        extractive,
        signal,
      ),
    );
    expect(none.text).toBe(NOTHING_FOUND_IN_KNOWLEDGE);
  });

  it('searches only the knowledge base when asked, with a context present', async () => {
    const { r, calls } = retriever();
    const provider = new BuiltinProvider({ retriever: () => r });
    const base: ChatRequest = {
      model: 'extractive',
      messages: [
        { role: 'system', content: 'A fox in the zoo eats pellets.' },
        { role: 'user', content: 'What does a fox eat in winter?' },
      ],
      options: { extra: { knowledge_base: true } },
      accountId: 'acc_1',
    };
    const asked = await collect(await provider.chat(base, extractive, signal));
    expect(asked.text).toBe(
      'A fox eats mice under the snow in winter.\n\nSources: Foxes (from the knowledge base)',
    );
    const named: ChatRequest = {
      ...base,
      options: {},
      messages: [
        base.messages[0]!,
        { role: 'user', content: 'Search the knowledge base: what does a fox eat?' },
      ],
    };
    const inWords = await collect(await provider.chat(named, extractive, signal));
    expect(inWords.text).toMatch(
      /^A fox eats mice under the snow in winter\.\n\nSources: Foxes \(from the knowledge base\)$/,
    );
    const plain = await collect(await provider.chat({ ...base, options: {} }, extractive, signal));
    expect(plain.text).toBe('A fox in the zoo eats pellets.\n\nSources: message 0 (from the conversation)');
    expect(calls).toHaveLength(2);
  });
});
