import { api } from '../api';
import { errorBox } from '../components/feedback';
import { form } from '../components/form';
import { h } from '../dom';
import { go } from '../navigation';
import type { ConsoleSessionView } from '../replies';
import { setSession } from '../session';

/** The token is sent once, in the body; the browser keeps only the HttpOnly session cookie. */
export function signInPage(): HTMLElement {
  const slot = h('div');
  const el = form(
    [{ name: 'token', label: 'Staff token', type: 'password', required: true, autocomplete: 'current-password' }],
    'Sign in',
    async (values, f) => {
      const reply = await api<ConsoleSessionView>('POST', '/console/session', { token: values.token ?? '' });
      f.reset();
      if (!reply.ok) return slot.replaceChildren(errorBox(reply));
      setSession(reply.data);
      go('#/');
    },
  );
  return h(
    'main',
    { class: 'signin' },
    h('h1', {}, 'Top-up console'),
    h('p', { class: 'muted' }, 'Sign in with the staff token you were given. It is exchanged for a session and never stored by the browser.'),
    el,
    slot,
  );
}
