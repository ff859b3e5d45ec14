import type { Exchange } from "./http-client.ts";

/** Notices a target that answers nothing but 5xx or pages that are not JSON: a gateway with the service down. */
export function createHealth() {
  let answers = 0;
  let healthy = 0;
  return {
    see(exchange: Exchange) {
      const response = exchange.response;
      if (!response) return;
      answers++;
      const json = /json/i.test(response.headers["content-type"] ?? "");
      if (response.status < 500 && (response.body.length === 0 || json)) healthy++;
    },
    verdict(): string | undefined {
      return answers > 0 && healthy === 0
        ? `the target looks down: all ${answers} answers were 5xx or not JSON (a gateway's error page?), so the failures below say more about what stands in front of the service than about the service`
        : undefined;
    },
  };
}
