import type * as proto from '@temporalio/proto';
import { createRequire } from 'node:module';

/*
 * A history file (`temporal workflow show --output json`) as the History message the replayer
 * takes. @temporalio/common's historyFromJSON cannot be used in this install: npm gave
 * @temporalio/common and @temporalio/proto two copies of protobufjs 8 (the top level holds the 7.x
 * that @grpc/proto-loader wants), and protojson refuses a message type from the other copy
 * ("type must be a Type"). Here both come from @temporalio/proto's own copy.
 */
const require = createRequire(import.meta.url);
const protoPath = require.resolve('@temporalio/proto');
const fromProto = createRequire(protoPath);
const root = require('@temporalio/proto');
const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as {
  patchProtobufRoot: (r: unknown) => { lookupType(name: string): unknown };
};
const { fromJson } = fromProto('protobufjs/ext/protojson') as { fromJson: (type: unknown, json: unknown, options?: object) => unknown };
const historyType = patchProtobufRoot(root).lookupType('temporal.api.history.v1.History');

export function historyFromFile(json: unknown): proto.temporal.api.history.v1.IHistory {
  return fromJson(historyType, json, { ignoreUnknownFields: true }) as proto.temporal.api.history.v1.IHistory;
}
