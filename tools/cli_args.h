/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single command-line arguments: PIDs, PID lists, bounded integers, and
 * --version. No BPF: pydump uses them as the BPF tools do (cli.h).
 */
#ifndef PYBPF_CLI_ARGS_H
#define PYBPF_CLI_ARGS_H

#include <stddef.h>
#include <sys/types.h>

/* Parses a positive PID. Returns 0 or -1. */
int cli_parse_pid(const char *s, pid_t *pid);

/* Parses "123,456", appending to pids (n of max used). Returns 0 or -1. */
int cli_parse_pid_list(const char *list, pid_t *pids, size_t max, size_t *n);

/* Parses a decimal integer in [min, max]. Returns 0 or -1. */
int cli_parse_int(const char *s, long long min, long long max, long long *out);

/* The same into an int. */
int cli_parse_small_int(const char *s, int min, int max, int *out);

/* "pydump (pybpf-tools) 0.1.0" */
void cli_print_version(const char *tool);

#endif
