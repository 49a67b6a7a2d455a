/** The Workspace start page: upload a file (drag and drop, progress), import from a saved Source, or reopen a recent one. */
import { plainMessage, upload, type Upload } from '../api.js';
import { importPanel } from '../components/workspace/import-panel.js';
import { readingOptions } from '../components/workspace/reading-options.js';
import { recentWorkspaces, remember } from '../components/workspace/recent.js';
import { bytes, h, time, titledSection } from '../dom.js';
import { statusLine } from '../forms.js';
import { megabytes, tooLarge } from '../components/upload-limit.js';
import type { Page, PageContext } from '../router.js';
import type { Workspace } from '../types.js';

export function workspaceUploadPage({ app }: PageContext): Page {
  let current: Upload<Workspace> | null = null;
  // The limit from GET /system, shown before anything is chosen and checked before sending.
  let maxBytes: number | null = null;
  const limitNote = h('p', { class: 'hint upload-limit', id: 'upload-limit', 'data-testid': 'upload-limit' });
  void app
    .system()
    .then((system) => {
      maxBytes = system.limits.max_upload_bytes;
      limitNote.textContent = `Files up to ${megabytes(maxBytes)}.`;
    })
    .catch(() => undefined);
  const fileInput = h('input', { type: 'file', id: 'upload-file', class: 'visually-hidden', 'aria-describedby': 'upload-hint upload-limit' });
  const progress = h('progress', { max: '100', value: '0', id: 'upload-progress' });
  const progressLabel = h('label', { for: 'upload-progress' });
  const cancel = h('button', { type: 'button', class: 'button secondary small', onclick: () => current?.abort() }, 'Cancel upload');
  const progressBox = h('div', { class: 'upload-progress', hidden: true }, progressLabel, h('div', { class: 'inline' }, progress, cancel));
  const status = statusLine();
  const reading = readingOptions();
  const dropzone = h(
    'div',
    { class: 'dropzone', 'data-testid': 'dropzone' },
    h('p', { class: 'drop-title' }, 'Drag and drop a file here'),
    h('p', null, 'or'),
    h('label', { for: 'upload-file', class: 'button' }, 'Choose a file'),
    fileInput,
    h(
      'p',
      { class: 'hint', id: 'upload-hint' },
      'Any format in the server’s catalog: GeoJSON, GeoPackage, CSV, FlatGeobuf, KML, GeoTIFF… A Shapefile goes in one ZIP with its .shp, .shx, .dbf and .prj.',
    ),
    limitNote,
  );

  function start(file: File) {
    if (current) return;
    status.set('');
    const refused = tooLarge(file, maxBytes);
    if (refused) {
      status.set(h('span', { role: 'alert' }, refused), 'error');
      fileInput.value = '';
      return;
    }
    progressBox.hidden = false;
    dropzone.classList.add('busy');
    fileInput.disabled = true;
    progress.value = 0;
    progressLabel.textContent = `Uploading ${file.name}: 0 of ${bytes(file.size)} (0%)`;
    current = upload<Workspace>(
      '/workspaces',
      file,
      (fraction) => {
        const pct = Math.round(fraction * 100);
        progress.value = pct;
        progressLabel.textContent =
          pct < 100
            ? `Uploading ${file.name}: ${bytes(Math.round(fraction * file.size))} of ${bytes(file.size)} (${pct}%)`
            : `Uploaded ${file.name}; the server is inspecting it…`;
      },
      reading.values(),
    );
    current.promise
      .then((ws) => {
        remember(ws);
        app.flash(`${ws.filename} uploaded and inspected.`);
        app.navigate(`#/workspace/${encodeURIComponent(ws.id)}`);
      })
      .catch((error: unknown) => {
        status.set(h('span', { role: 'alert' }, plainMessage(error)), 'error');
        progressBox.hidden = true;
      })
      .finally(() => {
        current = null;
        dropzone.classList.remove('busy');
        fileInput.disabled = false;
        fileInput.value = '';
      });
  }

  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) start(file);
  });
  dropzone.addEventListener('dragover', (e) => {
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    dropzone.classList.add('dragging');
  });
  dropzone.addEventListener('dragleave', () => dropzone.classList.remove('dragging'));
  dropzone.addEventListener('drop', (e) => {
    e.preventDefault();
    dropzone.classList.remove('dragging');
    const files = e.dataTransfer?.files;
    if (!files?.length) return;
    if (files.length > 1) {
      status.set(h('span', { role: 'alert' }, 'Drop one file. For a Shapefile, put its files in one ZIP first.'), 'error');
      return;
    }
    start(files[0]!);
  });

  const recent = recentWorkspaces();
  const flash = app.takeFlash();
  return {
    title: 'Workspace',
    dispose: () => current?.abort(),
    node: h(
      'section',
      { class: 'workspace-upload' },
      h('h1', null, 'Workspace'),
      flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
      h(
        'p',
        { class: 'lead' },
        'Upload a dataset, or import one from a saved Source, to inspect its layers, preview it on a map, try transformations and convert it to another format. A Workspace is temporary and expires on its own.',
      ),
      dropzone,
      reading.node,
      progressBox,
      status.node,
      importPanel(app),
      recent.length
        ? titledSection(
            'recent',
            'recent',
            'Recent Workspaces in this browser',
            h(
              'ul',
              { class: 'plain-list' },
              recent.map((r) =>
                h(
                  'li',
                  null,
                  h('a', { href: `#/workspace/${encodeURIComponent(r.id)}` }, r.filename),
                  h('span', { class: 'hint' }, ' expires ', time(r.expires_at)),
                ),
              ),
            ),
          )
        : null,
    ),
  };
}
