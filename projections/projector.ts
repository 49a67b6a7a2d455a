import type { DatabaseTransactionConnection } from 'slonik';
import type { StoredEvent } from '../eventstore/port.js';

/**
 * A projector owns a few read-model tables. Its tables live in a schema given at run time, so
 * the same code fills the live schema and, on rebuild, a fresh one from position zero.
 */
export interface Projector {
  name: string;
  /** Bump when the tables or the way events map to rows change: the projector is then replayed from zero at start. */
  version: number;
  /** DDL creating the projector's tables inside `schema` (idempotent). */
  createTables(tx: DatabaseTransactionConnection, schema: string): Promise<void>;
  /** Applies one event; events of other types are ignored. Runs inside the checkpoint's transaction. */
  apply(tx: DatabaseTransactionConnection, schema: string, event: StoredEvent): Promise<void>;
  /** Table names, used to compare a rebuild with the live tables. */
  tables: string[];
  /**
   * Projectors whose read models must show an event before this one does: this projector never
   * applies past their checkpoints. The runs projector follows the jobs projector, so a Run seen
   * ended has its Job's last Run and sync cursor updated, whichever process projects what.
   */
  follows?: string[];
}
