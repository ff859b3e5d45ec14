import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

/**
 * A fixture of N orders for load and scale runs: deterministic, two thirds pending and one third shipped,
 * every 100th id above 2^53 so large worlds exercise exact int64 handling too.
 */
export function generateFixture(count: number, apiKey = "bench-key"): string {
  const orders: string[] = [];
  const day = 24 * 60 * 60 * 1000;
  const start = Date.UTC(2026, 0, 1);
  for (let index = 1; index <= count; index++) {
    const id = index % 100 === 0 ? 2n ** 53n + BigInt(index) : BigInt(index);
    const shipped = index % 3 === 0;
    const shipDate = new Date(start + (index % 365) * day).toISOString();
    orders.push(
      `{"id":${id},"petId":${1000 + (index % 5000)},"quantity":${1 + (index % 4)},"shipDate":"${shipDate}","complete":${shipped},"status":"${shipped ? "shipped" : "pending"}"}`,
    );
  }
  return `{"apiKeys":[${JSON.stringify(apiKey)}],"orders":[\n${orders.join(",\n")}\n]}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { orders: { type: "string" }, out: { type: "string" }, "api-key": { type: "string" } },
  });
  const count = Number(values.orders);
  if (!Number.isInteger(count) || count < 0 || !values.out) {
    process.stderr.write("usage: tsx scripts/generate-fixture.ts --orders N --out FILE [--api-key KEY]\n");
    process.exit(2);
  }
  writeFileSync(values.out, generateFixture(count, values["api-key"]));
  process.stdout.write(`wrote ${count} orders to ${values.out}\n`);
}
