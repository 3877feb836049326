#include "harness/route_gate.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nvh {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

using Counts = std::map<std::string, std::size_t>;

std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

[[noreturn]] void invalid(const std::string& argument, const std::string& what) {
  throw std::invalid_argument("evaluate_gate: " + argument + ": " + what);
}

// Names must be non-empty and unique, or a record could not be attributed to one.
// Messages name element i as argument[i]field.
void check_names(const std::vector<std::string>& names, const std::string& argument,
                 const std::string& field) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string at =
        argument + "[" + std::to_string(i) + "]" + field + " = " + quoted(names[i]);
    if (names[i].empty()) invalid(at, "must be non-empty");
    if (!seen.insert(names[i]).second) invalid(at, "declared twice");
  }
}

void validate(const GateDeclaration& declaration, const HardwareGates& gates) {
  if (declaration.op.empty()) invalid("declaration.op = \"\"", "must be non-empty");
  if (declaration.routes.empty()) invalid("declaration.routes = []", "must declare a route");
  std::vector<std::string> routes;
  for (std::size_t i = 0; i < declaration.routes.size(); ++i) {
    const RouteDeclaration& route = declaration.routes[i];
    routes.push_back(route.route);
    const std::string at = "declaration.routes[" + std::to_string(i) + "].reasons";
    // A route without reasons could never run without being UNDECLARED.
    if (route.reasons.empty()) invalid(at + " = []", "a route must claim at least one reason");
    check_names(route.reasons, at, "");
  }
  check_names(routes, "declaration.routes", ".route");
  for (std::size_t i = 0; i < declaration.families.size(); ++i) {
    const std::string at = "declaration.families[" + std::to_string(i) + "]";
    if (declaration.families[i].family.empty()) invalid(at + ".family = \"\"", "must be non-empty");
    if (declaration.families[i].routes.empty())
      invalid(at + ".routes = []", "a family must target a route");
  }
  for (const auto& [route, capability] : gates) {
    const std::string at = "gates[" + quoted(route) + "]";
    if (std::find(routes.begin(), routes.end(), route) == routes.end()) {
      invalid(at, "route is not declared");
    }
    if (capability.empty()) invalid(at + " = \"\"", "the missing capability must be named");
  }
}

// The one rule for declared routes and reasons: a gated one must not run, any other must.
Coverage declared_status(std::size_t executed, bool gated) {
  if (gated) return executed == 0 ? Coverage::kHardwareGated : Coverage::kExecutedWhileGated;
  return executed > 0 ? Coverage::kExecuted : Coverage::kMissing;
}

bool is_failure(Coverage status) {
  return status == Coverage::kMissing || status == Coverage::kExecutedWhileGated ||
         status == Coverage::kUndeclared;
}

std::size_t count_in(const Counts& counts, const std::string& key) {
  const auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

// One route's row; declared reasons first, then reasons the records used without claiming
// them. An empty `declared` marks an undeclared route (validate() rejects declared routes
// without reasons).
RouteCoverage route_coverage(const std::string& route, const std::vector<std::string>& declared,
                             const std::string* capability, const Counts& reasons,
                             const Counts& families) {
  RouteCoverage coverage;
  coverage.route = route;
  coverage.by_family = families;
  for (const auto& [family, count] : families) coverage.executed += count;
  coverage.status = declared.empty() ? Coverage::kUndeclared
                                     : declared_status(coverage.executed, capability != nullptr);
  if (capability != nullptr) coverage.capability = *capability;
  for (const std::string& reason : declared) {
    const std::size_t count = count_in(reasons, reason);
    coverage.reasons.push_back({reason, count, declared_status(count, capability != nullptr)});
  }
  for (const auto& [reason, count] : reasons) {
    if (std::find(declared.begin(), declared.end(), reason) == declared.end()) {
      coverage.reasons.push_back({reason, count, Coverage::kUndeclared});
    }
  }
  return coverage;
}

// How a person reads the text: whether the gate is judged (a filtered run is not).
struct Rendering {
  bool judged = true;
};

// The text a person reads for a status; a gated route always names the capability.
std::string status_text(Coverage status, const std::string& capability, const Rendering& how = {}) {
  if (status == Coverage::kMissing && !how.judged) return "not reached";
  if (status == Coverage::kHardwareGated) return "hardware-gated: " + capability;
  if (status == Coverage::kExecutedWhileGated) {
    return "EXECUTED-WHILE-GATED (machine lacks: " + capability + ")";
  }
  return std::string(to_string(status));
}

std::string family_label(const std::string& family) { return family.empty() ? "(none)" : family; }

// Left-aligned text padded to width.
std::string pad_right(const std::string& text, std::size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

// Right-aligned text padded to width.
std::string pad_left(const std::string& text, std::size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

// Rows = routes, columns = families, total, status; every column as wide as its widest cell.
void render_table(std::ostringstream& out, const GateReport& report, const Rendering& how) {
  std::vector<std::string> header = {"route"};
  for (const std::string& family : report.families) header.push_back(family_label(family));
  header.push_back("total");
  header.push_back("status");
  std::vector<std::vector<std::string>> rows;
  for (const RouteCoverage& route : report.routes) {
    std::vector<std::string> row = {route.route};
    for (const std::string& family : report.families) {
      row.push_back(std::to_string(count_in(route.by_family, family)));
    }
    row.push_back(std::to_string(route.executed));
    row.push_back(status_text(route.status, route.capability, how));
    rows.push_back(row);
  }
  std::vector<std::size_t> widths;
  for (const std::string& cell : header) widths.push_back(cell.size());
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print = [&](const std::vector<std::string>& cells) {
    std::string line = pad_right(cells[0], widths[0]);
    for (std::size_t c = 1; c + 1 < cells.size(); ++c) line += "  " + pad_left(cells[c], widths[c]);
    out << line << "  " << cells.back() << "\n";
  };
  print(header);
  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.push_back(std::string(width, '-'));
  print(rule);
  for (const auto& row : rows) print(row);
}

void render_reasons(std::ostringstream& out, const GateReport& report, const Rendering& how) {
  std::size_t reason_width = 0;
  std::size_t count_width = 0;
  for (const RouteCoverage& route : report.routes) {
    for (const ReasonCoverage& reason : route.reasons) {
      reason_width = std::max(reason_width, reason.reason.size());
      count_width = std::max(count_width, std::to_string(reason.executed).size());
    }
  }
  out << "reasons:\n";
  for (const RouteCoverage& route : report.routes) {
    out << "  " << route.route << "\n";
    for (const ReasonCoverage& reason : route.reasons) {
      out << "    " << pad_right(reason.reason, reason_width) << "  "
          << pad_left(std::to_string(reason.executed), count_width) << "  "
          << status_text(reason.status, route.capability, how) << "\n";
    }
  }
}

}  // namespace

std::string_view to_string(Coverage coverage) {
  switch (coverage) {
    case Coverage::kExecuted:
      return "executed";
    case Coverage::kHardwareGated:
      return "hardware-gated";
    case Coverage::kMissing:
      return "MISSING";
    case Coverage::kExecutedWhileGated:
      return "EXECUTED-WHILE-GATED";
    case Coverage::kUndeclared:
      return "UNDECLARED";
  }
  return "?";  // unreachable for valid enumerators; keeps -Wreturn-type quiet
}

std::vector<std::string> GateReport::problems() const {
  std::vector<std::string> lines;
  for (const RouteCoverage& route : routes) {
    if (is_failure(route.status)) {
      lines.push_back("route " + quoted(route.route) + ": " +
                      status_text(route.status, route.capability) + ", " +
                      std::to_string(route.executed) + " launches");
    }
    for (const ReasonCoverage& reason : route.reasons) {
      if (is_failure(reason.status)) {
        lines.push_back("route " + quoted(route.route) + " reason " + quoted(reason.reason) + ": " +
                        status_text(reason.status, route.capability) + ", " +
                        std::to_string(reason.executed) + " launches");
      }
    }
  }
  for (const FamilyCoverage& f : required_families) {
    if (f.status == Coverage::kMissing) {
      lines.push_back("family " + quoted(f.family) + ": MISSING, no launch on its routes (" +
                      joined(f.routes) + ")");
    }
  }
  return lines;
}

bool GateReport::passed() const { return problems().empty(); }

namespace {

FamilyCoverage family_coverage(const FamilyDeclaration& family,
                               const std::vector<LaunchRecord>& records, const std::string& op) {
  FamilyCoverage c{family.family, family.routes, 0, Coverage::kMissing};
  for (const LaunchRecord& r : records) {
    if (r.op == op && r.family == family.family &&
        std::find(family.routes.begin(), family.routes.end(), r.route) != family.routes.end()) {
      ++c.on_target;
    }
  }
  if (c.on_target > 0) c.status = Coverage::kExecuted;
  return c;
}

}  // namespace

GateReport evaluate_gate(const GateDeclaration& declaration, const HardwareGates& gates,
                         const std::vector<LaunchRecord>& records) {
  validate(declaration, gates);
  GateReport report;
  report.op = declaration.op;
  std::map<std::string, Counts> reasons_by_route;
  std::map<std::string, Counts> families_by_route;
  std::set<std::string> families;
  for (const LaunchRecord& record : records) {
    if (record.op != declaration.op) {
      ++report.other_op_records;
      continue;
    }
    ++reasons_by_route[record.route][record.reason];
    ++families_by_route[record.route][record.family];
    families.insert(record.family);
  }
  report.families.assign(families.begin(), families.end());
  for (const RouteDeclaration& route : declaration.routes) {
    const auto gate = gates.find(route.route);
    report.routes.push_back(
        route_coverage(route.route, route.reasons, gate == gates.end() ? nullptr : &gate->second,
                       reasons_by_route[route.route], families_by_route[route.route]));
    reasons_by_route.erase(route.route);
  }
  // What is left ran without being declared.
  for (const auto& [route, reasons] : reasons_by_route) {
    report.routes.push_back(route_coverage(route, {}, nullptr, reasons, families_by_route[route]));
  }
  for (const FamilyDeclaration& family : declaration.families) {
    report.required_families.push_back(family_coverage(family, records, declaration.op));
  }
  return report;
}

std::string render_gate_text(const GateReport& report, const std::string& not_judged_why) {
  const Rendering how{not_judged_why.empty()};
  const std::vector<std::string> problems =
      how.judged ? report.problems() : std::vector<std::string>{};
  std::ostringstream out;
  out << "route coverage for op " << quoted(report.op) << ": "
      << (!how.judged        ? "gate not judged: " + not_judged_why
          : problems.empty() ? "passed"
                             : "FAILED")
      << "\n\n";
  render_table(out, report, how);
  out << "\n";
  render_reasons(out, report, how);
  if (!report.required_families.empty()) {
    out << "\nfamilies (each must reach one of its routes):\n";
    for (const FamilyCoverage& f : report.required_families) {
      out << "  " << f.family << ": " << f.on_target << " launches on " << joined(f.routes) << "  "
          << (f.status == Coverage::kExecuted ? "executed"
              : how.judged                    ? "MISSING"
                                              : "not reached")
          << "\n";
    }
  }
  if (!problems.empty()) {
    out << "\nproblems (" << problems.size() << "):\n";
    for (const std::string& line : problems) out << "  " << line << "\n";
  }
  if (report.other_op_records > 0) {
    out << "\nrecords of other operators, not judged: " << report.other_op_records << "\n";
  }
  return out.str();
}

std::string render_gate_json(const GateReport& report, const std::string& not_judged_why) {
  using json = nlohmann::ordered_json;
  json routes = json::array();
  for (const RouteCoverage& route : report.routes) {
    json row;
    row["route"] = route.route;
    row["status"] = std::string(to_string(route.status));
    if (!route.capability.empty()) row["capability"] = route.capability;
    row["executed"] = route.executed;
    row["by_family"] = json::object();
    for (const std::string& family : report.families) {
      row["by_family"][family] = count_in(route.by_family, family);
    }
    row["reasons"] = json::array();
    for (const ReasonCoverage& reason : route.reasons) {
      row["reasons"].push_back({{"reason", reason.reason},
                                {"status", std::string(to_string(reason.status))},
                                {"executed", reason.executed}});
    }
    routes.push_back(row);
  }
  json document;
  document["op"] = report.op;
  if (not_judged_why.empty()) {
    document["passed"] = report.passed();
  } else {
    document["passed"] = nullptr;
    document["not_judged_why"] = not_judged_why;
  }
  document["families"] = report.families;
  document["routes"] = routes;
  document["problems"] = report.problems();
  document["other_op_records"] = report.other_op_records;
  return document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace nvh
