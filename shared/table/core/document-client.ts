import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, DynamoDBDocumentClientCommand } from '@aws-sdk/lib-dynamodb';
import type { DeserializeHandler, DeserializeHandlerArguments, Handler, MetadataBearer, MiddlewareStack, SerializeHandler, SerializeHandlerArguments } from '@smithy/types';
import { marshallDocumentInput, TABLE_MARSHALL_OPTIONS, unmarshallDocumentOutput, type KeyNodes } from './document-marshalling.ts';

/** What the table client reads of a document command of `@aws-sdk/lib-dynamodb` (its fields are not public). */
interface DocumentCommandParts {
  clientCommand: SendableCommand;
  inputKeyNodes: KeyNodes;
  outputKeyNodes: KeyNodes;
}

/** A command of the low-level client, as `send` takes and resolves it. */
interface SendableCommand {
  input: object;
  resolveMiddleware(stack: MiddlewareStack<object, object>, config: unknown, options: undefined): Handler<object, object>;
}

/** The document commands whose input the table client's own marshalling step is to convert, by that input. */
const documentInputs = new WeakMap<object, DocumentCommandParts>();
/** The same, by the marshalled input the later steps see, for the conversion of the answer. */
const documentOutputs = new WeakMap<object, DocumentCommandParts>();

/** The steps that change a middleware stack: after any of them the resolved handlers are stale. */
const STACK_CHANGES = ['add', 'addRelativeTo', 'use', 'remove', 'removeByTag'] as const;

/**
 * The document client every store sends through (`TableRef.client`): the same commands, inputs,
 * answers and errors as `DynamoDBDocumentClient`, at less CPU per request (docs/table.md#the-client).
 * Two of its costs are cut:
 *
 * - the middleware stack is resolved once per command class, as the SDK does with its own
 *   `cacheMiddleware` (which the document client refuses, since its commands resolve a stack of their
 *   own for every request), and again whenever the stack changes;
 * - a document command is sent as the low-level command it wraps, with its items marshalled and
 *   unmarshalled by one step of the client's own stack, at the place the document client's steps take
 *   (just before serializing, just after parsing), so every other step sees what it saw before.
 *
 * A command sent with options or a callback (none are in this code) goes the SDK's own way.
 */
export class TableDocumentClient extends DynamoDBDocumentClient {
  readonly #handlers = new Map<unknown, Handler<object, object>>();

  constructor(base: DynamoDBClient) {
    super(base, { marshallOptions: TABLE_MARSHALL_OPTIONS });
    const stack = this.middlewareStack;
    stack.addRelativeTo(
      (next: SerializeHandler<object, MetadataBearer>) => async (args: SerializeHandlerArguments<object>) => {
        const parts = documentInputs.get(args.input);
        if (parts === undefined) return next(args);
        // Once: the same input object sent later as a low-level command is not a document command's.
        documentInputs.delete(args.input);
        const input = marshallDocumentInput(args.input, parts.inputKeyNodes);
        documentOutputs.set(input, parts);
        return next({ ...args, input });
      },
      { name: 'vendorDocumentMarshall', relation: 'before', toMiddleware: 'serializerMiddleware' },
    );
    stack.addRelativeTo(
      (next: DeserializeHandler<object, MetadataBearer>) => async (args: DeserializeHandlerArguments<object>) => {
        const result = await next(args);
        const parts = documentOutputs.get(args.input);
        if (parts !== undefined && result.output !== undefined) {
          documentOutputs.delete(args.input);
          result.output = unmarshallDocumentOutput(result.output, parts.outputKeyNodes);
        }
        return result;
      },
      { name: 'vendorDocumentUnmarshall', relation: 'before', toMiddleware: 'deserializerMiddleware' },
    );
    for (const change of STACK_CHANGES) {
      const original = stack[change].bind(stack) as (...args: unknown[]) => unknown;
      (stack as unknown as Record<string, unknown>)[change] = (...args: unknown[]) => {
        this.#handlers.clear();
        return original(...args);
      };
    }
    const sdkSend = this.send.bind(this) as (...args: unknown[]) => unknown;
    this.send = ((command: unknown, ...rest: unknown[]) =>
      rest.length === 0 || (rest.length === 1 && rest[0] === undefined)
        ? this.#send(command as SendableCommand)
        : sdkSend(command, ...rest)) as DynamoDBDocumentClient['send'];
  }

  async #send(command: SendableCommand): Promise<unknown> {
    let sent = command;
    if (command instanceof DynamoDBDocumentClientCommand) {
      const parts = command as unknown as DocumentCommandParts;
      sent = parts.clientCommand;
      documentInputs.set(sent.input, parts);
    }
    const type = sent.constructor;
    let handler = this.#handlers.get(type);
    if (handler === undefined) {
      handler = sent.resolveMiddleware(this.middlewareStack as MiddlewareStack<object, object>, this.config, undefined);
      this.#handlers.set(type, handler);
    }
    return (await handler(sent)).output;
  }

  override destroy(): void {
    this.#handlers.clear();
    super.destroy();
  }
}
