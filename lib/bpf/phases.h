/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the sampling program's time goes, for whoever works on its cost:
 * with PYBPF_PHASES=1 in the environment, the programs are compiled with
 * clocks around their parts (enum pyb_phase, bpf_c/pywalk.bpf.h) and
 * pyprofile -v and pyoffcpu -v print the sums per sample or switch. Off by
 * default: the clocks cost some 20 ns each.
 */
#ifndef PYBPF_BPF_PHASES_H
#define PYBPF_BPF_PHASES_H

#include <stdbool.h>

#include "bpf/module.h"

/* PYBPF_PHASES is set (and not 0). */
bool phases_wanted(void);

/* The figures of m's pyb_phases map, per event (what the tool walks a
 * stack for: "Python sample", "Python switch"), one line on stderr;
 * nothing if the programs were compiled without them. */
void phases_print(struct bpfmod *m, const char *tool, const char *event);

#endif
