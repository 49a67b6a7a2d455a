import { h } from '../dom.js';
import type { ProcessingWarning } from '../api-types.js';

/**
 * What a pipeline or an output format changed or doubted (fields renamed with the mapping,
 * features outside the target CRS's area of use, geometries cut at 180°, the PROJ operation
 * used), as a list: under a convert's result and above a transformed preview. The pipeline of a
 * crs_operation is shown to be copied.
 */
export function warningsList(warnings: ProcessingWarning[] | undefined, testId: string): HTMLElement | null {
  if (!warnings?.length) return null;
  return h(
    'div',
    { class: 'output-warnings', 'data-testid': testId },
    h('p', null, h('strong', null, `${warnings.length} warning${warnings.length === 1 ? '' : 's'}`)),
    h(
      'ul',
      { 'aria-label': 'Warnings' },
      warnings.map((w) => {
        const pipeline = w.code === 'crs_operation' && typeof w.details?.pipeline === 'string' ? w.details.pipeline : null;
        return h(
          'li',
          { class: 'warning', 'data-code': w.code },
          w.layer && !w.message.startsWith(w.layer) ? `${w.layer}: ${w.message}` : w.message,
          ' ',
          h('code', null, w.code),
          pipeline ? h('details', null, h('summary', null, 'PROJ pipeline'), h('pre', null, pipeline)) : null,
        );
      }),
    ),
  );
}
