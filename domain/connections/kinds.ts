/** The two kinds of saved connection: a Source is read from, a Destination written to. */
export type ConnectionKind = 'source' | 'destination';

/** The error code of a missing (or another owner's) connection of a kind. */
export const notFoundCode = (kind: ConnectionKind) => (kind === 'source' ? 'source_not_found' : 'destination_not_found');

/** The kind as the API's messages name it. */
export const kindNoun = (kind: ConnectionKind) => (kind === 'source' ? 'Source' : 'Destination');
