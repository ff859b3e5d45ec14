import type { ValidateFunction } from "ajv";
import type { OpenApiDocument } from "./document.ts";
import { type FlatRecordPlan, flatRecordPlan } from "./flat-record.ts";

// What every runtime (Node, a browser, a Service Worker) shares about a contract, with no ajv and no file
// access: validators come either compiled ahead of time (built-in.ts) or from ajv at run time (compile.ts).

export const DOCUMENT_ID = "openapi.yaml";
export const CONTROL_DOCUMENT_ID = "control.openapi.yaml";

export type { OpenApiDocument, OperationObject, ResponseObject, SchemaObject } from "./document.ts";

export interface Contract {
  document: OpenApiDocument;
  /** The validator of the schema at a JSON pointer into the document. */
  validator(pointer: string): ValidateFunction;
  /** Validator of `#/components/schemas/<name>`. */
  schema(name: string): ValidateFunction;
  /** The verdict on flat records of `#/components/schemas/<name>` from their bytes, when it is that simple. */
  flatPlan(name: string): FlatRecordPlan | undefined;
}

export interface NamedDocument {
  /** The id other documents' `$ref`s use for it: its file name. */
  id: string;
  document: unknown;
}

/** A contract over a document, its validators found by `${id}#pointer`, each looked up once. */
export function contractOf(
  { id, document }: NamedDocument,
  lookup: (reference: string) => ValidateFunction | undefined,
): Contract {
  const found = new Map<string, ValidateFunction>();
  const validator = (pointer: string): ValidateFunction => {
    let validate = found.get(pointer);
    if (!validate) {
      validate = lookup(`${id}${pointer}`);
      if (!validate) throw new Error(`${id} has no schema at ${pointer}`);
      found.set(pointer, validate);
    }
    return validate;
  };
  const plans = new Map<string, FlatRecordPlan | undefined>();
  return {
    document: document as OpenApiDocument,
    validator,
    schema: (name) => validator(`#/components/schemas/${escapePointer(name)}`),
    flatPlan(name) {
      if (!plans.has(name))
        plans.set(name, flatRecordPlan((document as OpenApiDocument).components?.schemas?.[name]));
      return plans.get(name);
    },
  };
}

export function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * Every pointer a contract's users ask a validator for: each named schema, and each media type's schema
 * of a response or request body. The ahead-of-time build compiles exactly these.
 */
/** Where a response or request declares a body: `content`, or `x-optional-content` for a body it may leave out. */
export const BODY_FIELDS = ["content", "x-optional-content"] as const;

export function schemaPointers(document: unknown): string[] {
  const { paths = {}, components = {} } = document as {
    paths?: Record<string, Record<string, unknown>>;
    components?: { schemas?: object; responses?: Record<string, unknown> };
  };
  const pointers = Object.keys(components.schemas ?? {}).map(
    (name) => `#/components/schemas/${escapePointer(name)}`,
  );
  const addContent = (holder: unknown, at: string) => {
    for (const field of BODY_FIELDS) {
      const content = (holder as Record<string, Record<string, unknown> | undefined> | undefined)?.[field];
      for (const mediaType of Object.keys(content ?? {})) {
        pointers.push(`${at}/${field}/${escapePointer(mediaType)}/schema`);
      }
    }
  };
  for (const [name, response] of Object.entries(components.responses ?? {})) {
    addContent(response, `#/components/responses/${escapePointer(name)}`);
  }
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `#/paths/${escapePointer(path)}/${method}`;
      const { requestBody, responses = {} } = operation as {
        requestBody?: unknown;
        responses?: Record<string, unknown>;
      };
      addContent(requestBody, `${at}/requestBody`);
      for (const [status, response] of Object.entries(responses)) {
        addContent(response, `${at}/responses/${escapePointer(status)}`);
      }
    }
  }
  return pointers;
}
