// The console's script: every figure comes from the /v1 routes of the server that served the
// page, asked with the reader key kept in this tab's sessionStorage and sent only in the
// Authorization header. Data reaches the page as text nodes (textContent), never as markup; the
// charts are the server's SVG (AnalyticsChart, every text escaped there), parsed as XML.
"use strict";

const KEY = "ledger.console.key";
const HOUR = 3600 * 1000;
const $ = (id) => document.getElementById(id);

/// A refusal of the key (401, 403): the session ends and the login form says so.
class Refused extends Error {}

async function api(path, accept) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new Refused("no key");
  const response = await fetch(path, {
    headers: { Authorization: "Bearer " + key, Accept: accept || "application/json" },
    cache: "no-store",
    credentials: "omit",
    referrerPolicy: "no-referrer",
  });
  if (response.status === 401 || response.status === 403) throw new Refused(String(response.status));
  return response;
}

async function json(path) {
  const response = await api(path);
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(body && body.message ? body.message : "HTTP " + response.status);
    error.status = response.status;
    error.code = body && body.code;
    throw error;
  }
  return body;
}

/// `2026-03-01T10:00:00.000Z` as `2026-03-01 10:00:00`; the page says UTC in its headings.
function utc(text) {
  if (!text) return "—";
  return String(text).replace("T", " ").replace(/\.\d+Z$|Z$/, "");
}

function cell(row, text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function clear(element) {
  while (element.firstChild) element.removeChild(element.firstChild);
}

function say(id, text, kind) {
  const element = $(id);
  element.textContent = text;
  element.dataset.kind = kind || "";
}

// ---- Sign in and out --------------------------------------------------------------------

function showApp(signedIn) {
  $("login").hidden = signedIn;
  $("app").hidden = !signedIn;
  $("sign-out").hidden = !signedIn;
}

function signOut(message) {
  sessionStorage.removeItem(KEY);
  $("key").value = "";
  showApp(false);
  say("login-status", message || "", message ? "error" : "");
  $("key").focus();
}

/// Handles a refusal anywhere: the key is dropped at once.
function failed(error, statusId) {
  if (error instanceof Refused) {
    signOut("Refused: the key is unknown, revoked or not a reader's. Nothing was kept.");
  } else {
    say(statusId, error.message, "error");
  }
}

async function signIn(event) {
  event.preventDefault();
  const key = $("key").value.trim();
  $("key").value = "";
  if (!key) return;
  sessionStorage.setItem(KEY, key);
  say("login-status", "Checking the key…");
  try {
    // A cheap reader route, to check the key before anything is shown.
    await json("/v1/events?after=0&limit=1");
    say("login-status", "");
    showApp(true);
    setDefaultRange();
    selectTab("customer");
    $("search").focus();
  } catch (error) {
    if (error instanceof Refused) {
      signOut("Refused: the key is unknown, revoked or not a reader's. Nothing was kept.");
    } else {
      sessionStorage.removeItem(KEY);
      say("login-status", "The server did not answer: " + error.message, "error");
    }
  }
}

// ---- Tabs ---------------------------------------------------------------------------------

function selectTab(name) {
  for (const tab of ["customer", "dashboard"]) {
    const selected = tab === name;
    $("tab-" + tab).setAttribute("aria-selected", String(selected));
    $("tab-" + tab).tabIndex = selected ? 0 : -1;
    $(tab).hidden = !selected;
  }
  if (name === "dashboard" && !dashboardShown) showDashboard();
}

function tabKeys(event) {
  if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
    const next = event.target.id === "tab-customer" ? "dashboard" : "customer";
    selectTab(next);
    $("tab-" + next).focus();
  }
}

// ---- Customer -----------------------------------------------------------------------------

const customer = { userId: null, min: 0, request: 0, timer: null };

/// A payment by its name, then as an App Store or Google Play transaction (a Google order id is
/// Google's transaction id); null when none of them is a payment the ledger holds.
async function findPayment(text) {
  const id = encodeURIComponent(text);
  for (const query of ["paymentSeq=" + id, "storeCode=AS&transactionId=" + id, "storeCode=GG&transactionId=" + id]) {
    try {
      return await json("/v1/lookup?" + query);
    } catch (error) {
      if (error.status !== 404 && error.status !== 400) throw error;
    }
  }
  return null;
}

async function search(event) {
  event.preventDefault();
  const text = $("search").value.trim();
  const kind = $("search-kind").value;
  if (!text) return;
  say("search-status", "Looking up…");
  try {
    let userId = text;
    let payment = null;
    if (kind !== "user") {
      payment = await findPayment(text);
      if (payment) userId = payment.userId;
      else if (kind === "payment") {
        say("search-status", "No payment has that id, transaction id or order id.", "error");
        $("user").hidden = true;
        return;
      }
    }
    await showUser(userId, payment);
    say("search-status", "");
  } catch (error) {
    failed(error, "search-status");
  }
}

function paymentNote(payment) {
  const state = payment.refundedAt ? "refunded " + utc(payment.refundedAt) + " UTC"
    : payment.consumedAt ? "consumed " + utc(payment.consumedAt) + " UTC" : "not consumed";
  return "Payment " + payment.paymentSeq + " (" + payment.storeCode + " " + payment.productId + ", "
    + payment.price + " " + payment.currency + ", purchased " + utc(payment.purchaseTime) + " UTC) belongs to this user: "
    + state + ".";
}

async function showUser(userId, payment) {
  const path = "/v1/users/" + encodeURIComponent(userId);
  const [unconsumed, lineages, history] = await Promise.all([
    json(path + "/unconsumed"),
    json(path + "/subscriptions?includeExpired=true"),
    json(path + "/history").catch((error) => {
      if (error instanceof Refused) throw error;
      return { unavailable: error };
    }),
  ]);
  customer.userId = userId;
  $("user-id").textContent = userId;
  $("found-payment").hidden = !payment;
  $("found-payment").textContent = payment ? paymentNote(payment) : "";
  renderUnconsumed(unconsumed);
  renderTimeline(history);
  setSlider(lineages, history.entries || [], unconsumed);
  await askSubscriptions($("at").dataset.at);
  $("user").hidden = false;
}

function renderUnconsumed(payments) {
  const body = $("unconsumed").tBodies[0];
  clear(body);
  for (const payment of payments) {
    const row = body.insertRow();
    cell(row, payment.paymentSeq, "mono");
    cell(row, payment.storeCode);
    cell(row, payment.productId);
    cell(row, payment.price + " " + payment.currency, "num");
    cell(row, utc(payment.purchaseTime));
  }
  $("unconsumed-count").textContent = "(" + payments.length + ")";
  $("unconsumed").hidden = payments.length === 0;
  $("unconsumed-empty").hidden = payments.length !== 0;
}

function renderTimeline(history) {
  const list = $("timeline");
  clear(list);
  const note = $("timeline-note");
  if (history.unavailable) {
    const error = history.unavailable;
    note.textContent = error.status === 404
      ? "This server has no timeline route (GET /v1/users/{userId}/history)."
      : "The timeline could not be read: " + error.message;
    note.hidden = false;
    $("timeline-count").textContent = "";
    return;
  }
  note.hidden = !history.truncated;
  note.textContent = history.truncated ? "Only the latest events are shown; older ones were left out." : "";
  for (const entry of history.entries) {
    const item = document.createElement("li");
    item.className = "event";
    const time = document.createElement("time");
    time.dateTime = entry.occurredAt;
    time.textContent = utc(entry.occurredAt);
    const change = document.createElement("span");
    change.className = "change";
    change.dataset.change = entry.change.split(":")[0];
    change.textContent = entry.change;
    const summary = document.createElement("span");
    summary.className = "summary";
    summary.textContent = entry.summary;
    const where = document.createElement("span");
    where.className = "where mono";
    where.textContent = [entry.storeCode, entry.paymentSeq, entry.notificationId && "notification " + entry.notificationId]
      .filter(Boolean).join(" · ");
    item.append(time, change, summary, where);
    list.appendChild(item);
  }
  $("timeline-count").textContent = "(" + history.entries.length + (history.truncated ? ", truncated" : "") + ")";
}

/// The slider spans the user's history: from a day before its first event or purchase to a day
/// after its last event or expiry, an hour a step; it starts at now (within that span).
function setSlider(lineages, entries, unconsumed) {
  const times = [];
  for (const entry of entries) times.push(Date.parse(entry.occurredAt));
  for (const item of lineages.concat(unconsumed)) {
    for (const field of ["purchaseTime", "expiryTime", "gracePeriodExpiryTime"]) {
      if (item[field]) times.push(Date.parse(item[field]));
    }
  }
  const now = Date.now();
  const first = times.length ? Math.min(...times) : now;
  const last = times.length ? Math.max(...times) : now;
  customer.min = Math.floor((first - 24 * HOUR) / HOUR) * HOUR;
  const steps = Math.max(1, Math.ceil((last + 24 * HOUR - customer.min) / HOUR));
  const slider = $("at");
  slider.min = "0";
  slider.max = String(steps);
  slider.value = String(Math.min(steps, Math.max(0, Math.round((now - customer.min) / HOUR))));
  slider.dataset.origin = new Date(customer.min).toISOString();
  sliderMoved(false);
}

function sliderInstant() {
  return new Date(customer.min + Number($("at").value) * HOUR).toISOString();
}

/// Shows the slider's instant at once, and asks the server after the slider rests for 150 ms.
function sliderMoved(ask) {
  const at = sliderInstant();
  $("at").dataset.at = at;
  $("at-text").textContent = utc(at) + " UTC";
  $("at").setAttribute("aria-valuetext", utc(at) + " UTC");
  if (!ask) return;
  clearTimeout(customer.timer);
  customer.timer = setTimeout(() => askSubscriptions(at), 150);
}

async function askSubscriptions(at) {
  const request = ++customer.request;
  try {
    const lineages = await json("/v1/users/" + encodeURIComponent(customer.userId)
      + "/subscriptions?includeExpired=true&at=" + encodeURIComponent(at));
    if (request === customer.request) renderSubscriptions(lineages, at);
  } catch (error) {
    failed(error, "search-status");
  }
}

function renderSubscriptions(lineages, at) {
  const table = $("subscriptions");
  const body = table.tBodies[0];
  clear(body);
  for (const lineage of lineages) {
    const row = body.insertRow();
    row.dataset.lineage = lineage.storeCode + ":" + lineage.originalTransactionId;
    cell(row, lineage.storeCode);
    cell(row, lineage.productId);
    cell(row, lineage.originalTransactionId, "mono");
    const status = cell(row, lineage.status, "status-cell");
    status.dataset.status = lineage.status;
    const grace = lineage.gracePeriodExpiryTime ? " (grace to " + utc(lineage.gracePeriodExpiryTime) + ")" : "";
    cell(row, utc(lineage.expiryTime) + grace);
    cell(row, lineage.autoRenewing ? "on" : "off");
  }
  table.hidden = lineages.length === 0;
  $("subs-empty").hidden = lineages.length !== 0;
  // The instant the rows are for, so a reader (or a test) knows they are current.
  table.dataset.at = at || "";
}

// ---- Dashboard ----------------------------------------------------------------------------

let dashboardShown = false;

function day(date) {
  return date.toISOString().slice(0, 10);
}

/// Twelve months by month: from the first day of the month eleven months back to tomorrow (UTC),
/// the whole of this month included.
function setDefaultRange() {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1));
  $("from").value = day(from);
  $("to").value = day(new Date(now.getTime() + 24 * HOUR));
  $("by").value = "month";
  dashboardShown = false;
}

function showDashboard(event) {
  if (event) event.preventDefault();
  dashboardShown = true;
  const from = $("from").value, to = $("to").value;
  if (!from || !to) return;
  const range = new URLSearchParams({ from: from, to: to, by: $("by").value });
  const sandbox = $("sandbox").checked;
  if (sandbox) range.set("includeSandbox", "true");
  // The backlog is a report at an instant: the range's end, or now when that is later.
  const end = Math.min(Date.parse(to + "T00:00:00Z"), Date.now());
  const backlog = new URLSearchParams({ at: new Date(end).toISOString() });
  if (sandbox) backlog.set("includeSandbox", "true");
  say("range-status", "");
  for (const figure of document.querySelectorAll("figure.chart")) {
    const report = figure.dataset.report;
    const query = report === "backlog" ? backlog : range;
    drawChart(figure, "/v1/analytics/" + report + "?" + query.toString());
  }
}

async function drawChart(figure, path) {
  const holder = figure.querySelector(".svg");
  figure.dataset.state = "loading";
  holder.setAttribute("aria-busy", "true");
  try {
    const response = await api(path, "image/svg+xml");
    const text = await response.text();
    if (!response.ok) {
      let message = "HTTP " + response.status;
      try { message = JSON.parse(text).message || message; } catch (ignored) { /* not JSON */ }
      throw new Error(message);
    }
    const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
    const svg = parsed.documentElement;
    if (svg.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) throw new Error("not an SVG chart");
    for (const script of svg.querySelectorAll("script, foreignObject")) script.remove();
    clear(holder);
    holder.appendChild(document.importNode(svg, true));
    figure.dataset.state = "drawn";
  } catch (error) {
    if (error instanceof Refused) return failed(error, "range-status");
    clear(holder);
    const p = document.createElement("p");
    p.className = "status";
    p.dataset.kind = "error";
    p.textContent = "This chart could not be drawn: " + error.message;
    holder.appendChild(p);
    figure.dataset.state = "failed";
  } finally {
    holder.removeAttribute("aria-busy");
  }
}

// ---- Start --------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", () => signOut(""));
  $("tab-customer").addEventListener("click", () => selectTab("customer"));
  $("tab-dashboard").addEventListener("click", () => selectTab("dashboard"));
  $("tab-customer").addEventListener("keydown", tabKeys);
  $("tab-dashboard").addEventListener("keydown", tabKeys);
  $("search-form").addEventListener("submit", search);
  $("at").addEventListener("input", () => sliderMoved(true));
  $("range-form").addEventListener("submit", showDashboard);
  if (sessionStorage.getItem(KEY)) {
    // A reload within the session: check the key again before showing anything.
    json("/v1/events?after=0&limit=1").then(() => {
      showApp(true);
      setDefaultRange();
      selectTab("customer");
    }, (error) => failed(error, "login-status"));
  } else {
    showApp(false);
  }
});
