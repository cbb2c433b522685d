import { fileURLToPath } from 'node:url';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/agent.ts';
import { LOADER_OPTIONS } from './options.ts';

/** Root folder of the `.proto` files; `vendor/agent/v1/agent.proto` sits below it. */
export const PROTO_ROOT = fileURLToPath(new URL('.', import.meta.url));
export const AGENT_PROTO = 'vendor/agent/v1/agent.proto';

let loaded: ProtoGrpcType | undefined;

/** The agent protocol as grpc-js service and message definitions, loaded once per process. */
export function agentProtocol(): ProtoGrpcType {
  loaded ??= loadPackageDefinition(
    loadSync(AGENT_PROTO, { ...LOADER_OPTIONS, includeDirs: [PROTO_ROOT] }),
  ) as unknown as ProtoGrpcType;
  return loaded;
}
