/*
 * main.c - zonebake-bake MANIFEST OUT: compile the zone set the manifest lists into the blob
 * OUT (zonedata.bin), or into the server's file where the driver says so (`ask-where`), the
 * layout's numbers in its head (runtime/zonedata.h, struct zb_head).
 * Exit 0 when done, 1 when the zones have errors (diagnostics.c prints them, and the warnings,
 * on stderr), 3 when the fast reader cannot read a zone file (`declined: zone N: why`: the
 * driver has dnspython read it and hands the records over) or the set is beyond the core
 * (`declined: why`), 4 on a failure of its own. run.py writes the manifest and reads the
 * head.
 *
 * The manifest, a line each: `minimal 0|1`, `lenient 0|1`, `now SECONDS` and
 * `signature-warning SECONDS` (signatures.c), `signatures` then two lines: where the
 * signatures to verify go and the cache of those verified (empty: none); then per zone `zone`, its origin, its file's
 * path, the path to show, and when dnspython read it, `records PATH` (records.c); then per
 * CH answer `chaos`, the name's wire length and the text in hex (read_chaos).
 * `signing` then three lines: where requests for signatures go, where they come back, and
 * the cache of earlier builds' (signer.c; empty: none). A zone the build signs has after its
 * `zone` lines `sign nsec|nsec3 OPT_OUT INCEPTION EXPIRATION EXACT REUSE_LEFT` and a line `key
 * sign|publish DNSKEY_RDATA_HEX` per key (compiler/dnssec/signing.py), and `write-signed PATH`
 * when its records, signed, are to be written out (records.c). `keep-records PATH`: where a
 * zone's records go when it has no error, as its last good copy (compiler/keepgoing.py).
 * `state` then four lines: where this build's state goes, the earlier build's state and
 * the file holding its blob, to build over (layout/reuse.c; empty: none), and `AT LEN`: the
 * blob's place in that file (LEN 0: the whole file). `core-id ID`: the core's own digest
 * (program.py), which a state holds. `image` then two lines: where this build's image of a
 * zone's records goes, and the earlier build's (read/image.c; empty: none). `ask-where`:
 * once the layout's size is known, ask the driver where to write it (where_to_write).
 * `hold`: a core begun before the driver made its manifest (compiler/core/early.py) waits
 * for its `go` before it asks the driver anything (hold_for_driver).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bake.h"

/* Under AddressSanitizer (ZONEBAKE_SANITIZE=1): the core runs once and exits, leaving its
 * memory to the kernel as it should; that is not a leak to report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static char *next_line(FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	if (n < 0)
		fail("the manifest ends early");
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = 0;
	return line;
}

static size_t unhex(const char *text, uint8_t *out, size_t max)
{
	size_t n = strlen(text) / 2;
	if (n > max)
		fail("manifest: hex field too long");
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(text + 2 * i, "%2x", &v) != 1)
			fail("manifest: bad hex");
		out[i] = v;
	}
	return n;
}

/* A CH-class TXT answer about the server (id.server, version.bind...): one TXT record, class
 * CH, owner the question, TTL 0, AA clear, as NSD and Knot answer (run.py says
 * which names). The manifest gives the name's wire length and the text in hex. */
static void read_chaos(FILE *f, struct chaos *c)
{
	char *length = next_line(f), *hex = next_line(f);
	uint8_t text[255];
	size_t len = unhex(hex, text, sizeof text);
	bytes_t body = {0};
	bytes_u16(&body, 0xC000 | 12);  /* the question's name, whatever its length */
	bytes_u16(&body, T_TXT);
	bytes_u16(&body, CLASS_CH);
	bytes_u32(&body, 0);
	bytes_u16(&body, 1 + len);
	uint8_t n = len;
	bytes_put(&body, &n, 1);
	bytes_put(&body, text, len);
	static const uint8_t header[10] = {0x80, 0, 0, 1, 0, 1, 0, 0, 0, 0};  /* QR; 1 answer */
	static const uint16_t no_fixups[1];
	c->body = intern_body(&bodies, header, atoi(length), body.v, body.n, no_fixups, 0,
			      body.n, 0);
	free(body.v);
	free(length);
	free(hex);
}

static void read_sign(const char *line, struct zone *z)
{
	char denial[8];
	unsigned opt_out, exact;
	struct zone_signing *s = xcalloc(1, sizeof *s);
	if (sscanf(line, "sign %7s %u %u %u %u %u", denial, &opt_out, &s->inception,
		   &s->expiration, &exact, &s->reuse_left) != 6)
		fail("manifest: bad line %s", line);
	s->denial = strcmp(denial, "nsec3") == 0 ? T_NSEC3 : T_NSEC;
	s->opt_out = opt_out;
	s->exact = exact;
	z->sign = s;
}

static void read_key(const char *line, struct zone *z, uint32_t index)
{
	struct signing_key key = {.index = index};
	if (!z->sign || (strncmp(line, "key sign ", 9) != 0 && strncmp(line, "key publish ", 12) != 0))
		fail("manifest: bad line %s", line);
	key.signs = line[4] == 's';
	const char *hex = line + (key.signs ? 9 : 12);
	uint8_t *rdata = xmalloc(strlen(hex) / 2 + 1);
	key.len = unhex(hex, rdata, 4096);
	if (key.len < 4)
		fail("manifest: a short DNSKEY");
	key.rdata = rdata;
	key.tag = dnskey_tag(rdata, key.len);
	key.algorithm = rdata[3];
	key.ksk = rdata[1] & 1;
	PUSH(z->sign->keys, key);
}

/* `layout SIZE` on stderr; the driver answers on stdin `into AT KEPT PATH`, a server linked
 * with a placeholder for the data, sized and ready for SIZE octets at AT, its first KEPT the
 * earlier build's data, copied there before (cc.py), or `alone`: the blob then goes to its
 * own file, OUT. Written into the server, it is never copied again. */
static int ask_where;  /* the manifest's `ask-where` */

static char *where_to_write(uint64_t size, uint64_t *at, uint64_t *kept)
{
	hold_for_driver();
	fprintf(stderr, "layout %llu\n", (unsigned long long)size);
	fflush(stderr);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, stdin);
	unsigned long long place, earlier;
	int path = 0;
	if (n <= 1 || line[n - 1] != '\n')
		fail("the driver did not say where the data goes");
	line[n - 1] = 0;
	if (strcmp(line, "alone") == 0) {
		free(line);
		return NULL;
	}
	if (sscanf(line, "into %llu %llu %n", &place, &earlier, &path) != 2 || !path || !place ||
	    earlier > size)
		fail("the driver's answer %s", line);
	*at = place;
	*kept = earlier;
	memmove(line, line + path, strlen(line + path) + 1);
	return line;
}

/* Everything written and closed: the driver goes on without waiting for this process's
 * exit, in which the kernel takes back its mappings (hundreds of megabytes of the earlier
 * build's files and this one's arrays: 10-12 ms at a million names). Not in a sanitized
 * build, whose checks at exit the driver waits for. */
static void say_done(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return;
#endif
#endif
	fputs("done\n", stderr);
	fflush(stderr);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: zonebake-bake MANIFEST OUT\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f)
		fail("cannot open %s", argv[1]);
	phase(NULL, 0, NULL);
	names_init();
	spill_beside(argv[2]);
	body_table_init(&bodies);
	struct compile_options options = {.signatures = {.now = time(NULL), .warning = 7 * 86400}};
	struct signature_check *signatures = &options.signatures;
	struct signer_files *signer = &options.signer;
	uint32_t signing_keys = 0;  /* `key` lines so far */
	VEC(struct chaos) chaos = {0};
	char *line;
	while (!feof(f) && (line = next_line(f)) != NULL) {
		if (strncmp(line, "minimal ", 8) == 0) {
			options.minimal = atoi(line + 8);
			reuse_decides(line, strlen(line));
		} else if (strncmp(line, "lenient ", 8) == 0) {
			options.lenient = atoi(line + 8);
		} else if (strncmp(line, "now ", 4) == 0) {
			signatures->now = strtoll(line + 4, NULL, 10);
		} else if (strncmp(line, "signature-warning ", 18) == 0) {
			signatures->warning = strtoul(line + 18, NULL, 10);
		} else if (strcmp(line, "signatures") == 0) {
			signatures->out = next_line(f);
			signatures->cache = next_line(f);
			if (!*signatures->cache)
				signatures->cache = NULL;
		} else if (strcmp(line, "signing") == 0) {
			signer->requests = next_line(f);
			signer->signed_path = next_line(f);
			signer->cache = next_line(f);
			if (!*signer->cache)
				signer->cache = NULL;
		} else if (strncmp(line, "sign ", 5) == 0 && zones.n > 0) {
			read_sign(line, &zones.v[zones.n - 1]);
		} else if (strncmp(line, "write-signed ", 13) == 0 && zones.n > 0 &&
			   zones.v[zones.n - 1].sign) {
			zones.v[zones.n - 1].sign->write_to = strdup(line + 13);
		} else if (strncmp(line, "key ", 4) == 0 && zones.n > 0) {
			read_key(line, &zones.v[zones.n - 1], signing_keys++);
		} else if (strcmp(line, "zone") == 0) {
			char *origin = next_line(f), *path = next_line(f), *display = next_line(f);
			add_zone(origin, path, display);
			reuse_decides(origin, strlen(origin) + 1);
		} else if (strncmp(line, "records ", 8) == 0 && zones.n > 0) {
			zones.v[zones.n - 1].records = strdup(line + 8);
		} else if (strncmp(line, "keep-records ", 13) == 0 && zones.n > 0) {
			zones.v[zones.n - 1].keep_records = strdup(line + 13);
		} else if (strcmp(line, "chaos") == 0) {
			RESERVE(chaos, 1);
			read_chaos(f, &chaos.v[chaos.n++]);
			reuse_decides("chaos", 5);
		} else if (strcmp(line, "state") == 0) {
			char *out = next_line(f), *state = next_line(f), *blob = next_line(f);
			char *place = next_line(f);
			unsigned long long at = 0, len = 0;
			if (sscanf(place, "%llu %llu", &at, &len) != 2)
				fail("manifest: a blob's place %s", place);
			free(place);
			reuse_files(out, state, blob, at, len);
		} else if (strcmp(line, "image") == 0) {
			char *out = next_line(f), *earlier = next_line(f);
			image_files(out, earlier);
		} else if (strcmp(line, "ask-where") == 0) {
			ask_where = 1;
		} else if (strcmp(line, "hold") == 0) {
			core_held = 1;
		} else if (strncmp(line, "core-id ", 8) == 0) {
			reuse_decides(line, strlen(line));
		} else if (strcmp(line, "end") == 0) {
			free(line);
			break;
		} else {
			fail("manifest: unknown line %s", line);
		}
		free(line);
	}
	fclose(f);

	struct compiled compiled;
	int status = compile_set(&options, chaos.v, chaos.n, &compiled);
	image_written();  /* where the records were not let go (zones with errors) */
	if (status != 0)
		return status;
	/* The layout's numbers go into the data's head (zonedata.h, struct zb_head). */
	uint64_t at = 0, kept = 0;
	const char *out = ask_where ? where_to_write(compiled.info.size, &at, &kept) : argv[2];
	write_layout(out ? out : argv[2], at, kept, &compiled.ph, compiled.keys.v,
		     compiled.max_labels);
	image_beside_state(reuse_state_written());
	phase("layout", compiled.info.size, "octets");
	say_done();
	return 0;
}
