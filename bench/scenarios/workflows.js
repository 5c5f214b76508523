/** Issue 3: webhook → set, answered by the last node (execution saved first) and on receipt. */
async function activeEchoFlow(baseUrl, key, path, responseMode) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const body = {
    name: `bench ${path}`,
    nodes: [
      { name: 'Webhook', type: 'webhook', position: [0, 0], parameters: { path, responseMode } },
      {
        name: 'Set',
        type: 'set',
        position: [200, 0],
        parameters: { values: { echoed: '={{ $json.body.n }}' } },
      },
    ],
    connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
  };
  const created = await fetch(`${baseUrl}/api/v1/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  const activated = await fetch(`${baseUrl}/api/v1/workflows/${id}/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  if (activated.status !== 200) throw new Error(`activate: ${activated.status} ${await activated.text()}`);
  return {
    method: 'POST',
    path: `/webhook/${path}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n: 1 }),
  };
}

export default [
  {
    name: 'webhook → set, lastNode (execution saved, SQLite)',
    setup: ({ baseUrl, key }) => activeEchoFlow(baseUrl, key, 'bench-last', 'lastNode'),
  },
  {
    name: 'webhook → set, onReceived (SQLite)',
    setup: ({ baseUrl, key }) => activeEchoFlow(baseUrl, key, 'bench-received', 'onReceived'),
  },
];
