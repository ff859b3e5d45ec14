/**
 * The settings of a run or a proxy that its messages name, by key. The library never writes a flag: each
 * message names a setting through the table it is given, so the suite's command says `--base-url`, the
 * proxy's `--upstream` and a program calling `runConformance` says `baseUrl`, for one and the same problem.
 */
export type Setting =
  | "target"
  | "apiKey"
  | "session"
  | "pendingOrderId"
  | "shippedOrderId"
  | "missingOrderId"
  | "raceOrderId"
  | "only"
  | "skip"
  | "scenarioList"
  | "caFile"
  | "certAndKey"
  | "insecure"
  | "proxy"
  | "hooks"
  | "headers"
  | "deadline"
  | "maxBody"
  | "maxDepth"
  | "maxString"
  | "maxNumber"
  | "maxMemory"
  | "concurrency"
  | "maxRetryWait"
  | "errors"
  | "allowedHosts"
  | "corsOrigins"
  | "flushEvery"
  | "notOrders"
  | "port";

export type SettingNames = Readonly<Record<Setting, string>>;

/** How `runConformance` names its settings: its options. */
export const RUN_OPTION_NAMES: SettingNames = {
  target: "baseUrl",
  apiKey: "apiKey",
  session: "session",
  pendingOrderId: "pendingOrderId",
  shippedOrderId: "shippedOrderId",
  missingOrderId: "missingOrderId",
  raceOrderId: "raceOrderId",
  only: "only",
  skip: "skip",
  scenarioList: "SCENARIOS",
  caFile: "tls.ca",
  certAndKey: "tls.cert and tls.key",
  insecure: "tls.insecure",
  proxy: "proxy",
  hooks: "hooks",
  headers: "headers",
  deadline: "deadlineMs",
  maxBody: "maxBodyBytes",
  maxDepth: "readerLimits.maxDepth",
  maxString: "readerLimits.maxStringBytes",
  maxNumber: "readerLimits.maxNumberChars",
  maxMemory: "maxMemoryBytes",
  concurrency: "concurrency",
  maxRetryWait: "maxRetryWaitMs",
  errors: "errors",
  allowedHosts: "allowedHosts",
  corsOrigins: "corsOrigins",
  flushEvery: "flushEveryMs",
  notOrders: "notOrders",
  port: "port",
};

/** How `runProxy` names them: its options, where they differ from a run's. */
export const PROXY_OPTION_NAMES: SettingNames = {
  ...RUN_OPTION_NAMES,
  target: "upstream",
  maxMemory: "maxHeldBytes",
};
