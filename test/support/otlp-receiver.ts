import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/*
 * An OTLP/HTTP trace receiver for the suites: what a collector's port 4318 does with
 * POST /v1/traces, written from the OTLP specification (opentelemetry-proto,
 * collector/trace/v1/trace_service.proto and trace/v1/trace.proto). It reads the protobuf
 * encoding (the exporters' default) with a small wire-format reader and the JSON encoding, and
 * keeps every span it received.
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  /** Status code: 0 unset, 1 ok, 2 error. */
  status: number;
  attributes: Record<string, string | number | boolean>;
  /** The resource's service.name. */
  service: string;
}

export interface OtlpReceiver {
  /** The base to give OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received. */
  contentTypes: string[];
  close(): Promise<void>;
}

// ---- protobuf wire format -----------------------------------------------------------------

type Field = { no: number; wire: number; value: bigint | Buffer };

function readVarint(buf: Buffer, at: { i: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[at.i++];
    if (byte === undefined) throw new Error('truncated varint');
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const at = { i: 0 };
  while (at.i < buf.length) {
    const key = Number(readVarint(buf, at));
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: readVarint(buf, at) });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(at.i, at.i + 8) });
      at.i += 8;
    } else if (wire === 2) {
      const len = Number(readVarint(buf, at));
      out.push({ no, wire, value: buf.subarray(at.i, at.i + len) });
      at.i += len;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(at.i, at.i + 4) });
      at.i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const bytesOf = (f: Field[], no: number) => f.filter((x) => x.no === no).map((x) => x.value as Buffer);
const one = (f: Field[], no: number) => f.find((x) => x.no === no)?.value;

/** AnyValue: 1 string, 2 bool, 3 int, 4 double. */
function anyValue(buf: Buffer): string | number | boolean {
  const f = fields(buf)[0];
  if (!f) return '';
  if (f.no === 1) return (f.value as Buffer).toString('utf8');
  if (f.no === 2) return f.value === 1n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.value as bigint));
  if (f.no === 4) return (f.value as Buffer).readDoubleLE(0);
  return '';
}

/** KeyValue list: 1 key, 2 value. */
function attributesOf(list: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    const key = (one(f, 1) as Buffer | undefined)?.toString('utf8');
    const value = one(f, 2) as Buffer | undefined;
    if (key) out[key] = value ? anyValue(value) : '';
  }
  return out;
}

/** ExportTraceServiceRequest: 1 resource_spans { 1 resource { 1 attributes }, 2 scope_spans { 2 spans } }. */
function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of bytesOf(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = one(rsf, 1) as Buffer | undefined;
    const service = String(resource ? (attributesOf(bytesOf(fields(resource), 1))['service.name'] ?? '') : '');
    for (const ss of bytesOf(rsf, 2)) {
      for (const span of bytesOf(fields(ss), 2)) {
        // Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 15 status { 3 code }.
        const sf = fields(span);
        const hex = (no: number) => ((one(sf, no) as Buffer | undefined) ?? Buffer.alloc(0)).toString('hex');
        const status = one(sf, 15) as Buffer | undefined;
        spans.push({
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: ((one(sf, 5) as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8'),
          kind: Number((one(sf, 6) as bigint | undefined) ?? 0n),
          status: status ? Number((one(fields(status), 3) as bigint | undefined) ?? 0n) : 0,
          attributes: attributesOf(bytesOf(sf, 9)),
          service,
        });
      }
    }
  }
  return spans;
}

// ---- JSON encoding (ids as hex strings, values as {stringValue|boolValue|intValue|doubleValue}) ----

type JsonKeyValue = { key: string; value: Record<string, unknown> };
const jsonAttributes = (list: JsonKeyValue[] = []) =>
  Object.fromEntries(
    list.map(({ key, value }) => [key, (value.stringValue ?? value.boolValue ?? Number(value.intValue ?? value.doubleValue)) as string | number | boolean]),
  );

function decodeJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: Record<string, any>[] }[] }[];
  };
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind,
        status: s.status?.code ?? 0,
        attributes: jsonAttributes(s.attributes),
        service,
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const type = String(req.headers['content-type'] ?? '');
        contentTypes.push(type);
        if (type.startsWith('application/x-protobuf')) {
          spans.push(...decodeProtobuf(body));
          // An empty ExportTraceServiceResponse: all accepted.
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.alloc(0));
        } else if (type.startsWith('application/json')) {
          spans.push(...decodeJson(body));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else res.writeHead(415).end();
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
