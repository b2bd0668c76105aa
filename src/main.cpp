// specprobe entry point: parse arguments -> run the subcommand -> print -> exit code.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return specprobe::run_cli(argc, argv); }
