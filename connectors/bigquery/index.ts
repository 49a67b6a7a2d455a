import { sqlBehaviour } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { bigQueryClient, call, classifyBigQuery, describeServer, endpointOf, serviceAccount, triedOf } from './client.js';
import { deliverBigQuery, STAGE_PREFIX } from './deliver.js';
import { extractBigQuery, bigQueryChanged } from './extract.js';
import { bigqueryDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

export const bigquery = defineConnector(bigqueryDeclaration, {
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const key = serviceAccount(c);
        const bq = bigQueryClient(c, 0);
        const [metadata] = await call(c, ctx, `reading dataset ${c.dataset}`, () => bq.dataset(c.dataset).getMetadata());
        return {
          message: `Connected to ${describeServer(c)} as ${key.client_email}: dataset ${c.dataset} (location ${String(metadata.location ?? 'unknown')})`,
        };
      },
      (error) => classifyBigQuery(error, describeServer(c)),
    );
  },
  async discover(c, query, ctx) {
    const bq = bigQueryClient(c);
    const [datasets] = await call(c, ctx, 'listing datasets', () => bq.getDatasets());
    const schemas = datasets.map((d) => d.id!).sort();
    const base = { host: new URL(endpointOf(c)).host, database: c.project_id, schemas };
    if (query.schema === undefined) return base;
    const dataset = bq.dataset(query.schema);
    await call(c, ctx, `reading dataset ${query.schema}`, () => dataset.getMetadata());
    const [tables] = await call(c, ctx, `listing the tables of ${query.schema}`, () => dataset.getTables());
    const listed = [];
    for (const t of tables.filter((t) => !t.id!.startsWith(STAGE_PREFIX)).sort((a, b) => a.id!.localeCompare(b.id!))) {
      const [metadata] = await call(c, ctx, `reading table ${query.schema}.${t.id}`, () => t.getMetadata());
      const geography = ((metadata.schema?.fields ?? []) as { type: string }[]).some((f) => f.type.toUpperCase() === 'GEOGRAPHY');
      listed.push({ schema: query.schema, name: t.id!, has_geometry: geography, geometry_type: geography ? 'GEOGRAPHY' : null });
    }
    return { ...base, schema: query.schema, tables: listed };
  },
  ...sqlBehaviour({ extract: extractBigQuery, changed: bigQueryChanged, deliver: deliverBigQuery }),
});
