/** Issue 4: create a blend and read a blend's detail (analysis, compatible products), on SQLite. */
const composition = {
  notes: [
    { id: 'note_bergamot', ratio: 0.25 },
    { id: 'note_rose', ratio: 0.4 },
    { id: 'note_sandalwood', ratio: 0.35 },
  ],
  baseIntensity: 'medium',
};
const body = (name) => JSON.stringify({ name, composition, profile: { occasions: ['evening'] } });
const headersFor = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

let counter = 0;

export default [
  {
    name: 'POST /api/custom-blends (create, SQLite)',
    async setup({ key }) {
      return {
        method: 'POST',
        path: '/api/custom-blends',
        headers: headersFor(key),
        body: body('bench seed'),
        // Names are unique per customer, so every request gets its own.
        setupRequest: (req) => ({ ...req, body: body(`bench ${process.pid} ${counter++}`) }),
      };
    },
  },
  {
    name: 'GET /api/custom-blends/{id} (detail, SQLite)',
    async setup({ baseUrl, key }) {
      const res = await fetch(`${baseUrl}/api/custom-blends`, {
        method: 'POST',
        headers: headersFor(key),
        body: body('bench detail'),
      });
      if (res.status !== 201) throw new Error(`seed blend: ${res.status} ${await res.text()}`);
      const blend = await res.json();
      return {
        method: 'GET',
        path: `/api/custom-blends/${blend.id}`,
        headers: { authorization: `Bearer ${key}` },
      };
    },
  },
];
