import type { Report } from "../reports/report.ts";
import { distinctName, secretHider } from "./secret-hider.ts";

/**
 * Secrets (the key, masked header values) never appear in a report, whatever a server echoes back, in any
 * of the forms it may echo them in.
 * Requests are masked when recorded; this covers what came back: messages and response excerpts.
 */
export function redactSecrets<Shown extends Pick<Report, "scenarios">>(
  report: Shown,
  secrets: readonly string[],
): Shown {
  const hide = secretHider(secrets);
  for (const scenario of report.scenarios) {
    for (const check of scenario.checks) {
      check.message = hide(check.message);
      if (check.response) {
        check.response.body = hide(check.response.body);
        // Names too: a server may echo a secret as a header's name.
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(check.response.headers))
          headers[distinctName(headers, hide(name))] = hide(value);
        check.response.headers = headers;
      }
    }
  }
  return report;
}
