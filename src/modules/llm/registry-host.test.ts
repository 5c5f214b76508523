import { describe, expect, it } from 'vitest';
import { registryAllowed, registryHostOf } from './registry-host.js';

describe('registryHostOf: the registry an Ollama model name pulls from', () => {
  it('names no host for the default registry', () => {
    for (const name of ['llama3', 'llama3:8b', 'library/llama3', 'user/model:latest']) {
      expect(registryHostOf(name), name).toBeNull();
    }
  });

  it('reads a host, a port and a scheme as Ollama does', () => {
    expect(registryHostOf('hf.co/bartowski/model:Q4')).toEqual({ host: 'hf.co', port: 443 });
    expect(registryHostOf('127.0.0.1:8080/library/x:latest')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(registryHostOf('[::1]:5000/library/x')).toEqual({ host: '::1', port: 5000 });
    expect(registryHostOf('localhost/a/b')).toEqual({ host: 'localhost', port: 443 });
    expect(registryHostOf('http://10.0.0.1/a/b')).toEqual({ host: '10.0.0.1', port: 80 });
    expect(registryHostOf('https://registry.example.com:8443/a/b/c')).toEqual({
      host: 'registry.example.com',
      port: 8443,
    });
  });

  it('splits an unbracketed IPv6 host at its last colon, as Go does', () => {
    expect(registryHostOf('0::ffff:a00:1:443/library/x')).toEqual({ host: '0::ffff:a00:1', port: 443 });
    // Not a host Go reads at all; whatever it is, no list names it.
    const odd = registryHostOf('::1/a/b');
    expect(odd && registryAllowed(odd, ['registry.ollama.ai', 'hf.co'])).toBe(false);
  });
});

describe('registryAllowed: only registries the operator lists', () => {
  const list = ['registry.ollama.ai', 'hf.co', 'registry.internal:5000'];
  it('takes a listed host on any port, a host:port entry on that port only', () => {
    expect(registryAllowed({ host: 'HF.co', port: 443 }, list)).toBe(true);
    expect(registryAllowed({ host: 'registry.internal', port: 5000 }, list)).toBe(true);
    expect(registryAllowed({ host: 'registry.internal', port: 5001 }, list)).toBe(false);
    expect(registryAllowed({ host: '127.0.0.1', port: 443 }, list)).toBe(false);
    expect(registryAllowed({ host: 'evil.example', port: 443 }, [])).toBe(false);
  });
});
