/** Orders of the bundled fixtures (fixtures/orders.json) that the suite's runs against the mock use. */
export const MOCK_KEY = "dev-key-123";
/** 2^53 + 1: a double would round it to 2^53, which is no order. */
export const MOCK_PENDING_ID = "9007199254740993";
/** Another pending order of the bundled fixtures, for the race scenario. */
export const MOCK_RACE_ID = "3";
/** The largest int64. */
export const MOCK_SHIPPED_ID = "9223372036854775807";
