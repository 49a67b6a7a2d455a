/** The words and paths of the two kinds of saved connection, and helpers both share. */
import { get } from '../../api.js';
import type { Connection, ConnectionKind, Connector, Page as ListPage } from '../../types.js';

export interface KindInfo {
  kind: ConnectionKind;
  noun: string;
  plural: string;
  /** `/sources` (API) and `#/sources` (app). */
  path: string;
  lead: string;
}

export const KINDS: Record<ConnectionKind, KindInfo> = {
  source: {
    kind: 'source',
    noun: 'Source',
    plural: 'Sources',
    path: '/sources',
    lead: 'Where data comes from: a database, a bucket, a file at a URL, a web service. Jobs read from a Source; a Workspace can import from one.',
  },
  destination: {
    kind: 'destination',
    noun: 'Destination',
    plural: 'Destinations',
    path: '/destinations',
    lead: 'Where results go: a database, a bucket, a server. Jobs deliver to a Destination; a Workspace can deliver its converted file to one.',
  },
};

/** The catalogue entries a kind may use, implemented types first, then by label. */
export function connectorsOf(all: Connector[], kind: ConnectionKind): Connector[] {
  return all.filter((c) => c.kinds.includes(kind)).sort((a, b) => Number(b.implemented) - Number(a.implemented) || a.label.localeCompare(b.label));
}

/** A database (its tables are listed): reading from one and writing to one needs no file format. */
export function isDatabase(connector: Connector | undefined): boolean {
  return !!connector?.capabilities.discover;
}

/** "db.example.org · gis": the first two required, non-secret values of the configuration. */
export function connectionSummary(connector: Connector | undefined, configuration: Record<string, unknown>): string {
  if (!connector) return '';
  const keys = (connector.configuration.required ?? Object.keys(connector.configuration.properties ?? {})).filter((k) => !connector.secrets.includes(k));
  return keys
    .map((k) => configuration[k])
    .filter((v) => typeof v === 'string' || typeof v === 'number')
    .slice(0, 2)
    .join(' · ');
}

/** Every saved connection of a kind (pages of 200), for pickers. */
export async function allConnections(kind: ConnectionKind): Promise<Connection[]> {
  const items: Connection[] = [];
  let cursor: string | null = null;
  do {
    const page: ListPage<Connection> = await get<ListPage<Connection>>(`${KINDS[kind].path}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < 2000);
  return items;
}
