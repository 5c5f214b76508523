import { randomBytes } from 'node:crypto';
import type { ChatInfo } from '../engine/index.js';
import { corsHeaders } from './cors.js';
import { escapeHtml, type FormPage, styleElement } from './form-page.js';

/**
 * The page's own look, its colours read from the CSS variables of n8n's chat widget (`--chat--color-primary`,
 * `--chat--header--background`…, with this page's defaults), so an n8n `customCss` setting them applies here.
 */
const STYLE = `body{font-family:var(--chat--font-family,system-ui,sans-serif);background:var(--chat--color-light,#f5f5f7);margin:0;display:flex;flex-direction:column;height:100vh}
header{background:var(--chat--header--background,#fff);color:var(--chat--header--color,inherit);padding:1rem 1.5rem;box-shadow:0 1px 4px #0002}h1{margin:0;font-size:var(--chat--heading--font-size,1.3rem)}header p{margin:.3rem 0 0;opacity:.8;font-size:var(--chat--subtitle--font-size,inherit)}
#log{flex:1;overflow-y:auto;padding:1rem 1.5rem;display:flex;flex-direction:column;gap:.6rem}
.msg{max-width:75%;padding:.6rem .9rem;border-radius:var(--chat--message--border-radius,10px);white-space:pre-wrap;word-wrap:break-word;font-size:var(--chat--message--font-size,inherit)}
.bot{background:var(--chat--message--bot--background,#fff);color:var(--chat--message--bot--color,inherit);align-self:flex-start;box-shadow:0 1px 2px #0002}.user{background:var(--chat--message--user--background,#2b6cb0);color:var(--chat--message--user--color,#fff);align-self:flex-end}
.error{background:#fde8e8;color:#b00020;align-self:flex-start}
form{display:flex;gap:.5rem;padding:1rem 1.5rem;background:#fff}input{flex:1;padding:.6rem;font:inherit}button{padding:.6rem 1.2rem;font:inherit;border:0;border-radius:4px;background:var(--chat--color-primary,#2b6cb0);color:var(--chat--color-white,#fff)}`;

/**
 * The chat: each message is posted to this same URL as n8n's chat widget posts it (`{action:
 * 'sendMessage', sessionId, chatInput}`), the answer's `output` (or `text`) shown. Every text is set
 * with textContent, never parsed as HTML.
 */
const SCRIPT = `(()=>{const cfg=JSON.parse(document.getElementById('chat-config').textContent);
const log=document.getElementById('log'),form=document.getElementById('send'),input=document.getElementById('input');
let sessionId=sessionStorage.getItem('chatSessionId');if(!sessionId){sessionId=crypto.randomUUID();sessionStorage.setItem('chatSessionId',sessionId);}
const show=(text,cls)=>{const d=document.createElement('div');d.className='msg '+cls;d.textContent=text;log.appendChild(d);log.scrollTop=log.scrollHeight;};
for(const m of cfg.initialMessages)show(m,'bot');
const textOf=(a)=>{if(typeof a==='string')return a;if(Array.isArray(a))a=a[0];if(a&&typeof a==='object'){for(const k of ['output','text','message','answer'])if(typeof a[k]==='string')return a[k];}return JSON.stringify(a);};
form.addEventListener('submit',async(e)=>{e.preventDefault();const chatInput=input.value.trim();if(!chatInput)return;input.value='';show(chatInput,'user');
try{const r=await fetch(location.pathname,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({action:'sendMessage',sessionId,chatInput})});
const t=await r.text();let body;try{body=JSON.parse(t);}catch{body=t;}
if(!r.ok){show((body&&body.message)||('Error '+r.status),'error');return;}show(textOf(body),'bot');}catch(err){show(String(err),'error');}});})();`;

/** JSON for a `<script type="application/json">`: `<` escaped so no text can close the element. */
const inertJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The Chat Trigger's hosted page (n8n serves its `@n8n/chat` widget there; this is the platform's own
 * small page speaking the same webhook). Script and style run only by this response's nonce, and the
 * page may call nothing but its own origin.
 */
export function chatPage(chat: ChatInfo): FormPage {
  const nonce = randomBytes(16).toString('base64');
  const config = { initialMessages: chat.initialMessages };
  const subtitle = chat.subtitle ? `<p>${escapeHtml(chat.subtitle)}</p>` : '';
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(chat.title)}</title><style nonce="${nonce}">${STYLE}</style>${styleElement(nonce, chat.customCss)}</head><body><header><h1>${escapeHtml(chat.title)}</h1>${subtitle}</header><div id="log" aria-live="polite"></div><form id="send"><input id="input" autocomplete="off" placeholder="${escapeHtml(chat.inputPlaceholder)}" aria-label="Message"><button type="submit">Send</button></form><script type="application/json" id="chat-config">${inertJson(config)}</script><script nonce="${nonce}">${SCRIPT}</script></body></html>`;
  return {
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
  };
}

/**
 * n8n's `allowedOrigins` for a chat's answers (cors.ts): the caller's Origin echoed when `*` or listed;
 * nothing for another origin, whose page then cannot read the answer. The widget posts JSON and may
 * send an authorization header, so a preflight is told both.
 */
export function chatCorsHeaders(chat: ChatInfo, origin: string | undefined): Record<string, string> {
  const headers = corsHeaders({ allowedOrigins: chat.allowedOrigins, methods: ['GET', 'POST'] }, origin, {
    requestedHeaders: undefined,
  });
  if (headers['access-control-allow-origin'])
    headers['access-control-allow-headers'] = 'content-type, authorization';
  return headers;
}
