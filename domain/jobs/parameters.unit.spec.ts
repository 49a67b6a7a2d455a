import { describe, expect, it } from 'vitest';
import {
  checkDeclarations,
  checkReferences,
  fillSql,
  fillTemplate,
  placeholdersIn,
  resolveValues,
  sampleValues,
  type ParameterDeclaration,
} from './parameters.js';

const decl = (d: Partial<ParameterDeclaration> & Pick<ParameterDeclaration, 'name' | 'type'>): ParameterDeclaration => ({
  default: null,
  description: null,
  choices: null,
  ...d,
});
const message = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

const declarations = checkDeclarations([
  decl({ name: 'region', type: 'string', choices: ['north', 'south'], default: 'north' }),
  decl({ name: 'limit', type: 'integer', default: 100 }),
  decl({ name: 'day', type: 'date' }),
  decl({ name: 'full', type: 'boolean', default: false }),
]);

describe('declaring parameters', () => {
  it('keeps names, types, defaults and choices; refuses bad names, duplicates and defaults of another type', () => {
    expect(declarations.map((d) => [d.name, d.default])).toEqual([
      ['region', 'north'],
      ['limit', 100],
      ['day', null],
      ['full', false],
    ]);
    expect(message(() => checkDeclarations([decl({ name: '1st', type: 'string' })]))).toMatch(/body.parameters\[0\].name/);
    expect(message(() => checkDeclarations([decl({ name: 'a', type: 'string' }), decl({ name: 'a', type: 'integer' })]))).toMatch(/declared twice/);
    expect(message(() => checkDeclarations([decl({ name: 'n', type: 'integer', default: 'ten' })]))).toMatch(/parameters\[0\].default: must be an integer/);
    expect(message(() => checkDeclarations([decl({ name: 'd', type: 'date', default: '2026-02-30' })]))).toMatch(/a date YYYY-MM-DD/);
    expect(message(() => checkDeclarations([decl({ name: 'r', type: 'string', choices: ['a'], default: 'b' })]))).toMatch(/one of the choices/);
  });

  it('refuses a {{name}} that is not declared, and quotes around a parameter in sql', () => {
    expect(placeholdersIn({ table: 'parcels_{{ region }}', where: ['{{limit}}'] })).toEqual(['region', 'limit']);
    expect(message(() => checkReferences(declarations, { destination_target: { table: 't_{{zone}}' } }))).toBe(
      'Invalid request body: body.destination_target: uses {{zone}}, but the Job declares no parameter "zone" (add it to parameters)',
    );
    expect(message(() => checkReferences(declarations, { sql: "SELECT * FROM source WHERE r = '{{region}}'" }))).toMatch(/without quotes/);
    expect(checkReferences(declarations, { sql: 'SELECT * FROM source WHERE r = {{region}} LIMIT {{limit}}' })).toBeUndefined();
  });
});

describe('values of a Run', () => {
  it('fills in defaults, accepts text for numbers and booleans (query strings, CLIs), and checks types and choices', () => {
    expect(resolveValues(declarations, { day: '2026-05-01', limit: '25', full: 'true' })).toEqual({
      region: 'north',
      limit: 25,
      day: '2026-05-01',
      full: true,
    });
    expect(message(() => resolveValues(declarations, {}))).toBe('Invalid request body: body.parameters.day: a value is required (a date YYYY-MM-DD)');
    expect(message(() => resolveValues(declarations, { day: '2026-05-01', region: 'east' }))).toMatch(/parameters.region: must be one of "north", "south"/);
    expect(message(() => resolveValues(declarations, { day: '2026-05-01', limit: 2.5 }))).toMatch(/limit: must be an integer/);
    expect(message(() => resolveValues(declarations, { day: '2026-05-01', zone: 'x' }))).toMatch(/no parameter "zone" \(it has: region, limit, day, full\)/);
  });

  it('writes values into selectors (a whole placeholder keeps its type) and into SQL as literals only', () => {
    const values = { region: "o'brien", limit: 25, day: '2026-05-01', full: true };
    expect(fillTemplate({ table: 'parcels_{{region}}', max: '{{limit}}', keys: ['{{day}}'] }, values)).toEqual({
      table: "parcels_o'brien",
      max: 25,
      keys: ['2026-05-01'],
    });
    expect(fillSql('SELECT * FROM source WHERE r = {{region}} AND d >= {{day}} AND f = {{full}} LIMIT {{limit}}', values)).toBe(
      "SELECT * FROM source WHERE r = 'o''brien' AND d >= '2026-05-01' AND f = 1 LIMIT 25",
    );
    expect(sampleValues(declarations, '2026-05-01')).toEqual({ region: 'north', limit: 100, day: '2026-05-01', full: false });
  });
});
