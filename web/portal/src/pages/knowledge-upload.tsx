import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';

export interface KnowledgeDocument {
  id: string;
  title: string | null;
  topic: string;
  source: string;
  url: string | null;
  status: string;
  processing: boolean;
  error: string | null;
  charCount: number;
  chunkCount: number;
  embeddingModel: string | null;
  updatedAt: string;
}

/** What a person can add: typed text, a web page's address, or a file read in the browser. */
const SOURCES: Array<[string, string]> = [
  ['text', 'Text'],
  ['markdown', 'Markdown'],
  ['html', 'HTML'],
  ['url', 'Web page (address)'],
  ['pdf', 'PDF file'],
];

/** A file's bytes as base64, as the load API takes a PDF. */
async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Loads a document into a topic, then queues its chunking, embedding and indexing. */
export function DocumentUpload({ topic, onAdded }: { topic: string; onAdded: () => void }) {
  const [to, setTo] = useState(topic || 'default');
  const [title, setTitle] = useState('');
  const [source, setSource] = useState('text');
  const [content, setContent] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setNote('');
    try {
      const fromFile = source === 'pdf';
      if (fromFile && !file) throw new Error('Choose a PDF file first');
      const body: Record<string, unknown> = { source, topic: to.trim() || 'default' };
      if (title.trim()) body.title = title.trim();
      if (source === 'url') body.url = content.trim();
      else if (fromFile && file) body.content = await base64Of(file);
      else body.content = content;
      const doc = await api<KnowledgeDocument>('POST', '/api/documents/load', { body });
      await api('POST', `/api/documents/${encodeURIComponent(doc.id)}/process`, { body: {} });
      setNote(`${doc.title ?? doc.id} is loaded; chunking, embedding and indexing are queued.`);
      setTitle('');
      setContent('');
      setFile(null);
      onAdded();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={add} aria-labelledby="add-document-title">
      <h2 id="add-document-title">Add a document</h2>
      <div class="filters">
        <label>
          Topic
          <input
            name="topic"
            required
            maxLength={100}
            value={to}
            onInput={(e) => setTo(e.currentTarget.value)}
          />
        </label>
        <label>
          Title
          <input
            name="title"
            maxLength={500}
            value={title}
            onInput={(e) => setTitle(e.currentTarget.value)}
          />
        </label>
        <label>
          Kind
          <select name="source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
            {SOURCES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {source === 'pdf' ? (
        <label>
          PDF file
          <input
            type="file"
            name="file"
            accept=".pdf,application/pdf"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
      ) : source === 'url' ? (
        <label>
          Address
          <input
            name="url"
            type="url"
            required
            value={content}
            onInput={(e) => setContent(e.currentTarget.value)}
          />
        </label>
      ) : (
        <label>
          Content
          <textarea
            name="content"
            rows={6}
            required
            value={content}
            onInput={(e) => setContent(e.currentTarget.value)}
          />
        </label>
      )}
      <ErrorNote error={error} />
      {note && (
        <p role="status" class="notice">
          {note}
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Add and process
        </button>
      </div>
    </form>
  );
}
