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
 * They never outlive what they copy: a deleted document's topic loses its file at once (vector-cache.ts
 * saves a held topic again once quiet), a start removes the files of topics with no indexed document
 * left (a deleted topic or account, or deletes made while this process was down), and the folder is
 * bounded by `maxBytes` (KNOWLEDGE_SNAPSHOT_MAX_MB): past it the files read or written least recently go.
 *
 * Layout (little-endian): `kbsnap1\n`, a u32 byte length and a JSON header (padded to 4 bytes), then
 * four sections, each a u32 byte length and its bytes (padded to 4): row lengths (i32), postings per
 * term (i32), postings pairs (i32), vector columns (f32).
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
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

const SUFFIX = '.kbs';

/** Snapshot files of one directory. Off on a big-endian host (the files are little-endian). */
export class TopicSnapshots {
  /** Removals per file: a write that was under way when its file was removed removes what it wrote. */
  private readonly removals = new Map<string, number>();

  constructor(
    private readonly dir: string,
    /** The most bytes the directory's snapshots may take together. */
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  static available(): boolean {
    return LITTLE_ENDIAN;
  }

  private name(accountId: string, topic: string): string {
    return `${createHash('sha256').update(accountId).update('\u0000').update(topic).digest('hex')}${SUFFIX}`;
  }

  private file(accountId: string, topic: string): string {
    return path.join(this.dir, this.name(accountId, topic));
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
      if (s.accountId !== accountId || s.topic !== topic) return null;
      // Read: the most recently used files are the ones the bound keeps.
      const now = new Date();
      await utimes(file, now, now).catch(() => undefined);
      return s;
    } catch {
      await rm(file, { force: true }).catch(() => undefined);
      return null;
    }
  }

  /**
   * Writes the topic's snapshot, then removes the least recently used files while the directory holds
   * more than `maxBytes`. A snapshot larger than the bound on its own is not written (its old file goes).
   */
  async write(s: TopicSnapshot): Promise<void> {
    const file = this.file(s.accountId, s.topic);
    const parts = encodeSnapshot(s);
    if (parts.reduce((n, b) => n + b.byteLength, 0) > this.maxBytes) {
      await this.remove(s.accountId, s.topic);
      return;
    }
    const removals = this.removals.get(file) ?? 0;
    await mkdir(this.dir, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writev(parts);
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
    // Removed while it was written (a document of the topic was deleted): what was copied before goes.
    if ((this.removals.get(file) ?? 0) !== removals) await rm(file, { force: true });
    await this.bound(path.basename(file));
  }

  async remove(accountId: string, topic: string): Promise<void> {
    const file = this.file(accountId, topic);
    this.removals.set(file, (this.removals.get(file) ?? 0) + 1);
    await rm(file, { force: true });
  }

  /**
   * Removes every snapshot but those of `live` topics (each `[accountId, topic]`), and temporary files
   * a stopped write left. Returns how many files went.
   */
  async prune(live: Iterable<readonly [string, string]>): Promise<number> {
    const keep = new Set<string>();
    for (const [accountId, topic] of live) keep.add(this.name(accountId, topic));
    let removed = 0;
    for (const name of await this.names()) {
      if (keep.has(name)) continue;
      // A write under way is left (its temporary file ends in its process's id).
      if (name.endsWith('.tmp')) {
        const owner = Number(name.slice(0, -'.tmp'.length).split('.').at(-1));
        if (Number.isInteger(owner) && alive(owner)) continue;
      }
      if (!name.endsWith(SUFFIX) && !name.endsWith('.tmp')) continue;
      await rm(path.join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }

  /** Bytes of the directory's snapshots (for tests and figures). */
  async bytes(): Promise<number> {
    let total = 0;
    for (const f of await this.files()) total += f.size;
    return total;
  }

  private async names(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch {
      return [];
    }
  }

  private async files(): Promise<Array<{ name: string; size: number; used: number }>> {
    const out = [];
    for (const name of await this.names()) {
      if (!name.endsWith(SUFFIX)) continue;
      const info = await stat(path.join(this.dir, name)).catch(() => null);
      if (info) out.push({ name, size: info.size, used: info.mtimeMs });
    }
    return out;
  }

  /** Removes the least recently used snapshots (never `keep`) while they take more than `maxBytes`. */
  private async bound(keep: string): Promise<void> {
    if (!Number.isFinite(this.maxBytes)) return;
    const files = await this.files();
    let total = files.reduce((n, f) => n + f.size, 0);
    for (const f of files.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      if (f.name === keep) continue;
      await rm(path.join(this.dir, f.name), { force: true });
      total -= f.size;
    }
  }
}

/** Whether a process of this id runs (signal 0 checks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
