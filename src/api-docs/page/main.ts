import { mendAccessibility } from './accessibility';
import { OperationFilterPlugin } from './operation-filter';
import { Credentials, sign } from './signing';

/**
 * The page at /docs: Swagger UI (swagger-ui-dist, served by the service)
 * showing one of the two OpenAPI documents, its filter finding operations,
 * and try-it on both APIs. The back office takes a bearer token through
 * Swagger UI's own Authorize dialog; merchant API requests are signed here,
 * just before they go, with the API key and app secret pasted into the page.
 * Neither is stored anywhere but in the page's memory: a reload forgets them.
 */

interface SwaggerRequest {
  url: string;
  method?: string;
  headers: Record<string, string>;
  body?: unknown;
}

interface SwaggerUi {
  specActions: { updateUrl(url: string): void; download(url: string): void };
}

interface SwaggerUiBundle {
  (options: Record<string, unknown>): SwaggerUi;
  presets: { apis: unknown };
}

declare global {
  interface Window {
    SwaggerUIBundle: SwaggerUiBundle;
  }
}

const DOCUMENTS = {
  'merchant-api': { url: '/docs/merchant-api.json', signed: true },
  'back-office': { url: '/docs/back-office.json', signed: false },
} as const;
type DocumentName = keyof typeof DOCUMENTS;

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const signing = element<HTMLElement>('signing');
const apiKey = element<HTMLInputElement>('api-key');
const appSecret = element<HTMLInputElement>('app-secret');
const signingStatus = element<HTMLElement>('signing-status');

function credentials(): Credentials | undefined {
  const key = apiKey.value.trim();
  const secret = appSecret.value.trim();
  return key && secret ? { apiKey: key, appSecret: secret } : undefined;
}

/**
 * Signs a try-it request to the merchant API (every path under /api/) over
 * exactly the bytes it will send: a body that is not already text is
 * serialised once, and that text is both signed and sent.
 */
async function signMerchantRequest(request: SwaggerRequest): Promise<SwaggerRequest> {
  const url = new URL(request.url, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/api/')) return request;
  const given = credentials();
  if (!given) {
    signingStatus.textContent = `Not signed: ${request.method ?? 'POST'} ${url.pathname} went without a signature. Paste an API key and app secret above.`;
    return request;
  }
  if (request.body === undefined || request.body === null) request.body = '';
  else if (typeof request.body !== 'string') request.body = JSON.stringify(request.body);
  const headers = await sign(given, url.pathname, request.body as string);
  Object.assign(request.headers, headers);
  signingStatus.textContent = `Signed ${request.method ?? 'POST'} ${url.pathname} at ${headers['X-Timestamp']} with nonce ${headers['X-Nonce']}.`;
  return request;
}

function chosenDocument(): DocumentName {
  const asked = new URLSearchParams(location.search).get('doc');
  return asked === 'back-office' ? 'back-office' : 'merchant-api';
}

function showDocument(name: DocumentName) {
  signing.hidden = !DOCUMENTS[name].signed;
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-document]')) {
    button.setAttribute('aria-pressed', String(button.dataset.document === name));
  }
}

const current = chosenDocument();
showDocument(current);

const ui = window.SwaggerUIBundle({
  url: DOCUMENTS[current].url,
  dom_id: '#swagger-ui',
  presets: [window.SwaggerUIBundle.presets.apis],
  plugins: [OperationFilterPlugin],
  layout: 'BaseLayout',
  // Deep links would put a link inside each operation's button, which screen readers cannot reach.
  deepLinking: false,
  filter: true,
  docExpansion: 'list',
  displayRequestDuration: true,
  persistAuthorization: false,
  queryConfigEnabled: false,
  // The validator badge would send the document to validator.swagger.io: nothing leaves this service.
  validatorUrl: null,
  requestInterceptor: signMerchantRequest,
});

mendAccessibility(element<HTMLElement>('swagger-ui'));

for (const button of document.querySelectorAll<HTMLButtonElement>('[data-document]')) {
  button.addEventListener('click', () => {
    const name = button.dataset.document as DocumentName;
    showDocument(name);
    history.replaceState(null, '', `?doc=${name}`);
    ui.specActions.updateUrl(DOCUMENTS[name].url);
    ui.specActions.download(DOCUMENTS[name].url);
  });
}

element<HTMLButtonElement>('forget').addEventListener('click', () => {
  apiKey.value = '';
  appSecret.value = '';
  signingStatus.textContent = 'Forgotten: try-it requests go unsigned until you paste them again.';
});
