import { post } from '../api.js';
import { h } from '../dom.js';
import { busy, FormErrors, input, labelled, submitForm } from '../forms.js';
import type { Page, PageContext } from '../router.js';

export function loginPage({ app, query }: PageContext): Page {
  const errors = new FormErrors();
  const email = labelled(input({ type: 'email', name: 'email', autocomplete: 'username', required: false }), { label: 'E-mail', required: true });
  const password = labelled(input({ type: 'password', name: 'password', autocomplete: 'current-password' }), { label: 'Password', required: true });
  errors.add('email', email.handle).add('password', password.handle);
  const submit = h('button', { type: 'submit', class: 'button' }, 'Log in');
  const flash = app.takeFlash();

  const form = submitForm(
    errors,
    { class: 'card stack' },
    async () => {
      if (!email.control.value.trim()) errors.field('email', 'Enter your e-mail address.');
      if (!password.control.value) errors.field('password', 'Enter your password.');
      if (!email.control.value.trim() || !password.control.value) {
        (email.control.value.trim() ? password : email).control.focus();
        return;
      }
      try {
        await busy(submit, 'Logging in…', async () => {
          await post('/auth/login', { email: email.control.value.trim(), password: password.control.value }, { quiet401: true });
          await app.refreshSession();
        });
      } catch (error) {
        errors.show(error);
        password.control.value = '';
        password.control.focus();
        return;
      }
      const next = query.get('next');
      app.navigate(next?.startsWith('#/') && !next.startsWith('#/login') ? next : '#/workspace');
    },
    flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
    errors.summary,
    email.row,
    password.row,
    h('div', { class: 'actions' }, submit),
  );

  errors.watch(form);
  return {
    title: 'Log in',
    node: h(
      'section',
      { class: 'login' },
      h('h1', null, 'Log in'),
      h('p', { class: 'lead' }, 'Upload, inspect, transform and convert geospatial data. Your account is on this server.'),
      form,
    ),
  };
}
