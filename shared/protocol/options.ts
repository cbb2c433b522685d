import type { Options } from '@grpc/proto-loader';

/**
 * How messages are turned into JavaScript objects. The runtime loader and the type generator
 * read these same options, so the generated types describe exactly what the loader produces:
 * camelCase fields, 64-bit integers as numbers (sequence numbers, generations and epochs stay far
 * below 2^53), enums as their names, every scalar and list filled with its default, and a `body`
 * field naming the member of each oneof that is set.
 */
export const LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const satisfies Options;
