/**
 * Issue 35, item 7: a registry entry's `inputs` may list `file` only where its provider's dialect
 * carries documents (OpenAI, Anthropic); an Ollama or built-in entry listing it is refused at boot,
 * naming the model and what it may list.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { configuredModels } from '../../src/modules/llm/model-file.js';

const load = (entries: object[]) =>
  configuredModels(parseConfig({ LLM_MODELS: JSON.stringify(entries), ANTHROPIC_TEST_KEY: 'k' }));

describe('model registry: the file input', () => {
  it('takes file on OpenAI and Anthropic entries', () => {
    const models = load([
      { provider: 'openai', name: 'o', inputs: ['text', 'image', 'file'] },
      { provider: 'anthropic', name: 'a', apiKeyEnv: 'ANTHROPIC_TEST_KEY', inputs: ['text', 'file'] },
    ]);
    expect(models.find((m) => m.name === 'o')?.inputs).toEqual(['text', 'image', 'file']);
    expect(models.find((m) => m.name === 'a')?.inputs).toEqual(['text', 'file']);
  });

  it('refuses file on an Ollama entry, naming the model and what it may list', () => {
    expect(() => load([{ provider: 'ollama', name: 'llava', inputs: ['text', 'image', 'file'] }])).toThrow(
      "model 'llava': the ollama provider takes no file input (inputs may list text and image)",
    );
  });

  it('refuses an unknown input and a repeated one', () => {
    expect(() => load([{ provider: 'openai', name: 'o', inputs: ['audio'] }])).toThrow(
      /invalid model entries/,
    );
    expect(() => load([{ provider: 'openai', name: 'o', inputs: ['file', 'file'] }])).toThrow(
      /invalid model entries/,
    );
  });
});
