import { once } from "node:events";
import { createServer } from "node:net";

/** A port that was free a moment ago (tools that cannot take port 0 need one up front). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}
