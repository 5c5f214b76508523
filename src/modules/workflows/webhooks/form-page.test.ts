import { load } from 'cheerio';
import { describe, expect, it } from 'vitest';
import type { ChatInfo, FormInfo } from '../engine/index.js';
import { isBotAgent } from './bot-agents.js';
import { chatPage } from './chat-page.js';
import { completionPage, cssText, FORM_ATTRIBUTION, formPage, submittedPage } from './form-page.js';

const form = (extra: Partial<FormInfo> = {}): FormInfo => ({
  title: 'Contact',
  description: '',
  buttonLabel: 'Send',
  fields: [],
  submittedText: 'Thanks',
  ...extra,
});

/** Payloads that end a style element in a browser's parser (n8n's own list of spellings among them). */
const BREAKOUTS = [
  '</style><script>alert(1)</script>',
  '</STYLE ><img src=x onerror=alert(1)>',
  '</style/><svg onload=alert(1)>',
  '</style\t><iframe src=https://example.com></iframe>',
  '<</style/style><script>alert(1)</script>',
  '</st<</style/yle><script>alert(1)</script>',
  '<!--</style><script>alert(1)</script>-->',
];

/** The page as a browser's HTML parser reads it (parse5, through cheerio). */
function parsed(html: string) {
  const $ = load(html);
  return {
    styles: $('style')
      .toArray()
      .map((s) => ({ nonce: $(s).attr('nonce'), text: $(s).text() })),
    injected: $('script, img, svg, iframe').length,
    attribution: $('.attribution').text(),
  };
}

describe("form pages: n8n's customCss, inert", () => {
  it.each(BREAKOUTS)('keeps %j inside its style element: no markup, no script', (css) => {
    const page = formPage(form({ customCss: `main{color:red}${css}` }));
    const { styles, injected } = parsed(page.html);
    expect(injected).toBe(0);
    // The page's own style and the author's: a third would mean the payload opened one.
    expect(styles).toHaveLength(2);
    expect(styles[1]?.text).toContain('main{color:red}');
    expect(styles[1]?.text).not.toMatch(/<\//);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).not.toContain('unsafe-inline');
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(styles.map((s) => s.nonce)).toEqual([nonce, nonce]);
  });

  it('escapes `<` as the CSS escape, leaving media-query ranges and the rest as written', () => {
    expect(cssText('a::after{content:"</style>"}')).toBe('a::after{content:"\\3C /style>"}');
    expect(cssText('@media (width < 600px) and (height <= 9px){main{gap:0}}')).toBe(
      '@media (width < 600px) and (height <= 9px){main{gap:0}}',
    );
    expect(cssText(':root{--color-submit-btn-bg:#000} div > p{margin:0}')).toBe(
      ':root{--color-submit-btn-bg:#000} div > p{margin:0}',
    );
  });

  it('adds no style of the author without customCss, and applies it on every page of the form', () => {
    expect(parsed(formPage(form()).html).styles).toHaveLength(1);
    const css = ':root{--color-submit-btn-bg:#123456}';
    for (const page of [
      formPage(form({ customCss: css })),
      submittedPage(form({ customCss: css })),
      completionPage('Done', 'Thanks', '', { customCss: css }),
    ])
      expect(parsed(page.html).styles[1]?.text).toBe(css);
  });

  it('styles the page with n8n form variables, so customCss setting them restyles it', () => {
    const own = parsed(formPage(form()).html).styles[0]?.text ?? '';
    for (const variable of ['--color-submit-btn-bg', '--font-family', '--color-background', '--color-label'])
      expect(own).toContain(`var(${variable}`);
  });
});

describe("form pages: n8n's appendAttribution", () => {
  it('shows the attribution line by default and when true, on the form, submitted and ending pages', () => {
    for (const page of [
      formPage(form()),
      formPage(form({ appendAttribution: true })),
      submittedPage(form()),
      completionPage('Done', 'Thanks', ''),
    ])
      expect(parsed(page.html).attribution).toBe(FORM_ATTRIBUTION);
  });

  it('hides it when false', () => {
    for (const page of [
      formPage(form({ appendAttribution: false })),
      submittedPage(form({ appendAttribution: false })),
      completionPage('Done', 'Thanks', '', { appendAttribution: false }),
    ]) {
      expect(page.html).not.toContain(FORM_ATTRIBUTION);
      expect(parsed(page.html).attribution).toBe('');
    }
  });
});

describe("the hosted chat page: the Chat Trigger's customCss", () => {
  const chat = (customCss?: string): ChatInfo => ({
    page: true,
    title: 'Help',
    subtitle: '',
    inputPlaceholder: 'Type',
    initialMessages: [],
    allowedOrigins: '*',
    ...(customCss === undefined ? {} : { customCss }),
  });

  it('applies it after the page style, by the nonce, inert', () => {
    const page = chatPage(chat(`:root{--chat--color-primary:#f00}${BREAKOUTS[0]}`));
    const $ = load(page.html);
    expect($('style')).toHaveLength(2);
    expect($('style').eq(1).text()).toContain('--chat--color-primary:#f00');
    // The page's own two scripts only (its config and its code).
    expect($('script')).toHaveLength(2);
    expect(String(page.headers['content-security-policy'])).not.toContain('unsafe-inline');
  });

  it('adds nothing without it', () => {
    expect(load(chatPage(chat()).html)('style')).toHaveLength(1);
  });
});

describe("ignoreBots: a bot's user agent", () => {
  it.each([
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
    'curl/8.5.0',
    'python-requests/2.31.0',
    'Wget/1.21.4',
  ])('%s is a bot', (agent) => {
    expect(isBotAgent(agent)).toBe(true);
  });

  it.each([
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
    'Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
  ])('%s is not', (agent) => {
    expect(isBotAgent(agent)).toBe(false);
  });

  it('nor is a request without one (as isbot answers)', () => {
    expect(isBotAgent(undefined)).toBe(false);
    expect(isBotAgent('')).toBe(false);
  });
});
