/** `vendorctl operations ...`: submitting deployment operations and following them (docs/api.md#operations, docs/operations.md). */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { toIssues } from '../../shared/accounts/validate.ts';
import { accountOperationPageSchema, operationViewSchema, type OperationView } from '../../shared/answers/operations.ts';
import { isFinished } from '../../shared/operations/model.ts';
import { MAX_REPLICAS, MAX_TIMEOUT_SECONDS, operationBodySchema, PROPAGATION_POLICIES } from '../../shared/operations/request.ts';
import { flagValue, integerFlag, type OptionName } from '../args.ts';
import { expectShape } from '../client.ts';
import type { Command, CommandContext } from '../context.ts';
import { EXIT, usageError } from '../errors.ts';
import { cell, render, renderTable } from '../output.ts';
import { queryOf } from '../query.ts';
import { parseTarget } from '../targets.ts';

/** The longest `?wait` the API holds an answer (docs/api.md#operations). */
const MAX_SERVER_WAIT_SECONDS = 60;

function operationText(op: OperationView): string {
  const summary = renderTable({
    columns: ['ID', 'ACCOUNT', 'ACTION', 'STATE', 'OBJECTS', 'ERROR', 'MESSAGE'],
    rows: [[op.id, op.account, op.action, op.state, cell(op.objects), cell(op.errorCode), cell(op.message)]],
  });
  if (op.outcomes.length === 0) return summary;
  return `${summary}\n${renderTable({
    columns: ['KIND', 'NAMESPACE', 'NAME', 'RESULT', 'CODE', 'MESSAGE'],
    rows: op.outcomes.map((o) => [cell(o.kind), cell(o.namespace), cell(o.name), cell(o.result), cell(o.code), cell(o.message)]),
  })}`;
}

/** `--wait` (no limit) or `--wait=SECONDS`; undefined when not given. */
function waitSeconds(ctx: CommandContext): number | undefined {
  const wait = ctx.flags.wait;
  if (wait === undefined) return undefined;
  return wait === '' ? Infinity : integerFlag(wait, 'wait', 1, MAX_TIMEOUT_SECONDS);
}

/**
 * Follows the operation with the API's own `?wait` until it finishes or `seconds` have passed,
 * then prints it. Exit 0 when it succeeded (or was not waited for and has not failed), 1 otherwise.
 */
async function follow(ctx: CommandContext, first: unknown, seconds: number | undefined, asked = seconds): Promise<number> {
  let answer = first;
  let op = expectShape(operationViewSchema, answer, 'the operation');
  if (seconds !== undefined) {
    const deadline = ctx.clock.now() + seconds * 1000;
    while (!isFinished(op.state) && ctx.clock.now() < deadline) {
      const wait = Math.max(1, Math.min(MAX_SERVER_WAIT_SECONDS, Math.ceil((deadline - ctx.clock.now()) / 1000)));
      answer = (await ctx.api.call('GET', `/vendor/operations/${encodeURIComponent(op.id)}?wait=${wait}`)).body;
      op = expectShape(operationViewSchema, answer, 'the operation');
    }
  }
  ctx.out(render(ctx.format, answer, () => operationText(op)));
  if (isFinished(op.state)) {
    if (op.state === 'SUCCEEDED') return EXIT.done;
    ctx.err(`operation ${op.id} ended ${op.state}${op.errorCode === undefined ? '' : ` (${op.errorCode})`}${op.message === undefined ? '' : `: ${op.message}`}\n`);
    return EXIT.operationFailed;
  }
  if (seconds === undefined) return EXIT.done;
  ctx.err(`operation ${op.id} had not finished after ${asked} s (${op.state})\n`);
  return EXIT.operationFailed;
}

/** Checks the body as the API will, stores it under an idempotency key, and follows it when asked to. */
async function submit(ctx: CommandContext, account: string, body: Record<string, unknown>): Promise<number> {
  const timeout = ctx.flags.timeout === undefined ? undefined : integerFlag(ctx.flags.timeout, 'timeout', 1, MAX_TIMEOUT_SECONDS);
  const request = { ...body, ...(timeout === undefined ? {} : { timeoutSeconds: timeout }) };
  const parsed = v.safeParse(operationBodySchema, request, { abortEarly: false });
  if (!parsed.success) throw usageError('the operation is not valid', toIssues(parsed.issues));
  const key = ctx.flags['idempotency-key'] ?? randomUUID();
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw usageError('--idempotency-key must be 1 to 255 visible ASCII characters');
  const seconds = waitSeconds(ctx);
  const query = seconds === undefined ? '' : `?wait=${Math.min(MAX_SERVER_WAIT_SECONDS, Number.isFinite(seconds) ? seconds : MAX_SERVER_WAIT_SECONDS)}`;
  const started = ctx.clock.now();
  const { body: answer } = await ctx.api.call('POST', `/vendor/accounts/${encodeURIComponent(account)}/operations${query}`, {
    body: request,
    headers: { 'idempotency-key': key },
  });
  const left = seconds === undefined ? undefined : Math.max(0, seconds - (ctx.clock.now() - started) / 1000);
  return follow(ctx, answer, left === undefined || left === Infinity ? left : Math.ceil(left), seconds);
}

function targets(ctx: CommandContext): ReturnType<typeof parseTarget>[] {
  return ctx.args.slice(1).map((t) => parseTarget(t, { apiVersion: ctx.flags['api-version'], namespace: ctx.flags.namespace }));
}

const SUBMIT_OPTIONS: readonly (readonly [OptionName, string])[] = [
  ['idempotency-key', 'the same key sends the same operation once however often it is repeated (default: a new random key)'],
  ['wait', '--wait waits until the operation finishes; --wait=SECONDS at most that long'],
  ['timeout', 'seconds the agent may take (default: the driver\'s operations.timeoutMs)'],
];
const TARGET_OPTIONS: readonly (readonly [OptionName, string])[] = [
  ['namespace', 'the namespace of every target'],
  ['api-version', 'the apiVersion of the targets\' kind, for kinds not known here (custom resources)'],
];

const deploy: Command = {
  words: ['operations', 'deploy'],
  args: '<account> -f <manifests.yaml>',
  summary: 'apply manifests (server-side apply)',
  options: [
    ['file', 'YAML (one or more --- documents) or JSON manifests; - reads standard input'],
    ['namespace', 'apply every namespaced manifest in this namespace'],
    ['force-conflicts', 'take over fields another field manager owns'],
    ...SUBMIT_OPTIONS,
  ],
  arity: [1, 1],
  async run(ctx) {
    const file = ctx.flags.file;
    if (file === undefined) throw usageError('operations deploy needs -f <manifests file>');
    return submit(ctx, ctx.args[0]!, {
      action: 'deploy',
      // Sent as written: the API reads YAML and JSON alike and names a bad document by its line.
      manifests: await ctx.readInput(file),
      ...(ctx.flags.namespace === undefined ? {} : { namespace: ctx.flags.namespace }),
      ...(ctx.flags['force-conflicts'] ? { forceConflicts: true } : {}),
    });
  },
};

const remove: Command = {
  words: ['operations', 'delete'],
  args: '<account> <KIND/NAME>...',
  summary: 'delete objects',
  options: [
    ...TARGET_OPTIONS,
    ['propagation-policy', `one of ${PROPAGATION_POLICIES.join(', ')}`],
    ...SUBMIT_OPTIONS,
  ],
  arity: [2, 101],
  async run(ctx) {
    const policy = ctx.flags['propagation-policy'];
    return submit(ctx, ctx.args[0]!, {
      action: 'delete',
      targets: targets(ctx),
      ...(policy === undefined ? {} : { propagationPolicy: flagValue(v.picklist(PROPAGATION_POLICIES, `must be one of ${PROPAGATION_POLICIES.join(', ')}`), policy, 'propagation-policy') }),
    });
  },
};

const scale: Command = {
  words: ['operations', 'scale'],
  args: '<account> <KIND/NAME>... --replicas <n>',
  summary: 'set the replicas of Deployments, StatefulSets, ReplicaSets',
  options: [['replicas', `0 to ${MAX_REPLICAS}`], ...TARGET_OPTIONS, ...SUBMIT_OPTIONS],
  arity: [2, 101],
  async run(ctx) {
    if (ctx.flags.replicas === undefined) throw usageError('operations scale needs --replicas <n>');
    return submit(ctx, ctx.args[0]!, { action: 'scale', targets: targets(ctx), replicas: integerFlag(ctx.flags.replicas, 'replicas', 0, MAX_REPLICAS) });
  },
};

const restart: Command = {
  words: ['operations', 'restart'],
  args: '<account> <KIND/NAME>...',
  summary: 'restart the rollout of Deployments, StatefulSets, DaemonSets',
  options: [...TARGET_OPTIONS, ...SUBMIT_OPTIONS],
  arity: [2, 101],
  async run(ctx) {
    return submit(ctx, ctx.args[0]!, { action: 'rolloutRestart', targets: targets(ctx) });
  },
};

const undo: Command = {
  words: ['operations', 'undo'],
  args: '<account> <KIND/NAME>',
  summary: 'roll a Deployment back to its previous revision, or to --to-revision',
  options: [['to-revision', 'the revision to go back to (default: the one before the current one)'], ...TARGET_OPTIONS, ...SUBMIT_OPTIONS],
  arity: [2, 2],
  async run(ctx) {
    const revision = ctx.flags['to-revision'];
    const [target] = targets(ctx);
    return submit(ctx, ctx.args[0]!, {
      action: 'rolloutUndo',
      target,
      ...(revision === undefined ? {} : { toRevision: integerFlag(revision, 'to-revision', 0, Number.MAX_SAFE_INTEGER) }),
    });
  },
};

const get: Command = {
  words: ['operations', 'get'],
  args: '<id>',
  summary: 'show an operation; exit 1 when it ended FAILED or TIMED_OUT',
  options: [['wait', '--wait waits until it finishes; --wait=SECONDS at most that long']],
  arity: [1, 1],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', `/vendor/operations/${encodeURIComponent(ctx.args[0]!)}`);
    return follow(ctx, body, waitSeconds(ctx));
  },
};

/** The largest page of an account's operations the API serves (docs/api.md#an-accounts-operations). */
const OPERATION_PAGE_SIZE = 200;

const list: Command = {
  words: ['operations', 'list'],
  args: '<account>',
  summary: "list an account's operations, newest first, every page",
  options: [['state', 'only operations in these states: QUEUED, RUNNING, SUCCEEDED, FAILED, TIMED_OUT, separated by commas']],
  arity: [1, 1],
  async run(ctx) {
    const items: unknown[] = [];
    const operations: OperationView[] = [];
    for (let after: string | undefined; ; ) {
      const query = queryOf(ctx.flags, { state: 'state' }, { limit: String(OPERATION_PAGE_SIZE), ...(after === undefined ? {} : { after }) });
      const { body } = await ctx.api.call('GET', `/vendor/accounts/${encodeURIComponent(ctx.args[0]!)}/operations${query}`);
      const got = expectShape(accountOperationPageSchema, body, "the account's operations");
      items.push(...(body as { items: unknown[] }).items);
      operations.push(...got.items);
      if (got.next === undefined) break;
      after = got.next;
    }
    ctx.out(
      render(ctx.format, items, () =>
        renderTable({
          columns: ['ID', 'ACTION', 'STATE', 'OBJECTS', 'CREATED', 'ERROR', 'MESSAGE'],
          rows: operations.map((op) => [op.id, op.action, op.state, cell(op.objects), cell(op.createdAt), cell(op.errorCode), cell(op.message)]),
        }),
      ),
    );
    return 0;
  },
};

export const OPERATION_COMMANDS: readonly Command[] = [deploy, remove, scale, restart, undo, get, list];
