// The mock's dashboard: a plain module over the control API, no framework and no build step. Every value
// from the mock goes into the page as text (textContent, attributes), never as HTML.

const CONTROL = "/__control";
const POLL_MS = 1000;
// Orders on one page: a world may hold millions, and the page only ever asks for one page of them.
const PAGE_SIZE = 100;
const TOKEN_KEY = "petstore-mock-control-token";
const OPERATIONS = ["listOrders", "cancelOrder"];
const FORCIBLE = {
  listOrders: [200, 401, 500, 502, 503, 504],
  cancelOrder: [204, 401, 404, 409, 500, 502, 503, 504],
};
const FAULTS = { listOrders: ["close", "truncate"], cancelOrder: ["close"] };

// Journal entries shown at first and added by each "Show more": a journal may hold thousands.
const JOURNAL_PAGE = 50;
// Characters of a request shown in its row; the whole request is in the row's tooltip.
const REQUEST_SHOWN = 160;

const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;
// `?session=NAME` opens the page on a session, so a link can point at one.
const linked = new URLSearchParams(location.search).get("session") ?? "";
const state = {
  session: SESSION_NAME.test(linked) ? linked : "",
  orders: [],
  // The page shown: the id it follows (none for the first), how many orders the pages before it showed,
  // those pages' own, the id the next one follows, the world's size.
  page: { after: undefined, before: 0, previous: [], next: undefined, total: 0 },
  lastJournal: "",
  // The journal as last read, newest first, and how many of its entries are shown.
  journal: [],
  journalShown: JOURNAL_PAGE,
  worlds: "",
};
const $ = (id) => document.getElementById(id);

/** An element with text and attributes; children are elements or strings (inserted as text). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) node.append(child);
  return node;
}

function say(message) {
  $("status").textContent = message;
}

class ControlError extends Error {
  constructor(status, record) {
    super(record?.message ?? `The mock answered ${status}.`);
    this.status = status;
    this.record = record;
  }
}

/** A control request in the selected world; the text of the answer, or a ControlError. */
async function control(method, path, body) {
  return (await controlAnswer(method, path, body)).text;
}

/** A control request's text and headers; a refusal is thrown as a ControlError. */
async function controlAnswer(method, path, body) {
  const headers = {};
  if (state.session) headers["x-mock-session"] = state.session;
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${CONTROL}${path}`, { method, headers, body });
  const text = await response.text();
  if (response.status === 401) $("token-form").hidden = false;
  if (!response.ok) {
    let record;
    try {
      record = JSON.parse(text);
    } catch {
      record = undefined;
    }
    throw new ControlError(response.status, record);
  }
  return { text, headers: response.headers };
}

/** Orders read with their int64 ids as strings: JSON.parse would round ids above 2^53. */
function parseOrders(text) {
  return JSON.parse(text.replace(/"(id|petId)":(-?\d+)/g, '"$1":"$2"'));
}

/** The world selector, rebuilt only when the sessions changed, so polling never disturbs a user's choice. */
async function refreshWorlds() {
  const sessions = JSON.parse(await control("GET", "/sessions"));
  const select = $("world");
  const names = sessions.map((session) => session.name).sort();
  if (state.session && !names.includes(state.session)) names.push(state.session);
  const key = `${state.session}\n${names.join("\n")}`;
  if (key === state.worlds) return;
  state.worlds = key;
  select.replaceChildren(
    el("option", { value: "", text: "Default world" }),
    ...names.map((name) => el("option", { value: name, text: `Session ${name}` })),
  );
  select.value = state.session;
}

/** The page of orders in view, read again: the one order of a searched id, or a page of the list. */
async function refreshOrders() {
  const id = $("filter").value.trim();
  const status = $("status-filter").value;
  const { page } = state;
  if (id !== "" && !/^-?\d{1,20}$/.test(id)) {
    state.orders = [];
    page.next = undefined;
    return renderOrders("An id is a whole number.");
  }
  const after = page.after === undefined ? "" : `&after=${page.after}`;
  const query = id !== "" ? `?id=${id}` : `?limit=${PAGE_SIZE}${after}${status ? `&status=${status}` : ""}`;
  const { text, headers } = await controlAnswer("GET", `/orders${query}`);
  state.orders = parseOrders(text);
  const next = headers.get("x-next-cursor");
  page.next = id === "" && next !== null && /^-?\d{1,20}$/.test(next) ? next : undefined;
  page.total = Number(headers.get("x-total-count") ?? state.orders.length);
  renderOrders();
}

function renderOrders(problem) {
  const { page, orders } = state;
  const id = $("filter").value.trim();
  const status = $("status-filter").value;
  const count = (n) => n.toLocaleString("en");
  let note;
  if (problem) note = problem;
  else if (id !== "") note = orders.length > 0 ? `Order ${id}.` : `No order has the id ${id}.`;
  else if (status !== "")
    note = `${count(orders.length)} ${status} ${orders.length === 1 ? "order" : "orders"} on this page, of ${count(page.total)} in this world.`;
  else if (page.after === undefined && page.next === undefined) note = `${count(page.total)} orders.`;
  else
    note = `Orders from place ${count(page.before + 1)} on: ${count(orders.length)} of ${count(page.total)}.`;
  $("orders-note").textContent = note;
  $("previous-page").disabled = id !== "" || page.previous.length === 0;
  $("next-page").disabled = page.next === undefined;
  $("orders").tBodies[0].replaceChildren(...orders.map(orderRow));
}

/** Back to the list's first page (another world, filter or status). */
function firstPage() {
  state.page = { after: undefined, before: 0, previous: [], next: undefined, total: 0 };
}

function orderRow(order) {
  const status = el(
    "select",
    { "aria-label": `Status of order ${order.id}`, "data-order": order.id },
    ...["pending", "shipped", "cancelled"].map((name) =>
      el("option", { value: name, text: name, selected: name === order.status }),
    ),
  );
  status.addEventListener("change", () => act(() => setStatus(order.id, status.value)));
  const remove = el(
    "button",
    { type: "button", class: "secondary", "aria-label": `Remove order ${order.id}` },
    "Remove",
  );
  remove.addEventListener("click", () => act(() => removeOrder(order.id)));
  const shipDate = order.shipDate === undefined ? "" : order.shipDate;
  const local = shipDate ? new Date(shipDate).toLocaleString() : "";
  return el(
    "tr",
    {},
    el("td", { "data-label": "Id", class: "id", text: order.id }),
    el("td", { "data-label": "Pet", class: "id", text: order.petId ?? "" }),
    el("td", { "data-label": "Quantity", text: order.quantity ?? "" }),
    // One child per cell: on narrow screens a cell is a two-column grid of its label and its value.
    el(
      "td",
      { "data-label": "Ship date" },
      el("div", {}, shipDate, el("span", { class: "local-time", text: local })),
    ),
    el("td", { "data-label": "Complete", text: order.complete === undefined ? "" : String(order.complete) }),
    el("td", { "data-label": "Status" }, status),
    el("td", { "data-label": "Actions" }, remove),
  );
}

async function setStatus(id, status) {
  await control("PUT", `/orders/${id}`, JSON.stringify({ status }));
  say(`Order ${id} is now ${status}.`);
  await refreshOrders();
}

async function removeOrder(id) {
  await control("DELETE", `/orders/${id}`);
  say(`Order ${id} was removed.`);
  await refreshOrders();
}

const INTEGER = /^-?\d+$/;

/** The add form as JSON, ids written as digits so they stay exact; field problems found in the page. */
function readAddForm() {
  const form = $("add-form");
  const value = (name) => form.elements[name].value.trim();
  const problems = {};
  const parts = [];
  for (const name of ["id", "petId", "quantity"]) {
    const text = value(name);
    if (text === "") {
      if (name === "id") problems.id = "An id is required.";
    } else if (!INTEGER.test(text)) problems[name] = "Write a whole number in digits.";
    else parts.push(`"${name}":${text}`);
  }
  if (value("shipDate")) parts.push(`"shipDate":${JSON.stringify(value("shipDate"))}`);
  if (value("complete")) parts.push(`"complete":${value("complete")}`);
  parts.push(`"status":${JSON.stringify(value("status"))}`);
  return { id: value("id"), body: `{${parts.join(",")}}`, problems };
}

function showFieldErrors(problems, general = "") {
  for (const name of ["id", "petId", "quantity", "shipDate", "status"]) {
    $(`add-${name}-error`).textContent = problems[name] ?? "";
    $(`add-${name}`).setAttribute("aria-invalid", problems[name] ? "true" : "false");
  }
  $("add-form-error").textContent = general;
}

async function saveOrder(event) {
  event.preventDefault();
  const { id, body, problems } = readAddForm();
  showFieldErrors(problems);
  if (Object.keys(problems).length > 0) return;
  try {
    await control("PUT", `/orders/${id}`, body);
  } catch (error) {
    if (!(error instanceof ControlError)) throw error;
    // The mock names the field it refuses: `field "shipDate": …` or `path parameter "id": …`.
    const field = /(?:field|path parameter) "(\w+)/.exec(error.message)?.[1];
    if (field && $(`add-${field}-error`)) showFieldErrors({ [field]: error.message });
    else showFieldErrors({}, error.message);
    return;
  }
  say(`Order ${id} was saved.`);
  $("add-form").reset();
  await refreshOrders();
}

async function refreshBehaviour() {
  const behaviour = JSON.parse(await control("GET", "/behaviour"));
  $("delay").value = String(behaviour.delayMs);
  $("rules").tBodies[0].replaceChildren(...behaviour.rules.map(ruleRow));
}

function ruleRow(rule = { operation: "listOrders", status: 503 }) {
  const index = $("rules").tBodies[0].rows.length + 1;
  const operation = el(
    "select",
    { name: "operation", "aria-label": `Operation of rule ${index}` },
    ...OPERATIONS.map((name) => el("option", { value: name, text: name, selected: name === rule.operation })),
  );
  const answer = el("select", { name: "answer", "aria-label": `Answer of rule ${index}` });
  const fillAnswers = (selected) => {
    const op = operation.value;
    answer.replaceChildren(
      ...FORCIBLE[op].map((status) => el("option", { value: `status:${status}`, text: `status ${status}` })),
      ...FAULTS[op].map((fault) => el("option", { value: `fault:${fault}`, text: `fault: ${fault}` })),
    );
    if (selected && [...answer.options].some((option) => option.value === selected)) answer.value = selected;
  };
  fillAnswers(rule.fault ? `fault:${rule.fault}` : `status:${rule.status}`);
  operation.addEventListener("change", () => fillAnswers(answer.value));
  const times = el("input", {
    name: "times",
    inputmode: "numeric",
    "aria-label": `Times of rule ${index}`,
    value: rule.times ?? "",
  });
  const remove = el(
    "button",
    { type: "button", class: "secondary", "aria-label": `Remove rule ${index}` },
    "Remove",
  );
  const row = el(
    "tr",
    {},
    el("td", { "data-label": "Operation" }, operation),
    el("td", { "data-label": "Answer" }, answer),
    el("td", { "data-label": "Times" }, times),
    el("td", { "data-label": "Actions" }, remove),
  );
  remove.addEventListener("click", () => row.remove());
  return row;
}

async function saveBehaviour(event) {
  event.preventDefault();
  const delayText = $("delay").value.trim() || "0";
  if (!INTEGER.test(delayText)) {
    $("behaviour-error").textContent = "The delay is a whole number of milliseconds.";
    return;
  }
  const rules = [...$("rules").tBodies[0].rows].map((row) => {
    const [kind, value] = row.querySelector("[name=answer]").value.split(":");
    const times = row.querySelector("[name=times]").value.trim();
    return {
      operation: row.querySelector("[name=operation]").value,
      ...(kind === "status" ? { status: Number(value) } : { fault: value }),
      ...(times ? { times: INTEGER.test(times) ? Number(times) : times } : {}),
    };
  });
  try {
    await control("PUT", "/behaviour", JSON.stringify({ delayMs: Number(delayText), rules }));
  } catch (error) {
    if (!(error instanceof ControlError)) throw error;
    $("behaviour-error").textContent = error.message;
    return;
  }
  $("behaviour-error").textContent = "";
  say("Behaviour saved.");
  await refreshBehaviour();
}

const STATUS_WORDS = { 2: "success", 3: "redirect", 4: "client error", 5: "server error" };

function journalRow(entry) {
  const statusClass =
    entry.status === null || entry.fault ? "status-fault" : `status-${Math.floor(entry.status / 100)}xx`;
  const word =
    entry.fault === "close"
      ? "connection closed"
      : entry.fault === "truncate"
        ? "body cut off"
        : (STATUS_WORDS[Math.floor(entry.status / 100)] ?? "");
  return el(
    "tr",
    {},
    el("td", { "data-label": "Time", text: new Date(entry.time).toLocaleTimeString() }),
    requestCell(`${entry.method} ${entry.path}`),
    el(
      "td",
      { "data-label": "Status", class: statusClass },
      el("div", {}, el("span", { class: "journal-status", text: entry.status ?? "none" }), ` ${word}`),
    ),
    el("td", { "data-label": "Duration", text: `${entry.durationMs} ms` }),
    el("td", { "data-label": "Session", text: entry.session ?? "default" }),
  );
}

/** A request as its row shows it: cut short past REQUEST_SHOWN characters, whole in its tooltip. */
function requestCell(request) {
  const long = request.length > REQUEST_SHOWN;
  return el("td", {
    "data-label": "Request",
    class: "id",
    title: long ? request : undefined,
    text: long ? `${request.slice(0, REQUEST_SHOWN)}…` : request,
  });
}

/** The newest entries of the journal, as many as asked for, and a button for more when there are. */
function renderJournal() {
  const { journal, journalShown } = state;
  const shown = journal.slice(0, journalShown);
  $("journal").tBodies[0].replaceChildren(...shown.map(journalRow));
  const rest = journal.length - shown.length;
  const more = $("journal-more");
  more.hidden = rest === 0;
  more.textContent = `Show ${Math.min(rest, JOURNAL_PAGE)} more`;
  $("journal-count").textContent =
    rest === 0 ? "" : `Showing the latest ${shown.length} of ${journal.length} requests.`;
}

async function refreshJournal() {
  const { text, headers } = await controlAnswer("GET", "/requests");
  const refused = Number(headers.get("x-mock-refused-requests") ?? 0);
  $("refused").textContent =
    refused === 0
      ? "This mock has refused no request for its key."
      : `This mock has refused ${refused} ${refused === 1 ? "request" : "requests"} for a missing or wrong key or token, in any world (counted, never listed).`;
  if (text === state.lastJournal) return false;
  state.lastJournal = text;
  state.journal = JSON.parse(text).reverse();
  renderJournal();
  return true;
}

async function refreshAll() {
  await refreshWorlds();
  await Promise.all([refreshOrders(), refreshBehaviour()]);
  state.lastJournal = "";
  state.journalShown = JOURNAL_PAGE;
  await refreshJournal();
}

/** Runs a user's action; a refusal is shown, never thrown away. */
async function act(action) {
  try {
    await action();
  } catch (error) {
    say(error instanceof ControlError ? error.message : `Something went wrong: ${error.message}`);
  }
}

async function poll() {
  try {
    // New requests may have cancelled orders: the orders are read again only then.
    if (await refreshJournal()) await refreshOrders();
    await refreshWorlds();
  } catch {
    // A failed poll is retried at the next tick; a 401 has already shown the token form.
  }
  setTimeout(poll, POLL_MS);
}

function start() {
  $("world").addEventListener("change", () => {
    state.session = $("world").value;
    firstPage();
    act(refreshAll);
  });
  $("session-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("session-name").value.trim();
    if (!SESSION_NAME.test(name)) {
      say("A session name is 1 to 64 letters, digits, '.', '_' or '-'.");
      return;
    }
    state.session = name;
    firstPage();
    $("session-name").value = "";
    act(refreshAll).then(() => say(`Session ${name} is open.`));
  });
  $("reset").addEventListener("click", () => {
    const world = state.session ? `session ${state.session}` : "the default world";
    if (!window.confirm(`Reset ${world} to the fixtures and clear its behaviour rules?`)) return;
    act(async () => {
      await control("POST", "/reset");
      await refreshAll();
      say(`Reset ${world}.`);
    });
  });
  $("filter").addEventListener("input", () => {
    firstPage();
    act(refreshOrders);
  });
  $("status-filter").addEventListener("change", () => {
    firstPage();
    act(refreshOrders);
  });
  $("next-page").addEventListener("click", () => {
    const { page } = state;
    if (page.next === undefined) return;
    page.previous.push({ after: page.after, before: page.before });
    page.before += state.orders.length;
    page.after = page.next;
    act(refreshOrders);
  });
  $("previous-page").addEventListener("click", () => {
    const { page } = state;
    if (page.previous.length === 0) return;
    ({ after: page.after, before: page.before } = page.previous.pop());
    act(refreshOrders);
  });
  $("journal-more").addEventListener("click", () => {
    state.journalShown += JOURNAL_PAGE;
    renderJournal();
  });
  $("add-form").addEventListener("submit", (event) => act(() => saveOrder(event)));
  $("add-rule").addEventListener("click", () => $("rules").tBodies[0].append(ruleRow()));
  $("behaviour-form").addEventListener("submit", (event) => act(() => saveBehaviour(event)));
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    $("token").value = "";
    $("token-form").hidden = true;
    act(refreshAll);
  });
  act(refreshAll).then(() => setTimeout(poll, POLL_MS));
}

start();
