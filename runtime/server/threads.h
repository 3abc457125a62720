/*
 * threads.h - start a helper thread (control socket, metrics) with every signal blocked:
 * SIGTERM and SIGINT go to the workers' threads, never to a helper, whose waits a signal
 * would cut short.
 */
#ifndef ZB_THREADS_H
#define ZB_THREADS_H

#include <pthread.h>
#include <signal.h>

/* pthread_create's result: 0, or an error number. */
static inline int zb_start_helper_thread(pthread_t *thread, void *(*run)(void *), void *arg)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int failed = pthread_create(thread, NULL, run, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return failed;
}

#endif
