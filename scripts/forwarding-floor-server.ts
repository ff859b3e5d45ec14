import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";

/**
 * The floor for the validating proxy: a bare node:http reverse proxy that streams each request to the
 * upstream and the answer back over keep-alive connections, judging nothing and logging nothing. What
 * forwarding alone costs, for the proxy's CPU per request to be measured against.
 */
const { values } = parseArgs({ options: { upstream: { type: "string" } } });
const upstream = new URL(values.upstream ?? "http://127.0.0.1:4010/v1");
const base = upstream.pathname.replace(/\/+$/, "");
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((request, response) => {
  const url = request.url ?? "/";
  const outgoing = http.request(
    {
      agent,
      hostname: upstream.hostname,
      port: upstream.port,
      method: request.method,
      path: url.startsWith("/v1") ? `${base}${url.slice(3)}` : url,
      headers: { ...request.headers, host: upstream.host },
    },
    (incoming) => {
      response.writeHead(incoming.statusCode ?? 502, incoming.headers);
      incoming.pipe(response);
    },
  );
  outgoing.on("error", () => response.writeHead(502).end());
  request.pipe(outgoing);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
