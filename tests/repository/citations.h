#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace topofit::testing {

// The repository stands on its own: what its documents link to and what its comments cite must be in it.
// These read a checkout and list what is wrong, one line each ("README.md: link docs/extender.md#nope: no such heading").

// Every relative Markdown link ([text](path) or [text](path#anchor)) of every .md file under `root`: the
// path exists (relative to the linking file), and an anchor names a heading of the target as GitHub
// renders it (lower case, punctuation dropped, spaces as '-', -1, -2... for repeats).
std::vector<std::string> BrokenLinks(const std::filesystem::path& root);

// Every repository path a document, comment or script cites (a word such as `decision/filter.h` that starts
// with one of the repository's top-level folders and ends in a source or document extension) exists,
// relative to the root or to the citing file. Generated protobuf headers (*.pb.h) are not in a checkout.
std::vector<std::string> MissingCitedPaths(const std::filesystem::path& root);

// Files that cite something outside the repository that its readers never see: `needles`, each a string
// no file may contain.
std::vector<std::string> OutsideCitations(const std::filesystem::path& root, const std::vector<std::string>& needles);

// GitHub's anchor for a Markdown heading's text.
std::string HeadingAnchor(const std::string& heading);

}  // namespace topofit::testing
