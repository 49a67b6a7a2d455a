import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import type { StoredDataset } from '../datasets.js';
import {
  emptyPipeline,
  type ConvertOutput,
  type ConvertRequest,
  type Inspection,
  type Pipeline,
  type WorkspaceDelivery,
  type WorkspaceOrigin,
} from './contents.js';

export const workspaceStream = (id: string) => `workspace-${id}`;

export type WorkspaceEvent =
  | {
      type: 'WorkspaceCreated';
      data: {
        workspace_id: string;
        owner_id: string;
        filename: string;
        size: number;
        origin: WorkspaceOrigin;
        inspection: Inspection;
        dataset: StoredDataset;
        at: string;
        expires_at: string;
      };
    }
  | { type: 'WorkspacePipelineSet'; data: { workspace_id: string; pipeline: Pipeline; at: string } }
  | { type: 'WorkspaceConversionStarted'; data: { workspace_id: string; conversion_id: string; request: ConvertRequest; pipeline: Pipeline; at: string } }
  | { type: 'WorkspaceConverted'; data: { workspace_id: string; conversion_id: string; output: ConvertOutput; at: string } }
  | { type: 'WorkspaceConversionFailed'; data: { workspace_id: string; conversion_id: string; error: { code: string; message: string }; at: string } }
  | { type: 'WorkspaceDelivered'; data: WorkspaceDelivery & { workspace_id: string; conversion_id: string; at: string } }
  | { type: 'WorkspaceExpired'; data: { workspace_id: string; at: string } };

export type WorkspaceCommand =
  | {
      type: 'CreateWorkspace';
      workspaceId: string;
      actorId: string;
      filename: string;
      size: number;
      origin: WorkspaceOrigin;
      inspection: Inspection;
      dataset: StoredDataset;
      at: Date;
      ttlMs: number;
    }
  | { type: 'SetPipeline'; workspaceId: string; actorId: string; pipeline: Pipeline; at: Date }
  | { type: 'StartConversion'; workspaceId: string; actorId: string; conversionId: string; request: ConvertRequest; at: Date }
  | { type: 'CompleteConversion'; workspaceId: string; conversionId: string; output: ConvertOutput; at: Date }
  | { type: 'FailConversion'; workspaceId: string; conversionId: string; error: { code: string; message: string }; at: Date }
  | { type: 'RecordDelivery'; workspaceId: string; actorId: string; delivery: WorkspaceDelivery; at: Date }
  | { type: 'ExpireWorkspace'; workspaceId: string; at: Date };

export type WorkspaceState =
  | { status: 'absent' }
  | {
      status: 'inspected' | 'converting' | 'completed' | 'failed' | 'expired';
      ownerId: string;
      expiresAt: Date;
      inspection: Inspection;
      pipeline: Pipeline;
      conversionId: string | null;
      output: ConvertOutput | null;
      /** Delivery ids already recorded: a retried activity records its delivery once. */
      deliveries: string[];
    };

/**
 * A Workspace is usable by its owner until it expires; after that every command answers
 * job_expired (the spec's code), and another user's Workspace is a plain job_not_found.
 */
export function usable(state: WorkspaceState, actorId: string, id: string, at: Date) {
  if (state.status === 'absent' || state.ownerId !== actorId) throw notFound('job_not_found', 'Workspace', id);
  if (state.status === 'expired' || at >= state.expiresAt) {
    throw new DomainError('job_expired', `Workspace ${id} has expired; create a new one`, { id });
  }
  return state;
}

export const workspaceDecider: Decider<WorkspaceCommand, WorkspaceState, WorkspaceEvent> = {
  initialState: () => ({ status: 'absent' }),

  decide(command, state) {
    const at = command.at.toISOString();
    switch (command.type) {
      case 'CreateWorkspace':
        if (state.status !== 'absent') throw new DomainError('conflict', 'workspace exists');
        return [
          {
            type: 'WorkspaceCreated',
            data: {
              workspace_id: command.workspaceId,
              owner_id: command.actorId,
              filename: command.filename,
              size: command.size,
              origin: command.origin,
              inspection: command.inspection,
              dataset: command.dataset,
              at,
              expires_at: new Date(command.at.getTime() + command.ttlMs).toISOString(),
            },
          },
        ];
      case 'SetPipeline':
        usable(state, command.actorId, command.workspaceId, command.at);
        return [{ type: 'WorkspacePipelineSet', data: { workspace_id: command.workspaceId, pipeline: command.pipeline, at } }];
      case 'StartConversion': {
        // A retried start (same conversion id) has already been recorded.
        if (state.status !== 'absent' && state.conversionId === command.conversionId) return [];
        const s = usable(state, command.actorId, command.workspaceId, command.at);
        return [
          {
            type: 'WorkspaceConversionStarted',
            data: { workspace_id: command.workspaceId, conversion_id: command.conversionId, request: command.request, pipeline: s.pipeline, at },
          },
        ];
      }
      case 'CompleteConversion':
        // A late result of a superseded conversion must not replace the newer one, and a
        // repeated outcome (a retried activity) is recorded once.
        if (state.status !== 'converting' || state.conversionId !== command.conversionId) return [];
        return [{ type: 'WorkspaceConverted', data: { workspace_id: command.workspaceId, conversion_id: command.conversionId, output: command.output, at } }];
      case 'FailConversion':
        if (state.status !== 'converting' || state.conversionId !== command.conversionId) return [];
        return [
          { type: 'WorkspaceConversionFailed', data: { workspace_id: command.workspaceId, conversion_id: command.conversionId, error: command.error, at } },
        ];
      case 'RecordDelivery': {
        if (state.status !== 'absent' && state.deliveries.includes(command.delivery.delivery_id)) return [];
        const s = usable(state, command.actorId, command.workspaceId, command.at);
        return [{ type: 'WorkspaceDelivered', data: { workspace_id: command.workspaceId, conversion_id: s.conversionId ?? '', ...command.delivery, at } }];
      }
      case 'ExpireWorkspace':
        if (state.status === 'absent' || state.status === 'expired') return [];
        return [{ type: 'WorkspaceExpired', data: { workspace_id: command.workspaceId, at } }];
      default:
        return unreachable(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'WorkspaceCreated':
        return {
          status: 'inspected',
          ownerId: event.data.owner_id,
          expiresAt: new Date(event.data.expires_at),
          inspection: event.data.inspection,
          pipeline: emptyPipeline,
          conversionId: null,
          output: null,
          deliveries: [],
        };
      case 'WorkspacePipelineSet':
        return state.status === 'absent' ? state : { ...state, pipeline: event.data.pipeline };
      case 'WorkspaceConversionStarted':
        // The previous output stays downloadable until the new one replaces it.
        return state.status === 'absent' ? state : { ...state, status: 'converting', conversionId: event.data.conversion_id };
      case 'WorkspaceConverted':
        return state.status === 'absent' ? state : { ...state, status: 'completed', output: event.data.output };
      case 'WorkspaceConversionFailed':
        // The last good output stays downloadable and deliverable (issue 8): a failed re-convert
        // says so in the status and errors, but does not take away what worked.
        return state.status === 'absent' ? state : { ...state, status: 'failed' };
      case 'WorkspaceDelivered':
        return state.status === 'absent' ? state : { ...state, deliveries: [...state.deliveries, event.data.delivery_id] };
      case 'WorkspaceExpired':
        return state.status === 'absent' ? state : { ...state, status: 'expired' };
      default:
        return unreachable(event);
    }
  },
};
