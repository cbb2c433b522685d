/** Pieces the OpenAPI document (openapi.ts) and the entries of its sub-apps are built from. */
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ 'application/json': { schema } });
export const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem') } } });

export const unauthorized = {
  description: 'Missing or invalid credentials: the same answer whatever was wrong.',
  headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: '`Bearer realm="vendor-agent"`, with `error="invalid_token"` when a token was sent.' } },
  content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem') } },
};
export const authResponses = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  '503': problem('The identity provider (to verify the token) or the table is not answering; try again.'),
};
export const accountNameParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});
