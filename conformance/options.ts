import type { ParseArgsConfig } from "node:util";
import { parseFlags, UsageError } from "../common/command-line.ts";
import type { ConformanceOptions } from "./runner.ts";

export const REPORTERS = ["pretty", "json", "junit"] as const;
export type ReporterName = (typeof REPORTERS)[number];

export interface CliOptions {
  run: ConformanceOptions;
  reporter: ReporterName;
  output?: string;
  help: boolean;
}

export const USAGE = `Usage: npm run conformance -- --base-url URL --api-key KEY [options]
       petstore-conformance --base-url URL --api-key KEY [options]

Replays the Petstore Store Orders scenarios against a /v1 deployment and checks every response against
openapi.yaml. Nothing is cancelled unless --pending-order-id names an order the run may cancel.

Options:
  --base-url URL            base address, ending in /v1            (PETSTORE_BASE_URL)
  --api-key KEY             a valid API key                        (PETSTORE_API_KEY)
  --pending-order-id ID     a pending order the run may cancel (else that scenario is skipped)
  --shipped-order-id ID     an order that has shipped (else the 409 scenario is skipped)
  --missing-order-id ID     an id no order has (default: one absent from the list)
  --reporter NAME           pretty (default), json or junit
  --output FILE             write the report there; the pretty report still goes to stdout
  --timeout MS              per request, default 10000
  --session NAME            send X-Mock-Session: NAME on every request: against the project's mock,
                            a run in a new session starts from fresh fixtures
  --help                    show this help

Exit codes: 0 every check passed (skips allowed), 1 a check failed, 2 bad usage or target unreachable.
`;

const FLAGS = {
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "pending-order-id": { type: "string" },
  "shipped-order-id": { type: "string" },
  "missing-order-id": { type: "string" },
  reporter: { type: "string" },
  output: { type: "string" },
  timeout: { type: "string" },
  session: { type: "string" },
  help: { type: "boolean", short: "h" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

export function parseCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  const values = parseFlags(argv, FLAGS);
  if (values.help) return { run: { baseUrl: "", apiKey: "" }, reporter: "pretty", help: true };
  const baseUrl = values["base-url"] ?? (env.PETSTORE_BASE_URL || undefined);
  const apiKey = values["api-key"] ?? (env.PETSTORE_API_KEY || undefined);
  if (!baseUrl) throw new UsageError("--base-url (or PETSTORE_BASE_URL) is required");
  if (!apiKey) throw new UsageError("--api-key (or PETSTORE_API_KEY) is required");
  const reporter = values.reporter ?? "pretty";
  if (!REPORTERS.includes(reporter as ReporterName)) {
    throw new UsageError(`--reporter must be one of ${REPORTERS.join(", ")} (got "${reporter}")`);
  }
  const timeoutText = values.timeout ?? "10000";
  const timeoutMs = Number(timeoutText);
  if (!/^\d+$/.test(timeoutText) || timeoutMs < 1)
    throw new UsageError(`--timeout must be a positive number of milliseconds (got "${timeoutText}")`);
  return {
    run: {
      baseUrl,
      apiKey,
      timeoutMs,
      ...(values["pending-order-id"] ? { pendingOrderId: values["pending-order-id"] } : {}),
      ...(values["shipped-order-id"] ? { shippedOrderId: values["shipped-order-id"] } : {}),
      ...(values["missing-order-id"] ? { missingOrderId: values["missing-order-id"] } : {}),
      ...(values.session !== undefined ? { session: values.session } : {}),
    },
    reporter: reporter as ReporterName,
    ...(values.output ? { output: values.output } : {}),
    help: false,
  };
}
