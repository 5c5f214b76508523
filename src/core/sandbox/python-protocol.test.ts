import { describe, expect, it } from 'vitest';
import { LOG_CHARS, LOG_LINES, readReply } from './python-protocol.js';

// What an interpreter's process says is read as untrusted: a compromised child gets its interpreter
// replaced, never its message believed.
describe('Python interpreter messages', () => {
  it('reads the messages of the protocol', () => {
    expect(readReply({ ready: true }, 100)).toEqual({ kind: 'ready' });
    expect(readReply({ id: 3, ok: true, output: 'x', logs: [{ level: 'log', message: 'hi' }] }, 100)).toEqual(
      {
        kind: 'answer',
        id: 3,
        ok: true,
        output: 'x',
        logs: [{ level: 'log', message: 'hi' }],
        pending: [],
      },
    );
    expect(readReply({ id: 3, ok: false, error: 'boom', logs: [], broken: true }, 100)).toMatchObject({
      ok: false,
      broken: true,
      oversize: false,
    });
    expect(readReply({ settled: 3, pending: ['Timeout'] }, 100)).toEqual({
      kind: 'settled',
      id: 3,
      pending: ['Timeout'],
    });
  });

  it.each([
    ['not an object', 'ready'],
    ['an array', [1]],
    ['no id', { ok: true, output: 'x', logs: [] }],
    ['an id that is not a positive integer', { id: -1, ok: true, output: 'x', logs: [] }],
    ['an output that is not text', { id: 1, ok: true, output: { a: 1 }, logs: [] }],
    ['an output past the bound', { id: 1, ok: true, output: 'x'.repeat(101), logs: [] }],
    ['logs that are not a list', { id: 1, ok: true, output: null, logs: 'x' }],
    [
      'too many log lines',
      { id: 1, ok: true, output: null, logs: Array(LOG_LINES + 1).fill({ level: 'log', message: '' }) },
    ],
    [
      'a log line too long',
      { id: 1, ok: true, output: null, logs: [{ level: 'log', message: 'x'.repeat(LOG_CHARS + 2) }] },
    ],
    ['a log level of its own', { id: 1, ok: true, output: null, logs: [{ level: 'alert', message: 'x' }] }],
    ['pending that is not a list of names', { id: 1, ok: true, output: null, logs: [], pending: [1] }],
    ['too many pending names', { settled: 1, pending: Array(21).fill('Timeout') }],
    ['an error that is not text', { id: 1, ok: false, error: 1, logs: [] }],
    ['an ok that is not a boolean', { id: 1, ok: 'yes', output: null, logs: [] }],
  ])('refuses %s', (_what, message) => {
    expect(readReply(message, 100)).toBeNull();
  });
});
