/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a thread blocked in a futex waits for, in Python's terms: the GIL
 * (the futex word lies in the GIL's struct), or a threading lock, found
 * from the futex word: through the parking lot (3.13+: the waiter's entry
 * holds the lock's address next to its semaphore) or by matching the
 * locks among the innermost frames' variables (3.8-3.12: the futex word is
 * the lock's own semaphore). A lock is named only when an object of a
 * lock type is found there; otherwise the wait stays "a futex".
 */
#ifndef PYBPF_CPYTHON_THREAD_WAIT_H
#define PYBPF_CPYTHON_THREAD_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/frames.h"
#include "cpython/objects.h"
#include "sys/proc_wait.h"

enum py_wait_on {
	PY_WAIT_UNKNOWN, /* not a futex wait, or a futex we cannot name */
	PY_WAIT_GIL,
	PY_WAIT_LOCK,
};

struct py_wait {
	enum py_wait_on on;
	uint64_t lock;         /* the lock object; 0 if not found */
	char lock_type[48];    /* "_thread.lock", "_thread.RLock" */
	char lock_where[96];   /* how the program reaches it: "local b", "self._lock" */
	uint64_t owner_ident;  /* an RLock's owner (threading.get_ident()); 0 */
};

/*
 * Classifies the futex wait k of a thread of interpreter interp, whose
 * innermost Python frames are frames[0..nframes). o may be NULL (no
 * object reader: no lock search). Fills *w; PY_WAIT_UNKNOWN when k is not
 * a futex wait.
 */
void py_wait_classify(struct py_process *p, const struct py_objects *o, uint64_t interp,
		      const struct proc_wait *k, const struct py_frame *frames, size_t nframes,
		      struct py_wait *w);

#endif
