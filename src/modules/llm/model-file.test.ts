import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config.js';
import { configuredModels } from './model-file.js';

const dir = mkdtempSync(path.join(tmpdir(), 'models-'));
const file = (name: string, text: string) => {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
};
const models = (env: Record<string, string>) => configuredModels(parseConfig(env));
const problem = (env: Record<string, string>) => {
  try {
    configuredModels(parseConfig(env));
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
};

describe('model registry configuration', () => {
  it('has the built-in models with no configuration at all', () => {
    expect(models({}).map((m) => m.name)).toEqual([
      'builtin/hashed-ngrams',
      'builtin/use-lite',
      'builtin/extractive',
    ]);
  });

  it('reads YAML and JSON files; LLM_MODELS adds and replaces by name', () => {
    const yaml = file(
      'm.yaml',
      'models:\n  - name: llama3.1\n    provider: ollama\n  - name: small\n    provider: ollama\n    upstreamModel: qwen:0.5b\n',
    );
    const fromYaml = models({ MODELS_FILE: yaml, OLLAMA_URL: 'http://gpu:11434/' });
    expect(fromYaml.find((m) => m.name === 'llama3.1')).toMatchObject({
      provider: 'ollama',
      upstreamModel: 'llama3.1',
      kind: 'chat',
      baseUrl: 'http://gpu:11434',
    });
    const json = file('m.json', JSON.stringify([{ name: 'e', provider: 'ollama', kind: 'embedding' }]));
    expect(models({ MODELS_FILE: json }).find((m) => m.name === 'e')?.kind).toBe('embedding');
    const both = models({
      MODELS_FILE: yaml,
      LLM_MODELS: JSON.stringify([{ name: 'small', provider: 'openai', baseUrl: 'http://vllm:8000/v1' }]),
    });
    expect(both.find((m) => m.name === 'small')).toMatchObject({
      provider: 'openai',
      upstreamModel: 'small',
    });
  });

  it('sends OPENAI_API_KEY only to OPENAI_BASE_URL; apiKeyEnv names another variable', () => {
    const list = models({
      OPENAI_API_KEY: 'sk-openai',
      VLLM_KEY: 'vllm-secret',
      LLM_MODELS: JSON.stringify([
        { name: 'gpt', provider: 'openai' },
        { name: 'local', provider: 'openai', baseUrl: 'http://127.0.0.1:8000/v1' },
        { name: 'keyed', provider: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyEnv: 'VLLM_KEY' },
      ]),
    });
    expect(list.find((m) => m.name === 'gpt')?.apiKey).toBe('sk-openai');
    expect(list.find((m) => m.name === 'local')?.apiKey).toBeUndefined();
    expect(list.find((m) => m.name === 'keyed')?.apiKey).toBe('vllm-secret');
  });

  it('refuses to start on a bad registry, naming the problem', () => {
    const entry = (e: Record<string, unknown>) => ({ LLM_MODELS: JSON.stringify([{ name: 'm', ...e }]) });
    expect(problem(entry({ provider: 'ollama', fallbacks: ['ghost'] }))).toMatch(
      /falls back to unknown model 'ghost'/,
    );
    expect(problem(entry({ provider: 'ollama', fallbacks: ['builtin/hashed-ngrams'] }))).toMatch(
      /\(chat\) falls back/,
    );
    expect(problem(entry({ provider: 'ollama', fallbacks: ['m'] }))).toMatch(/falls back to itself/);
    expect(problem(entry({ provider: 'azure' }))).toMatch(
      /unknown provider 'azure' \(known: builtin, ollama, openai, anthropic\)/,
    );
    // A provider's own settings come from its catalogue entry: the built-in models take no server.
    expect(problem(entry({ provider: 'builtin', upstreamModel: 'extractive', baseUrl: 'http://x' }))).toMatch(
      /the builtin provider does not take 'baseUrl'/,
    );
    // `version` (anthropic-version) is the anthropic provider's only.
    expect(problem(entry({ provider: 'ollama', version: '2023-06-01' }))).toMatch(
      /the ollama provider does not take 'version'/,
    );
    expect(problem(entry({ provider: 'openai', apiKeyEnv: 'MISSING_KEY' }))).toMatch(
      /MISSING_KEY, which is not set/,
    );
    expect(problem(entry({ provider: 'builtin', upstreamModel: 'gpt-5' }))).toMatch(/unknown built-in model/);
    expect(problem(entry({ provider: 'ollama', baseUrl: 'file:///etc/passwd' }))).toMatch(
      /invalid model entries/,
    );
    expect(problem({ LLM_MODELS: '[{' })).toMatch(/LLM_MODELS is not valid JSON/);
    expect(problem({ MODELS_FILE: path.join(dir, 'absent.yaml') })).toMatch(/cannot be read/);
    expect(problem({ MODELS_FILE: file('bad.yaml', 'models: [ {') })).toMatch(/not valid YAML/);
  });
});
