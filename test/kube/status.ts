/**
 * The Kubernetes `Status` object, the error body every API server answer carries on failure.
 *
 * The test API server has its own error class instead of the project's `VendorError` because what
 * it models is the Kubernetes wire contract: clients read `reason`, `code` and `details` from these
 * bodies, and the messages below follow kube-apiserver's wording so that clients matching on them
 * behave as they would against a real cluster.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string; remainingItemCount?: number };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A group and plural resource name, printed as `deployments.apps` or `pods` in messages. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

export function qualifiedName(qr: QualifiedResource): string {
  return qr.group === '' ? qr.resource : `${qr.resource}.${qr.group}`;
}

export class StatusError extends Error {
  readonly status: Status;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: Status, headers: Record<string, string> = {}) {
    super(status.message ?? status.reason ?? `status ${status.code}`);
    this.name = 'StatusError';
    this.status = status;
    this.headers = headers;
  }

  get code(): number {
    return this.status.code;
  }
}

export function isStatusError(value: unknown): value is StatusError {
  return value instanceof StatusError;
}

export function failure(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
  metadata: Status['metadata'] = {},
): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata, status: 'Failure', message, reason, code };
  if (details !== undefined) status.details = details;
  // kube-apiserver serializes `code` last; keep that order for byte-level comparisons.
  const { code: c, ...rest } = status;
  return { ...rest, code: c };
}

function resourceDetails(qr: QualifiedResource, name: string): StatusDetails {
  return qr.group === '' ? { name, kind: qr.resource } : { name, group: qr.group, kind: qr.resource };
}

export function notFound(qr: QualifiedResource, name: string): StatusError {
  return new StatusError(failure(404, 'NotFound', `${qualifiedName(qr)} "${name}" not found`, resourceDetails(qr, name)));
}

/** The answer for a path the server does not serve at all. */
export function pathNotFound(): StatusError {
  return new StatusError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
}

export function alreadyExists(qr: QualifiedResource, name: string): StatusError {
  return new StatusError(
    failure(409, 'AlreadyExists', `${qualifiedName(qr)} "${name}" already exists`, resourceDetails(qr, name)),
  );
}

export function conflict(qr: QualifiedResource, name: string, why: string): StatusError {
  return new StatusError(
    failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedName(qr)} "${name}": ${why}`, resourceDetails(qr, name)),
  );
}

export const MODIFIED_CONFLICT =
  'the object has been modified; please apply your changes to the latest version and try again';

/** A field-level validation failure, `422 Invalid`, named by Kind (not resource) like the real server. */
export interface FieldError {
  type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueDuplicate';
  field: string;
  detail: string;
}

const FIELD_ERROR_WORDS: Record<FieldError['type'], string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
};

function fieldErrorText(e: FieldError): string {
  const word = FIELD_ERROR_WORDS[e.type];
  return e.detail === '' ? word : `${word}: ${e.detail}`;
}

export function invalid(group: string, kind: string, name: string, errors: readonly FieldError[]): StatusError {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const parts = errors.map((e) => `${e.field}: ${fieldErrorText(e)}`);
  const summary = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  // Empty fields are left out of `details`, as Go's omitempty does (ListOptions "" has no name).
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (group !== '') details.group = group;
  details.kind = kind;
  details.causes = errors.map((e) => ({ reason: e.type, message: fieldErrorText(e), field: e.field }));
  return new StatusError(failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details));
}

export function badRequest(message: string): StatusError {
  return new StatusError(failure(400, 'BadRequest', message));
}

export const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';
export const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export function expired(message: string, metadata: Status['metadata'] = {}): StatusError {
  return new StatusError(failure(410, 'Expired', message, undefined, metadata));
}

export function tooManyRequests(retryAfterSeconds: number, message = 'Too many requests, please try again later.'): StatusError {
  return new StatusError(failure(429, 'TooManyRequests', message, { retryAfterSeconds }), {
    'Retry-After': String(retryAfterSeconds),
  });
}

export function internalError(cause: string): StatusError {
  return new StatusError(
    failure(500, 'InternalError', `Internal error occurred: ${cause}`, { causes: [{ message: cause }] }),
  );
}

/**
 * A storage error kube-apiserver passes on as it is: `500`, the message and nothing else (no
 * reason, no details), e.g. etcd refusing a revision it has not made yet.
 */
export function storageError(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

export const FUTURE_REVISION = 'etcdserver: mvcc: required revision is a future revision';

export function serviceUnavailable(message: string): StatusError {
  return new StatusError(failure(503, 'ServiceUnavailable', message));
}

export function timeout(message = 'Timeout: request did not complete within requested timeout - context deadline exceeded', retryAfterSeconds?: number): StatusError {
  const details: StatusDetails = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  return new StatusError(failure(504, 'Timeout', message, details));
}

export function tooLargeResourceVersion(requested: number, current: number): StatusError {
  return new StatusError(
    failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  );
}

export function unauthorized(): StatusError {
  return new StatusError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export function forbidden(message: string, details: StatusDetails): StatusError {
  return new StatusError(failure(403, 'Forbidden', message, details));
}

export function methodNotAllowed(): StatusError {
  return new StatusError(
    failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),
  );
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): StatusError {
  return new StatusError(
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      {},
    ),
    { 'X-Rejected-Content-Type': contentType },
  );
}

export function notAcceptable(): StatusError {
  return new StatusError(
    failure(406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml', {}),
  );
}

export function requestEntityTooLarge(limit: number): StatusError {
  return new StatusError(failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`));
}

/** The body of a successful delete of a resource that does not return the deleted object (no `code`, as on the wire). */
export interface SuccessStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success';
  details: StatusDetails;
}

export function success(details: StatusDetails): SuccessStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
