/*
 * diagnostics.c - what the checks find in a zone set: errors, which stop the build with
 * nothing written, and warnings, printed while the zone is served as written. Each names
 * the file and line it concerns, as named-checkzone and kzonecheck do.
 *
 * They are printed once every zone is checked, on stderr, one a line:
 *   diag ZONE SEVERITY LINE FILE_LENGTH FILE MESSAGE
 * (FILE_LENGTH octets of FILE, then a space), which run.py turns into
 * `FILE:LINE: SEVERITY: MESSAGE`. When any zone has errors, each such zone's errors come
 * sorted by position, then its warnings, and nothing of the zones without errors; else
 * every zone's warnings, in the order found.
 */
#define _GNU_SOURCE  /* vasprintf */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"

struct diagnostic {
	uint32_t zone;
	enum severity severity;
	struct pos pos;
	char *text;
};

static VEC(struct diagnostic) found;
/* Those of the checks run on a thread beside the main thread's (main.c), kept apart until
 * they are put back: the order stays the order of checks run one after the other. */
static VEC(struct diagnostic) aside;
static _Thread_local int set_aside;

void diagnostics_aside(int on)
{
	set_aside = on;
}

size_t diagnostics_mark(void)
{
	return found.n;
}

size_t diagnostics_count(void)
{
	return set_aside ? aside.n : found.n;
}

void diagnostics_put_back(size_t mark)
{
	if (aside.n == 0)
		return;
	RESERVE(found, aside.n);
	memmove(found.v + mark + aside.n, found.v + mark, (found.n - mark) * sizeof *found.v);
	memcpy(found.v + mark, aside.v, aside.n * sizeof *found.v);
	found.n += aside.n;
	free(aside.v);
	aside.v = NULL;
	aside.n = aside.cap = 0;
}

void diagnostics_drop(size_t mark)
{
	for (size_t i = mark; i < found.n; i++)
		free(found.v[i].text);
	if (mark < found.n)
		found.n = mark;
}

void diagnose(uint32_t zone, enum severity severity, struct pos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text;
	if (vasprintf(&text, fmt, ap) < 0)
		fail("out of memory");
	va_end(ap);
	struct diagnostic d = {zone, severity, pos, text};
	if (set_aside)
		PUSH(aside, d);
	else
		PUSH(found, d);
}

static void print(const struct diagnostic *d)
{
	const char *file = files.v[d->pos.file];
	fprintf(stderr, "diag %u %s %u %zu %s %s\n", d->zone,
		d->severity == ERROR ? "error" : "warning", d->pos.line, strlen(file), file,
		d->text);
}

/* By position: the file's name, then the line; found order among equals. */
static int by_position(const void *a, const void *b)
{
	const struct diagnostic *x = *(const struct diagnostic *const *)a;
	const struct diagnostic *y = *(const struct diagnostic *const *)b;
	int c = strcmp(files.v[x->pos.file], files.v[y->pos.file]);
	if (c == 0)
		c = (x->pos.line > y->pos.line) - (x->pos.line < y->pos.line);
	return c != 0 ? c : (x > y) - (x < y);
}

void diagnose_rest(uint32_t zone, enum severity severity, struct pos pos, size_t count,
		   const char *what)
{
	if (count > SHOWN_EACH)
		diagnose(zone, severity, pos, "%zu more %s", count - SHOWN_EACH, what);
}

size_t diagnostics_errors(void)
{
	size_t errors = 0;
	for (size_t i = 0; i < found.n; i++)
		errors += found.v[i].severity == ERROR;
	return errors;
}

void print_diagnostics(void)
{
	if (core_quiet)
		return;
	size_t errors = diagnostics_errors();
	const struct diagnostic **sorted = xmalloc((found.n + 1) * sizeof *sorted);
	for (uint32_t zone = 0; zone < zones.n; zone++) {
		size_t n = 0;
		for (size_t i = 0; i < found.n; i++)
			if (found.v[i].zone == zone && found.v[i].severity == ERROR)
				sorted[n++] = &found.v[i];
		if (errors > 0 && n == 0)
			continue;
		qsort(sorted, n, sizeof *sorted, by_position);
		for (size_t i = 0; i < n; i++)
			print(sorted[i]);
		for (size_t i = 0; i < found.n; i++)
			if (found.v[i].zone == zone && found.v[i].severity == WARNING)
				print(&found.v[i]);
	}
	free(sorted);
	fflush(stderr);
}

void diagnostics_reset(void)
{
	for (size_t i = 0; i < found.n; i++)
		free(found.v[i].text);
	for (size_t i = 0; i < aside.n; i++)
		free(aside.v[i].text);
	VEC_FREE(found);
	VEC_FREE(aside);
}
