/** Issue 2: key verification + quota accounting on a keyed GET, on SQLite. */
export default {
  name: 'GET /v1/api-keys/{id} (auth + quota, SQLite)',
  async setup({ baseUrl, key }) {
    const res = await fetch(`${baseUrl}/v1/api-keys?limit=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const { data } = await res.json();
    return { method: 'GET', path: `/v1/api-keys/${data[0].id}`, headers: { authorization: `Bearer ${key}` } };
  },
};
