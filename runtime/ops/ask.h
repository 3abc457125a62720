/*
 * ask.h - zonebake-server COMMAND --control PATH: ask the server running at the control
 * socket PATH, and print its answer. COMMAND: stats (the statistics as JSON, one line) or
 * status (pid, workers, sockets).
 */
#ifndef ZB_ASK_H
#define ZB_ASK_H

/* Run the command line argv[1] --control PATH. Returns the exit status: 0, 1 when the server
 * cannot be asked or answers an error, 2 for a usage error. */
int zb_ask(int argc, char **argv);

#endif
