import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowInterceptors } from '@temporalio/workflow';

/*
 * Loaded into the workflow bundle only with traces on (worker/worker.ts), after the OpenTelemetry
 * interceptors' own module, so it runs inside them. A Job's coordinator starts each Run as a child
 * workflow from its own loop, so the OpenTelemetry interceptor would parent every Run to the
 * request that happened to start the coordinator. A ticket that carries the traceparent of the
 * request that asked for the Run (application/runs.ts, signalRun) makes the child's header name
 * that request instead: one trace from `POST …/run` to the Run's last statement.
 */

/** The header the OpenTelemetry interceptors read a parent context from (their TRACE_HEADER). */
const TRACE_HEADER = '_tracer-data';

const traceparentOf = (arg: unknown): string | undefined => {
  const value = (arg as { traceparent?: unknown } | null | undefined)?.traceparent;
  return typeof value === 'string' && /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(value) ? value : undefined;
};

export const interceptors = (): WorkflowInterceptors => ({
  outbound: [
    {
      startChildWorkflowExecution(input, next) {
        const traceparent = traceparentOf(input.options.args?.[0]);
        if (!traceparent) return next(input);
        return next({ ...input, headers: { ...input.headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent }) } });
      },
    },
  ],
});
