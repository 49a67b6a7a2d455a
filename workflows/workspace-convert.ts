import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { domainErrorFrom, domainFailure } from '../temporal/failures.js';
import type { ConvertOutput } from '../domain/workspaces/workspace.js';
import { timeouts } from '../temporal/timeouts.js';
import type { ConvertWorkspaceWorkflow, ConvertWorkspaceWorkflowInput } from '../temporal/workspaces.js';

const { startWorkspaceConversion, finishWorkspaceConversion } = proxyActivities<Activities>(timeouts.record);
const { convertWorkspace } = proxyActivities<Activities>(timeouts.processing);

/**
 * A Workspace convert from start to outcome: records the start (fixing the pipeline), converts
 * on the worker that owns the files, records the outcome. The HTTP call waits for it and then for
 * the read models to reach the returned position. A failure is recorded before the workflow
 * fails, and carries that position too; domain refusals keep their public code.
 */
export async function convertWorkspaceWorkflow(input: ConvertWorkspaceWorkflowInput): ReturnType<ConvertWorkspaceWorkflow> {
  const ref = { workspaceId: input.workspaceId, conversionId: input.conversionId };
  const { pipeline } = await startWorkspaceConversion(input);
  let output: ConvertOutput;
  try {
    output = await convertWorkspace({ ...ref, dataset: input.dataset, request: input.request, baseName: input.baseName, pipeline });
  } catch (error) {
    const domain = domainErrorFrom(error);
    const failure = domain ? { code: domain.code, message: domain.message } : { code: 'internal_error', message: 'The conversion failed on the worker' };
    const { position } = await finishWorkspaceConversion({ ...ref, error: failure });
    if (domain) throw domainFailure(domain, position);
    throw ApplicationFailure.create({ type: 'ConversionFailed', message: failure.message, nonRetryable: true, details: [{ code: failure.code, position }], cause: error as Error });
  }
  const { position } = await finishWorkspaceConversion({ ...ref, output });
  return { output, position };
}
