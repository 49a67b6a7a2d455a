import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import type { JobDefinition } from '../jobs/definition.js';
import type { ParameterDeclaration } from '../jobs/parameters.js';
import { runDecider, type RunCommand } from './run.js';
import type { ExistingRun } from './state.js';

const { state, play } = deciderSpec(runDecider);
const at = new Date(Date.UTC(2026, 0, 1));
const region: ParameterDeclaration = { name: 'region', type: 'string', default: 'north', description: null, choices: null };

function started(parameters: Record<string, string>, declared: ParameterDeclaration[] = [region]): ExistingRun {
  const queue: RunCommand = {
    type: 'QueueRun',
    runId: 'run_1',
    jobId: 'job_1',
    ownerId: 'usr_a',
    trigger: 'manual',
    attempt: 1,
    retryOf: null,
    snapshot: { name: 'j', parameters: declared } as unknown as JobDefinition,
    steps: ['extract', 'deliver'],
    scheduledFor: null,
    parameters,
    triggeredBy: null,
    retryDefinition: null,
    deliveryId: null,
    at,
  };
  const start: RunCommand = {
    type: 'StartRun',
    runId: 'run_1',
    workflowId: 'w',
    workflowRunId: 'r',
    sync: { cursor: 'etag-1', reinitialize: true, seq: 3 },
    at,
  };
  return state(play([queue, start])) as ExistingRun;
}

describe('a Run and the sync cursor, by its parameter values', () => {
  it("reads from the cursor with the Job's own values (the defaults)", () => {
    expect(started({ region: 'north' }).sync).toEqual({ cursor: 'etag-1', reinitialize: true, seq: 3 });
    expect(started({}, []).sync).toEqual({ cursor: 'etag-1', reinitialize: true, seq: 3 });
  });

  it('reads in full and moves no cursor with other values, or a required parameter', () => {
    expect(started({ region: 'south' }).sync).toBeNull();
    expect(started({ region: 'north' }, [{ ...region, default: null }]).sync).toBeNull();
  });
});
