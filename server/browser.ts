export { petstoreHandlers } from "./adapters/msw.ts";
export type { PetstoreMock, PetstoreMockOptions } from "./core/petstore-mock.ts";
// Browsers, Service Workers and Storybook get the very same function: the contracts it uses are built in, with
// validators compiled ahead of time, so it reads no file and generates no code at run time.
export { createPetstoreMock } from "./in-process.ts";
