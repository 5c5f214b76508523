import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';

/** n8n's training data set: five customers, as n8n ships them. */
const CUSTOMERS: Array<Record<string, Json>> = [
  {
    id: '23423532',
    name: 'Jay Gatsby',
    email: 'gatsby@west-egg.com',
    notes: 'Keeps asking about a green light??',
    country: 'US',
    created: '1925-04-10',
  },
  {
    id: '23423533',
    name: 'José Arcadio Buendía',
    email: 'jab@macondo.co',
    notes: 'Lots of people named after him. Very confusing',
    country: 'CO',
    created: '1967-05-05',
  },
  {
    id: '23423534',
    name: 'Max Sendak',
    email: 'info@in-and-out-of-weeks.org',
    notes: 'Keeps rolling his terrible eyes',
    country: 'US',
    created: '1963-04-09',
  },
  {
    id: '23423535',
    name: 'Zaphod Beeblebrox',
    email: 'captain@heartofgold.com',
    notes: 'Felt like I was talking to more than one person',
    country: null,
    created: '1979-10-12',
  },
  {
    id: '23423536',
    name: 'Edmund Pevensie',
    email: 'edmund@narnia.gov',
    notes: 'Passionate sailor',
    country: 'UK',
    created: '1950-10-16',
  },
];

const DatastoreParameters = Type.Object(
  {
    operation: Type.Enum(['getOnePerson', 'getAllPeople'] as const, { default: 'getOnePerson' }),
    returnAll: Type.Boolean({ default: false }),
    limit: Type.Integer({ minimum: 1, maximum: 10, default: 5 }),
  },
  { additionalProperties: false },
);

/** n8n's Customer Datastore (n8n training): a fixed data source its courses and tests read from. */
export const trainingCustomerDatastoreNode = defineNode({
  type: 'n8n-nodes-base.n8nTrainingCustomerDatastore',
  versions: [1],
  schema: DatastoreParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const rows =
        p.operation === 'getOnePerson'
          ? CUSTOMERS.slice(0, 1)
          : p.returnAll
            ? CUSTOMERS
            : CUSTOMERS.slice(0, p.limit);
      for (const json of rows) out.push({ json: structuredClone(json) });
    }
    return output(out);
  },
});

const MessengerParameters = Type.Object(
  {
    operation: Type.Literal('send', { default: 'send' }),
    customerId: Type.String({ default: '' }),
    message: Type.String({ default: '' }),
  },
  { additionalProperties: false },
);

/** n8n's Customer Messenger (n8n training): "sends" a message, answering with n8n's text. */
export const trainingCustomerMessengerNode = defineNode({
  type: 'n8n-nodes-base.n8nTrainingCustomerMessenger',
  versions: [1],
  schema: MessengerParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      out.push({ json: { output: `Sent message to customer ${p.customerId}:  ${p.message}` } });
    }
    return output(out);
  },
});
