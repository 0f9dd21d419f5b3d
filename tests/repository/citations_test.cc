#include "tests/repository/citations.h"

#include <catch2/catch.hpp>

#include <fstream>

#include "tests/cli/scratch_dir.h"

namespace topofit::testing {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::string Lines(const std::vector<std::string>& problems) {
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  return all;
}

// What a repository would hold: documents and sources, each citing the other. The paths a test writes
// are split in two literals, so that this file cites none of them itself.
struct Checkout {
  cli::testing::ScratchDir dir{"repository-citations"};
  fs::path root = fs::path(dir.path("")).parent_path();
  Checkout() {
    Write(root / "docs" / "guide.md", "# Guide\n\n## Metrics (`/metrics`)\n\n## Metrics (`/metrics`)\n\n```\n# not a heading\n```\n");
    Write(root / "decision" / "filter.h", "// see docs/" "guide.md\n");
    Write(root / "README.md", "[guide](docs/" "guide.md#metrics-metrics) [again](docs/" "guide.md#metrics-metrics-1) "
                              "[web](https://example.com/x.md) [self](#top)\n# Top\n");
  }
};

}  // namespace

TEST_CASE("HeadingAnchor: GitHub's anchor for a heading", "[repository]") {
  CHECK(HeadingAnchor("Metrics (`/metrics`)") == "metrics-metrics");
  CHECK(HeadingAnchor("The verbs (wire: `k8s.io/kube-scheduler/extender/v1`)") == "the-verbs-wire-k8siokube-schedulerextenderv1");
  CHECK(HeadingAnchor("Alibaba GPU 2023 `openb` \xe2\x80\x94 `LoadOpenb(OpenbOptions)`") ==
        "alibaba-gpu-2023-openb--loadopenbopenboptions");
  CHECK(HeadingAnchor("Quick start (fresh Debian 12)  ") == "quick-start-fresh-debian-12");
}

TEST_CASE("the checks find nothing wrong in a checkout whose links and citations hold", "[repository]") {
  Checkout c;
  CHECK(Lines(BrokenLinks(c.root)).empty());
  CHECK(Lines(MissingCitedPaths(c.root)).empty());
}

TEST_CASE("the checks name a broken link, a missing heading and a cited path that is gone", "[repository]") {
  Checkout c;
  Write(c.root / "docs" / "more.md", "[gone](old.md) [heading](guide.md#metrics-metrics-2) [top](../README.md#top)\n");
  Write(c.root / "decision" / "rank.cc", "// moved to decision/" "group_rank.cc long ago; docs/" "guide.md.\n");
  CHECK(BrokenLinks(c.root) == std::vector<std::string>{"docs/" "more.md: link old.md: no such file",
                                                        "docs/" "more.md: link guide.md#metrics-metrics-2: no such heading"});
  CHECK(MissingCitedPaths(c.root) ==
        std::vector<std::string>{"decision/" "rank.cc: cites decision/" "group_rank.cc, which is not in the repository"});
  Write(c.root / "decision" / "group_rank.cc", "");
  CHECK(MissingCitedPaths(c.root).empty());
}

// The repository itself. Its root is where CMake found it.
TEST_CASE("every relative link in the repository's Markdown resolves, anchors included", "[repository]") {
  const std::vector<std::string> problems = BrokenLinks(TOPOFIT_SOURCE_DIR);  // one walk of the tree, shown and checked
  INFO(Lines(problems));
  CHECK(problems.empty());
}

TEST_CASE("every repository path a document, comment or script cites exists", "[repository]") {
  const std::vector<std::string> problems = MissingCitedPaths(TOPOFIT_SOURCE_DIR);  // one walk of the tree, shown and checked
  INFO(Lines(problems));
  CHECK(problems.empty());
}

TEST_CASE("no file cites the design notes or references that live outside the repository", "[repository]") {
  // Split, so that this file does not name them itself.
  const std::vector<std::string> outside = {"DESIGN" ".md",
                                            "shared/" "reference",
                                            "reference/" "kubernetes-wire",
                                            "reference/" "gpu-topology",
                                            "reference/" "baseline-models",
                                            "reference/" "kubelet-device-plugin"};
  const std::vector<std::string> problems = OutsideCitations(TOPOFIT_SOURCE_DIR, outside);  // one walk of the tree, shown and checked
  INFO(Lines(problems));
  CHECK(problems.empty());
}

}  // namespace topofit::testing
