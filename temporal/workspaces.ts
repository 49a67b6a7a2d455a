import type { DeliveryResult } from '../domain/transfers.js';
import type { ConvertOutput, ConvertRequest } from '../domain/workspaces/contents.js';
import type { StoredDataset } from '../domain/datasets.js';

/** Whose request, under which `progress_id`: where the worker reports how far it has got (application/operation-progress.ts). */
export interface ProgressTarget {
  ownerId: string;
  progressId: string;
}

/*
 * The Workspace workflows as their callers see them (application/workspaces.ts starts them by
 * name with these signatures; workflows/workspace-*.ts implement them). Types only.
 */

export interface ConvertWorkspaceWorkflowInput {
  workspaceId: string;
  conversionId: string;
  actorId: string;
  request: ConvertRequest;
  dataset: StoredDataset;
  /** Output file name stem: the uploaded file's name without its extension. */
  baseName: string;
  /** The uploaded file's name, which the download must not carry (absent in workflows started before). */
  uploadFilename?: string;
  /** Datasets of the caller's other Workspaces that the pipeline's operations read (workspace_id), by id. */
  related?: Record<string, StoredDataset>;
  /** Present when the caller asked to follow the request's progress. */
  progress?: ProgressTarget;
}

export type ConvertWorkspaceWorkflow = (input: ConvertWorkspaceWorkflowInput) => Promise<{ output: ConvertOutput; position: string }>;

export interface DeliverWorkspaceInput {
  workspaceId: string;
  actorId: string;
  destinationId: string;
  /** Checked by the Destination's connector before the workflow started. */
  target: Record<string, unknown>;
  /** Stable across retries of this delivery: the connector uses it to deliver once. */
  deliveryId: string;
  /** Present when the caller asked to follow the request's progress. */
  progress?: ProgressTarget;
}

/** What a delivery did, with public metadata only. */
export interface Delivery extends DeliveryResult {
  destination_id: string;
  destination_type: string;
  duration_ms: number;
}

export type DeliverWorkspaceWorkflow = (input: DeliverWorkspaceInput) => Promise<{ delivery: Delivery; position: string }>;
