import type { DeserializeHandler, DeserializeHandlerArguments, HandlerExecutionContext, MetadataBearer, MiddlewareStack, SerializeHandler, SerializeHandlerArguments } from '@smithy/types';
import { isItemOperation } from './json-serde.ts';

/** What the two steps use of the client's resolved configuration. */
interface SerdeConfig {
  protocol: {
    serializeRequest(operation: Operation, input: unknown, context: object): Promise<unknown>;
    deserializeResponse(operation: Operation, context: object, response: unknown): Promise<MetadataBearer>;
  };
  streamCollector(body: unknown): Promise<Uint8Array>;
}

interface Operation {
  namespace: unknown;
  name: string;
  traits: unknown;
  input: unknown;
  output: unknown;
}

interface AnsweredResponse {
  statusCode: number;
  body?: unknown;
}

const SERIALIZER = 'serializerMiddleware';
const DESERIALIZER = 'deserializerMiddleware';

/** The operation a resolved handler sends, from its command's schema (`[9, namespace, name, traits, input, output]`). */
function itemOperationOf(context: HandlerExecutionContext): Operation | undefined {
  const schema = (context.__smithy_context as { operationSchema?: unknown } | undefined)?.operationSchema;
  if (!Array.isArray(schema) || schema[0] !== 9 || !isItemOperation(schema[2])) return undefined;
  const [, namespace, name, traits, input, output] = schema as [9, unknown, string, unknown, unknown, unknown];
  return { namespace, name, traits, input, output };
}

/**
 * What the SDK's steps hand the protocol: the client's configuration with the request's context over
 * it. The SDK copies both into one object, some fifty properties, twice per request; the protocol only
 * reads it, so the context's own properties over the configuration as prototype read the same.
 */
function callContext(config: SerdeConfig, context: HandlerExecutionContext, extra?: object): object {
  return Object.assign(Object.create(config) as object, context, extra);
}

/** A copy of `stack` with only the step named `keep`, to resolve that step alone around any handler. */
function onlyStep<I extends object, O extends object>(stack: MiddlewareStack<I, O>, keep: string): MiddlewareStack<I, O> {
  const alone = stack.clone();
  for (const entry of alone.identify()) {
    const name = entry.split(' ')[0] as string;
    if (name !== keep) alone.remove(name);
  }
  // Steps placed relative to a command's own steps (which a client's stack lacks) are not listed: the
  // stack names each when it cannot place it.
  for (let tries = 0; tries < 32; tries++) {
    try {
      alone.resolve((() => undefined) as never, {});
      return alone;
    } catch (err) {
      const unplaced = /when adding (\S+)/.exec(String((err as Error).message))?.[1];
      if (unplaced === undefined || !alone.remove(unplaced)) throw err;
    }
  }
  throw new Error(`the table client could not set the SDK's ${keep} apart`);
}

/**
 * Puts in place of the SDK's serialize and deserialize steps (`serializerMiddleware`,
 * `deserializerMiddleware`, the schema serde of `@smithy/core`) steps that do the same for the item
 * operations without copying the configuration per request (docs/table.md#the-client): the protocol
 * builds the request and reads the answer as before. Every other operation, every error answer and
 * every answer the protocol cannot read goes through the SDK's own steps, which then throw the SDK's
 * own errors. Answers whether both steps were there to replace.
 */
export function useTableSerdeSteps(stack: MiddlewareStack<object, MetadataBearer>, config: SerdeConfig): boolean {
  const names = stack.identify().map((entry) => entry.split(' ')[0]);
  if (!names.includes(SERIALIZER) || !names.includes(DESERIALIZER)) return false;
  const sdkSerializer = onlyStep(stack, SERIALIZER);
  const sdkDeserializer = onlyStep(stack, DESERIALIZER);
  stack.add(
    (next: SerializeHandler<object, MetadataBearer>, context: HandlerExecutionContext) => {
      const operation = itemOperationOf(context);
      if (operation === undefined) return sdkSerializer.resolve(next as never, context) as unknown as SerializeHandler<object, MetadataBearer>;
      return async (args: SerializeHandlerArguments<object>) => {
        const endpoint = context.endpointV2;
        // The resolved endpoint as it is: the protocol takes it in this form as in the SDK's own.
        const request = await config.protocol.serializeRequest(operation, args.input, callContext(config, context, endpoint === undefined ? undefined : { endpoint: async () => endpoint }));
        return next({ ...args, request });
      };
    },
    { name: SERIALIZER, step: 'serialize', tags: ['SERIALIZER'], override: true },
  );
  stack.add(
    (next: DeserializeHandler<object, MetadataBearer>, context: HandlerExecutionContext) => {
      const operation = itemOperationOf(context);
      if (operation === undefined) return sdkDeserializer.resolve(next as never, context) as unknown as DeserializeHandler<object, MetadataBearer>;
      return async (args: DeserializeHandlerArguments<object>) => {
        const { response } = await next(args);
        const sdk = () => (sdkDeserializer.resolve((async () => ({ response, output: undefined })) as never, context) as unknown as DeserializeHandler<object, MetadataBearer>)(args);
        const answered = response as AnsweredResponse;
        if (!(answered.statusCode < 300)) return sdk();
        // Read whole first, so that the SDK's step can read it again should the protocol fail on it.
        if (answered.body !== undefined && answered.body !== null && !(answered.body instanceof Uint8Array)) answered.body = await config.streamCollector(answered.body);
        try {
          return { response, output: await config.protocol.deserializeResponse(operation, callContext(config, context), response) };
        } catch {
          return sdk();
        }
      };
    },
    { name: DESERIALIZER, step: 'deserialize', tags: ['DESERIALIZER'], override: true },
  );
  return true;
}
