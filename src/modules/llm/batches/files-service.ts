/**
 * OpenAI's `/v1/files`, per account: uploads for batches and user data, and what batches write. The
 * bytes are kept in the database (bounded: `MAX_FILE_BYTES`), so every process of the platform serves them.
 */
import type { Principal } from '../../../core/auth/principal.js';
import { AppError } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import type { FileRow, FileStore, FilesUsage } from './file-store.js';

/** Largest upload (OpenAI allows 512 MB; a gateway that keeps files in its database, less). */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** What a client may upload; `batch_output` files are the batches' own. */
export const UPLOAD_PURPOSES = ['batch', 'user_data'] as const;

export const fileView = (row: FileRow) => ({
  id: row.id,
  object: 'file' as const,
  bytes: row.bytes,
  created_at: row.created_at,
  filename: row.filename,
  purpose: row.purpose,
  status: 'processed' as const,
  expires_at: null,
  status_details: null,
});
export type FileView = ReturnType<typeof fileView>;

/** What one account's files may hold; 0: no bound. */
export interface FilesQuota {
  maxBytes: number;
  maxFiles: number;
}

/** The refusal of an upload past the quota: 413 for bytes, 400 for the count, what is held in details. */
function overQuota(what: 'bytes' | 'count', used: FilesUsage, quota: FilesQuota, bytes: number): AppError {
  const details = {
    usedBytes: used.bytes,
    files: used.count,
    maxBytes: quota.maxBytes,
    maxFiles: quota.maxFiles,
  };
  const hint = 'delete files (DELETE /v1/files/{file_id}) to make room';
  return what === 'bytes'
    ? new AppError(
        'PAYLOAD_TOO_LARGE',
        `This file (${bytes} bytes) would take the account's files past their quota of ${quota.maxBytes} bytes (${used.bytes} held); ${hint}`,
        details,
      )
    : new AppError('VALIDATION_ERROR', `The account holds ${used.count} files, its quota; ${hint}`, {
        ...details,
        fields: [
          { field: 'body.file', message: `the account's quota of ${quota.maxFiles} files is reached` },
        ],
      });
}

const notFound = (id: string) => new AppError('NOT_FOUND', `No such File object: ${id}`, { id });

export class FilesService {
  constructor(
    private readonly store: FileStore,
    /** Unix seconds. */
    private readonly now: () => number,
    private readonly quota: FilesQuota = { maxBytes: 0, maxFiles: 0 },
  ) {}

  async upload(
    principal: Principal,
    input: { purpose: string; filename: string; data: Buffer },
  ): Promise<FileView> {
    if (!(UPLOAD_PURPOSES as readonly string[]).includes(input.purpose))
      throw new AppError(
        'VALIDATION_ERROR',
        `Invalid body: body.purpose must be one of ${UPLOAD_PURPOSES.join(', ')}`,
        {
          fields: [{ field: 'body.purpose', message: `must be one of ${UPLOAD_PURPOSES.join(', ')}` }],
        },
      );
    const row = {
      id: newId('file'),
      account_id: principal.accountId,
      purpose: input.purpose,
      filename: input.filename.slice(0, 255) || 'file',
      bytes: input.data.length,
      created_at: this.now(),
    };
    const { maxBytes, maxFiles } = this.quota;
    const refused = await this.store.insertWithin({ ...row, data: input.data }, (used, bytes) =>
      maxFiles > 0 && used.count + 1 > maxFiles
        ? 'count'
        : maxBytes > 0 && used.bytes + bytes > maxBytes
          ? 'bytes'
          : null,
    );
    if (refused) throw overQuota(refused.refused, refused.used, this.quota, row.bytes);
    return fileView(row);
  }

  async get(principal: Principal, id: string): Promise<FileView> {
    const row = await this.store.get(principal.accountId, id);
    if (!row) throw notFound(id);
    return fileView(row);
  }

  async content(principal: Principal, id: string): Promise<Buffer> {
    const data = await this.store.content(principal.accountId, id);
    if (!data) throw notFound(id);
    return data;
  }

  async list(
    principal: Principal,
    query: { limit?: number; after?: string; order?: 'asc' | 'desc'; purpose?: string },
  ) {
    const limit = query.limit ?? 10_000;
    const rows = await this.store.list(principal.accountId, {
      limit,
      order: query.order ?? 'desc',
      ...(query.after ? { after: query.after } : {}),
      ...(query.purpose ? { purpose: query.purpose } : {}),
    });
    const data = rows.slice(0, limit).map(fileView);
    return {
      object: 'list' as const,
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: rows.length > limit,
    };
  }

  async delete(principal: Principal, id: string) {
    if (!(await this.store.delete(principal.accountId, id))) throw notFound(id);
    return { id, object: 'file' as const, deleted: true };
  }
}
