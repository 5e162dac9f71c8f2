#include "sim/report/visual.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace mbcheck::sim {

VisualInput visual_input(Program& program, const std::vector<AgentId>& schedule, const std::string& title,
                         const std::string& replay_token) {
  VisualInput in;
  in.title = title;
  in.replay_token = replay_token;
  std::vector<TraceEntry> trace;
  const Outcome out = replay_schedule(program, schedule, true, &trace);
  return visual_input(out, std::move(trace), title, replay_token);
}

VisualInput visual_input(const Outcome& out, std::vector<TraceEntry> trace, const std::string& title,
                         const std::string& replay_token) {
  VisualInput in;
  in.title = title;
  in.replay_token = replay_token;
  in.trace = std::move(trace);
  in.verdict = out.verdict == Verdict::completed ? "ok" : to_string(out.verdict);
  in.cause = out.verdict == Verdict::completed ? "every thread finished; no bug in this execution" : out.message;
  in.details = out.details;
  in.culprits = out.culprits;
  return in;
}

namespace {
nlohmann::json steps_json(const VisualInput& in) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& t : in.trace) {
    const auto at = t.what.find("  => ");
    steps.push_back({{"step", t.step},
                     {"agent", t.agent},
                     {"who", t.who},
                     {"barrier", t.barrier},
                     {"op", t.what.substr(0, at)},
                     {"state", at == std::string::npos ? "" : t.what.substr(at + 5)},
                     {"where", t.where},
                     {"function", t.function}});
  }
  return steps;
}
}  // namespace

std::string counterexample_json(const VisualInput& in) {
  std::map<AgentId, std::string> threads;
  for (const auto& t : in.trace) threads.emplace(t.agent, t.who);
  nlohmann::json agents = nlohmann::json::array();
  for (const auto& [id, who] : threads) agents.push_back({{"agent", id}, {"who", who}});
  nlohmann::json j = {{"kind", in.verdict},      {"cause", in.cause}, {"details", in.details},
                      {"culprits", in.culprits}, {"agents", agents},  {"steps", steps_json(in)}};
  return j.dump();
}

namespace {
namespace fs = std::filesystem;

// Where the trace's source paths point on disk and which root SARIF names them under. A
// trace path is as reports show it (sim/runtime: relative to the working directory, or to
// mbcheck's own tree for the bundled protocols, or absolute).
class SarifPaths {
 public:
  explicit SarifPaths(const std::string& source_root) {
    if (!source_root.empty()) root_ = fs::weakly_canonical(fs::absolute(source_root)).string();
  }
  nlohmann::json artifact(const std::string& path) {
    const std::string abs = absolute(path);
    if (root_.empty()) root_ = repository_of(abs);
    const std::string prefix = root_.empty() || root_.back() == '/' ? root_ : root_ + "/";
    if (!root_.empty() && abs.rfind(prefix, 0) == 0) {
      used_root_ = true;
      return {{"uri", abs.substr(prefix.size())}, {"uriBaseId", "SRCROOT"}};
    }
    return {{"uri", "file://" + abs}};
  }
  // The run's originalUriBaseIds (null when no location used the root).
  nlohmann::json base_ids() const {
    if (!used_root_) return nullptr;
    return {{"SRCROOT", {{"uri", "file://" + (root_.back() == '/' ? root_ : root_ + "/")}}}};
  }

 private:
  static std::string absolute(const std::string& path) {
    fs::path p(path);
    if (p.is_relative()) {
      std::error_code ec;
      const fs::path here = fs::current_path(ec) / p;
#ifdef MBCHECK_SOURCE_DIR
      if (!fs::exists(here, ec) && fs::exists(fs::path(MBCHECK_SOURCE_DIR) / p, ec))
        p = fs::path(MBCHECK_SOURCE_DIR) / p;
      else
#endif
        p = here;
    }
    return fs::weakly_canonical(p).string();
  }
  static std::string repository_of(const std::string& file) {
    std::error_code ec;
    for (fs::path dir = fs::path(file).parent_path(); !dir.empty(); dir = dir.parent_path()) {
      if (fs::exists(dir / ".git", ec)) return dir.string();
      if (dir == dir.root_path()) break;
    }
    // Not in a repository (an unpacked tree): mbcheck's own tree for its files, else the
    // working directory.
#ifdef MBCHECK_SOURCE_DIR
    if (file.rfind(MBCHECK_SOURCE_DIR, 0) == 0) return fs::path(MBCHECK_SOURCE_DIR).parent_path().string();
#endif
    return fs::current_path(ec).string();
  }
  std::string root_;
  bool used_root_ = false;
};

// "spec/x.hpp:12" -> a SARIF physical location (null if the step has no source line).
nlohmann::json sarif_location(SarifPaths& paths, const TraceEntry& t, const std::string& message) {
  const auto colon = t.where.rfind(':');
  if (t.where.empty() || colon == std::string::npos) return nullptr;
  nlohmann::json loc = {{"physicalLocation",
                         {{"artifactLocation", paths.artifact(t.where.substr(0, colon))},
                          {"region", {{"startLine", std::stoi(t.where.substr(colon + 1))}}}}}};
  if (!message.empty()) loc["message"] = {{"text", message}};
  return loc;
}
}  // namespace

std::string sarif_json(const VisualInput* in, const std::string& tool_version, const std::string& source_root) {
  SarifPaths paths(source_root);
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json rules = nlohmann::json::array();
  if (in) {
    rules.push_back({{"id", in->verdict}, {"shortDescription", {{"text", "mbcheck: " + in->verdict}}}});
    nlohmann::json flow = nlohmann::json::array();
    nlohmann::json related = nlohmann::json::array();
    const TraceEntry* failing = nullptr;
    for (const auto& t : in->trace) {
      const bool culprit = std::find(in->culprits.begin(), in->culprits.end(), t.agent) != in->culprits.end();
      if (!culprit) continue;
      nlohmann::json loc = sarif_location(paths, t, fmt::format("#{} {}: {}", t.step, t.who, t.what));
      if (loc.is_null()) continue;
      flow.push_back({{"location", loc}});
      related.push_back(loc);
      failing = &t;
    }
    if (!failing && !in->trace.empty()) failing = &in->trace.back();
    nlohmann::json result = {
        {"ruleId", in->verdict},
        {"level", "error"},
        {"message", {{"text", in->cause + (in->replay_token.empty() ? "" : "\nreplay: " + in->replay_token)}}}};
    if (failing) {
      nlohmann::json loc = sarif_location(paths, *failing, "");
      if (!loc.is_null()) result["locations"] = nlohmann::json::array({loc});
    }
    if (!related.empty()) {
      result["relatedLocations"] = related;
      result["codeFlows"] = nlohmann::json::array({{{"threadFlows", nlohmann::json::array({{{"locations", flow}}})}}});
    }
    results.push_back(result);
  }
  nlohmann::json j = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs", nlohmann::json::array(
                   {{{"tool", {{"driver", {{"name", "mbcheck"}, {"version", tool_version}, {"rules", rules}}}}},
                     {"results", results}}})}};
  if (nlohmann::json base = paths.base_ids(); !base.is_null()) j["runs"][0]["originalUriBaseIds"] = base;
  return j.dump(2);
}

std::string chrome_trace_json(const VisualInput& in) {
  // One track per agent; each step is a 1 us slice at time = step number.
  nlohmann::json events = nlohmann::json::array();
  std::map<AgentId, std::string> names;
  for (const auto& t : in.trace) names.emplace(t.agent, t.who);
  for (const auto& [agent, who] : names)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", agent}, {"args", {{"name", who}}}});
  for (const auto& t : in.trace) {
    const auto at = t.what.find("  => ");
    nlohmann::json args = {{"step", t.step}};
    if (at != std::string::npos) args["barrier state after"] = t.what.substr(at + 5);
    events.push_back({{"ph", "X"},
                      {"name", t.what.substr(0, at)},
                      {"cat", t.barrier.empty() ? "thread" : t.barrier},
                      {"pid", 0},
                      {"tid", t.agent},
                      {"ts", t.step},
                      {"dur", 1},
                      {"args", args}});
  }
  if (!in.trace.empty())
    events.push_back({{"ph", "i"},
                      {"name", fmt::format("{}: {}", in.verdict, in.cause)},
                      {"pid", 0},
                      {"tid", in.trace.back().agent},
                      {"ts", in.trace.back().step + 1},
                      {"s", "g"}});
  nlohmann::json doc = {{"traceEvents", events},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"title", in.title}, {"verdict", in.verdict}, {"replay", in.replay_token}}}};
  return doc.dump(1);
}

std::string html_timeline(const VisualInput& in) {
  nlohmann::json data = {{"title", in.title},      {"verdict", in.verdict},   {"cause", in.cause},
                         {"details", in.details},  {"culprits", in.culprits}, {"replay", in.replay_token},
                         {"steps", steps_json(in)}};
  std::string json = data.dump();
  // Keep the JSON inert inside <script>: no "</" can close the tag early.
  for (std::size_t at = 0; (at = json.find("</", at)) != std::string::npos; at += 3) json.replace(at, 2, "<\\/");
  static const char* kPage = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mbcheck: @TITLE@</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px; } .verdict { font-weight: bold; color: #b00020; }
.verdict.ok { color: #1b7f2a; } .cause { margin: 6px 0 12px; font-family: monospace; white-space: pre-wrap; }
#chart { overflow-x: auto; border: 1px solid #ccc; } .lane-label { cursor: pointer; font-family: monospace; }
.lane-label:hover { text-decoration: underline; } #detail { font-family: monospace; margin-top: 8px; min-height: 3em; }
table { border-collapse: collapse; font-family: monospace; font-size: 12px; margin-top: 12px; }
td, th { border-bottom: 1px solid #eee; padding: 1px 8px; text-align: left; } tr.failing { background: #ffd6d6; }
.token { font-family: monospace; font-size: 11px; word-break: break-all; color: #555; }
</style></head><body>
<h1>mbcheck counterexample</h1>
<div id="title"></div>
<div>verdict: <span id="verdict" class="verdict"></span></div>
<div id="cause" class="cause"></div>
<div>Lanes are warps (click one to show its threads) and bulk copies; each mark is a step. Barrier rows show phase/pending/tx after each change. The failing step is red.</div>
<div id="chart"></div>
<div id="detail">Hover a step for details.</div>
<table id="steps"><thead><tr><th>step</th><th>who</th><th>operation</th><th>barrier after</th><th>source</th></tr></thead><tbody></tbody></table>
<p class="token">replay: <span id="replay"></span></p>
<script id="data" type="application/json">@DATA@</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
document.getElementById("title").textContent = data.title;
const v = document.getElementById("verdict");
v.textContent = data.verdict; if (data.verdict === "ok") v.classList.add("ok");
document.getElementById("cause").textContent = [data.cause].concat(data.details).join("\n");
document.getElementById("replay").textContent = data.replay || "(none)";
const steps = data.steps;
const failing = steps.length ? steps[steps.length - 1].step : -1;
const culprits = new Set(data.culprits);
// Lanes: one per warp (threads collapsed, expandable) and one per copy agent.
const groupOf = s => { const m = s.who.match(/^(cta \d+ )?thread \d+ \(warp (\d+)/); return m ? (m[1] || "") + "warp " + m[2] : s.who; };
const expanded = new Set();
function lanes() {
  const order = [], byKey = new Map();
  for (const s of steps) {
    const g = groupOf(s);
    const key = expanded.has(g) ? s.who : g;
    if (!byKey.has(key)) { byKey.set(key, {key, group: g, steps: [], culprit: false}); order.push(key); }
    const lane = byKey.get(key); lane.steps.push(s); if (culprits.has(s.agent)) lane.culprit = true;
  }
  // In launch order, not in order of first appearance: CTA, warp, thread, then the copies.
  const rank = key => { const m = key.match(/^(?:cta (\d+) )?(?:thread (\d+) \(warp (\d+)|warp (\d+))/);
    if (m) return [0, +(m[1] || 0), +(m[3] || m[4]), m[2] === undefined ? -1 : +m[2]];
    const c = key.match(/#(\d+)/); return [1, 0, c ? +c[1] : 0, 0]; };
  const before = (a, b) => { const ra = rank(a), rb = rank(b);
    for (let i = 0; i < ra.length; ++i) if (ra[i] !== rb[i]) return ra[i] - rb[i]; return a < b ? -1 : a > b ? 1 : 0; };
  return order.sort(before).map(k => byKey.get(k));
}
const barriers = [...new Set(steps.filter(s => s.barrier && s.state).map(s => s.barrier))];
function draw() {
  // rightW: room after the last (failing) step, so that it is never at the chart's very edge.
  const ls = lanes(), rightW = 160, W = Math.max(800, 40 + rightW + steps.length * 6), rowH = 16, labelW = 230;
  const H = (ls.length + barriers.length + 2) * rowH + 10;
  const x = step => labelW + (step - 1) * (W - labelW - rightW) / Math.max(1, failing);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg"); svg.setAttribute("width", W); svg.setAttribute("height", H);
  const chart = document.getElementById("chart"); chart.replaceChildren(svg);  // laid out as drawn: labels are measured
  const text = (t, X, Y, cls, color) => { const e = document.createElementNS(ns, "text"); e.setAttribute("x", X); e.setAttribute("y", Y);
    if (cls) e.setAttribute("class", cls); if (color) e.setAttribute("fill", color); e.textContent = t; svg.appendChild(e); return e; };
  // The lane and barrier names stay in view when the chart scrolls (it opens at the failing
  // step): they sit in a group moved with the scroll, over a white band.
  const names = document.createElementNS(ns, "g");
  const band = document.createElementNS(ns, "rect");
  band.setAttribute("width", labelW - 6); band.setAttribute("height", H); band.setAttribute("fill", "white");
  band.setAttribute("fill-opacity", "0.9"); names.appendChild(band);
  const named = e => { names.appendChild(e); return e; };
  let y = rowH;
  for (const lane of ls) {
    const label = named(text((expanded.has(lane.group) ? "  " : (lane.key === lane.group && /warp/.test(lane.key) ? "+ " : "  ")) + lane.key,
                       4, y + 11, "lane-label", lane.culprit ? "#b00020" : "#222"));
    label.addEventListener("click", () => { expanded.has(lane.group) ? expanded.delete(lane.group) : expanded.add(lane.group); draw(); });
    for (const s of lane.steps) {
      const r = document.createElementNS(ns, "rect");
      r.setAttribute("x", x(s.step)); r.setAttribute("y", y + 2); r.setAttribute("width", 3); r.setAttribute("height", rowH - 4);
      r.setAttribute("fill", s.step === failing ? "#e00000" : (culprits.has(s.agent) ? "#d98b00" : "#4a7bd0"));
      if (s.step === failing) { r.setAttribute("id", "failing-step"); r.setAttribute("width", 6); }
      r.addEventListener("mouseenter", () => document.getElementById("detail").textContent =
        "#" + s.step + " " + s.who + ": " + s.op + (s.state ? "  =>  " + s.state : "") + (s.where ? "  (" + s.where + ")" : ""));
      svg.appendChild(r);
    }
    y += rowH;
  }
  y += rowH / 2;
  for (const b of barriers) {
    named(text(b, 4, y + 11, null, "#555"));
    // A label is drawn only where it does not overlap the one before it (measured as laid
    // out); the failing step's label replaces one it would overlap.
    let last = "", prev = null, prevEnd = -1e9;
    for (const s of steps) if (s.barrier === b && s.state && s.state !== last) {
      last = s.state; const m = s.state.match(/phase (-?\d+), pending (\d+)\/(\d+), tx (-?\d+)/);
      if (!m || (x(s.step) < prevEnd + 4 && s.step !== failing)) continue;
      if (prev && x(s.step) < prevEnd + 4) prev.remove();
      const t = text("p" + m[1] + " " + m[2] + "/" + m[3] + (m[4] !== "0" ? " tx" + m[4] : ""), x(s.step), y + 11, null,
                     s.step === failing ? "#e00000" : "#777");
      t.setAttribute("font-size", "9");
      t.setAttribute("class", "state-label");
      prev = t; prevEnd = x(s.step) + t.getComputedTextLength();
    }
    y += rowH;
  }
  const line = document.createElementNS(ns, "line");
  line.setAttribute("x1", x(failing) + 1); line.setAttribute("x2", x(failing) + 1); line.setAttribute("y1", 0); line.setAttribute("y2", H);
  line.setAttribute("stroke", "#e00000"); line.setAttribute("stroke-dasharray", "3,3"); svg.appendChild(line);
  svg.appendChild(names);  // drawn last: above the marks it covers
  const keepNames = () => names.setAttribute("transform", "translate(" + chart.scrollLeft + ",0)");
  chart.onscroll = keepNames;
  // Open at the failing step: scrolled so that it is in view, a third from the right.
  chart.scrollLeft = Math.max(0, x(failing) - chart.clientWidth * 2 / 3);
  keepNames();
  // What the page test reads: how many state labels overlap as laid out (none should).
  const boxes = [...svg.querySelectorAll(".state-label")].map(e => e.getBBox());
  let overlaps = 0;
  for (let i = 0; i < boxes.length; ++i) for (let k = i + 1; k < boxes.length; ++k) {
    const a = boxes[i], c = boxes[k];
    if (a.x < c.x + c.width && c.x < a.x + a.width && a.y < c.y + c.height && c.y < a.y + a.height) ++overlaps;
  }
  chart.dataset.overlaps = overlaps;
}
draw();
// The step table: consecutive steps of lanes that behave alike (threads of one warp doing
// the same operation at the same source line, none of them a culprit) are one row,
// "#a-#b warp N (k threads): op x k"; a click shows them one by one.
const body = document.querySelector("#steps tbody");
const row = (cells, cls) => { const tr = document.createElement("tr"); if (cls) tr.className = cls;
  for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); } return tr; };
const alike = (a, b) => !culprits.has(a.agent) && !culprits.has(b.agent) && a.step !== failing && b.step !== failing &&
  groupOf(a) === groupOf(b) && groupOf(a) !== a.who && a.op === b.op && a.where === b.where;
for (let i = 0; i < steps.length;) {
  let j = i + 1;
  while (j < steps.length && alike(steps[i], steps[j])) ++j;
  const run = steps.slice(i, j);
  if (run.length === 1) {
    const s = run[0], tr = row(["#" + s.step, s.who, s.op, s.state, s.where]);
    if (s.step === failing) { tr.className = "failing"; tr.id = "failing-row"; }
    body.appendChild(tr);
  } else {
    const first = run[0], last = run[run.length - 1];
    const summary = row(["#" + first.step + "-#" + last.step, groupOf(first) + " (" + new Set(run.map(s => s.agent)).size + " threads)",
                         first.op + " x" + run.length, last.state, first.where], "collapsed");
    const detail = run.map(s => { const tr = row(["#" + s.step, s.who, s.op, s.state, s.where], "detail"); tr.hidden = true; return tr; });
    summary.addEventListener("click", () => { for (const tr of detail) tr.hidden = !tr.hidden; });
    body.appendChild(summary);
    for (const tr of detail) body.appendChild(tr);
  }
  i = j;
}
document.body.setAttribute("data-rendered", "yes");
</script></body></html>
)HTML";
  std::string page = kPage;
  auto escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '<')
        out += "&lt;";
      else if (c == '>')
        out += "&gt;";
      else if (c == '&')
        out += "&amp;";
      else
        out += c;
    }
    return out;
  };
  page.replace(page.find("@TITLE@"), 7, escape(in.title));
  page.replace(page.find("@DATA@"), 6, json);
  return page;
}

}  // namespace mbcheck::sim
