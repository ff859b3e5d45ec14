import { BASIC_PROBE_USER } from "./credentials.ts";

/**
 * Secrets replaced by `***` wherever a server echoes them, in one pass over a text whatever their number,
 * in any ASCII case (a token echoed in upper case still shows it): as given, JSON-escaped (`\/`, `\uXXXX`,
 * `\n`…), percent-encoded in either case (once or twice), as HTML references (`&#45;`, `&#x2d;`, `&#0095;`,
 * `&#95` with no `;`, `&amp;`, `&lowbar;`, any named one of an ASCII character), base64 and base64url with
 * or without padding, inside any base64 text at any offset (Basic credentials of any user: the part that depends on the secret alone), in hex, and (for a binary body read as Latin-1) as UTF-8 bytes;
 * in a text with a line break, its base64 in lines of 60 characters or more and its quoted-printable with
 * soft breaks; in a text with a NUL, as UTF-16 in either byte order (as given, JSON-escaped, in base64),
 * each in the same one pass as the others.
 *
 * Every form is one alternative of one regular expression, but a large alternation makes the regular
 * expression engine try each alternative at each place, so the text is scanned for the forms' anchors
 * first (each form's longest run of letters and digits, spelled the same in every encoding), in strides
 * (Wu–Manber), and the expression is tried only where an anchor is. A prefix of a secret is not the
 * secret: hiding every prefix would hide every text.
 */
export function secretHider(secrets: Iterable<string>): SecretHider {
  const each = [...new Set(secrets)].filter((secret) => secret !== "").map(formsOf);
  // Nothing to hide: no text is read at all.
  if (each.length === 0) return Object.assign((text: string) => text, { reach: 0 });
  const reach = Math.max(0, ...each.map((forms) => forms.reach));
  const usual = formsHider(spelledForms(each, "usual"));
  // Made when first needed, by the kinds of forms they hide besides the usual ones.
  const withOthers = new Map<string, (text: string) => string>();
  return Object.assign(
    (text: string) => {
      const kinds = otherKindsIn(text);
      if (kinds.length === 0) return usual(text);
      const key = kinds.join();
      let hide = withOthers.get(key);
      if (hide === undefined) {
        hide = formsHider(["usual" as const, ...kinds].flatMap((kind) => spelledForms(each, kind)));
        withOthers.set(key, hide);
      }
      return hide(text);
    },
    { reach },
  );
}

/**
 * The kinds of forms besides the usual ones a text may hold: only a text with a line break a form broken
 * into lines (a soft break `=` CRLF for quoted-printable), only one with a NUL a UTF-16 one. Most texts
 * hold neither, and are read once for the usual forms alone; the others join that one reading.
 */
function otherKindsIn(text: string): FormKind[] {
  const kinds: FormKind[] = [];
  if (text.includes("\n")) {
    kinds.push("base64 lines");
    if (text.includes("=\n") || text.includes("=\r\n")) kinds.push("quoted-printable");
  }
  if (text.includes("\0")) kinds.push("UTF-16");
  return kinds;
}

type FormKind = "usual" | "base64 lines" | "quoted-printable" | "UTF-16";

/** Hides the forms, in one scan for their anchors. */
function formsHider(unsorted: readonly SpelledForm[]): (text: string) => string {
  // Forms with no anchor first: the plain-text way hides only their usual spellings, and in one case.
  const forms = [...unsorted].sort(
    (a, b) =>
      Number(a.anchor.length >= 2) - Number(b.anchor.length >= 2) ||
      (a.pattern?.length ?? a.length) - (b.pattern?.length ?? b.length),
  );
  // Past this size an expression takes the engine long to compile, if it can at all (secrets of many
  // kilobytes, which only a hostile client sends): the largest forms have their usual spellings hidden
  // one after the other, the rest stay in the expression. The largest go first: a shorter form hidden
  // inside one would leave the rest of it shown.
  let size = 0;
  const counted = new Set<string>();
  const within: SpelledForm[] = [];
  const beyond: SpelledForm[] = [];
  for (const form of forms) {
    // A form found by several anchors is one pattern: counted once, and on the side of its first.
    const pattern = form.pattern;
    if (pattern !== undefined && !counted.has(pattern)) {
      size += pattern.length;
      if (size <= PATTERN_UP_TO) counted.add(pattern);
    }
    (pattern !== undefined && counted.has(pattern) ? within : beyond).push(form);
  }
  const hide = expressionHider(within);
  if (beyond.length === 0) return hide;
  const literal = literalHider(beyond);
  return (text: string) => hide(literal(text));
}

/**
 * Hides secrets in a text. `reach` is the most characters one hidden spelling spans: a text cut short may end
 * in the start of a secret, which no form matches, within its last `reach - 1` characters.
 */
export type SecretHider = ((text: string) => string) & { readonly reach: number };

/** Hides the forms through one expression, tried where the scan finds their anchors. */
function expressionHider(forms: readonly SpelledForm[]): (text: string) => string {
  if (forms.length === 0) return (text) => text;
  if (forms.some((form) => form.anchor.length < 2)) {
    // A form with no two letters or digits in a row has nothing to scan for: the expression alone.
    const everywhere = whenCompiled(() => new RegExp(alternation(forms), "gi"));
    return everywhere ? (text) => text.replace(everywhere, "***") : literalHider(forms);
  }
  const scan = anchorFinder(forms);
  // A longer form may start before a shorter one it holds, whose anchor comes first in the text: where a
  // form matched, a match is looked for as far back as any form may start, so the longer one is hidden
  // whole. Only when one form holds another's anchor: secrets apart from each other need no second look.
  const lowered = forms.map((form) => (form.pattern ?? "").toLowerCase());
  const nested = forms.some((inner) =>
    forms.some(
      (outer, at) => outer.length > inner.length && (lowered[at] ?? "").includes(inner.anchor.toLowerCase()),
    ),
  );
  const before = nested ? Math.max(...forms.map((form) => form.before)) : 0;
  // Made when first needed: most texts hold no anchor, and an exchange's hider may see no echo at all.
  let here: Alternatives | undefined;
  let literal: ((text: string) => string) | undefined;
  return (text) => {
    if (literal) return literal(text);
    scan.reset(text);
    const first = scan.next(text, 0);
    if (first === -1) return text;
    here ??= Alternatives.of(forms);
    if (here) return hideFound(text, scan, here, first, before);
    literal = literalHider(forms);
    return literal(text);
  };
}

/**
 * The forms as two expressions, the usual ones and the rest (UTF-16, broken into lines), each compiled
 * when first needed: an expression of forms broken into lines takes the engine tens of milliseconds to
 * compile, and most places where an anchor is found hold a usual form or none, which the first one says.
 */
class Alternatives {
  /** Where the last match ended. */
  end = 0;
  #rest: RegExp | undefined | null = null;
  /** Which of the two hold a form of each anchor, by its start (as long as the shortest anchor). */
  readonly #kinds = new Map<string, number>();
  readonly #keyLength: number;

  private constructor(
    private readonly usual: RegExp | undefined,
    private readonly restForms: readonly SpelledForm[],
    forms: readonly SpelledForm[],
  ) {
    this.#keyLength = Math.min(...forms.map((form) => form.anchor.length));
    for (const form of forms) {
      const key = form.anchor.slice(0, this.#keyLength).toLowerCase();
      this.#kinds.set(key, (this.#kinds.get(key) ?? 0) | (form.late ? REST : USUAL));
    }
  }

  /** Undefined when the usual forms' expression is too large for the engine. */
  static of(forms: readonly SpelledForm[]): Alternatives | undefined {
    const usualForms = forms.filter((form) => !form.late);
    const usual =
      usualForms.length === 0 ? undefined : whenCompiled(() => new RegExp(alternation(usualForms), "yi"));
    if (usualForms.length > 0 && usual === undefined) return undefined;
    return new Alternatives(
      usual,
      forms.filter((form) => form.late),
      forms,
    );
  }

  /**
   * Where a form first matches at one place from `from` to `to`, of those whose anchor starts at `anchor`
   * (the usual ones first); -1 if none.
   */
  startIn(text: string, from: number, to: number, anchor: number): number {
    const kinds = this.#kinds.get(text.slice(anchor, anchor + this.#keyLength).toLowerCase()) ?? USUAL | REST;
    const usual = this.usual !== undefined && kinds & USUAL ? matchStart(text, this.usual, from, to) : -1;
    if (usual !== -1) {
      this.end = this.usual?.lastIndex ?? usual;
      return usual;
    }
    if (this.restForms.length === 0 || (kinds & REST) === 0) return -1;
    if (this.#rest === null) this.#rest = whenCompiled(() => new RegExp(alternation(this.restForms), "yi"));
    const rest = this.#rest === undefined ? -1 : matchStart(text, this.#rest, from, to);
    if (rest !== -1) this.end = this.#rest?.lastIndex ?? rest;
    return rest;
  }
}

/** An anchor's forms among the usual ones, among the rest. */
const USUAL = 1;
const REST = 2;

/**
 * The most characters of patterns one expression holds: each character past ASCII letters and digits is
 * spelled a few dozen ways (escapes, percent-encodings, references), so a few secrets of such characters
 * fill it before any secret of many kilobytes does.
 */
const PATTERN_UP_TO = 24_576;

/** The expression, or undefined when it is too large for the engine (secrets of many kilobytes). */
function whenCompiled(make: () => RegExp): RegExp | undefined {
  try {
    const compiled = make();
    // The engine compiles on first use: a size past its bounds shows there.
    compiled.test("");
    return compiled;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/**
 * Hides each form's usual spellings as plain text: for secrets too large or too many for one expression,
 * which only a hostile client sends. The text is scanned once for the spellings' anchors, as for the
 * expression, and each spelling of an anchor found is compared there; a spelling with no two letters or
 * digits in a row has a pass of its own.
 */
function literalHider(forms: readonly SpelledForm[]): (text: string) => string {
  const spellings = [...new Set(forms.flatMap((form) => form.spellings()))].sort(
    (a, b) => b.length - a.length,
  );
  const anchored = spellings.filter((spelling) => longestRun(spelling).length >= 2);
  const unanchored = spellings.filter((spelling) => !anchored.includes(spelling));
  const hideAnchored = anchored.length === 0 ? (text: string) => text : spellingsAtAnchors(anchored);
  return (text) => unanchored.reduce(hiddenInAnyCase, hideAnchored(text));
}

/**
 * The text with every occurrence of `spelling` in any ASCII case hidden, as the expression hides it: by
 * plain search, as a spelling may be too large for an expression.
 */
function hiddenInAnyCase(text: string, spelling: string): string {
  const lowered = asciiLowerCase(text);
  const sought = asciiLowerCase(spelling);
  let at = lowered.indexOf(sought);
  if (at === -1) return text;
  let hidden = "";
  let copied = 0;
  for (; at !== -1; at = lowered.indexOf(sought, copied)) {
    hidden += `${text.slice(copied, at)}***`;
    copied = at + sought.length;
  }
  return hidden + text.slice(copied);
}

/** Lower case for ASCII letters only: every other character, and so every index, stays as it was. */
function asciiLowerCase(text: string): string {
  return /[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()) : text;
}

/** Hides the spellings (longest first, each with two letters or digits in a row) where their anchors are. */
function spellingsAtAnchors(spellings: readonly string[]): (text: string) => string {
  const anchors = spellings.map((spelling) => longestRun(spelling));
  const length = Math.min(MAX_ANCHOR, ...anchors.map((anchor) => anchor.length));
  // Each anchor's start, with the spellings holding it and where in them it starts, longest first.
  const candidates = new Map<string, Array<[string, number]>>();
  spellings.forEach((spelling, index) => {
    const anchor = anchors[index] ?? "";
    const key = anchor.slice(0, length).toLowerCase();
    const list = candidates.get(key) ?? [];
    list.push([spelling.toLowerCase(), spelling.indexOf(anchor)]);
    candidates.set(key, list);
  });
  const scan = new AnchorScan(
    [...candidates].map(([key, list]): [string, number] => [key, Math.max(...list.map(([, at]) => at))]),
    length,
  );
  return (text) => {
    let hidden = "";
    let copied = 0;
    for (let at = scan.next(text, 0); at !== -1; ) {
      const found = (candidates.get(text.slice(at, at + length).toLowerCase()) ?? []).find(
        ([spelling, offset]) =>
          at - offset >= copied &&
          text.slice(at - offset, at - offset + spelling.length).toLowerCase() === spelling,
      );
      if (found === undefined) {
        at = scan.next(text, at + 1);
        continue;
      }
      const [spelling, offset] = found;
      hidden += `${text.slice(copied, at - offset)}***`;
      copied = at - offset + spelling.length;
      at = scan.next(text, copied);
    }
    return copied === 0 ? text : hidden + text.slice(copied);
  };
}

/** Every form as one alternative, longest first: where two start at one place, the longer one (holding the other) wins. */
function alternation(forms: readonly SpelledForm[]): string {
  const patterns = [...forms].sort((a, b) => b.length - a.length).map((form) => form.pattern ?? "");
  return [...new Set(patterns)].join("|");
}

/** The text with every secret hidden (see secretHider); for one text, or a few. */
export function hideSecrets(text: string, secrets: Iterable<string>): string {
  return secretHider(secrets)(text);
}

/** Anchors longer than this are scanned for by their start: longer strides cost more to set up than they save. */
const MAX_ANCHOR = 32;

interface SpelledForm {
  /** Looked for only where no usual form is (UTF-16, broken into lines). */
  late?: true;
  /** The length of the form as given. */
  length: number;
  /** Every spelling of the form, as a regular expression; undefined when too long to be one. */
  pattern: string | undefined;
  /** A run of letters and digits in the form, the same in every spelling. */
  anchor: string;
  /** How many characters of text at most come before the anchor in a spelling of the form. */
  before: number;
  /** How many characters at most a spelling of the form spans. */
  reach: number;
  /** The usual spellings as plain text: as given, JSON-escaped, percent-encoded in each case. */
  spellings: () => string[];
}

/** Every form of one kind of the secrets, each once. */
function spelledForms(secrets: readonly SecretForms[], kind: FormKind): SpelledForm[] {
  const forms = new Map<string, SpelledForm>();
  for (const secret of secrets) for (const [form, spelled] of secret.ofKind(kind)) forms.set(form, spelled);
  return [...forms.values()];
}

/**
 * A secret's forms by kind, each by its canonical text (none for an empty secret), made when first asked
 * for; and the most characters any of them spans, known at once.
 */
interface SecretForms {
  ofKind(kind: FormKind): ReadonlyArray<[string, SpelledForm]>;
  reach: number;
}

/** Forms spelled lately, by secret: an exchange's hider is made of the configured ones and its own. */
const spelledLately = new Map<string, SecretForms>();
const SPELLED_KEPT = 256;

function formsOf(secret: string): SecretForms {
  const kept = spelledLately.get(secret);
  if (kept) return kept;
  const made = new Map<FormKind, ReadonlyArray<[string, SpelledForm]>>();
  const usual = secret === "" ? [] : usualForms(secret);
  made.set("usual", usual);
  const forms: SecretForms = {
    ofKind: (kind) => {
      let ofKind = made.get(kind);
      if (ofKind === undefined) {
        ofKind = secret === "" ? [] : otherForms(secret, kind);
        made.set(kind, ofKind);
      }
      return ofKind;
    },
    reach: Math.max(0, ...usual.map(([, form]) => form.reach), secret === "" ? 0 : otherReach(secret)),
  };
  if (spelledLately.size >= SPELLED_KEPT) spelledLately.delete(spelledLately.keys().next().value ?? "");
  spelledLately.set(secret, forms);
  return forms;
}

/** The forms every text is searched for. */
function usualForms(secret: string): Array<[string, SpelledForm]> {
  // Keyed in lower case: forms told apart only by case are one form to a hider blind to case.
  const forms = new Map<string, SpelledForm>();
  const add = (form: string, padding: string) => {
    const key = form.toLowerCase();
    if (!forms.has(key)) forms.set(key, spelledForm(form, padding));
  };
  for (const form of literalForms(secret)) add(form, "");
  for (const [body, padding] of base64Forms(secret)) add(body, padding);
  for (const middle of base64Middles(secret)) add(middle, "");
  for (const hex of hexForms(secret)) add(hex, "");
  return [...forms];
}

/** The forms only a text with a line break or a NUL may hold, keyed apart from the usual ones. */
function otherForms(secret: string, kind: FormKind): Array<[string, SpelledForm]> {
  const forms: Array<[string, SpelledForm]> = [];
  const add = (text: string, made: readonly SpelledForm[]) => {
    for (const [at, form] of made.entries()) forms.push([`\u0000${kind} ${at} ${text}`.toLowerCase(), form]);
  };
  if (kind === "UTF-16") for (const wide of wideForms(secret)) add(wide, [literalForm(wide)]);
  if (kind === "base64 lines")
    for (const wrapped of wrappedBase64(secret)) add(wrapped, brokenForms(wrapped, BASE64_LINES));
  if (kind === "quoted-printable") add(secret, brokenForms(secret, QUOTED_PRINTABLE));
  return forms;
}

/**
 * The most characters the forms of otherForms span, reckoned without making them: a UTF-16 form takes
 * two characters a code unit, a form broken into lines its breaks besides.
 */
function otherReach(secret: string): number {
  const json = JSON.stringify(secret).slice(1, -1).replaceAll("/", "\\/");
  const bytes = Buffer.byteLength(secret);
  const basic = Math.ceil(((Buffer.byteLength(BASIC_PROBE_USER) + 1 + bytes) * 4) / 3);
  const characters = [...secret];
  let quoted = QUOTED_PRINTABLE.length * Math.ceil(characters.length / QUOTED_PRINTABLE.width);
  for (const character of characters) quoted += QUOTED_PRINTABLE.spelledLength(character);
  return Math.max(
    2 * Math.max(json.length, Math.ceil((bytes * 4) / 3)),
    basic + BASE64_LINES.length * Math.ceil(basic / BASE64_LINES.width) + BASE64_LINES.tailLength,
    quoted,
  );
}

/** The secret as given, and as a binary body read as Latin-1 shows its UTF-8 bytes. */
function literalForms(secret: string): string[] {
  const latin1 = Buffer.from(secret).toString("latin1");
  return latin1 === secret ? [secret] : [secret, latin1];
}

/** Each base64 spelling as [body, padding]: the padding may be left out, as base64url usually does. */
function base64Forms(secret: string): Array<[string, string]> {
  const forms: Array<[string, string]> = [];
  for (const bytes of [Buffer.from(secret), Buffer.from(`${BASIC_PROBE_USER}:${secret}`)]) {
    const padded = bytes.toString("base64");
    const body = padded.replace(/=+$/, "");
    const padding = padded.slice(body.length);
    // Shorter than this, a form would hide ordinary words of a text.
    if (body.length < 4) continue;
    forms.push([body, padding]);
    const url = bytes.toString("base64url");
    if (url !== body) forms.push([url, padding]);
  }
  return forms;
}

/** Base64 parts shorter than this are not hidden: they would hide ordinary words of a text. */
const BASE64_MIDDLE_FROM = 8;
/** Characters of base64 that depend on the bytes before the secret, by how many of them end a group of three. */
const BASE64_LEADING = [0, 2, 3];

/**
 * The secret inside any base64 or base64url text, at each of the three places it may start in a group of
 * three bytes: the characters that depend on its bytes alone (`Basic` credentials of any user, a token in
 * an encoded blob).
 */
function base64Middles(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const middles: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const middle = encoded.slice(BASE64_LEADING[offset], Math.floor(((offset + bytes.length) * 4) / 3));
    if (middle.length < BASE64_MIDDLE_FROM) continue;
    middles.push(middle);
    const url = middle.replaceAll("+", "-").replaceAll("/", "_");
    if (url !== middle) middles.push(url);
  }
  return middles;
}

/** Secrets shorter than this have no hex form: theirs (digits only, often) would hide ids of the same digits. */
const HEX_FROM = 8;

/** The secret's UTF-8 bytes in hex, each case: a form some servers log a token in. */
function hexForms(secret: string): string[] {
  if (secret.length < HEX_FROM) return [];
  const hex = Buffer.from(secret).toString("hex");
  return /[a-f]/.test(hex) ? [hex, hex.toUpperCase()] : [hex];
}

/**
 * The secret as a body in UTF-16 holds it, little- or big-endian, read as Latin-1 (a binary body) or as
 * UTF-8 (a text one): as given, JSON-escaped and in base64. Each code unit is two bytes; the NUL that
 * begins or ends the run in one byte order is left out, so an ASCII secret has one form for both.
 */
function wideForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const base64 = Buffer.from(secret).toString("base64").replace(/=+$/, "");
  const forms = new Set<string>();
  for (const text of new Set([secret, json, json.replaceAll("/", "\\/"), base64])) {
    const little = Buffer.from(text, "utf16le");
    const big = Buffer.from(little).swap16();
    for (const bytes of [little, big])
      for (const reading of [bytes.toString("latin1"), bytes.toString("utf8")])
        forms.add(reading.replace(/^\0|\0$/g, ""));
  }
  forms.delete("");
  return [...forms];
}

/** A form matched only as it is (in any ASCII case). */
function literalForm(text: string): SpelledForm {
  const anchor = longestRun(text);
  return {
    late: true,
    length: text.length,
    pattern: text.length > PATTERN_UP_TO ? undefined : escapeRegExp(text),
    anchor,
    before: text.indexOf(anchor),
    reach: text.length,
    spellings: () => [text],
  };
}

/** The secret's base64 forms that are wrapped in lines (MIME, PEM): the whole secret, Basic, inside a text. */
function wrappedBase64(secret: string): string[] {
  const whole = [Buffer.from(secret), Buffer.from(`${BASIC_PROBE_USER}:${secret}`)].map((bytes) =>
    bytes.toString("base64").replace(/=+$/, ""),
  );
  const middles = base64Middles(secret).filter((middle) => !/[-_]/.test(middle));
  return [...new Set([...whole, ...middles])].filter((form) => form.length >= BASE64_MIDDLE_FROM);
}

/** How a form is broken into lines: what a break is, how far apart two are at least, how characters are spelled. */
interface LineBreaks {
  /** A break, as a pattern, and its length. */
  pattern: string;
  length: number;
  /** The fewest characters of the form from one break to the next. */
  width: number;
  /** A character of the form as a pattern, and the most characters that takes. */
  spell(character: string): string;
  spelledLength(character: string): number;
  /** The longest run of a region spelled only one way. */
  anchorOf(region: string): string;
  /** What may follow the form (its padding), as a pattern, and its length at most. */
  tail: string;
  tailLength: number;
}

/** MIME's 76 and PEM's 64 columns, CRLF or LF: lines of 60 characters or more. */
const BASE64_LINES: LineBreaks = {
  pattern: "\\r?\\n?",
  length: 2,
  width: 60,
  spell: escapeRegExp,
  spelledLength: () => 1,
  // Every character of base64 in lines is written as itself: the whole region is the anchor.
  anchorOf: (region) => region,
  tail: "(?:\\r?\\n?=){0,2}",
  tailLength: 6,
};

/**
 * Quoted-printable: a soft break `=` CRLF (or LF) between any two characters; printable ASCII as itself
 * but `=`, as `=3D`; any other character as itself or `=XX` per UTF-8 byte. A line holds 75 characters,
 * so two breaks are at least 24 characters of the secret apart when every one of them is encoded (ASCII).
 */
const QUOTED_PRINTABLE: LineBreaks = {
  pattern: "(?:=\\r?\\n)?",
  length: 3,
  width: 24,
  spell: (character) => {
    if (QUOTED_AS_ITSELF.test(character)) return escapeRegExp(character);
    const bytes = [...Buffer.from(character)].map((byte) => `=${byte.toString(16).padStart(2, "0")}`);
    return character === "=" ? bytes.join("") : `(?:${escapeRegExp(character)}|${bytes.join("")})`;
  },
  spelledLength: (character) =>
    QUOTED_AS_ITSELF.test(character) ? 1 : Math.max(character.length, 3 * Buffer.byteLength(character)),
  anchorOf: (region) => longestMatch(region, /[!-<>-~]+/g),
  tail: "",
  tailLength: 0,
};

/** The characters quoted-printable writes only as themselves: printable ASCII but `=` (and the space). */
const QUOTED_AS_ITSELF = /^[!-<>-~]$/;

/**
 * A form with a line break allowed between any two of its characters, as one pattern found by several
 * anchors: the form is cut into one region more than the breaks it may hold, so one region at least holds
 * no break and its anchor is found whole. A region with no two characters in a row spelled only one way
 * has no anchor.
 */
function brokenForms(text: string, breaks: LineBreaks): SpelledForm[] {
  const characters = [...text];
  if (characters.length < BROKEN_FROM) return [];
  let reach = 0;
  for (const character of characters) reach += breaks.spelledLength(character);
  // Spelled when the pass is first made: most texts never need it.
  let pattern: string | undefined;
  let spelled = false;
  const spelledOnce = () => {
    if (!spelled) pattern = brokenPattern(characters, breaks);
    spelled = true;
    return pattern;
  };
  const most = Math.ceil((characters.length - 1) / breaks.width);
  const size = Math.ceil(characters.length / (most + 1));
  const forms: SpelledForm[] = [];
  for (let start = 0; start < characters.length; start += size) {
    const region = characters.slice(start, start + size).join("");
    const anchor = breaks.anchorOf(region);
    if (anchor.length < 2) continue;
    // Characters of the form ahead of the anchor, each of which may be spelled long, and breaks among them.
    const ahead = start + [...region.slice(0, region.indexOf(anchor))].length;
    let before = breaks.length * Math.ceil(ahead / breaks.width);
    for (const character of characters.slice(0, ahead)) before += breaks.spelledLength(character);
    forms.push({
      late: true,
      length: text.length,
      get pattern() {
        return spelledOnce();
      },
      anchor,
      before,
      reach: reach + breaks.length * most + breaks.tailLength,
      spellings: () => [],
    });
  }
  return forms;
}

/** A form's characters with a break allowed between any two; undefined when too long for the expression. */
function brokenPattern(characters: readonly string[], breaks: LineBreaks): string | undefined {
  let pattern = "";
  for (const [at, character] of characters.entries()) {
    pattern += (at === 0 ? "" : breaks.pattern) + breaks.spell(character);
    if (pattern.length > PATTERN_UP_TO) return undefined;
  }
  return pattern + breaks.tail;
}

/** Forms shorter than this have no broken spelling: theirs would hide ordinary words cut by a line's end. */
const BROKEN_FROM = 8;

/**
 * A form in every spelling a JSON or URL encoder may give it, character by character: a letter or digit as
 * itself; any other character also JSON-escaped (`\/`, `\n`, `\u00e9`, either case) or percent-encoded as
 * UTF-8 (either case), a space also as `+`. An optional padding follows, spelled the same way.
 */
function spelledForm(form: string, padding: string): SpelledForm {
  const anchor = longestAlphanumericRun(form);
  const anchorAt = form.indexOf(anchor);
  let before = 0;
  for (const character of form.slice(0, anchorAt)) before += spellingLength(character);
  let reach = 0;
  for (const character of form + padding) reach += spellingLength(character);
  const spellings = () => usualSpellings(form, padding);
  // Spelled no further than the expression may grow: past it, only the usual spellings are hidden.
  const body = spelled(form, PATTERN_UP_TO);
  const pattern = body === undefined ? undefined : body + (padding === "" ? "" : `(?:${spelled(padding)})?`);
  return { length: form.length, pattern, anchor, before, reach, spellings };
}

function usualSpellings(form: string, padding: string): string[] {
  const json = JSON.stringify(form).slice(1, -1);
  const spellings = [form + padding, form, json, json.replaceAll("/", "\\/")];
  try {
    const percent = encodeURIComponent(form);
    spellings.push(
      percent,
      percent.replace(/%[0-9A-F]{2}/g, (triplet) => triplet.toLowerCase()),
    );
  } catch {
    // A lone surrogate has no percent-encoding.
  }
  return [...new Set(spellings)].filter((spelling) => spelling !== "");
}

function spelled(text: string, upTo = Number.POSITIVE_INFINITY): string | undefined {
  let pattern = "";
  for (const character of text) {
    pattern += spelledCharacter(character);
    if (pattern.length > upTo) return undefined;
  }
  return pattern;
}

/** Characters spelled so far: secrets are made of few distinct ones. */
const characterSpellings = new Map<string, string>();

function spelledCharacter(character: string): string {
  let spelling = characterSpellings.get(character);
  if (spelling === undefined) {
    spelling = ALPHANUMERIC.test(character)
      ? character
      : `(?:${[escapeRegExp(character), ...jsonEscapes(character), ...percentEncoded(character), htmlReference(character)].join("|")})`;
    // Bounded: past it, a rare character is spelled again each time.
    if (characterSpellings.size < 4096) characterSpellings.set(character, spelling);
  }
  return spelling;
}

const ALPHANUMERIC = /^[A-Za-z0-9]$/;

function longestAlphanumericRun(form: string): string {
  return longestMatch(form, /[A-Za-z0-9]+/g);
}

/**
 * The longest run of letters and digits in a text matched as it is, where a NUL may stand between two
 * of them: a UTF-16 spelling's letters are each one byte apart.
 */
function longestRun(text: string): string {
  return longestMatch(text, /[A-Za-z0-9](?:\0?[A-Za-z0-9])*/g);
}

function longestMatch(text: string, runs: RegExp): string {
  let longest = "";
  for (const run of text.match(runs) ?? []) if (run.length > longest.length) longest = run;
  return longest;
}

/** The most characters one character of a form takes in any of its spellings: a letter or digit is itself. */
function spellingLength(character: string): number {
  return ALPHANUMERIC.test(character) ? 1 : longestSpelling(character);
}

function longestSpelling(character: string): number {
  return Math.max(6 * character.length, 5 * Buffer.byteLength(character), LONGEST_REFERENCE);
}

/**
 * `&#x`, LEADING_ZEROS zeros, six hex digits and `;` (as long as `&DiacriticalGrave;`): the longest HTML
 * reference htmlReference spells.
 */
const LONGEST_REFERENCE = 18;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\\\"',
  "\\": "\\\\\\\\",
  "/": "\\\\/",
  "\b": "\\\\b",
  "\f": "\\\\f",
  "\n": "\\\\n",
  "\r": "\\\\r",
  "\t": "\\\\t",
};

/** Patterns of a character's JSON escapes: a short one where JSON has one, and `\uXXXX` (a pair, astral). */
function jsonEscapes(character: string): string[] {
  let unicode = "";
  for (let at = 0; at < character.length; at++)
    unicode += `\\\\u${character.charCodeAt(at).toString(16).padStart(4, "0")}`;
  const short = SHORT_ESCAPES[character];
  return short === undefined ? [unicode] : [short, unicode];
}

/**
 * The patterns of a character percent-encoded as UTF-8 (in either case: every expression here ignores
 * case), and encoded twice (`%252F`, a server that encodes what it received encoded); none for a lone
 * surrogate.
 */
function percentEncoded(character: string): string[] {
  if (character.length === 1 && character >= "\ud800" && character <= "\udfff") return [];
  let encoded = "";
  let twice = "";
  for (const byte of Buffer.from(character)) {
    const hex = byte.toString(16).padStart(2, "0");
    encoded += `%${hex}`;
    twice += `%25${hex}`;
  }
  return character === " " ? [encoded, twice, "\\+"] : [encoded, twice];
}

/**
 * The HTML5 named references of each ASCII character that has one (WHATWG's list; `&fjlig;`, two letters,
 * aside): matched in any case, as the expression is, which only hides a few spellings no browser reads.
 */
const NAMED_REFERENCES: Readonly<Record<string, readonly string[]>> = {
  "\t": ["Tab"],
  "\n": ["NewLine"],
  "!": ["excl"],
  '"': ["quot"],
  "#": ["num"],
  $: ["dollar"],
  "%": ["percnt"],
  "&": ["amp"],
  "'": ["apos"],
  "(": ["lpar"],
  ")": ["rpar"],
  "*": ["ast", "midast"],
  "+": ["plus"],
  ",": ["comma"],
  ".": ["period"],
  "/": ["sol"],
  ":": ["colon"],
  ";": ["semi"],
  "<": ["lt"],
  "=": ["equals"],
  ">": ["gt"],
  "?": ["quest"],
  "@": ["commat"],
  "[": ["lsqb", "lbrack"],
  "\\": ["bsol"],
  "]": ["rsqb", "rbrack"],
  "^": ["Hat"],
  _: ["lowbar", "UnderBar"],
  "`": ["grave", "DiacriticalGrave"],
  "{": ["lcub", "lbrace"],
  "|": ["verbar", "vert", "VerticalLine"],
  "}": ["rcub", "rbrace"],
};

/**
 * The pattern of a character as an HTML reference, as a browser reads one: decimal or hex with up to
 * LEADING_ZEROS zeros, or named; with its `;` or without (`&#95live`, `&amp`), where what follows cannot
 * be read as more of it (a decimal reference ends at the first character that is no digit).
 */
function htmlReference(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  const zeros = `0{0,${LEADING_ZEROS}}`;
  const numeric = `#(?:${zeros}${code}(?!\\d)|x${zeros}${code.toString(16)}(?![\\da-f]))`;
  const named = NAMED_REFERENCES[character];
  return `&(?:${named === undefined ? numeric : [numeric, ...named].join("|")});?`;
}

/** Leading zeros of a numeric reference hidden at most: a bound keeps a spelling's reach known. */
const LEADING_ZEROS = 8;

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}

/**
 * The text with each match of `here` replaced, tried only where the scan finds an anchor: at each place
 * from as far ahead of it as a form of that anchor may start to the anchor itself, the first that matches
 * taken.
 */
function hideFound(
  text: string,
  scan: AnchorFinder,
  here: Alternatives,
  first: number,
  before: number,
): string {
  let hidden = "";
  let copied = 0;
  let found = false;
  for (let at = first; at !== -1; ) {
    let start = here.startIn(text, Math.max(copied, at - scan.before), at, at);
    if (start === -1) {
      at = scan.next(text, at + 1);
      continue;
    }
    if (before > scan.before) {
      const earlier = here.startIn(text, Math.max(copied, at - before), start - 1, at);
      if (earlier !== -1) start = earlier;
      else here.startIn(text, start, start, at);
    }
    hidden += `${text.slice(copied, start)}***`;
    copied = here.end;
    found = true;
    at = scan.next(text, copied);
  }
  return found ? hidden + text.slice(copied) : text;
}

/** Where `here` first matches at one place from `from` to `to`, its end in `here.lastIndex`; -1 if none. */
function matchStart(text: string, here: RegExp, from: number, to: number): number {
  for (let at = from; at <= to; at++) {
    here.lastIndex = at;
    if (here.test(text)) return at;
  }
  return -1;
}

/** Where the next anchor of a text starts, and how far ahead of it its form may start. */
interface AnchorFinder {
  /** Called before a text is scanned: `next` is then asked with `from` only growing. */
  reset(text: string): void;
  /** The start of the first anchor at or after `from`; -1 if none. */
  next(text: string, from: number): number;
  /** For the anchor `next` found last: how far ahead of it its form may start. */
  readonly before: number;
}

/**
 * Anchors this short or shorter are found by the engine's own string search, one pass each: strides of a
 * few characters over text full of the same letter pairs cost more than a few native passes.
 */
const SHORT_ANCHOR = 10;
/** Short anchors given a native pass of their own at most; past them, they join the strides. */
const NATIVE_PASSES = 4;

/**
 * The forms' anchors as one finder: a few short ones by native search, the rest in strides as long as the
 * shortest of them allows.
 */
function anchorFinder(forms: readonly SpelledForm[]): AnchorFinder {
  const shortest = new Map<string, number>();
  for (const form of forms)
    if (form.anchor.length <= SHORT_ANCHOR)
      shortest.set(form.anchor, Math.max(form.before, shortest.get(form.anchor) ?? 0));
  const native = shortest.size <= NATIVE_PASSES ? shortest : new Map<string, number>();
  const strided = forms.filter((form) => !native.has(form.anchor));
  const finders: AnchorFinder[] = [...native].map(([anchor, before]) => new NativeSearch(anchor, before));
  if (strided.length > 0) {
    const length = Math.min(MAX_ANCHOR, ...strided.map((form) => form.anchor.length));
    const anchors = strided.map((form): [string, number] => [form.anchor.slice(0, length), form.before]);
    finders.push(new AnchorScan(anchors, length));
  }
  return finders.length === 1 ? (finders[0] as AnchorFinder) : new FirstOfFinders(finders);
}

/** An anchor found by the engine's own search, in any ASCII case. */
class NativeSearch implements AnchorFinder {
  readonly #anchor: RegExp;
  readonly #length: number;

  constructor(
    anchor: string,
    readonly before: number,
  ) {
    // Letters and digits mostly; a broken base64 form's anchor may hold `+` or `/`.
    this.#anchor = new RegExp(escapeRegExp(anchor), "gi");
    this.#length = anchor.length;
  }
  reset(): void {}
  next(text: string, from: number): number {
    this.#anchor.lastIndex = from;
    return this.#anchor.test(text) ? this.#anchor.lastIndex - this.#length : -1;
  }
}

/** The first anchor any of several finders finds; each one's last place kept until the scan passes it. */
class FirstOfFinders implements AnchorFinder {
  readonly #places: number[];
  readonly #befores: number[];
  before = 0;

  constructor(private readonly finders: readonly AnchorFinder[]) {
    this.#places = finders.map(() => UNKNOWN);
    this.#befores = finders.map(() => 0);
  }

  reset(text: string): void {
    this.#places.fill(UNKNOWN);
    for (const finder of this.finders) finder.reset(text);
  }

  next(text: string, from: number): number {
    let first = -1;
    for (let index = 0; index < this.finders.length; index++) {
      let place = this.#places[index] as number;
      if (place !== -1 && place < from) {
        const finder = this.finders[index] as AnchorFinder;
        place = finder.next(text, from);
        this.#places[index] = place;
        this.#befores[index] = finder.before;
      }
      if (place === -1) continue;
      const before = this.#befores[index] as number;
      // Anchors of several forms at one place: the window covers the form that may start furthest ahead.
      if (place === first) this.before = Math.max(this.before, before);
      else if (first === -1 || place < first) {
        first = place;
        this.before = before;
      }
    }
    return first;
  }
}

/** A finder's place before it was asked: before any `from`. */
const UNKNOWN = -2;

/**
 * Where any of a set of strings of one length occurs, scanned for in strides (Wu–Manber): the window's last
 * two characters say how far it may move on without passing the start of one.
 */
class AnchorScan implements AnchorFinder {
  readonly #shift = new Uint8Array(1 << 14);
  /** Each anchor, with how many characters at most come before it in a form that holds it. */
  readonly #anchors = new Map<string, number>();
  readonly #length: number;
  /** For the anchor `next` found last: how far ahead of it its form may start. */
  before = 0;

  constructor(anchors: ReadonlyArray<[string, number]>, length: number) {
    for (const [given, before] of anchors) {
      const anchor = given.toLowerCase();
      this.#anchors.set(anchor, Math.max(before, this.#anchors.get(anchor) ?? 0));
    }
    this.#length = length;
    this.#shift.fill(length - 1);
    for (const anchor of this.#anchors.keys())
      for (let end = 1; end < length; end++) {
        const slot = pairSlot(anchor.charCodeAt(end - 1), anchor.charCodeAt(end));
        this.#shift[slot] = Math.min(this.#shift[slot] ?? 0, length - 1 - end);
      }
  }

  reset(): void {}

  next(text: string, from: number): number {
    const shift = this.#shift;
    const length = this.#length;
    const last = text.length;
    for (let end = from + length - 1; end < last; ) {
      const stride = shift[pairSlot(text.charCodeAt(end - 1), text.charCodeAt(end))] as number;
      if (stride > 0) {
        end += stride;
        continue;
      }
      const before = this.#anchors.get(text.slice(end - length + 1, end + 1).toLowerCase());
      if (before !== undefined) {
        this.before = before;
        return end - length + 1;
      }
      end++;
    }
    return -1;
  }
}

function pairSlot(first: number, second: number): number {
  // Every pair of ASCII characters a slot of its own, but for case: a letter's two cases share their slots
  // (so do a few other pairs of characters, which only shortens a stride: a NUL shares a space's, which
  // only a UTF-16 text, scanned for UTF-16 forms alone, holds).
  return (((first | 0x20) << 7) ^ (second | 0x20)) & 0x3fff;
}

/**
 * A hidden header name not yet among `headers`: two names a secret made (`x-a-TOKEN`, `x-b-TOKEN` hidden
 * alike) stay two headers, the later one numbered, rather than one taking the other's place.
 */
export function distinctName(headers: Readonly<Record<string, string>>, hidden: string): string {
  if (!Object.hasOwn(headers, hidden)) return hidden;
  let suffix = 2;
  while (Object.hasOwn(headers, `${hidden} (${suffix})`)) suffix++;
  return `${hidden} (${suffix})`;
}
