import type { Exchange } from "../judging/exchange.ts";

/** Notices a target that answers nothing but 5xx or pages that are not JSON: a gateway with the service down. */
export function createHealth() {
  let answers = 0;
  let healthy = 0;
  const answer = (status: number, contentType: string, empty: boolean) => {
    answers++;
    if (status < 500 && (empty || /json/i.test(contentType))) healthy++;
  };
  return {
    answer,
    see(exchange: Exchange) {
      const response = exchange.response;
      if (response)
        answer(response.status, response.headers["content-type"] ?? "", response.body.length === 0);
    },
    verdict(): string | undefined {
      return answers > 0 && healthy === 0
        ? `the target looks down: all ${answers} answers were 5xx or not JSON (a gateway's error page?), so the failures below say more about what stands in front of the service than about the service`
        : undefined;
    },
  };
}
