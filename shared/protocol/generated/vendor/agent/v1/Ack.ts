// Original file: shared/protocol/vendor/agent/v1/agent.proto


/**
 * Carries nothing but the envelope's ack_seq, for when there is nothing else to send.
 */
export interface Ack {
}

/**
 * Carries nothing but the envelope's ack_seq, for when there is nothing else to send.
 */
export interface Ack__Output {
}
