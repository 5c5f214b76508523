// Runs inside the QuickJS sandbox: the part of Node's `Buffer`, `btoa` and `atob` that n8n's Code node
// examples use to make and read binary data (`Buffer.from(text).toString('base64')`). The bytes stay
// base64 in the guest; conversions go to the worker's Node Buffer through `__hostBytes`, which takes and
// returns only strings and numbers, and is then removed from the global object.
(() => {
  const host = globalThis.__hostBytes;
  delete globalThis.__hostBytes;
  const ENCODINGS = ['utf8', 'utf-8', 'base64', 'base64url', 'hex', 'latin1', 'binary', 'ascii', 'utf16le'];
  const encodingOf = (encoding) => {
    const name = encoding === undefined ? 'utf8' : String(encoding).toLowerCase();
    if (!ENCODINGS.includes(name)) throw new TypeError(`Unknown encoding: ${encoding}`);
    return name;
  };

  class Buffer {
    #base64;
    constructor(base64) {
      this.#base64 = base64;
    }
    static from(value, encoding) {
      if (value instanceof Buffer) return new Buffer(value.#base64);
      if (typeof value === 'string') return new Buffer(host('from', encodingOf(encoding), value));
      if (Array.isArray(value) || value instanceof Uint8Array)
        return new Buffer(host('fromBytes', 'base64', Array.from(value, (b) => b & 255).join(',')));
      throw new TypeError('Buffer.from takes a string, an array of bytes or a Buffer');
    }
    static isBuffer(value) {
      return value instanceof Buffer;
    }
    static byteLength(value, encoding) {
      return Buffer.from(value, encoding).length;
    }
    static concat(list) {
      return new Buffer(host('concat', 'base64', list.map((b) => Buffer.from(b).#base64).join(',')));
    }
    get length() {
      return host('length', 'base64', this.#base64);
    }
    toString(encoding) {
      const name = encodingOf(encoding);
      return name === 'base64' ? this.#base64 : host('toString', name, this.#base64);
    }
    toJSON() {
      return {
        type: 'Buffer',
        data: host('bytes', 'base64', this.#base64).split(',').filter(Boolean).map(Number),
      };
    }
  }

  globalThis.Buffer = Buffer;
  globalThis.btoa = (text) => host('btoa', 'latin1', String(text));
  globalThis.atob = (text) => host('atob', 'base64', String(text));
})();
