import { describe, expect, it } from 'vitest';
import { connectorContext, loopbackDriverCases } from '../../test/connectors/support.js';
import { sqlserver } from './index.js';
import { ConnectorError } from '../../domain/transfers.js';
import { classifySqlServer, connectionConfig, reasonOfNumber } from './client.js';
import { oneSelect } from './one-select.js';
import {
  appendStatement,
  columnType,
  createLoadTable,
  createSpatialIndex,
  createStageTable,
  cursorMaxExpression,
  fillStage,
  grantStatement,
  ident,
  kindOfColumn,
  literal,
  qualified,
  renameStatement,
  selectExpression,
  swapStatements,
} from './sql.js';

const col = (colName: string, name: string, extra: Record<string, unknown> = {}) => ({ colName, type: { name }, ...extra });

describe('sqlserver statements', () => {
  it('quotes identifiers and literals so any name and value stays one token', () => {
    expect(ident('order')).toBe('[order]');
    expect(ident('a]b')).toBe('[a]]b]');
    expect(qualified('dbo', 'Größe Teil')).toBe('[dbo].[Größe Teil]');
    expect(literal("O'Brien")).toBe("N'O''Brien'");
  });

  it('maps layer kinds to SQL Server types, strings by their longest value', () => {
    expect(columnType('integer')).toBe('BIGINT');
    expect(columnType('real')).toBe('FLOAT(53)');
    expect(columnType('string', 10)).toBe('NVARCHAR(4000)');
    expect(columnType('string', 4001)).toBe('NVARCHAR(MAX)');
    expect(columnType('datetime')).toBe('DATETIME2(3)');
    expect(columnType('boolean')).toBe('BIT');
    expect(columnType('binary')).toBe('VARBINARY(MAX)');
  });

  it('reads result columns as kinds: NUMERIC by its width, spatial UDTs apart', () => {
    expect(kindOfColumn(col('a', 'IntN'))).toBe('integer');
    expect(kindOfColumn(col('a', 'NumericN', { precision: 18, scale: 0 }))).toBe('integer');
    expect(kindOfColumn(col('a', 'DecimalN', { precision: 19, scale: 0 }))).toBe('real');
    expect(kindOfColumn(col('a', 'DecimalN', { precision: 10, scale: 2 }))).toBe('real');
    expect(kindOfColumn(col('a', 'BitN'))).toBe('boolean');
    expect(kindOfColumn(col('a', 'DateTimeOffset'))).toBe('datetime');
    expect(kindOfColumn(col('a', 'Date'))).toBe('date');
    expect(kindOfColumn(col('a', 'NVarChar'))).toBe('string');
    expect(kindOfColumn(col('g', 'UDT', { udtInfo: { typeName: 'geography' } }))).toBeNull();
    expect(kindOfColumn(col('h', 'UDT', { udtInfo: { typeName: 'hierarchyid' } }))).toBe('string');
  });

  it('selects geometries as ISO WKB with Z and M, other CLR types as text', () => {
    expect(selectExpression(col('Shape', 'UDT', { udtInfo: { typeName: 'geometry' } }), 't')).toBe('t.[Shape].AsBinaryZM() AS [Shape]');
    expect(selectExpression(col('h', 'UDT', { udtInfo: { typeName: 'hierarchyid' } }), 't')).toBe('t.[h].ToString() AS [h]');
    expect(selectExpression(col('x', 'Xml'), 't')).toBe('CAST(t.[x] AS NVARCHAR(MAX)) AS [x]');
    expect(cursorMaxExpression(col('t', 'DateTime2'), 't.[t]')).toBe('CONVERT(NVARCHAR(40), MAX(t.[t]), 126)');
    expect(cursorMaxExpression(col('n', 'IntN'), 't.[n]')).toBe('CAST(MAX(t.[n]) AS NVARCHAR(4000))');
  });

  it('builds the load and staging tables and fills one from the other with the server parsing WKB', () => {
    const columns = [
      { name: 'name', kind: 'string' as const, maxLength: 20 },
      { name: 'order', kind: 'integer' as const, maxLength: 0 },
    ];
    expect(createLoadTable('gis', '_geoflow_load_1', columns, 'wkb')).toBe(
      'CREATE TABLE [gis].[_geoflow_load_1] ([name] NVARCHAR(4000) NULL, [order] BIGINT NULL, [wkb] VARBINARY(MAX) NULL)',
    );
    expect(createStageTable('gis', '_geoflow_stage_1', '1', 'fid', columns, { name: 'geom', spatial: 'geometry' })).toBe(
      'CREATE TABLE [gis].[_geoflow_stage_1] ([fid] INT IDENTITY(1,1) NOT NULL CONSTRAINT [PK__geoflow_1] PRIMARY KEY CLUSTERED, [name] NVARCHAR(4000) NULL, [order] BIGINT NULL, [geom] geometry NULL)',
    );
    expect(fillStage('gis', 's', 'l', columns, { name: 'geom', spatial: 'geometry', wkb: 'wkb', srid: 2263 })).toBe(
      'INSERT INTO [gis].[s] WITH (TABLOCK) ([name], [order], [geom]) SELECT l.[name], l.[order], geometry::STGeomFromWKB(l.[wkb], 2263) FROM [gis].[l] l',
    );
    const geography = fillStage('gis', 's', 'l', columns, { name: 'geom', spatial: 'geography', wkb: 'wkb', srid: 4326 });
    expect(geography).toContain('CROSS APPLY (SELECT geography::STGeomFromWKB(l.[wkb], 4326) AS v) g');
    expect(geography).toContain('CASE WHEN g.v.EnvelopeAngle() > 90 THEN g.v.ReorientObject() ELSE g.v END');
    expect(fillStage('gis', 's', 'l', columns, null)).toBe(
      'INSERT INTO [gis].[s] WITH (TABLOCK) ([name], [order]) SELECT l.[name], l.[order] FROM [gis].[l] l',
    );
  });

  it('indexes geometry over padded bounds (a single point too) and geography without', () => {
    expect(createSpatialIndex('gis', 's', 'ab', 'geom', 'geometry', { minX: 0, minY: 0, maxX: 100, maxY: 50 })).toBe(
      'CREATE SPATIAL INDEX [SIDX__geoflow_ab] ON [gis].[s] ([geom]) USING GEOMETRY_AUTO_GRID WITH (BOUNDING_BOX = (-1, -0.5, 101, 50.5))',
    );
    const point = createSpatialIndex('gis', 's', 'ab', 'geom', 'geometry', { minX: 5, minY: 5, maxX: 5, maxY: 5 })!;
    const box = /BOUNDING_BOX = \(([^)]+)\)/.exec(point)![1]!.split(', ').map(Number);
    expect(box[2]! > box[0]! && box[3]! > box[1]!).toBe(true);
    expect(createSpatialIndex('gis', 's', 'ab', 'geom', 'geometry', null)).toBeNull();
    expect(createSpatialIndex('gis', 's', 'ab', 'geom', 'geography', null)).toBe(
      'CREATE SPATIAL INDEX [SIDX__geoflow_ab] ON [gis].[s] ([geom]) USING GEOGRAPHY_AUTO_GRID',
    );
  });

  it('swaps with two sp_renames whose new names are plain, and carries grants over', () => {
    expect(swapStatements('gis', "it's", '_geoflow_stage_1', '_geoflow_old_1')).toEqual([
      "EXEC sp_rename @objname = N'[gis].[it''s]', @newname = N'_geoflow_old_1', @objtype = 'OBJECT'",
      "EXEC sp_rename @objname = N'[gis].[_geoflow_stage_1]', @newname = N'it''s', @objtype = 'OBJECT'",
    ]);
    expect(renameStatement('gis', 's', 't')).toBe("EXEC sp_rename @objname = N'[gis].[s]', @newname = N't', @objtype = 'OBJECT'");
    expect(grantStatement('GRANT', 'SELECT', 'reader', 'gis', 't')).toBe('GRANT SELECT ON [gis].[t] TO [reader]');
    expect(grantStatement('GRANT_WITH_GRANT_OPTION', 'SELECT', 'r', 'gis', 't')).toBe('GRANT SELECT ON [gis].[t] TO [r] WITH GRANT OPTION');
    expect(grantStatement('DENY', 'DELETE', 'r', 'gis', 't')).toBe('DENY DELETE ON [gis].[t] TO [r]');
    expect(appendStatement('gis', 't', 's', ['a', 'geom'])).toBe('INSERT INTO [gis].[t] ([a], [geom]) SELECT [a], [geom] FROM [gis].[s]');
  });
});

describe('sqlserver connections', () => {
  it('classifies by error number and tedious code, keeping the server message', () => {
    expect(reasonOfNumber(18456)).toBe('authentication_failed');
    expect(reasonOfNumber(4060)).toBe('not_found');
    expect(reasonOfNumber(229)).toBe('permission_denied');
    expect(reasonOfNumber(2714)).toBe('target_exists');
    expect(reasonOfNumber(8152)).toBe('invalid_data');
    expect(classifySqlServer(Object.assign(new Error("Invalid object name 'x'."), { number: 208 }), 'SQL Server at h:1433')).toMatchObject({
      reason: 'not_found',
      message: "SQL Server at h:1433: Invalid object name 'x'.",
    });
    expect(classifySqlServer(Object.assign(new Error('Login failed'), { code: 'ELOGIN' }), 'db').reason).toBe('authentication_failed');
    expect(
      classifySqlServer(
        Object.assign(new Error('Failed to connect'), {
          code: 'ESOCKET',
          cause: Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
        }),
        'db',
      ).reason,
    ).toBe('tls_error');
    expect(classifySqlServer(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' }), 'db').reason).toBe('timeout');
  });

  it('encrypts and verifies certificates unless told otherwise, the password only in the authentication block', () => {
    expect(sqlserver.configuration.parse({ host: 'h', database: 'd', username: 'u', password: 'pw' })).toMatchObject({
      port: 1433,
      encrypt: true,
      trust_server_certificate: false,
    });
    const tedious = connectionConfig({ host: 'h', port: 1433, database: 'd', username: 'u', password: 'pw', encrypt: true, trust_server_certificate: false });
    expect(tedious.options).toMatchObject({ encrypt: true, trustServerCertificate: false, port: 1433, database: 'd' });
    expect(JSON.stringify(tedious.options)).not.toContain('pw');
  });
});

// tedious against a closed and a silent port.
loopbackDriverCases(sqlserver, (port) => ({
  host: '127.0.0.1',
  port,
  database: 'gis',
  username: 'u',
  password: 'PLANTED-pw',
  encrypt: true,
  trust_server_certificate: false,
}));

describe('a query Source is one SELECT (one-select.ts, issue 32)', () => {
  it('takes SELECTs whatever their strings, names and comments hold', () => {
    for (const q of [
      'SELECT name, geom FROM dbo.stations',
      "SELECT name FROM dbo.stations WHERE name <> N'Chur;)' -- a comment ; )\n AND id > 0;",
      'SELECT [odd ]] name)] FROM [dbo].[a;b] /* a comment /* nested ) */ still ; */ ORDER BY 1',
      'SELECT "quoted "")" FROM t',
      '(SELECT 1 AS x) UNION ALL (SELECT 2)',
      'SELECT COUNT(*) FROM t GROUP BY x HAVING (MAX(y) > 1)',
      'SELECT 1 AS go_on\nFROM t',
    ])
      expect(oneSelect(q), q).toBe(q.trim().replace(/[;\s]+$/, ''));
  });

  it('refuses what would close the wrapping, add a statement, or begin anything but a SELECT', () => {
    for (const [q, why] of [
      ['SELECT 1 AS x) AS q DELETE FROM dbo.t SELECT * FROM (SELECT 1 AS y', 'closes a parenthesis'],
      ['SELECT 1 AS x); DROP TABLE dbo.t; SELECT (1', 'closes a parenthesis'],
      ['SELECT 1; DELETE FROM dbo.t', 'holds a ";"'],
      ['SELECT 1\nGO\nDELETE FROM dbo.t', 'GO line'],
      ['SELECT 1\n  go 2\n', 'GO line'],
      ["SELECT 'unclosed", 'string literal is not closed'],
      ['SELECT [unclosed', 'quoted name'],
      ['SELECT 1 /* /* */ )', 'comment is not closed'],
      ['SELECT (1', 'do not balance'],
      ['DELETE FROM dbo.t', 'begins with DELETE'],
      ['WITH a AS (SELECT 1 AS x) SELECT * FROM a', 'begins with WITH'],
      ['EXEC sp_who', 'begins with EXEC'],
    ] as const) {
      expect(() => oneSelect(q), q).toThrow(ConnectorError);
      expect(() => oneSelect(q), q).toThrow(why);
    }
  });

  it('refuses before any connection is made: against a port nobody listens on the answer is invalid_data, not unreachable', async () => {
    const config = sqlserver.configuration.parse({ host: '127.0.0.1', port: 9, database: 'gis', username: 'u', password: 'pw' });
    const attempt = sqlserver.source!.extract(config, { query: 'SELECT 1 AS x) AS q DELETE FROM dbo.t SELECT * FROM (SELECT 1 AS y' }, connectorContext(), {});
    await expect(attempt).rejects.toMatchObject({ reason: 'invalid_data', message: expect.stringContaining('one SELECT statement') });
  });
});
