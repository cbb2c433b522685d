import { VendorError, type Issue } from '../errors.ts';

/**
 * The ways a peer can break the protocol. Each rides along a `protocol_error` as
 * `details.problem` and reaches the peer in the `vendor-protocol-problem` trailer, so both sides
 * (and tests) can tell them apart without parsing messages.
 */
export type ProtocolProblem =
  | 'malformed' // undecodable bytes, no body, a field out of range
  | 'out_of_order' // a sequence number that is not the next one, hello not first, hello twice
  | 'bad_ack' // an acknowledgement of something never sent, or going backwards
  | 'unsupported_protocol_version'
  | 'unsupported_message' // a message kind this peer does not handle yet
  | 'unknown_account' // a result for an account this agent was not given
  | 'oversize';

export function protocolError(
  problem: ProtocolProblem,
  message: string,
  options: { issues?: readonly Issue[]; details?: Record<string, unknown> } = {},
): VendorError {
  return new VendorError(problem === 'oversize' ? 'payload_too_large' : 'protocol_error', message, {
    ...(options.issues ? { issues: options.issues } : {}),
    details: { ...options.details, problem },
  });
}
