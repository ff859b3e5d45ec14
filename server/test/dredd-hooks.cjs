// Dredd hooks: Dredd knows nothing of keys or of which orders are pending, shipped or missing, so each
// transaction gets the bearer key and the order its expected response needs. Values come from the test.
const hooks = require("hooks");

const { DREDD_API_KEY, DREDD_PENDING_ID, DREDD_SHIPPED_ID, DREDD_MISSING_ID, DREDD_JSON_CONTENT_TYPE } =
  process.env;
const CANCEL = "/store/orders/{orderId} > Cancel an order";

function useOrder(transaction, id) {
  transaction.fullPath = transaction.fullPath.replace(/\/[^/]+$/, `/${id}`);
  transaction.request.uri = transaction.request.uri.replace(/\/[^/]+$/, `/${id}`);
}

// Dredd compares Content-Type as an exact string, so `application/json` in the document would refuse any
// parameter; the target's documented JSON type (the mock's is `application/json; charset=utf-8`) is checked.

hooks.beforeEach((transaction) => {
  transaction.request.headers.Authorization = `Bearer ${DREDD_API_KEY}`;
  if (DREDD_JSON_CONTENT_TYPE && transaction.expected.headers["Content-Type"] === "application/json") {
    transaction.expected.headers["Content-Type"] = DREDD_JSON_CONTENT_TYPE;
  }
});

hooks.before("/store/orders > List orders > 401 > application/json", (transaction) => {
  delete transaction.request.headers.Authorization;
});
hooks.before(`${CANCEL} > 401 > application/json`, (transaction) => {
  transaction.request.headers.Authorization = "Bearer not-a-valid-key";
  useOrder(transaction, DREDD_PENDING_ID);
});
hooks.before(`${CANCEL} > 204`, (transaction) => useOrder(transaction, DREDD_PENDING_ID));
hooks.before(`${CANCEL} > 404 > application/json`, (transaction) => useOrder(transaction, DREDD_MISSING_ID));
hooks.before(`${CANCEL} > 409`, (transaction) => useOrder(transaction, DREDD_SHIPPED_ID));
