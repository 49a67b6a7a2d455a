import { AnonymousCredential, ContainerClient, RestError, StorageSharedKeyCredential, type StoragePipelineOptions } from '@azure/storage-blob';
import { classify, describeReason, reasonOfStatus } from '../shared/policy/classify.js';
import { egressAgents } from '../shared/policy/egress.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';

/** An azureblob configuration as the connector receives it (validated, secrets decrypted). */
export interface AzureConfig {
  account_name: string;
  container: string;
  endpoint?: string;
  prefix: string;
  account_key?: string;
  sas_token?: string;
}

export const credentialKind = (c: AzureConfig) => (c.account_key ? 'account_key' : c.sas_token ? 'sas_token' : 'anonymous');

/** The account's blob endpoint: the configured one (Azurite, sovereign clouds) or Azure's public one. */
const accountUrl = (c: AzureConfig) => (c.endpoint ?? `https://${c.account_name}.blob.core.windows.net`).replace(/\/+$/, '');

/**
 * The client's options: a few quick tries (a connection test has 10 s, and Runs retry transient
 * failures themselves), and every connection through the outbound policy. `agent` is not in
 * StoragePipelineOptions' type, but the SDK hands the options on to core-rest-pipeline's
 * createClientPipeline, whose agentPolicy gives it to every request (redirects included).
 */
const pipeline = (c: AzureConfig): StoragePipelineOptions =>
  ({
    retryOptions: { maxTries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 4_000 },
    agent: accountUrl(c).startsWith('http:') ? egressAgents().http : egressAgents().https,
  }) as StoragePipelineOptions;

/**
 * One client per call, holding this configuration's credential only: the account key (Shared
 * Key signing), else the SAS token (appended to the container URL), else none (a public
 * container).
 */
export function containerClient(c: AzureConfig): ContainerClient {
  const url = `${accountUrl(c)}/${encodeURIComponent(c.container)}`;
  if (c.account_key) return new ContainerClient(url, new StorageSharedKeyCredential(c.account_name, c.account_key), pipeline(c));
  if (c.sas_token) return new ContainerClient(`${url}?${c.sas_token.replace(/^\?/, '')}`, new AnonymousCredential(), pipeline(c));
  return new ContainerClient(url, new AnonymousCredential(), pipeline(c));
}

/** What messages and results name: account, container and endpoint, never a key or a SAS. */
export function azureWhere(c: AzureConfig, blob?: string): Record<string, string> {
  return { account_name: c.account_name, container: c.container, ...(blob === undefined ? {} : { blob }), endpoint: accountUrl(c) };
}

const codeReasons: Record<string, ConnectorFailureReason> = {
  ContainerNotFound: 'not_found',
  BlobNotFound: 'not_found',
  ResourceNotFound: 'not_found',
  AuthenticationFailed: 'authentication_failed',
  InvalidAuthenticationInfo: 'authentication_failed',
  NoAuthenticationInformation: 'authentication_failed',
  AuthorizationFailure: 'permission_denied',
  AuthorizationPermissionMismatch: 'permission_denied',
  AuthorizationResourceTypeMismatch: 'permission_denied',
  AuthorizationServiceMismatch: 'permission_denied',
  AuthorizationSourceIPMismatch: 'permission_denied',
  AuthorizationProtocolMismatch: 'tls_error',
  InsufficientAccountPermissions: 'permission_denied',
  AccountIsDisabled: 'permission_denied',
  BlobArchived: 'permission_denied',
  ServerBusy: 'server_error',
  InternalError: 'server_error',
  OperationTimedOut: 'timeout',
  RequestBodyTooLarge: 'too_large',
};

/**
 * A ConnectorError for any failure of an Azure Blob call, by the service's error code (not its
 * message, which is not passed on). Azure says AuthenticationFailed for a wrong key or SAS
 * signature; Azurite says AuthorizationFailure with the same sentence ("Server failed to
 * authenticate the request"), which is recognised as the authentication failure it is.
 */
export function azureFailure(error: unknown, what: string, where: Record<string, string>): ConnectorError {
  if (error instanceof ConnectorError) return error;
  if (error instanceof RestError && error.statusCode !== undefined) {
    const code = typeof error.code === 'string' ? error.code : null;
    let reason = (code && codeReasons[code]) || reasonOfStatus(error.statusCode);
    if (error.statusCode === 403 && /failed to authenticate/i.test(error.message)) reason = 'authentication_failed';
    return new ConnectorError(reason, `${what} ${describeReason(reason)}${code ? ` (${code})` : ` (HTTP ${error.statusCode})`}`, {
      ...where,
      ...(code ? { azure_error: code } : {}),
      http_status: error.statusCode,
    });
  }
  return classify(error, what, where);
}

const statusOf = (error: unknown) => (error instanceof RestError ? error.statusCode : undefined);
export const isMissing = (error: unknown) => statusOf(error) === 404;
export const isDenied = (error: unknown) => statusOf(error) === 403;
export const isNotModified = (error: unknown) => statusOf(error) === 304;
