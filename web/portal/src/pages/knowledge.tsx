import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { More, usePages } from '../components/paged-list.js';
import { count, dateTime } from '../format.js';
import { href, navigate } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import { useLoad } from '../use-load.js';
import { DocumentUpload, type KnowledgeDocument } from './knowledge-upload.js';

interface Topic {
  topic: string;
  documentCount: number;
  chunkCount: number;
  embeddingModel: string | null;
  updatedAt: string;
}
interface Chunk {
  chunkId: string;
  index: number;
  pageNumber: number;
  text: string;
}
interface Hit {
  chunkId: string;
  documentId: string;
  title: string | null;
  topic: string;
  pageNumber: number;
  text: string;
  score: number;
  keywordRank: number | null;
  vectorRank: number | null;
}

const STATUSES = ['loaded', 'chunked', 'embedded', 'indexed', 'failed'];

/** A document's processing in words: the queue's job, its stage, or its error. */
function stage(d: KnowledgeDocument): string {
  if (d.processing) return `processing (${d.status})`;
  if (d.status === 'failed') return `failed: ${d.error ?? 'no reason given'}`;
  return d.status;
}

/** Searches the indexed chunks the way agents and flows do, with each result's scores. */
function QueryTester({ topics }: { topics: string[] }) {
  const [text, setText] = useState('');
  const [mode, setMode] = useState('hybrid');
  const [topic, setTopic] = useState('');
  const [topK, setTopK] = useState('5');
  const [result, setResult] = useState<{ results: Hit[]; tookMs: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setResult(
        await api('POST', '/api/knowledge/query', {
          body: { query: text, mode, topK: Number(topK), ...(topic ? { topics: [topic] } : {}) },
        }),
      );
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={run} aria-labelledby="query-title">
      <h2 id="query-title">Try a query</h2>
      <div class="filters">
        <label class="grow">
          Query
          <input
            name="query"
            required
            maxLength={4000}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
        <label>
          Mode
          <select name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
            <option value="hybrid">hybrid</option>
            <option value="keyword">keyword</option>
            <option value="vector">vector</option>
          </select>
        </label>
        <label>
          In topic
          <select name="topic" value={topic} onChange={(e) => setTopic(e.currentTarget.value)}>
            <option value="">all topics</option>
            {topics.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Results
          <input
            name="topK"
            type="number"
            min={1}
            max={200}
            value={topK}
            onInput={(e) => setTopK(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Search
        </button>
      </div>
      <ErrorNote error={error} />
      {result && (
        <>
          <p role="status">
            {result.results.length} results in {result.tookMs.toFixed(1)} ms
          </p>
          <ol class="hits">
            {result.results.map((h) => (
              <li key={h.chunkId}>
                <p>
                  <strong>{h.title ?? h.documentId}</strong>{' '}
                  <span class="hint">
                    ({h.topic}, page {h.pageNumber})
                  </span>{' '}
                  <span class="score">
                    score {h.score.toFixed(4)}
                    {h.keywordRank !== null ? ` · keyword #${h.keywordRank}` : ''}
                    {h.vectorRank !== null ? ` · vector #${h.vectorRank}` : ''}
                  </span>
                </p>
                <blockquote>{h.text}</blockquote>
              </li>
            ))}
          </ol>
        </>
      )}
    </form>
  );
}

/** Topics, their documents (upload, processing, delete) and a query tester. */
export function KnowledgePage({ params }: { params: URLSearchParams }) {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const topic = params.get('topic') ?? '';
  const status = params.get('status') ?? '';
  const topics = useLoad(() => api<Topic[]>('GET', '/api/knowledge/topics'), []);
  const docs = usePages<KnowledgeDocument>('/api/documents', {
    topic: topic || undefined,
    status: status || undefined,
  });
  const [deleting, setDeleting] = useState<KnowledgeDocument | null>(null);
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    navigate(`${href('knowledge')}${next.size ? `?${next}` : ''}`);
  };
  // While a document is being processed, its row is read again every 2 s until the job ends.
  const busyIds = docs.rows.filter((d) => d.processing).map((d) => d.id);
  useEffect(() => {
    if (busyIds.length === 0) return;
    const timer = setTimeout(() => {
      docs.reload();
      topics.reload();
    }, 2_000);
    return () => clearTimeout(timer);
  }, [busyIds.join(',')]);
  const refresh = () => {
    docs.reload();
    topics.reload();
  };
  return (
    <section aria-labelledby="knowledge-title">
      <div class="title-row">
        <h1 id="knowledge-title">Knowledge</h1>
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </div>
      <ErrorNote error={topics.error} />
      <table aria-label="Topics">
        <thead>
          <tr>
            <th scope="col">Topic</th>
            <th scope="col">Documents</th>
            <th scope="col">Chunks</th>
            <th scope="col">Embedding model</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {(topics.data ?? []).map((t) => (
            <tr key={t.topic}>
              <th scope="row">
                <a href={`${href('knowledge')}?topic=${encodeURIComponent(t.topic)}`}>{t.topic}</a>
              </th>
              <td>{count(t.documentCount)}</td>
              <td>{count(t.chunkCount)}</td>
              <td>{t.embeddingModel ?? '—'}</td>
              <td>{dateTime(t.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {topics.data?.length === 0 && <p>No topics yet: add a document.</p>}
      {writable ? (
        <DocumentUpload topic={topic} onAdded={refresh} />
      ) : (
        <p class="notice">{refusal(session.member.role, 'add or delete documents')}</p>
      )}
      <h2>Documents</h2>
      <div class="filters">
        <label>
          Topic
          <input
            name="topic-filter"
            value={topic}
            onChange={(e) => setFilter('topic', e.currentTarget.value.trim())}
          />
        </label>
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setFilter('status', e.currentTarget.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={docs.error} />
      <div class="table-wrap">
        <table aria-label="Documents">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Topic</th>
              <th scope="col">Source</th>
              <th scope="col">Status</th>
              <th scope="col">Chunks</th>
              <th scope="col">Updated</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {docs.rows.map((d) => (
              <tr key={d.id} data-document={d.title ?? d.id}>
                <th scope="row">
                  <a href={href('knowledge', d.id)}>{d.title ?? d.id}</a>
                </th>
                <td>{d.topic}</td>
                <td>{d.source}</td>
                <td aria-busy={d.processing ? 'true' : undefined}>{stage(d)}</td>
                <td>{count(d.chunkCount)}</td>
                <td>{dateTime(d.updatedAt)}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={!writable}
                    aria-label={`Delete ${d.title ?? d.id}`}
                    onClick={() => setDeleting(d)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!docs.busy && docs.rows.length === 0 && !docs.error && <p>No documents match.</p>}
      <More next={docs.next} busy={docs.busy} more={docs.more} count={docs.rows.length} noun="documents" />
      <QueryTester topics={(topics.data ?? []).map((t) => t.topic)} />
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.title ?? deleting.id}?`}
          confirmLabel="Delete document"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await api('DELETE', `/api/documents/${encodeURIComponent(deleting.id)}`);
            refresh();
          }}
        >
          <p>Its chunks leave the knowledge base; agents and flows stop finding them.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** One document: its details and its chunks in order. */
export function KnowledgeDocumentPage({ id }: { id: string }) {
  const doc = useLoad(
    () => api<KnowledgeDocument>('GET', `/api/documents/${encodeURIComponent(id)}?fields=${DOC_FIELDS}`),
    [id],
  );
  // A page of chunks at a time (a document may hold tens of thousands), more on "Load more".
  const chunks = usePages<Chunk>(`/api/documents/${encodeURIComponent(id)}/chunks`, {});
  const d = doc.data;
  return (
    <section aria-labelledby="document-title">
      <p>
        <a href={href('knowledge')}>← Knowledge</a>
      </p>
      <h1 id="document-title">{d ? (d.title ?? d.id) : 'Document'}</h1>
      <ErrorNote error={doc.error ?? chunks.error} />
      {d && (
        <dl class="facts">
          <dt>Topic</dt>
          <dd>{d.topic}</dd>
          <dt>Source</dt>
          <dd>{d.url ?? d.source}</dd>
          <dt>Status</dt>
          <dd>{stage(d)}</dd>
          <dt>Characters</dt>
          <dd>{count(d.charCount)}</dd>
          <dt>Embedding model</dt>
          <dd>{d.embeddingModel ?? '—'}</dd>
        </dl>
      )}
      <h2>Chunks</h2>
      {chunks.rows.length > 0 && (
        <ol class="chunks" aria-label="Chunks">
          {chunks.rows.map((c) => (
            <li key={c.chunkId} value={c.index + 1}>
              <span class="hint">page {c.pageNumber}</span>
              <blockquote>{c.text}</blockquote>
            </li>
          ))}
        </ol>
      )}
      {chunks.rows.length > 0 && (
        <More
          next={chunks.next}
          busy={chunks.busy}
          more={chunks.more}
          count={chunks.rows.length}
          noun="chunks"
        />
      )}
      {chunks.key !== '' && !chunks.busy && !chunks.error && chunks.rows.length === 0 && (
        <p>No chunks: the document is not processed yet.</p>
      )}
    </section>
  );
}

const DOC_FIELDS =
  'id,title,topic,source,url,status,processing,error,charCount,chunkCount,embeddingModel,updatedAt';
