import { del, get, plainMessage, post } from '../api.js';
import { confirmDialog } from '../components/dialog.js';
import { focusQuietly, h, replace, time, uid } from '../dom.js';
import { busy, FormErrors, groupError, input, labelled, select, statusLine, submitForm } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import { SCOPES } from '../scopes.js';
import type { CreatedToken, Page as ListPage, Token } from '../types.js';
import { columnHeads, tableRegion } from '../components/table-region.js';

const EXPIRY = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: '', label: 'Never (no expiry)' },
];

export function accountPage({ app }: PageContext): Page {
  const me = app.session!;
  const status = statusLine();
  const listBody = h('div', { class: 'token-list' });
  let tokens: Token[] = [];
  let nextCursor: string | null = null;

  // --- create form ---------------------------------------------------------------------
  const errors = new FormErrors();
  const name = labelled(input({ name: 'name', autocomplete: 'off', maxlength: '200', placeholder: 'e.g. laptop CLI' }), {
    label: 'Name',
    required: true,
    hint: 'What the token is for, so you recognise it in the list.',
  });
  const scopeBoxes = SCOPES.map((scope) => {
    const id = uid('scope');
    const box = h('input', { type: 'checkbox', id, name: 'scopes', value: scope.id, 'aria-describedby': `${id}-grants` });
    return {
      scope: scope.id,
      box,
      row: h('div', { class: 'scope' }, box, h('label', { for: id }, h('code', null, scope.id)), h('p', { class: 'hint', id: `${id}-grants` }, scope.grants)),
    };
  });
  /** A button that ticks the scopes `choose` picks and clears the rest. */
  const pick = (label: string, choose: (scope: string) => boolean) =>
    h(
      'button',
      {
        type: 'button',
        class: 'button secondary small',
        onclick: () =>
          scopeBoxes.forEach((s) => {
            s.box.checked = choose(s.scope);
          }),
      },
      label,
    );
  const scopesSet = h(
    'fieldset',
    { class: 'scopes' },
    h('legend', null, 'Scopes', h('span', { class: 'required' }, ' (at least one)')),
    h('p', { class: 'hint' }, 'A token can do only what its scopes allow, and only with your own data. No scope can create or revoke tokens.'),
    h(
      'div',
      { class: 'scope-tools' },
      pick('Select all', () => true),
      pick('Read-only', (scope) => scope.endsWith(':read')),
      pick('Clear', () => false),
    ),
    h(
      'div',
      { class: 'scope-grid' },
      scopeBoxes.map((s) => s.row),
    ),
  );
  const expiry = labelled(select(EXPIRY, { name: 'expires_in_days' }), {
    label: 'Expires after',
    hint: 'An expired token stops working; create a new one then.',
  });
  expiry.control.value = '30';
  errors.add('name', name.handle).add('scopes', groupError(scopesSet)).add('expires_in_days', expiry.handle);

  const created = h('div', { class: 'token-created', hidden: true, tabindex: '-1' });
  const submit = h('button', { type: 'submit', class: 'button' }, 'Create token');

  function showCreated(token: CreatedToken) {
    const valueId = uid('token-value');
    const value = h('input', {
      id: valueId,
      class: 'mono',
      readOnly: true,
      value: token.token,
      spellcheck: 'false',
      onfocus: (e: Event) => (e.target as HTMLInputElement).select(),
    });
    const copyStatus = statusLine('copy-status');
    const copy = h(
      'button',
      {
        type: 'button',
        class: 'button',
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(token.token);
          } catch {
            value.focus();
            value.select();
            document.execCommand('copy');
          }
          copyStatus.set('Copied to the clipboard.', 'ok');
        },
      },
      'Copy',
    );
    replace(
      created,
      h('h3', null, `Token “${token.name}” created`),
      h('p', null, h('strong', null, 'Copy it now: it is shown only this once. '), 'The server keeps only a hash of it.'),
      h('div', { class: 'field' }, h('label', { for: valueId }, 'Token value'), h('div', { class: 'copy-row' }, value, copy)),
      copyStatus.node,
      h('p', { class: 'hint' }, 'Use it as ', h('code', null, 'Authorization: Bearer …'), ' or as SVC_TOKEN for the CLI and the Python client.'),
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary',
          onclick: () => {
            created.hidden = true;
            replace(created);
            focusQuietly(heading);
          },
        },
        'Done, I have copied it',
      ),
    );
    created.hidden = false;
    focusQuietly(created);
  }

  const form = submitForm(
    errors,
    { class: 'card stack', 'aria-labelledby': 'create-token-title' },
    async () => {
      const scopes = scopeBoxes.filter((s) => s.box.checked).map((s) => s.scope);
      const body: Record<string, unknown> = { name: name.control.value.trim(), scopes };
      if (expiry.control.value) body.expires_in_days = Number(expiry.control.value);
      try {
        const token = await busy(submit, 'Creating…', () => post<CreatedToken>('/account/tokens', body));
        name.control.value = '';
        scopeBoxes.forEach((s) => {
          s.box.checked = false;
        });
        tokens = [token, ...tokens.filter((t) => t.id !== token.id)];
        renderList();
        showCreated(token);
      } catch (error) {
        errors.show(error);
      }
    },
    h('h3', { id: 'create-token-title' }, 'New token'),
    errors.summary,
    name.row,
    scopesSet,
    expiry.row,
    h('div', { class: 'actions' }, submit),
  );

  errors.watch(form);

  // --- list -------------------------------------------------------------------------------
  function stateOf(t: Token): { label: string; kind: string } {
    if (t.revoked_at) return { label: 'Revoked', kind: 'revoked' };
    if (t.expires_at && Date.parse(t.expires_at) <= Date.now()) return { label: 'Expired', kind: 'expired' };
    return { label: 'Active', kind: 'active' };
  }

  async function revoke(t: Token, button: HTMLButtonElement) {
    const ok = await confirmDialog({
      title: `Revoke “${t.name}”?`,
      message: 'Programs using this token will get “401 Unauthorized” from now on. This cannot be undone.',
      confirmLabel: 'Revoke token',
      danger: true,
    });
    if (!ok) return;
    try {
      await busy(button, 'Revoking…', () => del(`/account/tokens/${encodeURIComponent(t.id)}`));
      tokens = tokens.map((x) => (x.id === t.id ? { ...x, revoked_at: new Date().toISOString() } : x));
      status.set(`Token “${t.name}” revoked.`, 'ok');
      await reload();
      focusQuietly(listHeading);
    } catch (error) {
      status.set(plainMessage(error), 'error');
    }
  }

  function renderList() {
    if (!tokens.length) {
      replace(listBody, h('p', { class: 'empty' }, 'No tokens yet. Create one above for the CLI, the Python client or your scripts.'));
      return;
    }
    replace(
      listBody,
      tableRegion(
        { labelledBy: 'tokens-title' },
        { class: 'table tokens' },
        columnHeads(['Name', 'Token', 'Scopes', 'Created', 'Expires', 'Last used', 'Status', h('span', { class: 'visually-hidden' }, 'Actions')]),
        h(
          'tbody',
          null,
          tokens.map((t) => {
            const state = stateOf(t);
            const button = h('button', { type: 'button', class: 'button danger small', 'aria-label': `Revoke ${t.name}` }, 'Revoke');
            button.addEventListener('click', () => void revoke(t, button));
            return h(
              'tr',
              { 'data-token-id': t.id, 'data-state': state.kind },
              h('th', { scope: 'row' }, t.name),
              h('td', null, h('code', null, `${t.prefix}…`)),
              h(
                'td',
                { class: 'scope-cell' },
                t.scopes.map((s) => h('code', { class: 'tag' }, s)),
              ),
              h('td', null, time(t.created_at)),
              h('td', null, time(t.expires_at, 'Never')),
              h('td', null, time(t.last_used_at, 'Never')),
              h('td', null, h('span', { class: `badge ${state.kind}` }, state.label), t.revoked_at ? [' ', time(t.revoked_at)] : null),
              h('td', null, state.kind === 'active' ? button : null),
            );
          }),
        ),
      ),
      nextCursor ? h('button', { type: 'button', class: 'button secondary', onclick: () => void more() }, 'Show more tokens') : null,
    );
  }

  async function reload() {
    const page = await get<ListPage<Token>>('/account/tokens?limit=50');
    tokens = page.items;
    nextCursor = page.next_cursor;
    renderList();
  }

  async function more() {
    if (!nextCursor) return;
    try {
      const page = await get<ListPage<Token>>(`/account/tokens?limit=50&cursor=${encodeURIComponent(nextCursor)}`);
      tokens = [...tokens, ...page.items];
      nextCursor = page.next_cursor;
      renderList();
    } catch (error) {
      status.set(plainMessage(error), 'error');
    }
  }

  replace(listBody, h('p', { class: 'empty' }, 'Loading tokens…'));
  reload().catch((error) => replace(listBody, h('p', { class: 'alert', role: 'alert' }, plainMessage(error))));

  const heading = h('h2', { id: 'api-tokens' }, 'API Tokens');
  const listHeading = h('h3', { id: 'tokens-title' }, 'Your tokens');
  const flash = app.takeFlash();
  return {
    title: 'Account',
    node: h(
      'section',
      { class: 'account' },
      h('h1', null, 'Account'),
      flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
      h('p', { class: 'profile' }, 'Logged in as ', h('strong', null, me.name), ' (', h('span', { class: 'mono' }, me.email), ') with a browser session.'),
      heading,
      h(
        'p',
        { class: 'lead' },
        'Personal access tokens let the CLI, the Python client and your scripts call the API as you, limited to the scopes you pick. Tokens are managed here only, with a browser session.',
      ),
      status.node,
      created,
      form,
      listHeading,
      listBody,
    ),
  };
}
