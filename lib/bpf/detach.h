/* SPDX-License-Identifier: Apache-2.0 */
#ifndef PYBPF_BPF_DETACH_H
#define PYBPF_BPF_DETACH_H

/*
 * Detaches BPF programs by closing their perf-event descriptors (sampling
 * events, tracepoints, uprobes: disabled first) and their link descriptors
 * (raw tracepoints), all at once. Each close waits for the kernel's RCU
 * grace period, about 80 ms on the development VM: one after another, the
 * fourteen system-call tracepoints that follow mapping changes took 1.1 s
 * at the end of every run. From threads the waits overlap. Returns when
 * every descriptor is closed.
 */
void detach_all_at_once(const int *perf_fds, int nperf, const int *link_fds, int nlink);

#endif
