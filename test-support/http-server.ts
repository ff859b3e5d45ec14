import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Answer = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * `body` run against a server on a loopback port answering with `answer`, given its base address (ending
 * in /v1); the server is closed after, its connections cut, whatever `body` did.
 */
export async function withHttpServer<T>(answer: Answer, body: (url: string) => Promise<T>): Promise<T> {
  const server = createServer(answer);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    return await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
