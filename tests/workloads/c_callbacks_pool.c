/*
 * A C thread pool calling a Python callback (see c_callbacks.py). It uses
 * nothing of the C library by name: pthread_create, pthread_join, malloc
 * and free are handed in, so the library loads under the old glibc of a
 * chroot too. Build:
 *   gcc -shared -fPIC -O2 -nostdlib -fno-stack-protector -o pool.so c_callbacks_pool.c
 *
 * Between two calls each thread allocates blocks of many sizes and keeps
 * them until after the next call, as a C library doing work of its own
 * would: the thread state the last call freed is among what it takes, so
 * the next call's thread state is at another address, while the freed
 * one's memory still holds the thread's id.
 */
typedef int (*create_fn)(unsigned long *thread, const void *attr, void *(*start)(void *),
			 void *arg);
typedef int (*join_fn)(unsigned long thread, void **ret);
typedef void *(*malloc_fn)(unsigned long size);
typedef void (*free_fn)(void *ptr);
typedef int (*callback_fn)(int index);

#define MAX_THREADS 16
#define BLOCKS 160 /* 256 .. 2800 bytes, 16 apart */

static callback_fn callback;
static malloc_fn mem_alloc;
static free_fn mem_free;

static void *worker(void *arg)
{
	void *held[2][BLOCKS] = { { 0 } };
	int index = 0;

	(void)arg;
	while (!callback(index)) {
		void **now = held[index & 1], **before = held[(index + 1) & 1];

		for (int k = 0; k < BLOCKS; k++)
			now[k] = mem_alloc(256 + 16 * (unsigned long)k);
		for (int k = 0; k < BLOCKS; k++) {
			if (before[k])
				mem_free(before[k]);
			before[k] = 0;
		}
		index++;
	}
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < BLOCKS; k++)
			if (held[b][k])
				mem_free(held[b][k]);
	return 0;
}

int run_pool(create_fn create, join_fn join, malloc_fn alloc, free_fn release, callback_fn fn,
	     int threads)
{
	unsigned long ids[MAX_THREADS];
	int started = 0;

	callback = fn;
	mem_alloc = alloc;
	mem_free = release;
	for (int i = 0; i < threads && i < MAX_THREADS; i++)
		if (create(&ids[started], 0, worker, 0) == 0)
			started++;
	for (int i = 0; i < started; i++)
		join(ids[i], 0);
	return started == threads ? 0 : 1;
}
