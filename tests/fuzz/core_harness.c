/*
 * core_harness.c - the compiler's core run in process, once an input, for the libFuzzer
 * targets: the zones an input gives written as files into a directory of the process's own
 * (with a fixed second file, inc.zone, for $INCLUDE), the core's ways out (exit) turned into
 * a return, its failures (a bug of the core's: fail()) into an abort, and its memory given
 * back after each run, so that every input starts from nothing. Signing at build time asks
 * this file instead of the driver, which answers with made-up signatures: the core never
 * checks a signature itself (the driver verifies them), so any octets do.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_harness.h"

#define NOW 1769904000u  /* 2026-02-01: inside the test zones' signatures' validity */
#define VALIDITY (14 * 86400u)

static char dir[64];
static char paths[FUZZ_MAX_ZONES][96], displays[FUZZ_MAX_ZONES][16];
static char origins[FUZZ_MAX_ZONES][256];
static char blob_path[96], verify_path[96], requests_path[96], signed_path[96];

static jmp_buf way_out;
static int way_out_code;

static void leave_run(int code)
{
	if (code == EXIT_FAILED)
		abort();  /* the core's own failure: a finding (its message is on stderr) */
	way_out_code = code;
	longjmp(way_out, 1);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
}

/* The driver's part (compiler/dnssec/signing.py): a signature of Ed25519's length for each
asked. */ static void sign_requests(const struct signer_files *f, size_t asked)
{
	static const char magic[8] = "ZBSGD1\0";
	FILE *out = fopen(f->signed_path, "wb");
	if (!out)
		abort();
	fwrite(magic, 1, 8, out);
	for (size_t i = 0; i < asked; i++) {
		uint8_t signature[65] = {64};
		for (int k = 1; k < 65; k++)
			signature[k] = (uint8_t)(i * 31 + k);
		fwrite(signature, 1, sizeof signature, out);
	}
	if (fclose(out) != 0)
		abort();
}

static void harness_init(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/zonebake-fuzz-XXXXXX",
		 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	for (int z = 0; z < FUZZ_MAX_ZONES; z++) {
		snprintf(displays[z], sizeof displays[z], "z%d.zone", z);
		snprintf(paths[z], sizeof paths[z], "%s/%s", dir, displays[z]);
	}
	snprintf(blob_path, sizeof blob_path, "%s/zonedata.bin", dir);
	snprintf(verify_path, sizeof verify_path, "%s/verify", dir);
	snprintf(requests_path, sizeof requests_path, "%s/requests", dir);
	snprintf(signed_path, sizeof signed_path, "%s/signed", dir);
	char inc[96];
	static const char included[] = "inc-a 300 IN A 192.0.2.80\ninc-txt TXT \"in\\\"cluded\"\n"
				       "@ 300 IN MX 10 inc-a\n";
	snprintf(inc, sizeof inc, "%s/inc.zone", dir);
	write_file(inc, included, sizeof included - 1);
	setenv("ZONEBAKE_BAKE_THREADS", "1", 1);  /* no lexer thread: decline leaves one way */
	core_quiet = !getenv("ZONEBAKE_FUZZ_VERBOSE");  /* set: the diagnostics, the declines */
	core_leave = leave_run;
	signing_driver = sign_requests;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	harness_init();
	return 0;
}

/* A line `; zone ORIGIN [CHAIN]` or `; set OPTIONS` at `p`: 1 when it is one (read into
 * `set`), else 0. */
static int directive(const char *p, size_t len, struct fuzz_set *set, int *starts_zone)
{
	char line[300], word[8], origin[256], chain[16] = "";
	*starts_zone = 0;
	if (len >= sizeof line || len < 6 || memcmp(p, "; ", 2) != 0)
		return 0;
	memcpy(line, p, len);
	line[len] = 0;
	if (sscanf(line, "; %7s", word) != 1)
		return 0;
	if (strcmp(word, "set") == 0) {
		set->lenient |= strstr(line, "lenient") != NULL;
		set->minimal |= strstr(line, "minimal") != NULL;
		return 1;
	}
	if (strcmp(word, "zone") != 0 || set->n == FUZZ_MAX_ZONES ||
	    sscanf(line, "; zone %255s %15s", origin, chain) < 1)
		return 0;
	struct fuzz_zone *z = &set->zones[set->n];
	memset(z, 0, sizeof *z);
	memcpy(z->origin, origin, sizeof origin);
	z->sign = strcmp(chain, "nsec") == 0 ? T_NSEC : strncmp(chain, "nsec3", 5) == 0 ? T_NSEC3
											  : 0;
	z->opt_out = strcmp(chain, "nsec3-opt-out") == 0;
	*starts_zone = 1;
	return 1;
}

void harness_parse(const uint8_t *data, size_t size, struct fuzz_set *set)
{
	memset(set, 0, sizeof *set);
	struct fuzz_zone *current = &set->zones[0];
	strcpy(current->origin, "example.");
	current->text = data;
	set->n = 1;
	int by_default = 1, records = 0;  /* zone example. is the current one; its lines */
	for (size_t at = 0; at < size;) {
		const uint8_t *end = memchr(data + at, '\n', size - at);
		size_t len = (end ? (size_t)(end - data) : size) - at;
		size_t next = at + len + (end != NULL);
		int starts_zone;
		if (directive((const char *)data + at, len, set, &starts_zone) && starts_zone) {
			if (by_default && !records)
				set->zones[0] = set->zones[1];  /* no zone example. before it */
			else
				set->n++;
			by_default = 0;
			current = &set->zones[set->n - 1];
			current->text = data + next;
			current->len = 0;
		} else {
			current->len = next - (size_t)(current->text - data);
			records |= by_default && len > 0 && data[at] != ';';
		}
		at = next;
	}
}

/* The set's files and zones; signing as compiler/dnssec/signing.py asks for it (a KSK and a
 * ZSK, Ed25519). */
static void add_zones(const struct fuzz_set *set)
{
	static const uint8_t key_rdata[2][36] = {
		{1, 1, 3, 15, 0x11, 0x22, 0x33, 0x44},  /* flags 257 (SEP), protocol 3, Ed25519 */
		{1, 0, 3, 15, 0x55, 0x66, 0x77, 0x88},  /* flags 256 */
	};
	uint32_t key_index = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct fuzz_zone *fz = &set->zones[i];
		write_file(paths[i], fz->text, fz->len);
		memcpy(origins[i], fz->origin, sizeof origins[i]);
		uint32_t zone = add_zone(origins[i], paths[i], displays[i]);
		if (!fz->sign)
			continue;
		struct zone_signing *s = xcalloc(1, sizeof *s);
		s->denial = fz->sign;
		s->opt_out = fz->opt_out;
		s->exact = 1;
		s->inception = NOW - 3600;
		s->expiration = NOW + VALIDITY;
		for (int k = 0; k < 2; k++) {
			uint8_t *rdata = xmalloc(sizeof key_rdata[k]);
			memcpy(rdata, key_rdata[k], sizeof key_rdata[k]);
			struct signing_key key = {.index = key_index++, .rdata = rdata,
						  .len = sizeof key_rdata[k], .algorithm = 15,
						  .ksk = k == 0, .signs = 1};
			key.tag = dnskey_tag(rdata, key.len);
			PUSH(s->keys, key);
		}
		zones.v[zone].sign = s;
	}
}

static void start(void)
{
	names_init();
	body_table_init(&bodies);
}

enum fuzz_outcome harness_read(const struct fuzz_set *set)
{
	if (setjmp(way_out))
		return FUZZ_DECLINED;
	start();
	add_zones(set);
	assign_zones();
	for (uint32_t z = 0; z < zones.n; z++) {
		zones.v[z].rrsets_begin = rrsets.n;
		reading_zone = z;
		read_zone_file(z);
		reading_zone = NONE;
		zones.v[z].rrsets_end = rrsets.n;
		check_zone(z, set->lenient);
	}
	return diagnostics_errors() ? FUZZ_REFUSED : FUZZ_COMPILED;
}

enum fuzz_outcome harness_compile(const struct fuzz_set *set, struct compiled *c,
				  const char **blob)
{
	memset(c, 0, sizeof *c);
	if (setjmp(way_out))
		return FUZZ_DECLINED;
	start();
	add_zones(set);
	struct compile_options options = {
		.minimal = set->minimal, .lenient = set->lenient,
		.signatures = {.now = NOW, .warning = 7 * 86400, .out = verify_path},
		.signer = {.requests = requests_path, .signed_path = signed_path},
	};
	if (compile_set(&options, NULL, 0, c) != 0)
		return FUZZ_REFUSED;
	if (!core_quiet)
		fprintf(stderr, "compiled: %zu names\n", nodes.n);
	write_layout(blob_path, 0, 0, &c->ph, c->keys.v, c->max_labels);
	*blob = blob_path;
	return FUZZ_COMPILED;
}

void harness_reset(void)
{
	core_reset();
}

/* What an input the core declines leaves behind (its way out skips the frees on the way) is
 * not a leak of the compiler's, which runs once a process: no leak report at exit. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
