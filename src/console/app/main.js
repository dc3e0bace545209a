// The staff console. It speaks only to the back-office API (/admin/v1) with
// the session cookie, sending the session's CSRF token with every change.
// Pages are built with DOM calls, never innerHTML, so data from the service
// is always text, and the Content-Security-Policy needs no exceptions.

const app = document.getElementById('app');
let session = null;

// ---------------------------------------------------------------- helpers

/** h('a', {href: '#/x', onclick: fn}, 'text', child, [more]) */
function h(tag, attrs = {}, ...children) {
  const svg = ['svg', 'path', 'line', 'text', 'g', 'polyline'].includes(tag);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'value' && !svg) el.value = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

async function api(method, path, body) {
  const headers = { 'x-console': '1' };
  if (method !== 'GET' && session) headers['x-csrf-token'] = session.csrf_token;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  let json = null;
  try {
    json = await response.json();
  } catch {
    json = { success: false, code: 'UNREADABLE_REPLY', message: `The service answered ${response.status} without JSON` };
  }
  if (response.status === 401 && path.startsWith('/admin/')) {
    session = null;
    location.hash = '#/sign-in';
  }
  return { ok: response.ok, status: response.status, body: json, data: json?.data };
}

const errorBox = (reply) =>
  h('div', { class: 'error', role: 'alert' }, `${reply.body.code}: ${reply.body.message}`, reply.body.field ? ` (field ${reply.body.field})` : '');

const table = (columns, rows, empty = 'Nothing to show.') =>
  rows.length === 0
    ? h('p', { class: 'muted' }, empty)
    : h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            columns.map(([title, , cls]) => h('th', { class: cls }, title)),
          ),
        ),
        h(
          'tbody',
          {},
          rows.map((row) =>
            h(
              'tr',
              {},
              columns.map(([, cell, cls]) => h('td', { class: cls }, cell(row))),
            ),
          ),
        ),
      );

const facts = (pairs) =>
  h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
const pill = (text) => h('span', { class: `pill ${text}` }, text);
const link = (href, text) => h('a', { href }, text);
const time = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+\+00:00$/, ' UTC') : '—');
const json = (value) => h('pre', {}, JSON.stringify(value, null, 1));

function age(seconds) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

/** datetime-local gives a time without an offset: it is the browser's local time, sent as UTC. */
const toInstant = (local) => (local ? new Date(local).toISOString() : undefined);
/** The other way, to show a chosen instant in a datetime-local field. */
function toLocalInput(iso) {
  if (!iso) return undefined;
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * A form of labelled fields. Each field: {name, label, type, required, options, value, placeholder}.
 * onSubmit gets the values (checkboxes as booleans, empty text left out).
 */
function form(fields, submitLabel, onSubmit, { id } = {}) {
  const inputs = {};
  const el = h(
    'form',
    { class: 'fields', id },
    fields.map((f) => {
      let input;
      if (f.type === 'select')
        input = h(
          'select',
          { name: f.name },
          f.options.map(([value, text]) => h('option', { value, selected: value === f.value }, text)),
        );
      else if (f.type === 'textarea') input = h('textarea', { name: f.name, required: f.required, placeholder: f.placeholder }, f.value ?? '');
      else if (f.type === 'checkbox') input = h('input', { type: 'checkbox', name: f.name, checked: f.value });
      else
        input = h('input', {
          type: f.type ?? 'text',
          name: f.name,
          required: f.required,
          value: f.value ?? '',
          placeholder: f.placeholder,
          size: f.size,
          autocomplete: f.autocomplete ?? 'off',
        });
      inputs[f.name] = input;
      return h('label', { class: f.type === 'checkbox' ? 'check' : undefined }, f.type === 'checkbox' ? [input, f.label] : [f.label, input]);
    }),
    h('button', { type: 'submit' }, submitLabel),
  );
  el.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = {};
    for (const f of fields) {
      const input = inputs[f.name];
      if (f.type === 'checkbox') values[f.name] = input.checked;
      else if (input.value !== '') values[f.name] = input.value;
    }
    onSubmit(values, el);
  });
  return el;
}

/** Shows the result of an action below its form: an error, or what `render` makes of the data. */
function outcome(slot, reply, render) {
  slot.replaceChildren(reply.ok ? render(reply.data) : errorBox(reply));
}

/** A secret the service shows once: say so, and never put it anywhere but this page. */
const shownOnce = (what, value, more = []) =>
  h(
    'div',
    { class: 'secret', role: 'status' },
    h('strong', {}, `${what}: shown only now. Copy it and hand it over safely; it cannot be shown again.`),
    h('p', {}, h('code', { class: 'once' }, value)),
    more,
  );

const may = (...roles) => session && (session.role === 'admin' || roles.includes(session.role));

function params() {
  const query = location.hash.split('?')[1] ?? '';
  return new URLSearchParams(query);
}

function hashWith(path, values) {
  const query = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== undefined && v !== ''));
  return `#/${path}${query.toString() ? `?${query}` : ''}`;
}

// ---------------------------------------------------------------- shell

const PAGES = [
  ['queue', 'Reconciliation queue', ['reconciler']],
  ['orders', 'Orders', ['reconciler', 'auditor']],
  ['statement', 'Statements', ['auditor']],
  ['verify', 'Verification', ['auditor']],
  ['merchants', 'Merchants', []],
  ['catalogue', 'Catalogue', []],
  ['staff', 'Staff', []],
  ['rebuild', 'Rebuild', []],
  ['status', 'Status', []],
];

function shell(current) {
  const nav = PAGES.filter(([, , roles]) => may(...roles)).map(([path, title]) =>
    h('a', { href: `#/${path}`, class: path === current ? 'current' : undefined }, title),
  );
  return h(
    'header',
    {},
    h('span', { class: 'brand' }, 'Top-up console'),
    h('nav', {}, nav),
    h('span', { class: 'who' }, `${session.name} · ${session.role}`),
    h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out'),
  );
}

async function signOut() {
  await api('DELETE', '/console/session');
  session = null;
  location.hash = '#/sign-in';
}

function signInPage() {
  const slot = h('div');
  const el = form(
    [{ name: 'token', label: 'Staff token', type: 'password', required: true, autocomplete: 'current-password' }],
    'Sign in',
    async (values, f) => {
      const reply = await api('POST', '/console/session', { token: values.token ?? '' });
      f.reset();
      if (!reply.ok) return slot.replaceChildren(errorBox(reply));
      session = reply.data;
      location.hash = '#/';
    },
  );
  app.replaceChildren(
    h(
      'main',
      { class: 'signin' },
      h('h1', {}, 'Top-up console'),
      h('p', { class: 'muted' }, 'Sign in with the staff token you were given. It is exchanged for a session and never stored by the browser.'),
      el,
      slot,
    ),
  );
}

const ROUTES = {
  queue: queuePage,
  orders: ordersPage,
  order: orderPage,
  statement: statementPage,
  verify: verifyPage,
  merchants: merchantsPage,
  merchant: merchantPage,
  catalogue: cataloguePage,
  staff: staffPage,
  rebuild: rebuildPage,
  status: statusPage,
};

async function route() {
  if (!session) {
    const reply = await api('GET', '/console/session');
    session = reply.ok ? reply.data : null;
  }
  const [path, arg] = location.hash.replace(/^#\/?/, '').split('?')[0].split('/');
  if (!session) return signInPage();
  if (path === 'sign-in' || path === '') {
    location.hash = `#/${PAGES.find(([, , roles]) => may(...roles))[0]}`;
    return;
  }
  const page = ROUTES[path];
  const main = h('main');
  app.replaceChildren(shell(path === 'order' ? 'orders' : path === 'merchant' ? 'merchants' : path), main);
  if (!page) return main.append(h('p', { class: 'error' }, 'No such page.'));
  try {
    await page(main, arg && decodeURIComponent(arg));
  } catch (error) {
    main.append(h('p', { class: 'error' }, `The page failed: ${error.message}`));
  }
}

window.addEventListener('hashchange', route);
route();

// ---------------------------------------------------------------- clerk

async function queuePage(main) {
  const offset = Number(params().get('offset') ?? 0);
  const reply = await api('GET', `/admin/v1/reconciliation/orders?limit=50&offset=${offset}`);
  main.append(h('h1', {}, 'Reconciliation queue'));
  if (!reply.ok) return main.append(errorBox(reply));
  const { total, orders } = reply.data;
  main.append(
    h(
      'p',
      { class: 'muted' },
      `${total} order${total === 1 ? '' : 's'} with an unknown upstream result, oldest first. The money stays frozen until someone decides.`,
    ),
    table(
      [
        ['Order', (o) => link(`#/order/${o.order_no}`, o.order_no)],
        ['Merchant', (o) => o.merchant_id],
        ['Out trade no', (o) => o.out_trade_no],
        ['Amount', (o) => `${o.amount} ${o.currency}`, 'num'],
        ['Waiting', (o) => age(o.age_seconds), 'num'],
        ['Why unknown', (o) => o.reason],
      ],
      orders,
      'The queue is empty.',
    ),
    h(
      'div',
      { class: 'row' },
      offset > 0 && link(hashWith('queue', { offset: Math.max(0, offset - 50) }), '← Previous'),
      offset + orders.length < total && link(hashWith('queue', { offset: offset + 50 }), 'Next →'),
    ),
  );
}

const ORDER_FILTERS = ['merchant_id', 'order_no', 'out_trade_no', 'account_id', 'status', 'stage', 'created_from', 'created_to'];
const STAGES = ['placed', 'refused', 'accepted', 'sent', 'unknown', 'succeeding', 'failing', 'succeeded', 'failed'];

async function ordersPage(main) {
  const p = params();
  const chosen = Object.fromEntries(ORDER_FILTERS.map((k) => [k, p.get(k) ?? undefined]));
  main.append(
    h('h1', {}, 'Orders'),
    form(
      [
        { name: 'out_trade_no', label: 'Out trade no', value: chosen.out_trade_no },
        { name: 'order_no', label: 'Order no', value: chosen.order_no },
        { name: 'merchant_id', label: 'Merchant id', value: chosen.merchant_id },
        { name: 'account_id', label: 'Account id', value: chosen.account_id },
        {
          name: 'status',
          label: 'Status',
          type: 'select',
          value: chosen.status ?? '',
          options: [
            ['', 'any'],
            ['processing', 'processing'],
            ['success', 'success'],
            ['failed', 'failed'],
          ],
        },
        {
          name: 'stage',
          label: 'Internal stage',
          type: 'select',
          value: chosen.stage ?? '',
          options: [['', 'any'], ...STAGES.map((s) => [s, s === 'unknown' ? 'unknown result' : s])],
        },
        { name: 'created_from', label: 'Created from', type: 'datetime-local', value: toLocalInput(chosen.created_from) },
        { name: 'created_to', label: 'Created before', type: 'datetime-local', value: toLocalInput(chosen.created_to) },
      ],
      'Search',
      (values) => {
        location.hash = hashWith('orders', { ...values, created_from: toInstant(values.created_from), created_to: toInstant(values.created_to) });
      },
      { id: 'order-search' },
    ),
  );
  const query = new URLSearchParams(Object.entries(chosen).filter(([, v]) => v));
  if (p.get('cursor')) query.set('cursor', p.get('cursor'));
  const reply = await api('GET', `/admin/v1/orders?${query}`);
  if (!reply.ok) return main.append(errorBox(reply));
  main.append(
    h('h2', {}, 'Results, newest first'),
    table(
      [
        ['Order', (o) => link(`#/order/${o.order_no}`, o.order_no)],
        ['Out trade no', (o) => o.out_trade_no],
        ['Merchant', (o) => o.merchant_id],
        ['Account', (o) => o.account_id],
        ['Amount', (o) => `${o.amount} ${o.currency}`, 'num'],
        ['Status', (o) => o.status ?? '—'],
        ['Stage', (o) => pill(o.stage)],
        ['Created', (o) => time(o.created_at)],
      ],
      reply.data.orders,
      'No order matches.',
    ),
    reply.data.next_cursor && h('div', { class: 'row' }, link(hashWith('orders', { ...chosen, cursor: reply.data.next_cursor }), 'Next page →')),
  );
}

async function orderPage(main, orderNo) {
  const reply = await api('GET', `/admin/v1/orders/${encodeURIComponent(orderNo)}`);
  main.append(h('h1', {}, `Order ${orderNo}`));
  if (!reply.ok) return main.append(errorBox(reply));
  const o = reply.data;
  main.append(
    h(
      'section',
      { class: 'card' },
      facts([
        ['Status', h('span', {}, o.status ?? '—', ' ', pill(o.stage))],
        ['Merchant', o.merchant_id],
        ['Out trade no', o.out_trade_no],
        ['SKU', o.sku_id],
        ['Account', `${o.account_id} ${Object.keys(o.account_fields).length ? JSON.stringify(o.account_fields) : ''}`],
        ['Amount', `${o.amount} ${o.currency}`],
        ['Upstream attempts', String(o.upstream_attempts)],
        ['Created', time(o.created_at)],
        ['Completed', time(o.completed_at)],
        o.fail_code && ['Failure', `${o.fail_code}: ${o.fail_reason}`],
      ]),
    ),
  );
  const wallet = await api('GET', `/admin/v1/wallets/${encodeURIComponent(o.merchant_id)}/balance`);
  if (wallet.ok) {
    const w = wallet.data;
    main.append(
      h('p', { id: 'wallet' }, `Merchant wallet now: balance ${w.balance} ${o.currency}, frozen ${w.frozen_balance}, available ${w.available_balance}`),
    );
  }
  if (o.resolution) {
    const r = o.resolution;
    main.append(
      h(
        'section',
        { class: 'card', id: 'resolution' },
        h('h2', {}, 'Resolved by staff'),
        facts([
          ['Outcome', r.outcome],
          ['Resolved by', r.resolved_by],
          ['When', time(r.resolved_at)],
          ['Why', r.note],
        ]),
      ),
    );
  }
  if (o.stage === 'unknown' && may('reconciler')) main.append(resolvePanel(o));
  main.append(
    h('h2', {}, 'Timeline'),
    table(
      [
        ['#', (e) => String(e.revision), 'num'],
        ['Recorded', (e) => time(e.recorded_at)],
        ['Event', (e) => e.type],
        ['Details', (e) => json(e.data)],
      ],
      o.history,
    ),
  );
  if (may('reconciler')) await callbacksPanel(main, orderNo);
}

function resolvePanel(order) {
  const panel = h('section', { class: 'card', id: 'resolve' }, h('h2', {}, 'Settle the unknown result'));
  const requerySlot = h('div');
  panel.append(
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'requery',
          onclick: async () =>
            outcome(requerySlot, await api('POST', `/admin/v1/reconciliation/orders/${order.order_no}/requery`, {}), (d) =>
              h('div', { class: 'notice' }, `The upstream says: ${d.upstream.status}`, json(d.upstream)),
            ),
        },
        'Re-query the upstream',
      ),
    ),
    requerySlot,
  );
  const confirmSlot = h('div');
  panel.append(
    form(
      [
        {
          name: 'outcome',
          label: 'Outcome',
          type: 'select',
          options: [
            ['success', 'Delivered: success (deducts the money)'],
            ['failed', 'Not delivered: failed (releases the money)'],
          ],
        },
        { name: 'note', label: 'Note (required: what shows the outcome)', type: 'textarea', required: true },
      ],
      'Resolve…',
      (values) => {
        if (!values.note?.trim()) return confirmSlot.replaceChildren(h('div', { class: 'error' }, 'A note is required.'));
        const result = h('div');
        confirmSlot.replaceChildren(
          h(
            'div',
            { class: 'confirm', role: 'alertdialog' },
            h(
              'p',
              {},
              h('strong', {}, `Resolve ${order.order_no} as ${values.outcome}?`),
              ` ${order.amount} ${order.currency} will be ${values.outcome === 'success' ? 'deducted from' : 'released to'} merchant ${order.merchant_id}. This cannot be undone.`,
            ),
            h('p', {}, `Note: ${values.note}`),
            h(
              'div',
              { class: 'row' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  id: 'confirm-resolve',
                  onclick: async () => {
                    const reply = await api('POST', `/admin/v1/reconciliation/orders/${order.order_no}/resolve`, {
                      outcome: values.outcome,
                      note: values.note,
                    });
                    if (reply.ok) return route();
                    result.replaceChildren(errorBox(reply));
                  },
                },
                `Confirm: resolve as ${values.outcome}`,
              ),
              h('button', { type: 'button', class: 'secondary', onclick: () => confirmSlot.replaceChildren() }, 'Cancel'),
            ),
            result,
          ),
        );
      },
      { id: 'resolve-form' },
    ),
    confirmSlot,
  );
  return panel;
}

async function callbacksPanel(main, orderNo) {
  main.append(h('h2', {}, 'Callbacks to the merchant'));
  const reply = await api('GET', `/admin/v1/orders/${encodeURIComponent(orderNo)}/callbacks`);
  if (reply.status === 404) return main.append(h('p', { class: 'muted' }, 'No callback: the order is not final yet.'));
  if (!reply.ok) return main.append(errorBox(reply));
  const log = reply.data;
  const slot = h('div');
  main.append(
    h(
      'p',
      {},
      `Delivery ${log.state}, ${log.attempts_made} attempt${log.attempts_made === 1 ? '' : 's'}`,
      log.next_attempt_at ? `, next at ${time(log.next_attempt_at)}` : '',
    ),
    table(
      [
        ['#', (a) => String(a.attempt), 'num'],
        ['At', (a) => time(a.at)],
        ['Kind', (a) => a.kind],
        ['URL', (a) => a.url],
        ['HTTP', (a) => (a.status_code === null ? '—' : String(a.status_code))],
        ['Acknowledged', (a) => (a.in_progress ? 'sending…' : a.acknowledged ? 'yes' : 'no')],
        ['Reply or error', (a) => a.error ?? a.reply_excerpt ?? ''],
      ],
      log.attempts,
      'No attempt yet.',
    ),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          type: 'button',
          id: 'redeliver',
          onclick: async () =>
            outcome(slot, await api('POST', `/admin/v1/orders/${encodeURIComponent(orderNo)}/callbacks/redeliver`, {}), () =>
              h('p', { class: 'ok' }, 'Redelivery scheduled. Reload to follow it.'),
            ),
        },
        'Redeliver now',
      ),
    ),
    slot,
  );
}

// ---------------------------------------------------------------- auditor

async function merchantOptions() {
  const reply = await api('GET', '/admin/v1/merchants?limit=200');
  return reply.ok ? reply.data.merchants : [];
}

async function statementPage(main) {
  const p = params();
  const merchantId = p.get('merchant_id') ?? '';
  const from = p.get('from') ?? undefined;
  const to = p.get('to') ?? undefined;
  const merchants = await merchantOptions();
  main.append(
    h('h1', {}, 'Wallet statement'),
    form(
      [
        {
          name: 'merchant_id',
          label: 'Merchant',
          type: 'select',
          value: merchantId,
          options: [['', 'choose…'], ...merchants.map((m) => [m.merchant_id, `${m.name} (${m.merchant_id})`])],
        },
        { name: 'from', label: 'From', type: 'datetime-local', value: toLocalInput(from) },
        { name: 'to', label: 'Before', type: 'datetime-local', value: toLocalInput(to) },
      ],
      'Show',
      (values) => (location.hash = hashWith('statement', { merchant_id: values.merchant_id, from: toInstant(values.from), to: toInstant(values.to) })),
      { id: 'statement-form' },
    ),
  );
  if (!merchantId) return;
  if (from || to) main.append(h('p', { class: 'muted' }, `Window: ${from ? time(from) : 'the start'} to ${to ? time(to) : 'now'}`));
  const window = { from, to };
  const query = new URLSearchParams(Object.entries(window).filter(([, v]) => v));
  const base = `/admin/v1/wallets/${encodeURIComponent(merchantId)}`;
  const chainSlot = h('div', { id: 'chain' }, h('p', { class: 'muted' }, 'Checking the hash chain…'));
  main.append(
    h(
      'div',
      { class: 'row' },
      h(
        'a',
        {
          href: `${base}/statement/export?${new URLSearchParams({ ...Object.fromEntries(query), format: 'csv' })}`,
          download: `statement-${merchantId}.csv`,
          id: 'download-csv',
        },
        'Download CSV',
      ),
      h(
        'a',
        {
          href: `${base}/statement/export?${new URLSearchParams({ ...Object.fromEntries(query), format: 'json' })}`,
          download: `statement-${merchantId}.json`,
          id: 'download-json',
        },
        'Download JSON',
      ),
      h('span', { class: 'muted' }, 'The whole window, as `npm run verify-statement` checks it.'),
    ),
    chainSlot,
  );
  const after = p.get('after_revision');
  if (after) query.set('after_revision', after);
  query.set('limit', '50');
  const reply = await api('GET', `${base}/statement?${query}`);
  if (!reply.ok) return main.append(errorBox(reply));
  const lines = reply.data.lines;
  main.append(
    h('h2', {}, 'Balance and frozen amount over this page'),
    chart(lines),
    h('h2', {}, `Lines${after ? ` after revision ${after}` : ''}`),
    table(
      [
        ['Rev', (l) => String(l.revision), 'num'],
        ['Recorded', (l) => time(l.recorded_at)],
        ['Event', (l) => l.type],
        ['Order / reference', (l) => (l.order_no ? link(`#/order/${l.order_no}`, l.order_no) : (l.reference ?? ''))],
        ['Amount', (l) => l.amount ?? '', 'num'],
        ['Balance', (l) => l.balance_after, 'num'],
        ['Frozen', (l) => l.frozen_after, 'num'],
        ['Available', (l) => l.available_after, 'num'],
        ['Hash', (l) => h('span', { class: 'mono', title: l.hash }, l.hash.slice(0, 12))],
      ],
      lines,
      'No line in this window.',
    ),
    h(
      'div',
      { class: 'row' },
      after && link(hashWith('statement', { merchant_id: merchantId, from, to }), '← First page'),
      reply.data.next_after_revision !== null &&
        link(hashWith('statement', { merchant_id: merchantId, from, to, after_revision: reply.data.next_after_revision }), 'Next page →'),
    ),
  );
  main.append(balanceAsOfPanel(base));
  const chain = await api('GET', `${base}/chain`);
  outcome(chainSlot, chain, (c) =>
    h(
      'div',
      { class: c.intact ? 'notice' : 'error' },
      c.intact
        ? h('span', { class: 'ok' }, `Hash chain intact: ${c.events_checked} events, last hash ${c.last_hash.slice(0, 16)}…`)
        : `Hash chain BROKEN at revision ${c.first_break.revision}: ${c.first_break.problem}`,
    ),
  );
}

function balanceAsOfPanel(base) {
  const slot = h('div');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Balance as of an instant'),
    form(
      [{ name: 'at', label: 'At', type: 'datetime-local', required: true }],
      'Show balance',
      async (values) =>
        outcome(slot, await api('GET', `${base}/balance?at=${encodeURIComponent(toInstant(values.at))}`), (b) =>
          facts([
            ['As of', time(b.as_of?.at)],
            ['Balance', b.balance],
            ['Frozen', b.frozen_balance],
            ['Available', b.available_balance],
            ['Events applied', String(b.events_applied)],
          ]),
        ),
      { id: 'balance-form' },
    ),
    slot,
  );
}

/**
 * Balance (solid) and frozen (dashed) over the time of this page's lines, as
 * steps: each amount holds until the next event changes it. SVG by hand, no
 * chart library.
 */
function chart(lines) {
  if (lines.length === 0) return h('p', { class: 'muted' }, 'No line to draw.');
  const W = 900,
    H = 220,
    PAD = 40;
  const times = lines.map((l) => Date.parse(l.recorded_at));
  const t0 = times[0],
    t1 = Math.max(times[times.length - 1], t0 + 1);
  const max = Math.max(1, ...lines.map((l) => Number(l.balance_after)), ...lines.map((l) => Number(l.frozen_after)));
  const x = (t) => PAD + ((t - t0) * (W - 2 * PAD)) / (t1 - t0);
  const y = (v) => H - PAD + 10 - (v / max) * (H - 2 * PAD);
  const steps = (field) =>
    lines
      .flatMap((l, i) => [...(i > 0 ? [[times[i], Number(lines[i - 1][field])]] : []), [times[i], Number(l[field])]])
      .map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`)
      .join(' ');
  return h(
    'div',
    {},
    h(
      'svg',
      { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Balance and frozen amount over time' },
      h('line', { class: 'axis', x1: PAD, y1: y(0), x2: W - PAD, y2: y(0) }),
      h('line', { class: 'axis', x1: PAD, y1: y(max), x2: W - PAD, y2: y(max) }),
      h('text', { x: 2, y: y(max) + 4 }, max.toFixed(2)),
      h('text', { x: 2, y: y(0) + 4 }, '0.00'),
      h('text', { x: PAD, y: H - 4 }, time(lines[0].recorded_at)),
      h('text', { x: W - PAD, y: H - 4, 'text-anchor': 'end' }, time(lines[lines.length - 1].recorded_at)),
      h('polyline', { class: 'balance', points: steps('balance_after') }),
      h('polyline', { class: 'frozen', points: steps('frozen_after') }),
    ),
    h(
      'p',
      { class: 'legend' },
      h('span', { class: 'balance' }, '— balance'),
      '   ',
      h('span', { class: 'frozen' }, '- - frozen'),
      h('span', { class: 'muted' }, '   (the lines of this page, over their recorded time)'),
    ),
  );
}

async function verifyPage(main) {
  const merchants = await merchantOptions();
  const slot = h('div', { id: 'verification' });
  main.append(
    h('h1', {}, 'Verify the read models against the events'),
    h('p', { class: 'muted' }, 'Replays the event store with the deciders that wrote it and compares the result with the tables the APIs read. Read-only.'),
    form(
      [
        {
          name: 'merchant_id',
          label: 'Wallet',
          type: 'select',
          options: [['', 'all wallets (the whole log)'], ...merchants.map((m) => [m.merchant_id, `${m.name} (${m.merchant_id})`])],
        },
        {
          name: 'scope',
          label: 'Scope (one wallet)',
          type: 'select',
          options: [
            ['', 'wallet and its orders'],
            ['wallet', 'wallet only'],
          ],
        },
      ],
      'Run verification',
      async (values, f) => {
        slot.replaceChildren(h('p', { class: 'muted' }, 'Verifying…'));
        const body = values.merchant_id ? { merchant_id: values.merchant_id, ...(values.scope ? { scope: values.scope } : {}) } : {};
        outcome(slot, await api('POST', '/admin/v1/audit/verify', body), (r) =>
          h(
            'div',
            {},
            h(
              'p',
              { class: r.clean ? 'ok' : 'bad' },
              r.clean
                ? `Clean: ${r.events_checked} events checked up to ${r.last_position}, no difference.`
                : `${r.differences_total} difference${r.differences_total === 1 ? '' : 's'} in ${r.events_checked} events.`,
            ),
            !r.clean &&
              table(
                [
                  ['Table', (d) => d.table],
                  ['Key', (d) => d.key],
                  ['Column', (d) => d.column ?? ''],
                  ['Expected', (d) => JSON.stringify(d.expected)],
                  ['Actual', (d) => JSON.stringify(d.actual)],
                  ['Explained by', (d) => (d.explained_by ? `${d.explained_by.type} rev ${d.explained_by.revision} @ ${d.explained_by.position}` : '')],
                ],
                r.differences,
              ),
          ),
        );
      },
      { id: 'verify-form' },
    ),
    slot,
  );
}

// ---------------------------------------------------------------- operator

async function merchantsPage(main) {
  const p = params();
  const created = h('div', { id: 'created' });
  main.append(
    h('h1', {}, 'Merchants'),
    form(
      [
        { name: 'name', label: 'Name contains', value: p.get('name') ?? '' },
        {
          name: 'status',
          label: 'Status',
          type: 'select',
          value: p.get('status') ?? '',
          options: [
            ['', 'any'],
            ['active', 'active'],
            ['suspended', 'suspended'],
          ],
        },
      ],
      'Search',
      (values) => (location.hash = hashWith('merchants', values)),
    ),
  );
  const query = new URLSearchParams([...p].filter(([k]) => ['name', 'status', 'cursor'].includes(k)));
  const reply = await api('GET', `/admin/v1/merchants?${query}`);
  if (!reply.ok) main.append(errorBox(reply));
  else
    main.append(
      table(
        [
          ['Name', (m) => link(`#/merchant/${m.merchant_id}`, m.name)],
          ['Merchant id', (m) => m.merchant_id],
          ['Status', (m) => pill(m.status)],
          ['Currency', (m) => m.currency],
          ['Callback URL', (m) => m.callback_url ?? '—'],
          ['Created', (m) => time(m.created_at)],
        ],
        reply.data.merchants,
        'No merchant matches.',
      ),
      reply.data.next_cursor && link(hashWith('merchants', { name: p.get('name'), status: p.get('status'), cursor: reply.data.next_cursor }), 'Next page →'),
    );
  main.append(
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'New merchant'),
      form(
        [
          { name: 'name', label: 'Name', required: true },
          { name: 'currency', label: 'Currency', value: 'USD', size: 4 },
          { name: 'callback_url', label: 'Callback URL', type: 'url', size: 40 },
          { name: 'ip_whitelist', label: 'IP whitelist (comma-separated, empty allows all)', size: 30 },
          { name: 'rate_limit_per_second', label: 'Rate limit /s', type: 'number', value: '100' },
        ],
        'Create merchant',
        async (values, f) => {
          const reply = await api('POST', '/admin/v1/merchants', merchantBody(values));
          outcome(created, reply, (m) => {
            f.reset();
            return shownOnce(
              'App secret',
              m.app_secret,
              facts([
                ['Merchant', link(`#/merchant/${m.merchant_id}`, `${m.name} (${m.merchant_id})`)],
                ['API key', m.api_key],
              ]),
            );
          });
        },
        { id: 'create-merchant' },
      ),
      created,
    ),
  );
}

function merchantBody(values) {
  const body = {};
  if (values.name !== undefined) body.name = values.name;
  if (values.currency !== undefined) body.currency = values.currency;
  if ('callback_url' in values) body.callback_url = values.callback_url || null;
  if (values.ip_whitelist !== undefined) body.ip_whitelist = values.ip_whitelist.split(/[\s,]+/).filter(Boolean);
  if (values.rate_limit_per_second !== undefined) body.rate_limit_per_second = Number(values.rate_limit_per_second);
  return body;
}

async function merchantPage(main, merchantId) {
  const base = `/admin/v1/merchants/${encodeURIComponent(merchantId)}`;
  const [reply, wallet, prices] = await Promise.all([
    api('GET', base),
    api('GET', `/admin/v1/wallets/${encodeURIComponent(merchantId)}/balance`),
    api('GET', `${base}/prices?limit=200`),
  ]);
  main.append(h('h1', {}, reply.ok ? reply.data.name : merchantId));
  if (!reply.ok) return main.append(errorBox(reply));
  const m = reply.data;
  const slot = h('div', { id: 'merchant-result' });
  main.append(
    h(
      'section',
      { class: 'card' },
      facts([
        ['Merchant id', m.merchant_id],
        ['Status', pill(m.status)],
        ['API key', h('span', { class: 'mono' }, m.api_key)],
        ['Callback URL', m.callback_url],
        ['IP whitelist', m.ip_whitelist.length ? m.ip_whitelist.join(', ') : 'any address'],
        ['Rate limit', `${m.rate_limit_per_second} requests/s`],
        ['Previous secret valid until', m.previous_secret_valid_until ? time(m.previous_secret_valid_until) : 'no overlap'],
        wallet.ok && ['Wallet', `${wallet.data.balance} ${m.currency} (frozen ${wallet.data.frozen_balance}, available ${wallet.data.available_balance})`],
        ['Updated', `${time(m.updated_at)} by ${m.updated_by}`],
      ]),
      h(
        'div',
        { class: 'row' },
        link(hashWith('orders', { merchant_id: m.merchant_id }), 'Orders'),
        may('auditor') && link(hashWith('statement', { merchant_id: m.merchant_id }), 'Statement'),
        h(
          'button',
          {
            type: 'button',
            class: m.status === 'active' ? 'danger' : undefined,
            id: 'toggle-status',
            onclick: async () => {
              const to = m.status === 'active' ? 'suspended' : 'active';
              if (to === 'suspended' && !confirm(`Suspend ${m.name}? Its API requests are refused until it is reactivated.`)) return;
              const r = await api('PATCH', base, { status: to });
              r.ok ? route() : slot.replaceChildren(errorBox(r));
            },
          },
          m.status === 'active' ? 'Suspend' : 'Reactivate',
        ),
      ),
      slot,
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Settings'),
      form(
        [
          { name: 'callback_url', label: 'Callback URL (empty removes it)', type: 'url', value: m.callback_url ?? '', size: 40 },
          { name: 'ip_whitelist', label: 'IP whitelist (comma-separated)', value: m.ip_whitelist.join(', '), size: 30 },
          { name: 'rate_limit_per_second', label: 'Rate limit /s', type: 'number', value: String(m.rate_limit_per_second) },
        ],
        'Save',
        async (values) => {
          const r = await api(
            'PATCH',
            base,
            merchantBody({
              callback_url: values.callback_url ?? '',
              ip_whitelist: values.ip_whitelist ?? '',
              rate_limit_per_second: values.rate_limit_per_second,
            }),
          );
          r.ok ? route() : slot.replaceChildren(errorBox(r));
        },
        { id: 'merchant-settings' },
      ),
    ),
    secretPanel(base, m),
    depositPanel(merchantId),
    pricesPanel(base, prices),
  );
}

function secretPanel(base, m) {
  const slot = h('div', { id: 'rotated' });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Rotate the app secret'),
    h(
      'p',
      { class: 'muted' },
      'The new secret is shown once and signs callbacks at once. The old one keeps verifying the merchant’s requests until the time you choose (at most 30 days), then stops.',
    ),
    form(
      [
        {
          name: 'until',
          label: 'The old secret keeps working until',
          type: 'datetime-local',
          value: toLocalInput(new Date(Date.now() + 86_400_000).toISOString()),
        },
        { name: 'now', label: 'Stop the old secret at once (it leaked)', type: 'checkbox' },
      ],
      'Rotate secret',
      async (values) => {
        const overlap = values.now || !values.until ? 0 : Math.max(0, Math.round((new Date(values.until).getTime() - Date.now()) / 1000));
        if (
          !confirm(
            `Rotate the app secret of ${m.name}? ${overlap === 0 ? 'The old secret stops at once.' : `The old secret keeps working for ${age(overlap)}.`}`,
          )
        )
          return;
        const reply = await api('POST', `${base}/app-secret`, { overlap_seconds: overlap });
        outcome(slot, reply, (d) =>
          shownOnce(
            'New app secret',
            d.app_secret,
            h(
              'p',
              {},
              d.previous_secret_valid_until
                ? `The previous secret verifies until ${time(d.previous_secret_valid_until)}.`
                : 'The previous secret no longer verifies anything.',
            ),
          ),
        );
      },
      { id: 'rotate-secret' },
    ),
    m.previous_secret_valid_until &&
      h(
        'div',
        { class: 'row' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: async () => {
              const r = await api('DELETE', `${base}/app-secret/previous`);
              r.ok ? route() : slot.replaceChildren(errorBox(r));
            },
          },
          'End the overlap now',
        ),
      ),
    slot,
  );
}

function depositPanel(merchantId) {
  const slot = h('div');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Deposit'),
    form(
      [
        { name: 'amount', label: 'Amount', required: true, placeholder: '100.00' },
        { name: 'reference', label: 'Reference (bank transfer id)', required: true, size: 30 },
      ],
      'Deposit',
      async (values, f) => {
        const reply = await api('POST', `/admin/v1/merchants/${encodeURIComponent(merchantId)}/deposits`, values);
        outcome(slot, reply, (w) => (f.reset(), h('p', { class: 'ok' }, `Deposited. Balance ${w.balance} ${w.currency}, available ${w.available_balance}.`)));
      },
      { id: 'deposit' },
    ),
    slot,
  );
}

function pricesPanel(base, prices) {
  const slot = h('div');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Prices'),
    prices.ok
      ? table(
          [
            ['SKU', (p) => p.sku_id],
            ['Name', (p) => p.sku_name],
            ['Price', (p) => p.price, 'num'],
            ['On shelf', (p) => (p.on_shelf ? 'yes' : 'no')],
            ['Updated', (p) => `${time(p.updated_at)} by ${p.updated_by}`],
          ],
          prices.data.prices,
          'No price: the merchant can order nothing yet.',
        )
      : errorBox(prices),
    form(
      [
        { name: 'sku_id', label: 'SKU id', required: true },
        { name: 'price', label: 'Price', required: true, placeholder: '1.20' },
      ],
      'Set price',
      async (values) => {
        const reply = await api('PUT', `${base}/prices/${encodeURIComponent(values.sku_id ?? '')}`, { price: values.price });
        reply.ok ? route() : slot.replaceChildren(errorBox(reply));
      },
      { id: 'set-price' },
    ),
    slot,
  );
}

async function cataloguePage(main) {
  const [products, skus] = await Promise.all([api('GET', '/admin/v1/products?limit=200'), api('GET', '/admin/v1/skus?limit=200')]);
  const productSlot = h('div');
  const skuSlot = h('div');
  main.append(
    h('h1', {}, 'Catalogue'),
    h('h2', {}, 'Products'),
    products.ok
      ? table(
          [
            ['Product id', (p) => p.product_id],
            ['Name', (p) => p.name],
          ],
          products.data.products,
          'No product yet.',
        )
      : errorBox(products),
    form(
      [
        { name: 'product_id', label: 'Product id', required: true },
        { name: 'name', label: 'Name', required: true },
      ],
      'Save product',
      async (values) => {
        const reply = await api('PUT', `/admin/v1/products/${encodeURIComponent(values.product_id ?? '')}`, { name: values.name });
        reply.ok ? route() : productSlot.replaceChildren(errorBox(reply));
      },
      { id: 'put-product' },
    ),
    productSlot,
    h('h2', {}, 'SKUs'),
    skus.ok
      ? table(
          [
            ['SKU id', (s) => s.sku_id],
            ['Product', (s) => s.product_id],
            ['Name', (s) => s.name],
            ['Account fields', (s) => s.required_account_fields.join(', ')],
            ['Account check', (s) => (s.supports_account_check ? 'yes' : 'no')],
            ['On shelf', (s) => (s.on_shelf ? 'yes' : 'no')],
            ['Route', (s) => s.route ?? 'none'],
          ],
          skus.data.skus,
          'No SKU yet.',
        )
      : errorBox(skus),
    form(
      [
        { name: 'sku_id', label: 'SKU id', required: true },
        { name: 'product_id', label: 'Product id', required: true },
        { name: 'name', label: 'Name', required: true },
        { name: 'required_account_fields', label: 'Account fields (comma-separated)' },
        { name: 'route', label: 'Route', value: 'default' },
        { name: 'supports_account_check', label: 'Supports account check', type: 'checkbox' },
        { name: 'on_shelf', label: 'On shelf', type: 'checkbox', value: true },
      ],
      'Save SKU',
      async (values) => {
        const body = {
          product_id: values.product_id,
          name: values.name,
          required_account_fields: (values.required_account_fields ?? '').split(/[\s,]+/).filter(Boolean),
          supports_account_check: values.supports_account_check,
          on_shelf: values.on_shelf,
          route: values.route ?? null,
        };
        const reply = await api('PUT', `/admin/v1/skus/${encodeURIComponent(values.sku_id ?? '')}`, body);
        reply.ok ? route() : skuSlot.replaceChildren(errorBox(reply));
      },
      { id: 'put-sku' },
    ),
    skuSlot,
  );
}

async function staffPage(main) {
  const reply = await api('GET', '/admin/v1/staff?limit=200');
  const slot = h('div', { id: 'staff-result' });
  main.append(h('h1', {}, 'Staff'), slot);
  if (!reply.ok) return main.append(errorBox(reply));
  const act = (member, action, question, render) => async () => {
    if (!confirm(question)) return;
    const r = await api('POST', `/admin/v1/staff/${member.staff_id}/${action}`, {});
    if (!r.ok) return slot.replaceChildren(errorBox(r));
    await route();
    document.getElementById('staff-result')?.replaceChildren(render(r.data));
  };
  main.append(
    table(
      [
        ['Name', (s) => s.name],
        ['Staff id', (s) => s.staff_id],
        ['Role', (s) => s.role],
        ['Status', (s) => pill(s.status)],
        ['Created', (s) => `${time(s.created_at)} by ${s.created_by}`],
        ['Token rotated', (s) => time(s.token_rotated_at)],
        [
          '',
          (s) =>
            s.status === 'active' &&
            s.staff_id !== session.staff_id &&
            h(
              'span',
              { class: 'row' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  onclick: act(s, 'token', `Give ${s.name} a new token? The old one stops working at once.`, (d) =>
                    shownOnce(`New token for ${d.name}`, d.token),
                  ),
                },
                'Rotate token',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  onclick: act(s, 'disable', `Disable ${s.name}? Their token and sessions stop working at once.`, (d) =>
                    h('p', { class: 'ok' }, `${d.name} is disabled.`),
                  ),
                },
                'Disable',
              ),
            ),
        ],
      ],
      reply.data.staff,
      'No staff member yet (the built-in administrator is not listed).',
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'New staff member'),
      form(
        [
          { name: 'name', label: 'Name', required: true },
          {
            name: 'role',
            label: 'Role',
            type: 'select',
            options: [
              ['reconciler', 'reconciler (clerk)'],
              ['auditor', 'auditor'],
              ['admin', 'admin (operator)'],
            ],
          },
        ],
        'Create',
        async (values) => {
          const r = await api('POST', '/admin/v1/staff', values);
          if (!r.ok) return slot.replaceChildren(errorBox(r));
          await route();
          document.getElementById('staff-result')?.replaceChildren(shownOnce(`Token for ${r.data.name}`, r.data.token));
        },
        { id: 'create-staff' },
      ),
    ),
  );
}

async function rebuildPage(main) {
  const status = await api('GET', '/admin/v1/status');
  const names = status.ok ? status.data.projections.map((p) => p.name) : [];
  const slot = h('div', { id: 'rebuild-progress' });
  main.append(
    h('h1', {}, 'Rebuild the read models'),
    h('p', { class: 'muted' }, 'Replays the whole log into fresh tables while the service keeps answering from the live ones, then swaps them in.'),
    form(
      [{ name: 'projection', label: 'Projection', type: 'select', options: [['', 'all of them'], ...names.map((n) => [n, n])] }],
      'Start rebuild',
      async (values) => {
        const reply = await api('POST', '/admin/v1/projections/rebuild', values.projection ? { projection: values.projection } : {});
        if (!reply.ok) return slot.replaceChildren(errorBox(reply));
        location.hash = hashWith('rebuild', { id: reply.data.rebuild_id });
      },
      { id: 'start-rebuild' },
    ),
    slot,
  );
  const id = params().get('id');
  if (id) await follow(slot, id);
}

async function follow(slot, id) {
  for (;;) {
    const reply = await api('GET', `/admin/v1/projections/rebuild/${encodeURIComponent(id)}`);
    if (!reply.ok) return slot.replaceChildren(errorBox(reply));
    const r = reply.data;
    slot.replaceChildren(
      h(
        'section',
        { class: 'card' },
        h(
          'p',
          {},
          `Rebuild ${r.rebuild_id}: `,
          pill(r.status),
          ` started ${time(r.started_at)} by ${r.requested_by}`,
          r.finished_at ? `, finished ${time(r.finished_at)}` : '',
        ),
        r.error && h('p', { class: 'error' }, r.error),
        table(
          [
            ['Projection', (p) => p.name],
            ['Events replayed', (p) => String(p.events), 'num'],
            ['Position', (p) => p.position ?? '—'],
          ],
          r.projections,
        ),
      ),
    );
    if (r.status !== 'running' || !location.hash.includes(id)) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function statusPage(main) {
  const reply = await api('GET', '/admin/v1/status');
  main.append(h('h1', {}, 'Service status'), h('button', { type: 'button', class: 'secondary', onclick: route }, 'Refresh'));
  if (!reply.ok) return main.append(errorBox(reply));
  const s = reply.data;
  const oldest = s.reconciliation.oldest;
  main.append(
    h('p', { class: 'muted' }, `As of ${time(s.at)}`),
    h('h2', {}, 'Projections'),
    table(
      [
        ['Projection', (p) => p.name],
        ['Position', (p) => p.position],
        ['Events behind', (p) => `${p.events_behind_at_least ? '≥ ' : ''}${p.events_behind}`, 'num'],
        ['Last applied', (p) => time(p.updated_at)],
      ],
      s.projections,
    ),
    h('h2', {}, 'Backlogs'),
    facts([
      ['Fulfilment', `${s.fulfilment.pending} pending (${s.fulfilment.retrying} retrying), oldest due ${time(s.fulfilment.oldest_due_at)}`],
      ['Callbacks', `${s.callbacks.pending} pending, ${s.callbacks.exhausted} gave up, oldest due ${time(s.callbacks.oldest_due_at)}`],
      [
        'Unknown results',
        h(
          'span',
          {},
          `${s.reconciliation.unknown_result_orders} waiting`,
          oldest ? [', oldest ', link(`#/order/${oldest.order_no}`, oldest.order_no), ` for ${age(oldest.age_seconds)}`] : '',
        ),
      ],
    ]),
  );
}
