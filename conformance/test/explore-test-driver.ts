import type { ValidateFunction } from "ajv";
import { builtInContract } from "../../contract/built-in.ts";
import { type Driver, InFlight, pacing } from "../explore/driver.ts";
import { WatchedLists } from "../explore/watched-list.ts";
import type { HttpClient } from "../target/http-client.ts";

/** Explore's driver as a run makes it, on a client of the test's own, unpaced. */
export function testDriver(client: HttpClient, apiKey: string): Driver {
  const contract = builtInContract();
  return {
    client,
    apiKey,
    lists: new WatchedLists({
      validateOrder: contract.schema("Order") as ValidateFunction,
      orderPlan: contract.flatPlan("Order"),
    }),
    pace: pacing(undefined),
    unjudged: { cancelAnswers: new Map() },
    inFlight: new InFlight(),
  };
}
