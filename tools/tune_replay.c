#include "subcommands.h"
const char tune_help[] = "usage: tilec tune --replay LOG\n";
int cmd_tune(int argc, char **argv) {
    (void)argc, (void)argv;
    return 2;
}
