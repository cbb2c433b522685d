// Original file: shared/protocol/vendor/agent/v1/agent.proto


export interface Permissions {
  'read'?: (string)[];
  'write'?: (string)[];
}

export interface Permissions__Output {
  'read': (string)[];
  'write': (string)[];
}
