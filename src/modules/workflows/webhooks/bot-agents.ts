/**
 * Whether a user agent is a bot's, for n8n's `ignoreBots`. n8n asks the `isbot` package, which is not a
 * dependency here; this is a short list of the marks crawlers, link previews, headless browsers and
 * HTTP libraries carry. As `isbot`, a request without a user agent is not taken for a bot.
 */
const BOT_MARKS = new RegExp(
  [
    '(?<!cu)bot\\b',
    'bot[/_-]',
    'crawl',
    'spider',
    'slurp',
    'scrape',
    'scrapy',
    'archiver',
    'validator',
    'lighthouse',
    'headless',
    'phantomjs',
    'puppeteer',
    'playwright',
    'selenium',
    'facebookexternalhit',
    'facebookcatalog',
    'whatsapp',
    'embedly',
    'link ?preview',
    '\\bgoogle-',
    'mediapartners',
    '^curl/',
    '^wget/',
    '^httpie/',
    '^python-',
    'aiohttp',
    '^java/',
    'okhttp',
    'apache-httpclient',
    'go-http-client',
    'node-fetch',
    '^axios/',
    'libwww-perl',
    '^ruby',
    'guzzlehttp',
    'postmanruntime',
  ].join('|'),
  'i',
);

export function isBotAgent(userAgent: string | undefined): boolean {
  return userAgent !== undefined && userAgent !== '' && BOT_MARKS.test(userAgent.slice(0, 1_000));
}
