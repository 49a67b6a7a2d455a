import { writeFileSync } from 'node:fs';
import { renderOperationsDoc } from '../geo/operations/doc.js';

/** `node --import tsx scripts/gen-operations-doc.ts`: rewrites docs/operations.md from the catalog. */
writeFileSync('docs/operations.md', renderOperationsDoc());
console.log('docs/operations.md written');
