import { writeFileSync } from 'node:fs';
import { renderWebTypes } from './web-types.js';

/** `node --import tsx scripts/gen-web-types.ts`: rewrites web/src/api-types.ts from the API's zod schemas. */
writeFileSync('web/src/api-types.ts', renderWebTypes());
console.log('web/src/api-types.ts written');
