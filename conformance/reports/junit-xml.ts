import fastXmlBuilder, { type XMLBuilderConstructor } from "fast-xml-builder";

// Attributes and text are escaped by the builder (& < > ' "); a value "true" stays an attribute with a
// value, since XML has no bare attributes.
// Its ES build's default export is the class; its CommonJS build (the one this library's own CommonJS
// build requires) is an object whose `default` is, and Node's interop hands over that object.
const XMLBuilder: XMLBuilderConstructor =
  typeof fastXmlBuilder === "function"
    ? fastXmlBuilder
    : (fastXmlBuilder as unknown as { default: XMLBuilderConstructor }).default;

const builder = new XMLBuilder({
  ignoreAttributes: false,
  format: true,
  suppressBooleanAttributes: false,
  suppressEmptyNode: true,
  processEntities: true,
});

export type Element = { [name: string]: string | number | Element | Element[] };

/** A JUnit XML document, its declaration first: what the suite's and explore's reports write. */
export function junitXml(document: Element): string {
  return builder.build({ "?xml": { "@_version": "1.0", "@_encoding": "UTF-8" }, ...document });
}
