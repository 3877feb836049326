// Hash manifests: the SHA-256 digest of every named case's output, with where
// the digests came from, stored as JSON so two runs (routes, backends,
// machines) can be compared case by case.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nvh {

struct Manifest {
  std::string backend;                          // what computed the digests, e.g. a backend name
  std::string arch;                             // the machine it ran on
  std::string tool;                             // the producing tool and its version
  std::string created_by;                       // the command line that wrote the manifest
  std::map<std::string, std::string> metadata;  // free-form
  std::map<std::string, std::string> cases;     // case name -> 64 lowercase hex digits

  // Adds one case. Throws std::invalid_argument for an empty or repeated name
  // or a digest that is not 64 lowercase hex digits.
  void add_case(const std::string& name, const std::string& digest);
};

// The file format: pretty JSON (2-space indent), keys in this fixed order,
// metadata and cases sorted by key, and a trailing newline:
//   {
//     "format": "nvh.manifest.v1",
//     "backend": "...", "arch": "...", "tool": "...", "created_by": "...",
//     "metadata": {"key": "value", ...},
//     "cases": {"case name": "<64 lowercase hex digits>", ...}
//   }
// Throws std::invalid_argument if a case is malformed (see add_case) or a
// string is not valid UTF-8.
std::string manifest_to_json(const Manifest& manifest);

// Writes manifest_to_json(manifest) to path; throws std::runtime_error naming
// the path if it cannot be written.
void write_manifest(const Manifest& manifest, const std::string& path);

// Reads a manifest file. Throws std::runtime_error naming the path and, where
// there is one, the offending key and value: file not found, bad JSON, a
// missing, unknown or repeated key (a duplicate case name), a value of the
// wrong type, a wrong "format", an empty case name or a malformed digest.
Manifest read_manifest(const std::string& path);

// The same from text already in memory (e.g. a manifest built into the
// binary); `source` names it in the messages as read_manifest's path would.
Manifest parse_manifest(const std::string& text, const std::string& source);

struct DigestMismatch {
  std::string name;
  std::string digest_a;
  std::string digest_b;
};

// How the cases of two manifests differ; metadata is not compared.
struct ManifestDiff {
  std::vector<std::string> only_in_a;     // sorted
  std::vector<std::string> only_in_b;     // sorted
  std::vector<DigestMismatch> differing;  // sorted by name
  std::size_t matching = 0;               // cases with equal digests
  bool empty() const;
  // The manifests agree: no difference, and at least one case compared (two
  // manifests with no case in common prove nothing).
  bool agree() const;
};

ManifestDiff compare(const Manifest& a, const Manifest& b);

// Human-readable diff; label_a and label_b name the two sides (e.g. file paths).
// Its first line says "manifests agree", "manifests DIFFER" or, when no case
// is in both, "manifests have NO CASE IN COMMON".
std::string render_diff(const ManifestDiff& diff, std::string_view label_a,
                        std::string_view label_b);

}  // namespace nvh
