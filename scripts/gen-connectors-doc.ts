import { writeFileSync } from 'node:fs';
import { renderConnectorsDoc } from '../connectors/doc.js';

/** `node --import tsx scripts/gen-connectors-doc.ts`: rewrites docs/connectors.md from the registry's declarations and each connectors/<type>/README.md. */
writeFileSync('docs/connectors.md', renderConnectorsDoc());
console.log('docs/connectors.md written');
