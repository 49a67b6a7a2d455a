import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import type { JobDefinition } from '../jobs/definition.js';
import type { ParameterDeclaration } from '../jobs/parameters.js';
import { runDecider } from './run.js';
import type { ExistingRun } from './state.js';
import { queueRun, startRun } from '../../test/support/run-commands.js';

const { state, play } = deciderSpec(runDecider);
const at = new Date(Date.UTC(2026, 0, 1));
const region: ParameterDeclaration = { name: 'region', type: 'string', default: 'north', description: null, choices: null };

function started(parameters: Record<string, string>, declared: ParameterDeclaration[] = [region]): ExistingRun {
  const queue = queueRun(at, { snapshot: { name: 'j', parameters: declared } as unknown as JobDefinition, parameters });
  const start = startRun(at, { workflowId: 'w', workflowRunId: 'r', sync: { cursor: 'etag-1', reinitialize: true, seq: 3 } });
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
