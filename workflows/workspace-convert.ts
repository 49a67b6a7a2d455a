import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { domainErrorFrom, domainFailure, timeoutMessage } from '../temporal/failures.js';
import { DomainError } from '../domain/errors.js';
import type { ConvertOutput } from '../domain/workspaces/contents.js';
import { timeouts, withHeartbeatTimeout } from '../temporal/timeouts.js';
import type { ConvertWorkspaceWorkflow, ConvertWorkspaceWorkflowInput } from '../temporal/workspaces.js';

const { startWorkspaceConversion, finishWorkspaceConversion } = proxyActivities<Activities>(timeouts.record);

/**
 * A Workspace convert from start to outcome: records the start (fixing the pipeline), converts
 * on the worker that owns the files, records the outcome. The HTTP call waits for it and then for
 * the read models to reach the returned position. A failure is recorded before the workflow
 * fails, and carries that position too; domain refusals keep their public code.
 */
export async function convertWorkspaceWorkflow(input: ConvertWorkspaceWorkflowInput): ReturnType<ConvertWorkspaceWorkflow> {
  const ref = { workspaceId: input.workspaceId, conversionId: input.conversionId };
  const { pipeline, heartbeatTimeoutMs } = await startWorkspaceConversion(input);
  const { convertWorkspace } = proxyActivities<Activities>(withHeartbeatTimeout(timeouts.processing, heartbeatTimeoutMs));
  let output: ConvertOutput;
  try {
    output = await convertWorkspace({
      ...ref,
      dataset: input.dataset,
      request: input.request,
      baseName: input.baseName,
      ...(input.uploadFilename ? { uploadFilename: input.uploadFilename } : {}),
      ...(input.related ? { related: input.related } : {}),
      ...(input.progress ? { progress: input.progress } : {}),
      pipeline,
    });
  } catch (error) {
    const domain = domainErrorFrom(error);
    const timeout = timeoutMessage(error, 'The conversion');
    const failure = domain
      ? { code: domain.code, message: domain.message }
      : timeout
        ? { code: 'processing_timeout', message: timeout }
        : { code: 'internal_error', message: 'The conversion failed on the worker' };
    const { position } = await finishWorkspaceConversion({ ...ref, error: failure });
    if (domain) throw domainFailure(domain, position);
    // Out of time has its own code, so the caller's JSON error says so (not internal_error).
    if (timeout) throw domainFailure(new DomainError(failure.code, failure.message), position);
    throw ApplicationFailure.create({
      type: 'ConversionFailed',
      message: failure.message,
      nonRetryable: true,
      details: [{ code: failure.code, position }],
      cause: error as Error,
    });
  }
  const { position } = await finishWorkspaceConversion({ ...ref, output });
  return { output, position };
}
