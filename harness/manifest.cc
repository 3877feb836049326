#include "harness/manifest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nvh {
namespace {

using json = nlohmann::json;

constexpr const char* kFormat = "nvh.manifest.v1";
const char* const kStringKeys[] = {"backend", "arch", "tool", "created_by"};
const char* const kAllKeys[] = {"format",     "backend",  "arch", "tool",
                                "created_by", "metadata", "cases"};

bool is_sha256_hex(const std::string& digest) {
  if (digest.size() != 64) return false;
  for (char c : digest) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// JSON quoting shows names with spaces, quotes or dots unambiguously.
std::string quoted(const std::string& text) { return json(text).dump(); }

// Enough of a bad value to recognise it, without flooding the message.
std::string shown(const json& value) {
  const std::string text = value.dump();
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

// The single rule for a case, shared by add_case, writing and reading; "" if it is valid.
std::string case_problem(const std::string& name, const std::string& digest) {
  if (name.empty()) return "case name is empty";
  if (!is_sha256_hex(digest)) {
    return "digest = " + quoted(digest) + ": must be 64 lowercase hex digits";
  }
  return "";
}

// Every read error carries the file; `where` is "read_manifest: <path>".
[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

std::string file_contents(const std::string& path, const std::string& where) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(where, std::string("cannot open for reading: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A nested key as the messages show it: "cases"."name".
std::string dotted(const std::vector<std::string>& keys) {
  std::string text;
  for (const std::string& key : keys) text += (text.empty() ? "" : ".") + quoted(key);
  return text;
}

// Parses JSON, rejecting a key repeated within one object: nlohmann would
// silently keep the last one, hiding a duplicate case name.
json parse_rejecting_duplicate_keys(const std::string& text, const std::string& where) {
  std::vector<std::set<std::string>> keys_seen;  // one per open object
  std::vector<std::string> key_path;             // the current key of each open object
  std::string duplicate;                         // the first repeated key path
  auto callback = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_seen.emplace_back();
      key_path.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys_seen.pop_back();
      key_path.pop_back();
    } else if (event == json::parse_event_t::key) {
      key_path.back() = parsed.get<std::string>();
      if (!keys_seen.back().insert(key_path.back()).second && duplicate.empty()) {
        duplicate = dotted(key_path);
      }
    }
    return true;
  };
  json document;
  try {
    document = json::parse(text, callback);
  } catch (const json::parse_error& e) {
    fail(where, std::string("not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) fail(where, "key " + duplicate + " appears more than once");
  return document;
}

std::string string_at(const json& value, const std::string& key, const std::string& where) {
  if (!value.is_string()) fail(where, "key " + key + " = " + shown(value) + ": must be a string");
  return value.get<std::string>();
}

// Both "metadata" and "cases" are objects whose values are all strings.
std::map<std::string, std::string> string_map_at(const json& object, const std::string& name,
                                                 const std::string& where) {
  if (!object.is_object()) {
    fail(where, "key " + quoted(name) + " = " + shown(object) + ": must be an object of strings");
  }
  std::map<std::string, std::string> result;
  for (const auto& item : object.items()) {
    result[item.key()] = string_at(item.value(), quoted(name) + "." + quoted(item.key()), where);
  }
  return result;
}

// A manifest file has exactly the keys this version writes, no more, no fewer.
void check_keys(const json& document, const std::string& where) {
  if (!document.is_object()) fail(where, "top level = " + shown(document) + ": must be an object");
  for (const auto& item : document.items()) {
    if (std::find(std::begin(kAllKeys), std::end(kAllKeys), item.key()) == std::end(kAllKeys)) {
      fail(where, "unknown key " + quoted(item.key()));
    }
  }
  for (const char* key : kAllKeys) {
    if (!document.contains(key)) fail(where, std::string("missing key ") + quoted(key));
  }
}

Manifest manifest_from_document(const json& document, const std::string& where) {
  check_keys(document, where);
  const std::string format = string_at(document["format"], quoted("format"), where);
  if (format != kFormat) {
    fail(where, "key \"format\" = " + quoted(format) + ": expected " + quoted(kFormat));
  }
  Manifest manifest;
  std::string* const fields[] = {&manifest.backend, &manifest.arch, &manifest.tool,
                                 &manifest.created_by};
  for (std::size_t i = 0; i < std::size(kStringKeys); ++i) {
    *fields[i] = string_at(document[kStringKeys[i]], quoted(kStringKeys[i]), where);
  }
  manifest.metadata = string_map_at(document["metadata"], "metadata", where);
  manifest.cases = string_map_at(document["cases"], "cases", where);
  for (const auto& [name, digest] : manifest.cases) {
    const std::string problem = case_problem(name, digest);
    if (!problem.empty()) fail(where, "key \"cases\"." + quoted(name) + ": " + problem);
  }
  return manifest;
}

// One section of render_diff; an empty section is left out.
void render_names(std::ostringstream& out, const std::string& title,
                  const std::vector<std::string>& names) {
  if (names.empty()) return;
  out << "  " << title << " (" << names.size() << "):\n";
  for (const std::string& name : names) out << "    " << name << "\n";
}

}  // namespace

void Manifest::add_case(const std::string& name, const std::string& digest) {
  const std::string problem = case_problem(name, digest);
  if (!problem.empty()) {
    throw std::invalid_argument("Manifest::add_case: case " + quoted(name) + ": " + problem);
  }
  const auto [it, added] = cases.emplace(name, digest);
  if (!added) {
    throw std::invalid_argument("Manifest::add_case: case " + quoted(name) +
                                ": already present with digest " + it->second);
  }
}

std::string manifest_to_json(const Manifest& manifest) {
  for (const auto& [name, digest] : manifest.cases) {
    const std::string problem = case_problem(name, digest);
    if (!problem.empty()) {
      throw std::invalid_argument("manifest_to_json: case " + quoted(name) + ": " + problem);
    }
  }
  // ordered_json keeps the insertion order below; the std::maps insert sorted.
  nlohmann::ordered_json document;
  document["format"] = kFormat;
  document["backend"] = manifest.backend;
  document["arch"] = manifest.arch;
  document["tool"] = manifest.tool;
  document["created_by"] = manifest.created_by;
  document["metadata"] = manifest.metadata;
  document["cases"] = manifest.cases;
  try {
    return document.dump(2) + "\n";
  } catch (const json::type_error& e) {  // a string that is not valid UTF-8
    throw std::invalid_argument(std::string("manifest_to_json: ") + e.what());
  }
}

void write_manifest(const Manifest& manifest, const std::string& path) {
  const std::string text = manifest_to_json(manifest);
  const std::string where = "write_manifest: " + path;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(where, std::string("cannot open for writing: ") + std::strerror(errno));
  out << text;
  out.close();
  if (!out) fail(where, "write failed");
}

Manifest read_manifest(const std::string& path) {
  const std::string where = "read_manifest: " + path;
  return manifest_from_document(parse_rejecting_duplicate_keys(file_contents(path, where), where),
                                where);
}

Manifest parse_manifest(const std::string& text, const std::string& source) {
  const std::string where = "parse_manifest: " + source;
  return manifest_from_document(parse_rejecting_duplicate_keys(text, where), where);
}

bool ManifestDiff::empty() const {
  return only_in_a.empty() && only_in_b.empty() && differing.empty();
}

bool ManifestDiff::agree() const { return empty() && matching > 0; }

ManifestDiff compare(const Manifest& a, const Manifest& b) {
  ManifestDiff diff;
  auto ia = a.cases.begin();
  auto ib = b.cases.begin();
  // Merge walk over the two name-sorted maps.
  while (ia != a.cases.end() || ib != b.cases.end()) {
    if (ib == b.cases.end() || (ia != a.cases.end() && ia->first < ib->first)) {
      diff.only_in_a.push_back((ia++)->first);
    } else if (ia == a.cases.end() || ib->first < ia->first) {
      diff.only_in_b.push_back((ib++)->first);
    } else {
      if (ia->second == ib->second) {
        ++diff.matching;
      } else {
        diff.differing.push_back({ia->first, ia->second, ib->second});
      }
      ++ia;
      ++ib;
    }
  }
  return diff;
}

std::string render_diff(const ManifestDiff& diff, std::string_view label_a,
                        std::string_view label_b) {
  std::ostringstream out;
  const char* verdict = diff.matching == 0 && diff.differing.empty()
                            ? "manifests have NO CASE IN COMMON"
                        : diff.agree() ? "manifests agree"
                                       : "manifests DIFFER";
  out << verdict << ": a = " << label_a << ", b = " << label_b << "\n";
  out << "  matching digests: " << diff.matching << "\n";
  render_names(out, "only in a", diff.only_in_a);
  render_names(out, "only in b", diff.only_in_b);
  if (!diff.differing.empty()) {
    out << "  differing digests (" << diff.differing.size() << "):\n";
    for (const DigestMismatch& m : diff.differing) {
      out << "    " << m.name << "\n      a: " << m.digest_a << "\n      b: " << m.digest_b << "\n";
    }
  }
  return out.str();
}

}  // namespace nvh
