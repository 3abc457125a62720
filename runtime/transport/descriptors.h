/*
 * descriptors.h - running out of file descriptors: the limit raised at start-up to what the
 * workers' TCP connections need, and what a listener does when accept finds none left.
 */
#ifndef ZB_DESCRIPTORS_H
#define ZB_DESCRIPTORS_H

/* The descriptors `threads` workers with `max_conns` TCP connections each and `sockets`
 * listening sockets need. */
unsigned long zb_descriptors_needed(unsigned threads, unsigned max_conns, unsigned sockets);

/* Raise the soft RLIMIT_NOFILE toward `need`, up to the hard limit; returns the soft limit
 * now (`need` or more when it was enough). */
unsigned long zb_raise_descriptor_limit(unsigned long need);

/* Whether accept's failure (`err`, its errno) leaves the connection waiting in the queue:
 * out of descriptors or memory. The listener stays readable, and accepting again at once
 * would spin. */
int zb_accept_exhausted(int err);

/* A helper thread's listener after such a failure: wait a tenth of a second, or until
 * `stop_fd` is readable. */
void zb_accept_backoff(int stop_fd);

#endif
