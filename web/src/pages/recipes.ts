import { get, post, put } from '../api.js';
import { deleteButton } from '../components/delete-button.js';
import { operationEditor } from '../components/operation-editor.js';
import { h, time, titledSection } from '../dom.js';
import { busy, FormErrors, input, labelled, submitForm } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import type { Operation, Recipe, Transformation } from '../types.js';
import { pagedListPage } from '../components/list-page.js';
import { columnHeads, tableRegion } from '../components/table-region.js';

export function summarize(operations: Operation[], catalog: Transformation[]): string {
  if (!operations.length) return 'No operations';
  const labels = new Map(catalog.map((t) => [t.id, t.label]));
  return operations.map((o) => labels.get(o.type) ?? o.type).join(' → ');
}

export function recipesPage({ app }: PageContext): Page {
  return pagedListPage<Recipe, Transformation[]>(app, {
    title: 'Recipes',
    newHref: '#/recipes/new',
    newLabel: 'New Recipe',
    lead: 'Saved lists of transform operations. Jobs copy a Recipe’s operations when they are created; later edits do not change existing Jobs.',
    path: '/recipes',
    also: () => app.transformations().catch(() => [] as Transformation[]),
    empty: () =>
      h(
        'div',
        { class: 'empty card' },
        h('p', null, 'No Recipes yet.'),
        h(
          'p',
          null,
          'A Recipe is a saved list of operations. Create one here, or try a pipeline in a ',
          h('a', { href: '#/workspace' }, 'Workspace'),
          ' and save it from there.',
        ),
      ),
    table: (items, catalog) =>
      tableRegion(
        'Recipes',
        { class: 'table recipes' },
        columnHeads(['Name', 'Operations', 'Updated']),
        h(
          'tbody',
          null,
          items.map((r) =>
            h(
              'tr',
              { 'data-recipe-id': r.id },
              h(
                'th',
                { scope: 'row' },
                h('a', { href: `#/recipes/${encodeURIComponent(r.id)}` }, r.name),
                r.description ? h('p', { class: 'hint' }, r.description) : null,
              ),
              h('td', null, summarize(r.operations, catalog)),
              h('td', null, time(r.updated_at)),
            ),
          ),
        ),
      ),
  });
}

export async function recipeEditPage({ app, params }: PageContext): Promise<Page> {
  const id = params.id;
  const [catalog, recipe] = await Promise.all([app.transformations(), id ? get<Recipe>(`/recipes/${encodeURIComponent(id)}`) : Promise.resolve(null)]);

  const errors = new FormErrors();
  const name = labelled(input({ name: 'name', maxlength: '200', autocomplete: 'off', value: recipe?.name ?? '' }), { label: 'Name', required: true });
  const description = labelled(h('textarea', { name: 'description', rows: '2', maxlength: '4000' }), {
    label: 'Description',
    hint: 'Optional: what the Recipe is for.',
  });
  description.control.value = recipe?.description ?? '';
  const editor = operationEditor({ catalog, operations: recipe?.operations ?? [] });
  errors.add('name', name.handle).add('description', description.handle);
  editor.attach(errors);

  const save = h('button', { type: 'submit', class: 'button' }, recipe ? 'Save changes' : 'Create Recipe');
  const remove = recipe
    ? deleteButton(app, {
        noun: 'Recipe',
        name: recipe.name,
        path: `/recipes/${encodeURIComponent(recipe.id)}`,
        message: 'The Recipe is removed. Jobs that copied its operations keep them.',
        listHref: '#/recipes',
        onError: (error) => errors.show(error),
      })
    : null;

  const form = submitForm(
    errors,
    { class: 'stack' },
    async () => {
      const payload = { name: name.control.value.trim(), description: description.control.value, operations: editor.value() };
      try {
        const saved = await busy(save, 'Saving…', () =>
          recipe ? put<Recipe>(`/recipes/${encodeURIComponent(recipe.id)}`, payload) : post<Recipe>('/recipes', payload),
        );
        app.flash(`Recipe “${saved.name}” saved.`);
        app.navigate('#/recipes');
      } catch (error) {
        errors.show(error);
      }
    },
    errors.summary,
    h('div', { class: 'card stack' }, name.row, description.row),
    titledSection('card stack', 'ops', 'Operations', editor.node),
    h('div', { class: 'actions' }, save, h('a', { class: 'button secondary', href: '#/recipes' }, 'Cancel'), h('span', { class: 'spacer' }), remove),
  );

  errors.watch(form);
  return {
    title: recipe ? recipe.name : 'New Recipe',
    node: h(
      'section',
      null,
      h('p', { class: 'breadcrumb' }, h('a', { href: '#/recipes' }, 'Recipes'), ' / '),
      h('h1', null, recipe ? `Edit “${recipe.name}”` : 'New Recipe'),
      recipe ? h('p', { class: 'hint' }, 'Created ', time(recipe.created_at), ', updated ', time(recipe.updated_at), '.') : null,
      form,
    ),
  };
}
