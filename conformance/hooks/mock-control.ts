import { INT64_MAX } from "../../contract/exact-json.ts";
import { Int64Index } from "../../contract/int64-index.ts";
import { JsonStream } from "../../contract/json-stream.ts";
import { controlHeaders, controlRoot, createControlClient } from "../../server/control-client.ts";
import type { HookContext, ProvidedIds } from "../hooks.ts";
import { idHalves } from "../order-index.ts";

/**
 * Provisioning for runs against this project's mock: fresh pending orders (one to cancel, one for the race)
 * and a fresh shipped order, created through the control API in the run's session (`--session`), and an id
 * no order has. With it,
 * every scenario runs, and run after run starts clean without restarting the mock.
 *
 *   petstore-conformance --base-url http://127.0.0.1:4010/v1 --api-key dev-key-123 \
 *     --hooks mock-control --session "ci-$RUN_ID"
 *
 * A mock started with --control-token needs PETSTORE_CONTROL_TOKEN in the environment.
 */
export async function beforeRun(context: HookContext): Promise<ProvidedIds> {
  const token = process.env.PETSTORE_CONTROL_TOKEN;
  const access = {
    ...(context.session !== undefined ? { session: context.session } : {}),
    ...(token ? { token } : {}),
  };
  const control = createControlClient(context.baseUrl, { ...access, fetch: context.fetch });
  const taken = await takenIds(context, access, () => control.orders());
  const [pending, shipped, missing, race] = freeIds(taken, 4);
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
  };
}

/**
 * The ids of the world's orders, read from the control API's list as it streams in and kept compactly: a
 * world may hold millions of orders, and only their ids matter here. A refusal is left to the control
 * client (`refused`), which words it as every other control call does.
 */
async function takenIds(
  context: HookContext,
  access: { session?: string; token?: string },
  refused: () => Promise<unknown>,
): Promise<Int64Index> {
  const response = await context.fetch(`${controlRoot(context.baseUrl)}/orders`, {
    headers: controlHeaders(access),
  });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    await refused();
    throw new Error(`the control API answered ${response.status} to its order list`);
  }
  const ids = new Int64Index();
  const stream = new JsonStream({
    onElement: (order) => {
      const halves = idHalves((order as { id?: unknown } | null)?.id);
      if (halves) ids.add(halves.hi, halves.lo);
    },
  });
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) stream.write(chunk);
  stream.end();
  return ids;
}

/** Ids no order has, counting down from the top of int64 (fixtures rarely reach it; the bundled one does). */
function freeIds(taken: Int64Index, count: number): string[] {
  const free: string[] = [];
  for (let id = INT64_MAX; free.length < count; id--) {
    if (taken.placeOfText(id.toString()) === -1) free.push(id.toString());
  }
  return free;
}
