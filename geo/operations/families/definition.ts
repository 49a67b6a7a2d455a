import type { z } from 'zod';
import type { CompileContext, Compiled, Relation } from '../relation.js';

/*
 * What a catalogue entry is: an operation's id, words, parameters (a zod schema) and how it
 * compiles itself into the SELECT that wraps the previous one. Each family of operations
 * (families/*.ts) defines its entries with define(); geo/operations/catalog.ts assembles them.
 */

export type OperationCategory = 'attribute' | 'filter' | 'geometry' | 'crs';

export interface OperationDefinition<P extends z.ZodObject = z.ZodObject> {
  id: string;
  label: string;
  description: string;
  category: OperationCategory;
  /** True when the operation needs a geometry column (invalid_transformation on a non-spatial table). */
  requiresGeometry: boolean;
  parameters: P;
  example: Record<string, unknown>;
  /** The relation after this operation, from its parsed parameters (defaults filled in). */
  compile: (params: z.output<P>, rel: Relation, ctx: CompileContext) => Compiled | Promise<Compiled>;
}

/** A catalogue entry as the engine and the API see it, whatever its parameters. */
export interface CatalogEntry extends Omit<OperationDefinition, 'compile'> {
  /** Compiles one validated operation of this type (its parameters parsed by its own schema). */
  apply(op: ValidatedOperation, rel: Relation, ctx: CompileContext): Promise<Compiled>;
}

/** One validated operation: the id plus its parsed parameters (defaults filled in). */
export type ValidatedOperation = { type: string } & Record<string, unknown>;

/** A catalogue entry from its definition: apply() parses the operation's parameters with its own schema, then compiles. */
export function define<P extends z.ZodObject>({ compile, ...d }: OperationDefinition<P>): CatalogEntry {
  return {
    ...d,
    async apply(op, rel, ctx) {
      const { type: _type, ...params } = op;
      return compile(d.parameters.parse(params), rel, ctx);
    },
  };
}
