/* tilec's subcommands beside compile and run, each in a file of its own:
 *   tilec check   every variant of a kernel against the interpreter (check.c)
 *   tilec tune    replay tuning policies against a recorded tuning log (tune_replay.c)
 *   tilec report  a roofline figure from --report counts and measured times (roofline.c)
 * Each takes main's argc/argv (argv[1] the subcommand's name) and returns the exit status:
 * 0, 1 for a failure, 2 for a bad command line. */
#ifndef TILEC_SUBCOMMANDS_H
#define TILEC_SUBCOMMANDS_H

int cmd_check(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_report(int argc, char **argv);

extern const char check_help[];
extern const char tune_help[];
extern const char report_help[];

#endif
