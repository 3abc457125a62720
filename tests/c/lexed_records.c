/*
 * lexed_records.c - what the fast reader's lexer (compiler/core/read/zonefile.c) makes of a
 * zone file: `lexed_records ORIGIN FILE` prints a line per record,
 *   LINE TYPE TTL HEX NAME...
 * HEX the record data it wrote as octets ("-" for none), NAME the names it left as text
 * (for NS, MX, SOA...); or `declined: ...` on stderr and exit 3 when it leaves the file to
 * dnspython. tests/core/read/test_lexed_rdata.py compares the octets with dnspython's to_wire.
 */
#include <stdio.h>
#include <string.h>

#include "bake.h"
#include "read/lexed.h"

bytes_t rdata_raw;  /* zones.c's, which this program does without */

static void print_block(struct lexer *lx, int last)
{
	(void)last;
	for (size_t i = 0; i < lx->block->n; i++) {
		const struct lexed *it = &lx->block->v[i];
		if (it->kind != LEXED_RECORD)
			continue;
		printf("%u %u %u ", it->line, it->type, it->ttl);
		for (size_t k = 0; k < it->rd.raw_len; k++)
			printf("%02x", rdata_raw.v[it->rd.raw + k]);
		printf(it->rd.raw_len ? "" : "-");
		for (size_t k = 0; k < it->nnames; k++)
			printf(" %.*s", (int)it->names[k].len, it->names[k].p);
		printf("\n");
	}
	lx->block->n = 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lexed_records ORIGIN FILE\n");
		return 2;
	}
	names_init();
	FILE *f = fopen(argv[2], "rb");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	bytes_t text = {0};
	char chunk[65536];
	for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
		bytes_put(&text, chunk, n);
	fclose(f);
	struct zone zone = {.origin_text = argv[1], .path = argv[2], .display = argv[2]};
	static struct lexed_block block;
	struct lexer lx = {.zone = &zone, .text = (const char *)text.v, .size = text.n,
			   .block = &block, .deliver = print_block};
	lex_zone_file(&lx);
	free_kept(&lx);
	return 0;
}
