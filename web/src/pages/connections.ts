/**
 * Sources and Destinations: one list page and one edit page per kind, built from the connector
 * catalogue. The edit page generates the configuration form of the chosen type, tests the
 * connection (the saved one, or the draft while it has unsaved changes) and, for types that can
 * be discovered (PostGIS), browses the database.
 */
import { ApiError, get, plainMessage, post, put } from '../api.js';
import { discoverBrowser } from '../components/connections/discover-browser.js';
import { projectBrowser } from '../components/connections/project-browser.js';
import { connectionSummary, connectorsOf, KINDS, type KindInfo } from '../components/connections/kinds.js';
import { testResultView } from '../components/connections/test-result.js';
import { deleteButton } from '../components/delete-button.js';
import { schemaForm, type SchemaForm } from '../components/schema-form.js';
import { h, replace, time, titledSection } from '../dom.js';
import { busy, FormErrors, input, labelled, submitForm } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import type { Connection, ConnectionKind, Connector, TestResult } from '../types.js';
import { pagedListPage } from '../components/list-page.js';
import { columnHeads, tableRegion } from '../components/table-region.js';

const enc = encodeURIComponent;

export function connectionsPage(kind: ConnectionKind) {
  const info = KINDS[kind];
  return ({ app }: PageContext): Page => {
    function row(c: Connection, connector: Connector | undefined): HTMLElement {
      const result = h('div', { class: 'row-test', 'aria-live': 'polite' });
      const test = h('button', { type: 'button', class: 'button secondary small', 'aria-label': `Test ${c.name}` }, 'Test');
      test.addEventListener('click', async () => {
        replace(result);
        try {
          const r = await busy(test, 'Testing…', () => post<TestResult>(`${info.path}/${enc(c.id)}/test`));
          replace(result, testResultView(r));
        } catch (error) {
          replace(result, h('p', { class: 'field-error' }, plainMessage(error)));
        }
      });
      return h(
        'tr',
        { 'data-connection-id': c.id },
        h('th', { scope: 'row' }, h('a', { href: `#${info.path}/${enc(c.id)}` }, c.name)),
        h('td', { 'data-label': 'Type' }, connector?.label ?? c.type),
        h('td', { class: 'where', 'data-label': 'Where' }, connectionSummary(connector, c.configuration)),
        h('td', { 'data-label': 'Updated' }, time(c.updated_at)),
        h('td', { 'data-label': 'Test' }, connector?.capabilities.test ? [test, result] : h('span', { class: 'hint' }, 'Not available for this type yet')),
      );
    }

    return pagedListPage<Connection, Connector[]>(app, {
      title: info.plural,
      newHref: `#${info.path}/new`,
      newLabel: `New ${info.noun}`,
      lead: info.lead,
      path: info.path,
      also: () => app.connectors(),
      empty: () =>
        h(
          'div',
          { class: 'empty card' },
          h('p', null, `No ${info.plural} yet.`),
          h('p', null, h('a', { class: 'button', href: `#${info.path}/new` }, `Add the first ${info.noun}`)),
        ),
      table: (items, catalog) => {
        const byType = new Map(catalog.map((c) => [c.type, c]));
        return tableRegion(
          info.plural,
          { class: 'table connections cards' },
          columnHeads(['Name', 'Type', 'Where', 'Updated', 'Connection test']),
          h(
            'tbody',
            null,
            items.map((c) => row(c, byType.get(c.type))),
          ),
        );
      },
    });
  };
}

/** One option per type of the kind; types that cannot connect yet say so. */
function typeOptions(connectors: Connector[]): HTMLElement[] {
  const ready = connectors.filter((c) => c.implemented);
  const later = connectors.filter((c) => !c.implemented);
  return [
    h(
      'optgroup',
      { label: 'Ready' },
      ready.map((c) => h('option', { value: c.type }, c.label)),
    ),
    later.length
      ? h(
          'optgroup',
          { label: 'Saved now, connects in a later version' },
          later.map((c) => h('option', { value: c.type }, `${c.label} (not yet)`)),
        )
      : null,
  ].filter((x): x is HTMLOptGroupElement => x !== null);
}

export function connectionEditPage(kind: ConnectionKind) {
  const info: KindInfo = KINDS[kind];
  return async ({ app, params }: PageContext): Promise<Page> => {
    const id = params.id;
    const [catalog, saved] = await Promise.all([app.connectors(), id ? get<Connection>(`${info.path}/${enc(id)}`) : Promise.resolve(null)]);
    const connectors = connectorsOf(catalog, kind);
    const flash = app.takeFlash();

    const errors = new FormErrors();
    const name = labelled(input({ name: 'name', maxlength: '200', autocomplete: 'off', value: saved?.name ?? '' }), {
      label: 'Name',
      required: true,
      hint: 'How Jobs and the Workspace show it.',
    });
    const typeSelect = labelled(h('select', { name: 'type' }, typeOptions(connectors)), { label: 'Type', required: true });
    typeSelect.control.value = saved?.type ?? connectors[0]?.type ?? '';
    errors.add('name', name.handle).add('type', typeSelect.handle);

    const about = h('div', { class: 'type-about' });
    const configBox = h('div', { class: 'stack' });
    let connector: Connector = connectors.find((c) => c.type === typeSelect.control.value)!;
    let config: SchemaForm;

    function renderType() {
      connector = connectors.find((c) => c.type === typeSelect.control.value)!;
      // The saved values belong to the saved type; another type starts empty.
      config = schemaForm(connector.configuration, { secrets: connector.secrets, value: saved && saved.type === connector.type ? saved.configuration : {} });
      replace(
        about,
        h('p', { class: 'hint' }, connector.description),
        connector.implemented
          ? null
          : h(
              'p',
              { class: 'notice warn' },
              `This server accepts and stores ${connector.label} settings but cannot connect to it yet: testing, importing and delivering answer “not implemented”.`,
            ),
        saved &&
          saved.type !== connector.type &&
          saved.configuration &&
          Object.keys(saved.configuration).some((k) => k.startsWith('has_') && saved.configuration[k] === true)
          ? h('p', { class: 'notice warn' }, 'Changing the type drops the secrets stored for the old type.')
          : null,
      );
      replace(configBox, config.node);
    }
    renderType();
    // Issues under configuration.* go to the fields of the type shown now.
    errors.addResolver((path) => (path.startsWith('configuration.') ? config.resolve(path.slice('configuration.'.length)) : undefined));

    let dirty = false;
    typeSelect.control.addEventListener('change', () => {
      renderType();
      testBox.hidden = true;
    });

    const body = () => ({ name: name.control.value.trim(), type: connector.type, configuration: config.read() });

    const save = h('button', { type: 'submit', class: 'button' }, saved ? 'Save changes' : `Create ${info.noun}`);
    const testButton = h('button', { type: 'button', class: 'button secondary' }, 'Test connection');
    const testBox = h('div', { class: 'test-box', 'aria-live': 'polite', hidden: true });
    testButton.addEventListener('click', async () => {
      errors.clear();
      testBox.hidden = true;
      const useSaved = saved && !dirty;
      const kept = saved && !useSaved ? config.keptSecrets() : [];
      try {
        const result = await busy(testButton, 'Testing…', () =>
          useSaved
            ? post<TestResult>(`${info.path}/${enc(saved!.id)}/test`)
            : post<TestResult>(`${info.path}/test`, { ...body(), name: body().name || undefined }),
        );
        const note = useSaved
          ? 'Tested the saved settings.'
          : kept.length
            ? `Tested the unsaved settings without the stored ${kept.join(', ')} (a stored secret is used only once saved): save first, or type it again.`
            : saved
              ? 'Tested the unsaved settings; nothing was saved.'
              : 'Tested the settings as typed; nothing was saved.';
        replace(testBox, testResultView(result, note));
        testBox.hidden = false;
      } catch (error) {
        errors.show(error);
      }
    });
    if (!connector.capabilities.test) testButton.disabled = true;
    typeSelect.control.addEventListener('change', () => (testButton.disabled = !connector.capabilities.test));

    const remove = saved
      ? deleteButton(app, {
          noun: info.noun,
          name: saved.name,
          path: `${info.path}/${enc(saved.id)}`,
          message: `The ${info.noun} and its stored secrets are removed. Jobs that use it cannot run until they get another ${info.noun}.`,
          listHref: `#${info.path}`,
          onError: (error) => {
            errors.show(error);
            // In use (409): the Jobs that use it, to open and change.
            const jobs = error instanceof ApiError && Array.isArray(error.details.jobs) ? (error.details.jobs as { id: string; name: string }[]) : [];
            if (jobs.length)
              errors.summary.append(
                h(
                  'ul',
                  null,
                  jobs.map((j) => h('li', null, h('a', { href: `#/jobs/${enc(j.id)}` }, j.name))),
                ),
              );
          },
        })
      : null;

    const form = submitForm(
      errors,
      { class: 'stack', 'data-testid': 'connection-form' },
      async () => {
        try {
          const result = await busy(save, 'Saving…', () =>
            saved ? put<Connection>(`${info.path}/${enc(saved.id)}`, body()) : post<Connection>(info.path, body()),
          );
          app.flash(`${info.noun} “${result.name}” saved.`);
          app.navigate(`#${info.path}/${enc(result.id)}`);
        } catch (error) {
          errors.show(error);
        }
      },
      errors.summary,
      h('div', { class: 'card stack' }, name.row, typeSelect.row, about),
      titledSection('card stack', 'config', 'Connection settings', configBox),
      h(
        'div',
        { class: 'actions' },
        save,
        testButton,
        h('a', { class: 'button secondary', href: `#${info.path}` }, 'Cancel'),
        h('span', { class: 'spacer' }),
        remove,
      ),
      testBox,
    );
    form.addEventListener('input', () => (dirty = true));
    form.addEventListener('change', () => (dirty = true));
    errors.watch(form);

    const discover =
      saved && connectors.find((c) => c.type === saved.type)?.capabilities.discover
        ? titledSection(
            'card stack',
            'discover',
            'Tables in this database',
            h('p', { class: 'hint' }, 'What the saved settings can see: schemas, then their tables and views with the geometry type.'),
            discoverBrowser({ connectionPath: `${info.path}/${enc(saved.id)}` }),
          )
        : null;
    const fieldProjects =
      saved && info.path === '/sources' && connectors.find((c) => c.type === saved.type)?.capabilities.projects
        ? titledSection(
            'card stack',
            'projects',
            'Projects',
            h(
              'p',
              { class: 'hint' },
              'What the saved account can see: its projects, and for one of them (Inspect) the files and the layers of its GeoPackages and other vector files.',
            ),
            projectBrowser({ connectionPath: `${info.path}/${enc(saved.id)}` }),
          )
        : null;

    return {
      title: saved ? saved.name : `New ${info.noun}`,
      node: h(
        'section',
        null,
        h('p', { class: 'breadcrumb' }, h('a', { href: `#${info.path}` }, info.plural), ' / '),
        h('h1', null, saved ? `${info.noun} “${saved.name}”` : `New ${info.noun}`),
        flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
        saved ? h('p', { class: 'hint' }, h('code', null, saved.id), ' · created ', time(saved.created_at), ', updated ', time(saved.updated_at), '.') : null,
        form,
        discover,
        fieldProjects,
      ),
    };
  };
}
