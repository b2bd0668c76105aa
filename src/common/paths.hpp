// Where a path lies. A path taken from an input (a config's `model:` or `--config`, an index's
// shard names) is opened only inside the tree it belongs to (SECURITY.md).
#pragma once
#include <filesystem>

namespace specprobe {

// P lies under BASE (both canonical, compared component by component); never under an empty BASE.
bool path_under(const std::filesystem::path& p, const std::filesystem::path& base);

// PATH, symbolic links resolved, lies in the directory tree of DIR ("" = the current directory);
// false when either does not resolve.
bool inside_tree(const std::filesystem::path& path, const std::filesystem::path& dir);

}  // namespace specprobe
