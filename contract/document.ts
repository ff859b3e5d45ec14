/** The parts of an OpenAPI document the contracts read, as plain data. */
export interface OpenApiDocument {
  info: { version: string };
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, SchemaObject>; responses: Record<string, ResponseObject> };
}
export interface SchemaObject {
  properties?: Record<string, SchemaObject>;
  required?: string[];
  [keyword: string]: unknown;
}
export interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}
export interface ResponseObject {
  description: string;
  content?: Record<string, { schema: SchemaObject }>;
  /**
   * A body the response may carry or leave out, checked when it is present. OpenAPI 3.0 reads `content`
   * as required, and the spec leaves some bodies open (the 409's), so those are declared here.
   */
  "x-optional-content"?: Record<string, { schema: SchemaObject }>;
}
