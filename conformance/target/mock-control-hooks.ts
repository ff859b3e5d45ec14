import { randomBytes } from "node:crypto";
import { type ControlClient, createControlClient } from "../../contract/control-client.ts";
import { INT64_MAX } from "../../contract/exact-json.ts";
import {
  CONTROL_TRANSPORT,
  type HookContext,
  type ProvidedIds,
  type ProvisionedOrders,
  type ProvisionRequest,
} from "./hook-types.ts";

/**
 * Provisioning for runs against this project's mock: fresh pending orders (one to cancel, one for the race)
 * and a fresh shipped order, created through the control API in the run's session (`--session`, or without
 * one a fresh session of the hook's own, which the run then uses), and an id no order has. With it,
 * every scenario runs, and run after run starts clean without restarting the mock.
 *
 *   petstore-conformance --base-url http://127.0.0.1:4010/v1 --api-key dev-key-123 \
 *     --hooks mock-control --session "ci-$RUN_ID"
 *
 * A mock started with --control-token needs PETSTORE_CONTROL_TOKEN in the environment.
 */
export async function beforeRun(context: HookContext): Promise<ProvidedIds> {
  // Without --session, a fresh session of its own: the mock's default world is left as it was found.
  const session = context.session ?? `conformance-${randomBytes(8).toString("hex")}`;
  const inSession = { ...context, session };
  const control = controlOf(inSession);
  const [pending, shipped, missing, race] = await freeIds(control, 4, worldOf(inSession));
  const shipDate = new Date().toISOString();
  for (const id of [pending, race]) {
    await control.putOrder({
      id: id as string,
      petId: 1,
      quantity: 1,
      shipDate,
      complete: false,
      status: "pending",
    });
  }
  await control.putOrder({
    id: shipped as string,
    petId: 1,
    quantity: 1,
    shipDate,
    complete: true,
    status: "shipped",
  });
  return {
    pendingOrderId: pending as string,
    shippedOrderId: shipped as string,
    missingOrderId: missing as string,
    raceOrderId: race as string,
    missing: [missing as string],
    ...(context.session === undefined ? { session } : {}),
  };
}

/**
 * Fresh orders for explore, as many as it asks for, created in the run's session below the ids handed out
 * so far: explore cancels each pending order in one history only. One control request makes them all (an
 * id some order has already is skipped, and the next one below tried).
 */
export async function provision(context: HookContext, wanted: ProvisionRequest): Promise<ProvisionedOrders> {
  const control = controlOf(context);
  const world = worldOf(context);
  const shipDate = new Date().toISOString();
  const order = (id: string, status: "pending" | "shipped") =>
    ({ id, petId: 1, quantity: 1, shipDate, complete: status === "shipped", status }) as const;
  const made = { pending: [] as string[], shipped: [] as string[] };
  // Ids taken already are skipped by the mock, and lower ones tried; a control API that creates none of
  // the orders asked for, time after time, is not this project's mock, and asking again would never end.
  for (let barren = 0; ; ) {
    const pending = nextIds(world, wanted.pending - made.pending.length);
    const shipped = nextIds(world, wanted.shipped - made.shipped.length);
    if (pending.length + shipped.length === 0) return made;
    const { created } = await control.batch({
      create: [...pending.map((id) => order(id, "pending")), ...shipped.map((id) => order(id, "shipped"))],
    });
    const createdIds = new Set(created);
    made.pending.push(...pending.filter((id) => createdIds.has(id)));
    made.shipped.push(...shipped.filter((id) => createdIds.has(id)));
    barren = createdIds.size === 0 ? barren + 1 : 0;
    if (barren === BARREN_BATCHES)
      throw new Error(
        `the control API created none of the orders asked for, ${BARREN_BATCHES} times in a row: is ${context.baseUrl} this project's mock, with its control API?`,
      );
  }
}

const BARREN_BATCHES = 3;

/** Orders explore is done with, removed from the run's session so that its list stays as short as at the start. */
export async function release(context: HookContext, orderIds: readonly string[]): Promise<void> {
  await controlOf(context).batch({ remove: orderIds });
}

function worldOf(context: HookContext): string {
  return `${context.baseUrl} ${context.session ?? ""}`;
}

function controlOf(context: HookContext): ControlClient {
  const transport = context[CONTROL_TRANSPORT];
  const kept = clients.get(context);
  if (
    kept !== undefined &&
    kept.baseUrl === context.baseUrl &&
    kept.session === context.session &&
    kept.fetch === context.fetch &&
    kept.transport === transport
  )
    return kept.client;
  // Read when the client is made: a run's environment does not change under it.
  const token = process.env.PETSTORE_CONTROL_TOKEN;
  const access = {
    ...(context.session !== undefined ? { session: context.session } : {}),
    ...(token ? { token } : {}),
  };
  const client = createControlClient(context.baseUrl, {
    ...access,
    fetch: context.fetch,
    ...(transport !== undefined ? { transport } : {}),
  });
  clients.set(context, {
    baseUrl: context.baseUrl,
    session: context.session,
    fetch: context.fetch,
    transport,
    client,
  });
  return client;
}

// A run's many provision and release calls share one client per context, made again if what it was made
// for changed.
const clients = new WeakMap<
  HookContext,
  Pick<HookContext, "baseUrl" | "session" | "fetch"> & { transport: unknown; client: ControlClient }
>();

/**
 * Ids no order has, counting down from the top of int64 (fixtures rarely reach it; the bundled one does),
 * each asked of the control API by itself, a round of them at once: a world may hold millions of orders,
 * and reading them all to find a few free ids would cost the mock and the run as much as the world is large.
 */
async function freeIds(control: ControlClient, count: number, world: string): Promise<string[]> {
  const free: string[] = [];
  let next = lowestHandedOut.get(world) ?? INT64_MAX;
  while (free.length < count) {
    const round = Array.from(
      { length: Math.min(count - free.length, MAX_LOOKUPS_AT_ONCE) },
      (_, at) => next - BigInt(at),
    );
    next -= BigInt(round.length);
    const taken = await Promise.all(round.map((id) => control.order(id)));
    round.forEach((id, at) => {
      if (taken[at] === undefined && free.length < count) free.push(id.toString());
    });
  }
  lowestHandedOut.set(world, next);
  return free;
}

const MAX_LOOKUPS_AT_ONCE = 64;

/** The next `count` ids below those handed out in this world, handed out now whether free or not. */
function nextIds(world: string, count: number): string[] {
  const next = lowestHandedOut.get(world) ?? INT64_MAX;
  lowestHandedOut.set(world, next - BigInt(count));
  return Array.from({ length: count }, (_, at) => (next - BigInt(at)).toString());
}

// Where the next search for free ids starts, per mock and session: an id handed out once is not handed
// out again while it is still free (an order explore was told is missing, a provisioned order not yet made).
const lowestHandedOut = new Map<string, bigint>();
