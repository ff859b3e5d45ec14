import { readFileSync } from "node:fs";
import { parseExact, stringifyExact } from "../../contract/exact-json.ts";
import { BUNDLED_FIXTURES } from "../options.ts";
import { writeFixture } from "./support.ts";

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The bundled fixtures without the orders whose ids pass 2^53. Prism checks int64 values against
 * Number.MAX_SAFE_INTEGER (a limit of its own, not of the contract), so its runs use this world; a separate
 * test pins down exactly what Prism says about the bundled one.
 */
export function safeIdFixture(): string {
  const fixture = parseExact(readFileSync(BUNDLED_FIXTURES, "utf8")) as {
    orders: Array<Record<string, unknown>>;
  };
  fixture.orders = fixture.orders.filter((order) =>
    [order.id, order.petId].every((value) => value === undefined || BigInt(String(value)) <= SAFE),
  );
  return writeFixture(stringifyExact(fixture));
}
