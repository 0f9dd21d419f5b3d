#include "tests/repository/citations.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace topofit::testing {
namespace fs = std::filesystem;
namespace {

// Folders never read: version control, build trees, installed npm packages, bench output.
bool Skipped(const fs::path& dir) {
  const std::string name = dir.filename().string();
  return name == ".git" || name == "node_modules" || name == "out" || name.rfind("build", 0) == 0;
}

// The files under `root` whose extension is one of `extensions` (a name without one, such as
// Dockerfile, by its name), in a stable order.
std::vector<fs::path> FilesUnder(const fs::path& root, const std::set<std::string>& extensions) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && Skipped(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    const fs::path& p = it->path();
    if (it->is_regular_file() && (extensions.count(p.extension().string()) > 0 || extensions.count(p.filename().string()) > 0)) {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Relative(const fs::path& file, const fs::path& root) { return fs::relative(file, root).generic_string(); }

// The anchors of a Markdown file's headings (outside code fences).
std::set<std::string> AnchorsOf(const fs::path& file) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  std::istringstream lines(Read(file));
  bool in_fence = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence || line.empty() || line[0] != '#') continue;
    const size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    const std::string anchor = HeadingAnchor(line.substr(text + 1));
    const int repeat = seen[anchor]++;
    anchors.insert(repeat == 0 ? anchor : anchor + "-" + std::to_string(repeat));
  }
  return anchors;
}

bool IsPathChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
}

}  // namespace

std::string HeadingAnchor(const std::string& heading) {
  std::string anchor;
  size_t end = heading.find_last_not_of(" \t\r");
  for (size_t i = 0; end != std::string::npos && i <= end; ++i) {
    const unsigned char c = static_cast<unsigned char>(heading[i]);
    if (std::isalnum(c) || c == '_' || c == '-') {
      anchor.push_back(static_cast<char>(std::tolower(c)));
    } else if (c == ' ') {
      anchor.push_back('-');
    }  // punctuation and non-ASCII (dashes, quotes) are dropped
  }
  return anchor;
}

std::vector<std::string> BrokenLinks(const fs::path& root) {
  std::vector<std::string> broken;
  std::map<fs::path, std::set<std::string>> anchors;
  for (const fs::path& file : FilesUnder(root, {".md"})) {
    const std::string text = Read(file);
    for (size_t at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
      const size_t close = text.find_first_of(") \n", at + 2);
      if (close == std::string::npos || text[close] != ')') continue;
      const std::string target = text.substr(at + 2, close - at - 2);
      if (target.empty() || target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      const size_t hash = target.find('#');
      const std::string path = target.substr(0, hash);
      const fs::path resolved = path.empty() ? file : (file.parent_path() / path).lexically_normal();
      const std::string where = Relative(file, root) + ": link " + target;
      if (!fs::exists(resolved)) {
        broken.push_back(where + ": no such file");
        continue;
      }
      if (hash == std::string::npos || resolved.extension() != ".md") continue;
      auto [it, inserted] = anchors.try_emplace(resolved);
      if (inserted) it->second = AnchorsOf(resolved);
      if (it->second.count(target.substr(hash + 1)) == 0) broken.push_back(where + ": no such heading");
    }
  }
  return broken;
}

std::vector<std::string> MissingCitedPaths(const fs::path& root) {
  std::set<std::string> top;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    if (entry.is_directory() && !Skipped(entry.path()) && entry.path().filename().string()[0] != '.') {
      top.insert(entry.path().filename().string());
    }
  }
  const std::set<std::string> cited_kinds = {".h", ".cc", ".md", ".proto", ".sh", ".yaml", ".json", ".txt", ".go"};
  std::vector<std::string> missing;
  for (const fs::path& file : FilesUnder(root, {".md", ".h", ".cc", ".proto", ".sh", ".txt", ".yaml", ".yml", "Dockerfile"})) {
    const std::string text = Read(file);
    std::set<std::string> reported;
    for (size_t i = 0; i < text.size();) {
      if (!IsPathChar(text[i])) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < text.size() && IsPathChar(text[end])) ++end;
      std::string word = text.substr(i, end - i);
      i = end;
      while (!word.empty() && (word.back() == '.' || word.back() == '/')) word.pop_back();  // end of a sentence
      const size_t slash = word.find('/');
      if (slash == std::string::npos || top.count(word.substr(0, slash)) == 0) continue;
      const bool generated = word.size() > 5 && word.compare(word.size() - 5, 5, ".pb.h") == 0;
      if (generated || cited_kinds.count(fs::path(word).extension().string()) == 0) continue;
      if (fs::exists(root / word) || fs::exists(file.parent_path() / word) || !reported.insert(word).second) continue;
      missing.push_back(Relative(file, root) + ": cites " + word + ", which is not in the repository");
    }
  }
  return missing;
}

std::vector<std::string> OutsideCitations(const fs::path& root, const std::vector<std::string>& needles) {
  std::vector<std::string> found;
  for (const fs::path& file :
       FilesUnder(root, {".md", ".h", ".cc", ".proto", ".sh", ".txt", ".yaml", ".yml", ".json", "Dockerfile"})) {
    const std::string text = Read(file);
    for (const std::string& needle : needles) {
      if (text.find(needle) != std::string::npos) found.push_back(Relative(file, root) + ": cites " + needle);
    }
  }
  return found;
}

}  // namespace topofit::testing
