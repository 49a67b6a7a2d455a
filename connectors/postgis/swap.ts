import type pg from 'pg';
import { ident, pgName, qualified } from './client.js';

/*
 * What the swap of a delivery does to tables besides renaming them: the staging table's spatial
 * index, its indexes and sequences named after the target, and the old table's grants carried
 * over to the new one.
 */

/** The GiST index of a staging table, named as GDAL names it (renameDependents gives it the target's name). */
export const spatialIndexSql = (schema: string, stage: string, geometryName: string) =>
  `CREATE INDEX ${ident(pgName(`${stage}_${geometryName}_geom_idx`))} ON ${qualified(schema, stage)} USING GIST (${ident(geometryName)})`;

export const relationExists = async (client: pg.Client, schema: string, table: string) =>
  ((await client.query('SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2', [schema, table]))
    .rowCount ?? 0) > 0;

/** Indexes, constraints and sequences of a swapped-in table take the target's name instead of the staging name. */
export async function renameDependents(client: pg.Client, schema: string, table: string, stage: string): Promise<void> {
  const target = qualified(schema, table);
  const deps = await client.query<{ name: string; kind: string }>(
    `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c
       WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)
         AND (c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = $2::regclass)
              OR c.oid IN (SELECT objid FROM pg_depend WHERE refobjid = $2::regclass AND classid = 'pg_class'::regclass AND deptype IN ('a', 'i')))
         AND c.relkind IN ('i', 'S') AND starts_with(c.relname, $3)`,
    [schema, target, stage],
  );
  if (deps.rows.length === 0) return;
  const renames = deps.rows.map((dep) => ({ ...dep, renamed: pgName(table + dep.name.slice(stage.length)) }));
  // Names already taken stay as they are; the rest in one round trip (a swap is one short transaction).
  const taken = new Set(
    (
      await client.query<{ name: string }>(
        'SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2)',
        [schema, renames.map((r) => r.renamed)],
      )
    ).rows.map((r) => r.name),
  );
  const statements = renames
    .filter((r) => !taken.has(r.renamed))
    .map((r) => `ALTER ${r.kind === 'S' ? 'SEQUENCE' : 'INDEX'} ${qualified(schema, r.name)} RENAME TO ${ident(r.renamed)}`);
  if (statements.length) await client.query(statements.join('; '));
}

/** The old table's grants, given to the table that replaces it (a reader role keeps reading). */
export async function copyGrants(client: pg.Client, schema: string, from: string, to: string): Promise<void> {
  const r = await client.query<{ grantee: string | null; privilege: string; grantable: boolean }>(
    `SELECT CASE WHEN a.grantee = 0 THEN NULL ELSE pg_get_userbyid(a.grantee) END AS grantee, a.privilege_type AS privilege, a.is_grantable AS grantable
       FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = $1::regclass AND a.grantee <> c.relowner`,
    [qualified(schema, from)],
  );
  for (const g of r.rows) {
    await client.query(
      `GRANT ${g.privilege} ON ${qualified(schema, to)} TO ${g.grantee === null ? 'PUBLIC' : ident(g.grantee)}${g.grantable ? ' WITH GRANT OPTION' : ''}`,
    );
  }
}
