import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { builtInContract } from "../../contract/built-in.ts";
import { ListJudge, type ReaderLimits } from "../list-judge.ts";
import { type SentVerdict, sendableVerdict } from "./verdict-transfer.ts";

// The proxy's list judges, on a thread of their own: the lists' bytes come in as messages, each answered
// with how far its list is judged, and a list's end with its verdict. The thread runs at a lower priority
// than the proxy's own, so that on a busy machine the forwarding comes first (the judge falling behind, as
// the account allows, rather than slowing a client).

/** What the proxy starts the thread with. */
export interface JudgeWorkerData {
  readerLimits?: ReaderLimits;
  keepRecordsUpTo: number;
}

/** From the proxy: bytes of list `id`, its end (with why it ends early, for a list judged in part), or its drop. */
export type ToJudge =
  | { id: number; chunk: Uint8Array }
  | { id: number; end: true; partial?: string }
  | { id: number; drop: true };

/** To the proxy: how far list `id` is judged, its verdict, or the judge's own fault on it. */
export type FromJudge =
  | { id: number; judged: number; indexedOrders: number }
  | { id: number; verdict: SentVerdict }
  | { id: number; fault: string; stack?: string };

// A little below the forwarding (nice 5): on a busy machine the forwarding comes first, and the judge still
// gets about a quarter of what a process at the usual priority gets. At nice 10 a list reached its client
// no faster that could be measured, and its verdict came three times later on a loaded machine (3.2 s
// against 1.1 s for a 2.6 MB list beside four busy processes), past many a stop's grace.
const BELOW_NORMAL = 5;

function serve(port: NonNullable<typeof parentPort>, data: JudgeWorkerData): void {
  const contract = builtInContract();
  const options = {
    validateOrder: contract.schema("Order"),
    orderPlan: contract.flatPlan("Order"),
    keepRecordsUpTo: data.keepRecordsUpTo,
    ...data.readerLimits,
  };
  const judges = new Map<number, ListJudge>();
  const send = (message: FromJudge, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  port.on("message", (message: ToJudge) => {
    const { id } = message;
    if ("drop" in message) {
      judges.delete(id);
      return;
    }
    const judge = judges.get(id) ?? new ListJudge(options);
    judges.set(id, judge);
    try {
      if ("chunk" in message) {
        judge.write(message.chunk);
        send({ id, judged: message.chunk.length, indexedOrders: judge.indexedOrders });
        return;
      }
      judges.delete(id);
      const { sent, transfer } = sendableVerdict(
        message.partial === undefined ? judge.end() : judge.endPartial(message.partial),
      );
      send({ id, verdict: sent }, transfer);
    } catch (error) {
      judges.delete(id);
      send({ id, fault: String((error as Error)?.message ?? error), stack: (error as Error)?.stack });
    }
  });
}

if (parentPort) {
  try {
    setPriority(BELOW_NORMAL);
  } catch {
    // Where threads have no priority of their own to lower, the judge runs at the proxy's.
  }
  serve(parentPort, workerData as JudgeWorkerData);
}
