/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/detach.h"

#include <bcc/libbpf.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

/* threads at most; more descriptors are shared out among them */
#define DETACH_THREADS 32

struct detach_job {
	const int *perf_fds, *link_fds;
	int nperf, nlink;
};

static void close_job(const struct detach_job *j)
{
	for (int i = 0; i < j->nperf; i++)
		bpf_close_perf_event_fd(j->perf_fds[i]);
	for (int i = 0; i < j->nlink; i++)
		close(j->link_fds[i]);
}

static void *detach_thread(void *arg)
{
	sigset_t all;

	/* Ctrl-C is the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	close_job(arg);
	return NULL;
}

/* The k-th of n slices of count items: [*first, *first + return) */
static int slice(int count, int n, int k, int *first)
{
	int base = count / n, extra = count % n;

	*first = k * base + (k < extra ? k : extra);
	return base + (k < extra);
}

void detach_all_at_once(const int *perf_fds, int nperf, const int *link_fds, int nlink)
{
	struct detach_job jobs[DETACH_THREADS];
	pthread_t threads[DETACH_THREADS];
	bool started[DETACH_THREADS];
	int total = nperf + nlink, n = total < DETACH_THREADS ? total : DETACH_THREADS;

	for (int k = 0; k < n; k++) {
		int pf, lf;

		/* each thread a share of both lists */
		jobs[k].nperf = slice(nperf, n, k, &pf);
		jobs[k].nlink = slice(nlink, n, k, &lf);
		jobs[k].perf_fds = perf_fds + pf;
		jobs[k].link_fds = link_fds + lf;
		started[k] = pthread_create(&threads[k], NULL, detach_thread, &jobs[k]) == 0;
		if (!started[k])
			close_job(&jobs[k]); /* no thread: here, one by one */
	}
	for (int k = 0; k < n; k++)
		if (started[k])
			pthread_join(threads[k], NULL);
}
