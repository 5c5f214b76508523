/**
 * A topic's knowledge-cache entry on disk, so a restart does not rebuild it from every chunk row
 * (vector-cache.ts). A snapshot holds what the cache held: the keyword index's rows and postings, the
 * unit vectors column by column, and each document's stamp (revision, update, chunk count, model) with
 * its chunk ids. It is only a head start: on load, every document whose stamp differs from the
 * database's, or that is gone, is dropped from it and documents changed since are read from their rows,
 * so a stale snapshot costs its difference, never a wrong answer.
 *
 * Files live in DATA_DIR/knowledge-cache, one per (account, topic), named by a hash of both (no user
 * text in a path); the account and topic inside are checked on read. Written to a temporary file and
 * renamed, so a crash leaves the old snapshot or the new one. A file that does not parse is removed.
 *
 * Layout (little-endian): `kbsnap1\n`, a u32 byte length and a JSON header (padded to 4 bytes), then
 * four sections, each a u32 byte length and its bytes (padded to 4): row lengths (i32), postings per
 * term (i32), postings pairs (i32), vector columns (f32).
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { KeywordPart } from './keyword-index.js';
import type { VectorPart } from './vector-index.js';

export interface SnapshotDocument {
  id: string;
  stamp: string;
  model: string | null;
  ids: string[];
}

export interface TopicSnapshot {
  accountId: string;
  topic: string;
  documents: SnapshotDocument[];
  keywords: KeywordPart;
  vectors: VectorPart;
}

interface Header {
  accountId: string;
  topic: string;
  documents: SnapshotDocument[];
  keywordIds: string[];
  terms: string[];
  dimensions: number;
  vectorIds: string[];
}

const MAGIC = Buffer.from('kbsnap1\n');
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The snapshot as the buffers to write, in order. */
export function encodeSnapshot(s: TopicSnapshot): Buffer[] {
  const header: Header = {
    accountId: s.accountId,
    topic: s.topic,
    documents: s.documents,
    keywordIds: s.keywords.ids,
    terms: s.keywords.terms,
    dimensions: s.vectors.dimensions,
    vectorIds: s.vectors.ids,
  };
  const json = Buffer.from(JSON.stringify(header));
  const parts: Buffer[] = [MAGIC];
  const section = (bytes: Uint8Array) => {
    const size = Buffer.alloc(4);
    size.writeUInt32LE(bytes.byteLength);
    parts.push(size, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const pad = (4 - (bytes.byteLength % 4)) % 4;
    if (pad > 0) parts.push(Buffer.alloc(pad, 0x20));
  };
  section(json);
  section(
    new Uint8Array(s.keywords.lengths.buffer, s.keywords.lengths.byteOffset, s.keywords.lengths.byteLength),
  );
  section(
    new Uint8Array(s.keywords.counts.buffer, s.keywords.counts.byteOffset, s.keywords.counts.byteLength),
  );
  section(
    new Uint8Array(
      s.keywords.postings.buffer,
      s.keywords.postings.byteOffset,
      s.keywords.postings.byteLength,
    ),
  );
  section(
    new Uint8Array(s.vectors.columns.buffer, s.vectors.columns.byteOffset, s.vectors.columns.byteLength),
  );
  return parts;
}

/** Parses a snapshot; throws on anything that is not one whole snapshot. */
export function decodeSnapshot(bytes: Buffer): TopicSnapshot {
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a knowledge snapshot');
  let at = MAGIC.length;
  const section = (): Buffer => {
    if (at + 4 > bytes.length) throw new Error('a truncated knowledge snapshot');
    const size = bytes.readUInt32LE(at);
    at += 4;
    if (at + size > bytes.length) throw new Error('a truncated knowledge snapshot');
    const out = bytes.subarray(at, at + size);
    at += size + ((4 - (size % 4)) % 4);
    return out;
  };
  // Copies: typed arrays need aligned memory of their own (and the file's buffer can then go).
  const ints = (b: Buffer) => {
    const out = new Int32Array(b.byteLength / 4);
    new Uint8Array(out.buffer).set(b);
    return out;
  };
  const header = JSON.parse(section().toString('utf8')) as Header;
  const lengths = ints(section());
  const counts = ints(section());
  const postings = ints(section());
  const raw = section();
  const columns = new Float32Array(raw.byteLength / 4);
  new Uint8Array(columns.buffer).set(raw);
  if (
    lengths.length !== header.keywordIds.length ||
    counts.length !== header.terms.length ||
    columns.length !== header.dimensions * header.vectorIds.length
  )
    throw new Error('an inconsistent knowledge snapshot');
  return {
    accountId: header.accountId,
    topic: header.topic,
    documents: header.documents,
    keywords: { ids: header.keywordIds, lengths, terms: header.terms, counts, postings },
    vectors: { dimensions: header.dimensions, ids: header.vectorIds, columns },
  };
}

/** Snapshot files of one directory. Off on a big-endian host (the files are little-endian). */
export class TopicSnapshots {
  constructor(private readonly dir: string) {}

  static available(): boolean {
    return LITTLE_ENDIAN;
  }

  private file(accountId: string, topic: string): string {
    const name = createHash('sha256').update(accountId).update('\u0000').update(topic).digest('hex');
    return path.join(this.dir, `${name}.kbs`);
  }

  /** The topic's snapshot, or null (none, or one that does not parse: removed). */
  async read(accountId: string, topic: string): Promise<TopicSnapshot | null> {
    const file = this.file(accountId, topic);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch {
      return null;
    }
    try {
      const s = decodeSnapshot(bytes);
      return s.accountId === accountId && s.topic === topic ? s : null;
    } catch {
      await rm(file, { force: true }).catch(() => undefined);
      return null;
    }
  }

  async write(s: TopicSnapshot): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.file(s.accountId, s.topic);
    const temporary = `${file}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writev(encodeSnapshot(s));
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  }

  async remove(accountId: string, topic: string): Promise<void> {
    await rm(this.file(accountId, topic), { force: true });
  }
}
