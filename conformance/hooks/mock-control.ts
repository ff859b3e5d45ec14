import { randomBytes } from "node:crypto";
import { type ControlClient, createControlClient } from "../../contract/control-client.ts";
import { INT64_MAX } from "../../contract/exact-json.ts";
import type { HookContext, ProvidedIds } from "../hook-types.ts";

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
  const token = process.env.PETSTORE_CONTROL_TOKEN;
  // Without --session, a fresh session of its own: the mock's default world is left as it was found.
  const session = context.session ?? `conformance-${randomBytes(8).toString("hex")}`;
  const access = { session, ...(token ? { token } : {}) };
  const control = createControlClient(context.baseUrl, { ...access, fetch: context.fetch });
  const [pending, shipped, missing, race] = await freeIds(control, 4);
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
    ...(context.session === undefined ? { session } : {}),
  };
}

/**
 * Ids no order has, counting down from the top of int64 (fixtures rarely reach it; the bundled one does),
 * each asked of the control API by itself: a world may hold millions of orders, and reading them all to
 * find four free ids would cost the mock and the run as much as the world is large.
 */
async function freeIds(control: ControlClient, count: number): Promise<string[]> {
  const free: string[] = [];
  for (let id = INT64_MAX; free.length < count; id--) {
    if ((await control.order(id)) === undefined) free.push(id.toString());
  }
  return free;
}
