// Command-line front end (being built).
#include "cli/cli.hpp"

#include <cstdio>

namespace specprobe {

int run_cli(int, char**) {
  std::fputs("specprobe: under construction\n", stderr);
  return 3;
}

}  // namespace specprobe
