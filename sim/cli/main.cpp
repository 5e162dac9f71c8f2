// mbcheck: the command line over the bundled protocols (sim/cli.hpp has it all).
#include "sim/cli.hpp"

int main(int argc, char** argv) { return mbcheck::sim::cli::main(argc, argv, mbcheck::sim::cli::bundled_entries()); }
