import { type Apply, basicOf, isOn } from './types.js';

/** The credential types whose n8n class authenticates with basic auth (some with a header more). */
export const BASIC_TYPES: Record<string, Apply> = {
  wordpressApi: basicOf('username', 'password'),
  qualysApi: (data, to, need) => {
    to.basic(need('username'), need('password'));
    // n8n's field default when the credential leaves it out.
    to.plain('x-requested-with', data.requestedWith || 'n8n application');
  },
  // Zendesk's API token login: the user is `<email>/token`.
  zendeskApi: (_data, to, need) => to.basic(`${need('email')}/token`, need('apiToken')),
  // lemlist: no user, the key as the password, and n8n's own user agent.
  lemlistApi: (_data, to, need) => {
    to.basic('', need('apiKey'));
    to.plain('user-agent', 'n8n');
  },
  // WooCommerce: basic auth, or the key pair in the query when the credential says so.
  wooCommerceApi: (data, to, need) => {
    if (!isOn(data.includeCredentialsInQuery, false))
      return to.basic(need('consumerKey'), need('consumerSecret'));
    to.query('consumer_key', need('consumerKey'));
    to.query('consumer_secret', need('consumerSecret'));
  },
};
