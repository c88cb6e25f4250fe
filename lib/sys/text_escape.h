/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text from a target (process and thread names, paths, symbol names, task
 * names) made safe for a terminal and for line- and ';'-separated output:
 * every C0 control byte (0x00-0x1f, newline and tab included), DEL, every
 * C1 control (U+0080-U+009F in UTF-8) and every byte that is not part of
 * valid UTF-8 (C1 as raw bytes among them) becomes a visible "\xHH" escape
 * of each of its bytes; the rest of UTF-8 is kept as it is. Escaping is
 * idempotent ('\\' itself is kept), so text escaped once may pass through
 * another sink unchanged. Every text sink uses this one helper; JSON, XML
 * and protobuf writers escape as their formats require instead.
 */
#ifndef PYBPF_SYS_TEXT_ESCAPE_H
#define PYBPF_SYS_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Escapes src into dst (len bytes, NUL-terminated when len > 0), also each
 * byte of also_escape (e.g. ";" for folded stacks). An escape is never cut
 * in half: when dst is too small, it ends before the first escape or
 * character that does not fit. Returns the length the whole escaped text
 * has (snprintf's convention: >= len means it was cut).
 */
size_t text_escape(char *dst, size_t len, const char *src, const char *also_escape);

/* src escaped (as text_escape, nothing more) to out. */
void text_escape_write(FILE *out, const char *src);

/* Length of the valid UTF-8 character at s that is no control (1 for
 * printable ASCII), 0 if the byte at s must be escaped or ends the text. */
size_t text_char_len(const char *s);

/*
 * src escaped in a buffer that lives until the end of the enclosing block,
 * for printf arguments: fprintf(stderr, "PID %d (%s)\n", pid,
 * TEXT_ESC(comm)). Longer text is cut (messages, not data).
 */
#define TEXT_ESC_MAX 1024
#define TEXT_ESC(s) text_escaped((char[TEXT_ESC_MAX]){ 0 }, TEXT_ESC_MAX, (s))
const char *text_escaped(char *buf, size_t len, const char *src);

#endif
