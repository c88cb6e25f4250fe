// SPDX-License-Identifier: Apache-2.0
/*
 * Decodes line tables given on stdin, one query per line:
 *     MINOR FIRSTLINENO HEX_TABLE OFFSET [OFFSET...]
 * and prints the decoded line for each offset ("-1" when none). Used by
 * tests/test_linetable.py to compare our decoders with what each real
 * interpreter says about its own code objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/linetable.h"

int main(void)
{
	static char line[1 << 22];
	static uint8_t table[1 << 21];

	while (fgets(line, sizeof(line), stdin)) {
		char *save = NULL, *tok;
		int minor = atoi(strtok_r(line, " \n", &save));
		int first = atoi(strtok_r(NULL, " \n", &save));
		char *hex = strtok_r(NULL, " \n", &save);
		size_t n = 0;

		if (!hex)
			return 2;
		if (strcmp(hex, "-") != 0)
			for (; hex[2 * n] && hex[2 * n + 1] && n < sizeof(table); n++)
				sscanf(hex + 2 * n, "%2hhx", &table[n]);
		while ((tok = strtok_r(NULL, " \n", &save)))
			printf("%d ", linetable_line(py_rules_for(minor, false)->line_format, table, n, first, atoll(tok)));
		printf("\n");
	}
	return 0;
}
