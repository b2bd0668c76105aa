// The source root report paths are made relative to (SARIF URIs, GitHub annotations): GitHub and
// GitLab resolve them against the repository root, never against the directory specprobe ran in.
#pragma once
#include <functional>
#include <string>

namespace specprobe {

// The first of: FLAG (--source-root); $GITHUB_WORKSPACE; $CI_PROJECT_DIR (GitLab); the top of the
// git work tree holding INPUT_FILE, or the working directory for a command line (the nearest
// directory upwards with a .git directory or file, as a linked worktree has; no git is run); the
// working directory. GETENV is std::getenv in
// the product; tests pass their own. Returned absolute and normalised.
std::string find_source_root(const std::string& flag, const std::string& input_file,
                             const std::function<const char*(const char*)>& getenv);

}  // namespace specprobe
