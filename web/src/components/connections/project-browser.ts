/**
 * The projects of a QFieldCloud or Mergin Maps Source (POST …/projects) and, for one of them,
 * its files with the layers of its vector files (POST …/inspect-project). With `onPick`, each
 * layer (and each vector file) has a "Use" button that fills a Job's source_resource with
 * project, file, layer and, for Mergin Maps, the version inspected.
 */
import { post } from '../../api.js';
import { h, replace, uid } from '../../dom.js';
import { busy, statusLine } from '../../forms.js';
import { crsByCode } from '../crs.js';
import { browseTable, failure, useButton } from './browse.js';
import type { FieldProject, FieldProjectInspection } from '../../types.js';

export interface ProjectPick {
  project: string;
  file: string;
  layer?: string;
  version?: string;
}

export interface ProjectBrowserOptions {
  /** `/sources/src_…` */
  connectionPath: string;
  onPick?: (pick: ProjectPick) => void;
}

const cell = (value: string | number | null | undefined) =>
  value === null || value === undefined || value === '' ? h('span', { class: 'hint' }, '—') : String(value);

export function projectBrowser(options: ProjectBrowserOptions): HTMLElement {
  const list = h('button', { type: 'button', class: 'button secondary' }, 'Projects');
  const status = statusLine('status small');
  const projects = h('div', { class: 'project-list' });
  const detail = h('div', { class: 'project-detail stack' });
  const versionId = uid('version');

  async function loadProjects() {
    status.set('');
    replace(detail);
    try {
      const answer = await busy(list, 'Connecting…', () => post<{ items: FieldProject[] }>(`${options.connectionPath}/projects`));
      status.set(`${answer.items.length} project${answer.items.length === 1 ? '' : 's'} visible to this account.`, 'ok');
      if (!answer.items.length) return replace(projects);
      replace(
        projects,
        browseTable(
          'Projects',
          ['Project', 'Owner', 'Updated', 'Version'],
          answer.items.map((p) => {
            const inspect: HTMLButtonElement = useButton(`Inspect ${p.name}`, () => void inspectProject(p, inspect), 'Inspect');
            return h(
              'tr',
              { 'data-project': p.id },
              h('th', { scope: 'row' }, p.name, p.description ? h('div', { class: 'hint' }, p.description) : null),
              h('td', null, cell(p.owner)),
              h('td', null, cell(p.updated)),
              h('td', null, cell(p.version)),
              h('td', null, inspect),
            );
          }),
          { buttons: 'Inspect' },
        ),
      );
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  async function inspectProject(project: FieldProject, button: HTMLButtonElement, version?: string) {
    status.set(`Reading the files of ${project.name}…`, 'busy');
    try {
      const body = version ? { project: project.id, version } : { project: project.id };
      const answer = await busy(button, 'Inspecting…', () => post<FieldProjectInspection>(`${options.connectionPath}/inspect-project`, body));
      status.set(`${project.name}${answer.version ? ` at ${answer.version}` : ''}: ${answer.files.length} file${answer.files.length === 1 ? '' : 's'}.`, 'ok');
      const use = (pick: ProjectPick, label: string) =>
        options.onPick
          ? useButton(`Use ${label}`, () => {
              options.onPick!(answer.version && version ? { ...pick, version: answer.version } : pick);
              status.set(`${label} chosen.`, 'ok');
            })
          : null;
      const versionPicker = answer.versions.length
        ? (() => {
            const select = h(
              'select',
              { id: versionId },
              answer.versions.map((v) =>
                h('option', { value: v.name, selected: v.name === answer.version }, `${v.name}${v.created ? ` (${v.created.slice(0, 10)})` : ''}`),
              ),
            );
            select.addEventListener('change', () => void inspectProject(project, button, select.value));
            return h(
              'div',
              { class: 'field' },
              h('label', { for: versionId }, 'Version'),
              select,
              h('p', { class: 'hint' }, 'A Job reads the latest version unless you pick one here before choosing a layer.'),
            );
          })()
        : null;
      const rows = answer.files.flatMap((f) => {
        if (!f.layers)
          return [
            h(
              'tr',
              { 'data-file': f.name },
              h('th', { scope: 'row' }, f.name),
              h('td', { colspan: '4' }, f.error ? h('span', { class: 'error-text' }, f.error) : h('span', { class: 'hint' }, 'not a vector file')),
              h('td', null),
            ),
          ];
        return f.layers.map((l, i) =>
          h(
            'tr',
            { 'data-file': f.name, 'data-layer': l.name },
            i === 0 ? h('th', { scope: 'row', rowspan: String(f.layers!.length) }, f.name) : null,
            h('td', null, l.name),
            h('td', null, cell(l.geometry_type)),
            // The platform gives the code; its name and unit come from GET /crs/{code}.
            h('td', null, l.crs ? crsByCode(l.crs) : cell(null)),
            h('td', null, cell(l.feature_count)),
            h('td', null, use({ project: project.id, file: f.name, layer: l.name }, `${f.name} › ${l.name}`)),
          ),
        );
      });
      replace(
        detail,
        h('h3', null, `Files of ${project.name}`),
        versionPicker,
        browseTable(`Files of ${project.name}`, ['File', 'Layer', 'Geometry', 'CRS', 'Features'], rows, { buttons: 'Use', testId: 'project-files' }),
      );
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  list.addEventListener('click', () => void loadProjects());
  return h(
    'div',
    { class: 'project-browser stack', 'data-testid': 'project-browser' },
    h('div', { class: 'inline align-end' }, list),
    status.node,
    projects,
    detail,
  );
}
