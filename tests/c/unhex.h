/*
 * unhex.h - the test programs' reading of hexadecimal input ("-": none).
 */
#ifndef ZB_TEST_UNHEX_H
#define ZB_TEST_UNHEX_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Up to `max` octets from `hex` into `out`; returns how many. */
static inline size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	if (strcmp(hex, "-") == 0)
		return 0;
	for (; hex[2 * n] && hex[2 * n + 1] && n < max; n++)
		sscanf(hex + 2 * n, "%2hhx", &out[n]);
	return n;
}

#endif
