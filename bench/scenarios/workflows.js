/**
 * Issue 3: webhook → set, answered by the last node (execution saved first) and on receipt. Issue 17: the
 * same in n8n's node types with a JavaScript expression that needs the sandbox (a method call, not a plain
 * `$json` path the host reads itself), and a Code node over the item.
 */
const platformNodes = (path, responseMode) => [
  { name: 'Webhook', type: 'webhook', position: [0, 0], parameters: { path, responseMode } },
  {
    name: 'Set',
    type: 'set',
    position: [200, 0],
    parameters: { values: { echoed: '={{ $json.body.n }}' } },
  },
];

const n8nWebhook = (path) => ({
  name: 'Webhook',
  type: 'n8n-nodes-base.webhook',
  typeVersion: 2,
  position: [0, 0],
  parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
});

const n8nSetNodes = (path) => [
  n8nWebhook(path),
  {
    name: 'Set',
    type: 'n8n-nodes-base.set',
    typeVersion: 3.4,
    position: [200, 0],
    parameters: {
      assignments: {
        assignments: [
          { id: 'a', name: 'echoed', value: '={{ $json.body.n * 2 }}', type: 'number' },
          { id: 'b', name: 'label', value: '={{ $json.body.name.toUpperCase() }}', type: 'string' },
        ],
      },
      options: {},
    },
  },
];

const n8nCodeNodes = (path) => [
  n8nWebhook(path),
  {
    name: 'Set',
    type: 'n8n-nodes-base.code',
    typeVersion: 2,
    position: [200, 0],
    parameters: {
      jsCode:
        'return $input.all().map((i) => ({ json: { echoed: i.json.body.n * 2, label: i.json.body.name } }));',
    },
  },
];

/**
 * Issue 30: webhook → Date & Time v2 (format the body's date, input kept) → Crypto v2 (SHA-256 of a body
 * field) → Set v3.4 reading both, the chain of an ordinary n8n export; compared with webhook → Set v3.4.
 */
const n8nDateCryptoNodes = (path) => [
  n8nWebhook(path),
  {
    name: 'Date & Time',
    type: 'n8n-nodes-base.dateTime',
    typeVersion: 2,
    position: [200, 0],
    parameters: {
      operation: 'formatDate',
      date: '={{ $json.body.at }}',
      format: 'custom',
      customFormat: 'yyyy-MM-dd HH:mm',
      outputFieldName: 'day',
      options: { includeInputFields: true },
    },
  },
  {
    name: 'Crypto',
    type: 'n8n-nodes-base.crypto',
    typeVersion: 2,
    position: [400, 0],
    parameters: { action: 'hash', type: 'SHA256', value: '={{ $json.body.name }}', dataPropertyName: 'hash' },
  },
  {
    name: 'Set',
    type: 'n8n-nodes-base.set',
    typeVersion: 3.4,
    position: [600, 0],
    parameters: {
      assignments: {
        assignments: [
          { id: 'a', name: 'day', value: '={{ $json.day }}', type: 'string' },
          { id: 'b', name: 'hash', value: '={{ $json.hash.slice(0, 16) }}', type: 'string' },
        ],
      },
      options: {},
    },
  },
];

const chain = (names) =>
  Object.fromEntries(
    names.slice(0, -1).map((name, i) => [name, { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] }]),
  );

async function activeEchoFlow(baseUrl, key, path, responseMode, nodes = platformNodes(path, responseMode)) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const body = {
    name: `bench ${path}`,
    nodes,
    // Webhook → … → Set, in the order the nodes are given.
    connections: chain(nodes.map((n) => n.name)),
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
    body: JSON.stringify({ n: 1, name: 'ada', at: '2024-05-01T10:30:00Z' }),
  };
}

/** Issue 18: the n8n Set scenario with its Set moved into a sub-workflow the webhook calls and waits for. */
async function subWorkflowCall(baseUrl, key, path) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const callee = {
    name: `bench callee ${path}`,
    nodes: [
      {
        name: 'Called',
        type: 'n8n-nodes-base.executeWorkflowTrigger',
        typeVersion: 1.1,
        position: [0, 0],
        parameters: { inputSource: 'passthrough' },
      },
      { ...n8nSetNodes(path)[1], position: [200, 0] },
    ],
    connections: { Called: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
  };
  const created = await fetch(`${baseUrl}/api/v1/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify(callee),
  });
  if (created.status !== 201) throw new Error(`create callee: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  const caller = [
    n8nWebhook(path),
    {
      name: 'Set',
      type: 'n8n-nodes-base.executeWorkflow',
      typeVersion: 1.2,
      position: [200, 0],
      parameters: { workflowId: { __rl: true, value: id, mode: 'id' }, options: {} },
    },
  ];
  return activeEchoFlow(baseUrl, key, path, 'lastNode', caller);
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
  {
    name: 'n8n webhook → Set v3.4, JS expressions (saved, SQLite)',
    setup: ({ baseUrl, key }) =>
      activeEchoFlow(baseUrl, key, 'bench-n8n-set', 'lastNode', n8nSetNodes('bench-n8n-set')),
  },
  {
    name: 'n8n webhook → Date & Time → Crypto → Set (saved, SQLite)',
    setup: ({ baseUrl, key }) =>
      activeEchoFlow(baseUrl, key, 'bench-n8n-dtc', 'lastNode', n8nDateCryptoNodes('bench-n8n-dtc')),
  },
  {
    name: 'n8n webhook → Execute Workflow → Set (2 saved, SQLite)',
    setup: ({ baseUrl, key }) => subWorkflowCall(baseUrl, key, 'bench-n8n-sub'),
  },
  {
    name: 'n8n webhook → Code node (saved, SQLite)',
    setup: ({ baseUrl, key }) =>
      activeEchoFlow(baseUrl, key, 'bench-n8n-code', 'lastNode', n8nCodeNodes('bench-n8n-code')),
  },
];
