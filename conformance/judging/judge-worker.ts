import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { builtInContract } from "../../contract/built-in.ts";
import { ListJudge, type ReaderLimits } from "./list-judge.ts";
import { collectGarbage, MemoryBudget } from "./memory-budget.ts";
import { givePagesBack } from "./resizable-buffer.ts";
import { type SentVerdict, sendableVerdict } from "./verdict-transfer.ts";

// The proxy's list judges, on a thread of their own: the lists' bytes come in as messages, each answered
// with how far its list is judged, and a list's end with its verdict. The judge gives way to the forwarding
// (list-feed.ts, judgeNow): a list's bytes wait here, held in the proxy's account, until the list ends or
// the proxy asks for them to be judged now. A lower priority alone did not keep the judging off the
// forwarding's back (the judge took the cores' idle moments and slowed the forwarding all the same); the
// thread still runs a little below the proxy's own.

/** A list being judged, and its bytes that wait for its end or for the proxy to say "now". */
interface ListInWork {
  judge: ListJudge;
  waiting: Uint8Array[];
}

/** What the proxy starts the thread with. */
export interface JudgeWorkerData {
  readerLimits?: ReaderLimits;
  keepRecordsUpTo: number;
  /**
   * What the judges here may hold at once (the thread's share of the proxy's account, `judgesShare`): the
   * values being read and what is kept until a verdict are taken from it, one account for all the lists.
   */
  room?: number;
}

/**
 * From the proxy: bytes of list `id` (`now`: judge them and all that waits at once), its end (with why it
 * ends early, for a list judged in part), or its drop.
 */
export type ToJudge =
  | { id: number; chunk: Uint8Array; now: boolean }
  | { id: number; end: true; partial?: string }
  | { id: number; drop: true };

/** To the proxy: how far list `id` is judged, its verdict, or the judge's own fault on it. */
export type FromJudge =
  | { id: number; judged: number; indexedOrders: number; indexBytes: number }
  | { id: number; verdict: SentVerdict }
  | { id: number; fault: string; stack?: string };

// A little below the forwarding (nice 5): on a busy machine the forwarding comes first, and the judge still
// gets about a quarter of what a process at the usual priority gets. At nice 10 a list reached its client
// no faster that could be measured, and its verdict came three times later on a loaded machine (3.2 s
// against 1.1 s for a 2.6 MB list beside four busy processes), past many a stop's grace.
const BELOW_NORMAL = 5;

// An id index that grows leaves its arrays of before to the collector, which V8 runs for such memory only
// once it comes to 64 MB: past this size, the thread runs it at once, so that what an index takes is its
// arrays as they stand, which the proxy charges to its account.
const GROWN_OUT_COLLECTED_BYTES = 256 * 1024;

function serve(port: NonNullable<typeof parentPort>, data: JudgeWorkerData): void {
  const contract = builtInContract();
  const options = {
    validateOrder: contract.schema("Order"),
    orderPlan: contract.flatPlan("Order"),
    keepRecordsUpTo: data.keepRecordsUpTo,
    ...data.readerLimits,
    ...(data.room === undefined ? {} : { memory: new MemoryBudget(data.room) }),
  };
  const lists = new Map<number, ListInWork>();
  const send = (message: FromJudge, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  const judgeWaiting = (id: number, list: ListInWork) => {
    for (const chunk of list.waiting.splice(0)) {
      const judged = chunk.length;
      const before = list.judge.indexBytes;
      try {
        list.judge.write(chunk);
      } finally {
        // The judge keeps copies of what it needs: the block's pages go back now, not at a collection.
        givePagesBack(chunk);
      }
      const { indexedOrders, indexBytes } = list.judge;
      if (indexBytes > before && before >= GROWN_OUT_COLLECTED_BYTES) collectGarbage(true);
      send({ id, judged, indexedOrders, indexBytes });
    }
  };
  const forget = (id: number) => {
    const list = lists.get(id);
    list?.judge.drop();
    for (const chunk of list?.waiting.splice(0) ?? []) givePagesBack(chunk);
    lists.delete(id);
  };
  port.on("message", (message: ToJudge) => {
    const { id } = message;
    if ("drop" in message) {
      forget(id);
      return;
    }
    let list = lists.get(id);
    if (!list) {
      list = { judge: new ListJudge(options), waiting: [] };
      lists.set(id, list);
    }
    try {
      if ("chunk" in message) {
        list.waiting.push(message.chunk);
        if (message.now) judgeWaiting(id, list);
        return;
      }
      judgeWaiting(id, list);
      lists.delete(id);
      const { judge } = list;
      const { sent, transfer } = sendableVerdict(
        message.partial === undefined ? judge.end() : judge.endPartial(message.partial),
      );
      send({ id, verdict: sent }, transfer);
    } catch (error) {
      forget(id);
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
