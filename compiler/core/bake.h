/*
 * bake.h - the compiler's core: the whole compile of a zone set in C, once, for every zone
 * file: checks with their positions, the name tree, every answer, serialization with name
 * compression, the perfect hash and the layout of zonedata.bin (runtime/zonedata.h).
 * run.py runs it: it writes the manifest, hands over the records dnspython read
 * of a file the fast reader declines, and reads back the diagnostics and the layout's numbers.
 *
 * Its files, a folder per layer, each layer in the order the data flows:
 *   base/       what every layer uses
 *     util.c      memory, vectors, the ways out
 *     names.c     interned names: one id per name, its parent, its spelling
 *     types.c     type numbers and mnemonics
 *     diagnostics.c  errors and warnings, with their positions
 *     digestindex.c  where a digest falls among sorted ones: NSEC3 hashes, the cache's keys
 *     sha256.c    SHA-256, the key of the signatures verified before
 *     spill.c     the bodies' octets in a file beside the output, out of the resident set
 *   read/       zone files, and records handed over in wire form
 *     zonefile.c  lexing zone files: records with their names as text (lexed.h)
 *     fields.c    the fields that are neither names nor strings: numbers, TTLs, types, addresses
 *     nametext.c  names and character-strings in text: escapes, names into wire form
 *     rdatanames.c  record data with names kept as octets (NAPTR SVCB RRSIG NSEC NSEC3)
 *     rdatatext.c record data of octets only (hex, base64, RFC 3597's generic form)
 *     readzone.c  reading zone files: the lexer, on a thread of its own for a large one, and
 *                 the names interned and the records filed in file order
 *     records.c   records dnspython read, handed over in wire form
 *     image.c     a zone's records as read, kept for the next build, which reads only the
 *                 lines of its file that changed into them (changedlines.c)
 *   semantics/  the zones' meaning: checks, names, and the response to every question
 *     zones.c     records into RRsets, and the checks
 *     views.c     what a zone holds at a name, a parent's records in its child's namespace too
 *     dname.c     DNAME images
 *     response.c  a response's sections, each RRset with its signatures (RFC 4035 §3.1.1)
 *     proofs.c    with DO set, the denial proofs of a response (RFC 4035 §3.1.3, RFC 5155 §7.2)
 *     resolve.c   the response to each question (RFC 1034 §4.3.2)
 *     answers.c   every node's bodies, and with DO set, its twin's
 *     changes.c   what a change since an earlier build reaches
 *   dnssec/     signatures and denial chains: checked, or made at build time
 *     canonical.c what a signature signs (RFC 4034 §3.1.8.1)
 *     signatures.c  a signed zone's signatures, checked before anything ships
 *     chainmake.c a zone signed at build time: its keys, CDS, CDNSKEY, and its denial chain
 *     signer.c    ...and its signatures, made by the driver, cached across builds
 *     signedtext.c  ...and the zone it signed, written out as a zone file
 *     denial.c    a signed zone's NSEC or NSEC3 chain, in order, and the searches over it
 *     chaincheck.c  a signed zone's denial chain, checked as its signer should have made it
 *   layout/     the blob: zonedata.bin as the responder reads it (runtime/zonedata.h)
 *     wire.c      responses into bodies with name compression
 *     bodies.c    the distinct bodies
 *     denialdata.c  the chains as the responder copies them, and what finds their entries
 *     phash.c     the perfect hash (hash.h is the responder's own)
 *     sharing.c   answers whose octets another answer of their region holds
 *     layout.c    the blob
 *     reuse.c     an earlier build's regions the change does not reach, copied
 *   compile.c   the stages in order, for a zone set whose zones are listed
 *   main.c      the manifest in, zonedata.bin and the layout's numbers out
 * Each file includes this header as "bake.h" and the responder's as runtime/ names them
 * ("zonedata.h", "hash.h"): program.py compiles them with both folders on the include path.
 */
#ifndef BAKE_H
#define BAKE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- util.c ---- */

#define EXIT_DECLINED 3
#define EXIT_FAILED 4

/* The zone `reading_zone` needs dnspython's reader (the fast reader cannot read it). */
_Noreturn void decline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern uint32_t reading_zone;  /* NONE while no zone file is read */
/* The set is beyond the core. */
_Noreturn void unsupported(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What a thread must do before it declines: the zone file's lexer files the records it read
 * before (zonefile.c). Another thread may decline meanwhile, for an earlier record. */
extern _Thread_local void (*before_decline)(void *arg);
extern _Thread_local void *before_decline_arg;
/* For a caller that runs the core more than once in a process (tests/fuzz): nothing said on
 * stderr but failures, and instead of exit(), a way out of its own (it must not return). */
extern int core_quiet;
extern void (*core_leave)(int code);
/* A core begun before the driver's imports (the manifest's `hold`: compiler/core/early.py)
 * waits for the driver's `go` before it asks the driver anything (util.c). */
extern int core_held;
void hold_for_driver(void);
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
void grow(void **v, size_t *cap, size_t elem, size_t need);
#define HUGE_RESERVE ((size_t)1 << 36)
void reserve_huge(void **v, size_t *cap);  /* for an array of octets */
void *huge_alloc(size_t bytes);
struct beside {
	pthread_t thread;
	int started;
};
void start_beside(struct beside *b, void *(*fn)(void *), void *arg);
void join_beside(struct beside *b);  /* for hash tables; see util.c */
void huge_free(void *p, size_t bytes);
const void *map_file(const char *path, size_t *len, int populate, int *keep_fd);  /* util.c */
void *read_huge(const char *path, size_t *len);  /* util.c; NULL: map it instead */
int put_at(int fd, const void *data, size_t len, uint64_t at);  /* pwrite, all of it: 0 or -1 */
const void *map_range(const char *path, uint64_t at, size_t *len, int populate, int *keep_fd);
void let_go_pages(const void *from, const void *to);  /* a file mapping's, see util.c */
void phase(const char *name, size_t count, const char *unit);  /* see util.c */
double clock_seconds(void);  /* monotonic */
uint64_t mix64(uint64_t x);  /* digests are zb_hash's (runtime/hash.h), mixed with this */
/* Of `len` octets, after `seed`: zb_hash's blocks in four lanes, for files' contents. */
uint64_t bulk_digest(const void *data, size_t len, uint64_t seed);
/* A phase that ran beside others, timed by its thread: reported, and the clock not reset. */
void phase_took(const char *name, double seconds, size_t count, const char *unit);

/* A growable array: VEC(int) v = {0}; PUSH(v, 3); v.v[0], v.n. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define RESERVE(vec, more) do { \
	if ((vec).n + (more) > (vec).cap) \
		grow((void **)&(vec).v, &(vec).cap, sizeof *(vec).v, (vec).n + (more)); \
} while (0)
#define PUSH(vec, x) do { RESERVE(vec, 1); (vec).v[(vec).n++] = (x); } while (0)
#define VEC_FREE(vec) do { \
	vec_release((vec).v, (vec).cap * sizeof *(vec).v); \
	(vec).v = NULL; (vec).n = (vec).cap = 0; \
} while (0)
/* An array's memory back: free()'s, or a reservation's (reserve_huge, image.c) unmapped. */
void vec_release(void *v, size_t cap_bytes);

/* Octet strings. Inline: serializing the answers calls these a dozen times a record. */
typedef VEC(uint8_t) bytes_t;
void bytes_release(bytes_t *b);  /* its memory back, however it was reserved; empty again */

static inline void bytes_put(bytes_t *b, const void *p, size_t n)
{
	if (n == 0)
		return;  /* p may be NULL (an empty array never allocated): memcpy may not take it */
	RESERVE(*b, n);
	memcpy(b->v + b->n, p, n);
	b->n += n;
}

static inline void bytes_u16(bytes_t *b, uint16_t x)  /* network order */
{
	uint8_t o[2] = {x >> 8, x & 0xFF};
	bytes_put(b, o, 2);
}

static inline void bytes_u32(bytes_t *b, uint32_t x)
{
	uint8_t o[4] = {x >> 24, (x >> 16) & 0xFF, (x >> 8) & 0xFF, x & 0xFF};
	bytes_put(b, o, 4);
}

#define NONE UINT32_MAX

/* ---- names.c ---- */

typedef uint32_t name_t;
#define ROOT 0

enum name_flags {
	NAME_EXISTS = 1,  /* in its zone's tree: owns data, or an ancestor of a name that does */
	NAME_ORIGIN = 2,
	NAME_CUT = 4,     /* owns NS and is not an apex */
	NAME_DNAME = 8,   /* owns a DNAME */
	NAME_GONE = 16,   /* named by no record since a build over an image (image.c): in no
			   * zone, and as a new name when named again */
};

struct name {
	name_t parent;        /* NONE for the root */
	uint32_t label;       /* the first label as spelled, in the label arena */
	uint8_t label_len;
	uint8_t nlabels;      /* not counting the root */
	uint8_t wire_len;     /* the whole name in wire format */
	uint8_t flags;
	uint32_t zone;        /* the zone whose apex is at or above it, or NONE */
	uint32_t rrsets;      /* its first RRset (in its zone), or NONE */
	uint32_t redirect;    /* memo of the cut or DNAME at or above it (resolve.c), NONE until
			       * known */
	name_t wildcard;      /* its child '*' when that owns data, or NONE */
	uint32_t stamp;       /* scratch marks (zones.c, wire.c) */
};

extern VEC(struct name) names;
/* Names found spelled otherwise than they first came (names.c), for image.c: a name keeps
 * its first spelling, so a reading of part of a file cannot tell which one that is. */
extern size_t names_spelled_otherwise;

void names_init(void);
void names_expect(size_t count);
void names_seal(void);  /* all names read: name_child no more */
name_t name_child(name_t parent, const uint8_t *label, size_t len);
void name_child_prefetch(name_t parent, const uint8_t *label, size_t len);
name_t name_from_wire(const uint8_t *wire);  /* uncompressed, checked */
int name_is_wildcard(name_t id);  /* its first label is '*' */
static inline struct name *N(name_t id) { return &names.v[id]; }
const uint8_t *name_label(name_t id);
int name_is_below_or_at(name_t name, name_t above);
size_t name_key(name_t id, uint8_t *out);     /* lowercased wire format: the hash key */
/* zb_hash of a name's key under the perfect hash's first seed (phash.c): of names and label
 * octets given (image.c's copies of them), or this build's. */
uint64_t name_key_hash(const struct name *v, const uint8_t *label_octets, name_t id);
uint64_t node_hash(name_t id);
/* Whether `len` octets of a wire name are `key` (name_key's) but for case: label lengths are
 * below 64, never a capital. */
static inline int wire_is_key(const uint8_t *wire, const uint8_t *key, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((wire[i] >= 'A' && wire[i] <= 'Z' ? wire[i] + 32 : wire[i]) != key[i])
			return 0;
	return 1;
}
size_t name_wire(name_t id, uint8_t *out);    /* wire format as spelled */
const char *name_text(name_t id);             /* for messages; a static buffer */
/* For image.c: the names' arrays as they are, to keep; the names set aside (the manifest's,
 * while an image is tried) and put back; the names of an image taken instead (their table
 * from huge_alloc). */
struct names_aside {
	struct name *names;
	size_t n, cap;
	bytes_t labels;
	void *table;
	size_t table_size, spelled_otherwise;
};
void names_image_parts(const uint8_t **labels, size_t *nlabels, const void **slots,
		       size_t *slot_bytes);
int names_adopt(struct name *v, size_t n, size_t cap, uint8_t *labels, size_t nlabels,
		size_t labels_cap, void *slots, size_t slot_bytes);
void names_set_aside(struct names_aside *a);
void names_put_back(struct names_aside *a);

/* Where a record comes from: a file of `files` (a zone file, or one it includes) and a line. */
struct pos {
	uint32_t file, line;
};
extern VEC(const char *) files;  /* as the user names them in messages */
uint32_t add_file(const char *display);

/* ---- types.c ---- */

const char *type_name(uint16_t type);                /* A, NS, ... TYPE65280 */
uint16_t type_by_name(const char *text, size_t len); /* 0 for none */

/* ---- diagnostics.c ---- */

enum severity { ERROR, WARNING };
#define EXIT_ERRORS 1  /* the zones have errors: they are on stderr */
void diagnose(uint32_t zone, enum severity severity, struct pos pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
size_t diagnostics_errors(void);
/* Of one kind of finding in a zone, the first SHOWN_EACH are diagnosed each; then one more, of
 * the same severity, counts the rest: `N more WHAT`, when there are more. */
#define SHOWN_EACH 10
void diagnose_rest(uint32_t zone, enum severity severity, struct pos pos, size_t count,
		   const char *what);
void print_diagnostics(void);  /* see diagnostics.c */
/* Checks on a thread beside the main thread's: that thread's diagnostics go aside (on: 1)
 * until the main thread, once it has joined it, puts them back where its own stood at
 * diagnostics_mark. One such thread at a time. */
void diagnostics_aside(int on);
size_t diagnostics_mark(void);
size_t diagnostics_count(void);  /* so far, on this thread's side */
void diagnostics_put_back(size_t mark);
void diagnostics_drop(size_t mark);  /* those found since diagnostics_mark, forgotten */

/* ---- zones.c ---- */

enum rdtype {
	T_A = 1, T_NS = 2, T_CNAME = 5, T_SOA = 6, T_PTR = 12, T_MX = 15, T_TXT = 16,
	T_AAAA = 28, T_SRV = 33, T_NAPTR = 35, T_DNAME = 39, T_DS = 43, T_RRSIG = 46, T_NSEC = 47,
	T_NSEC3 = 50, T_SVCB = 64, T_HTTPS = 65,
	T_HINFO = 13, T_SPF = 99, T_SSHFP = 44, T_DNSKEY = 48, T_NSEC3PARAM = 51, T_TLSA = 52,
	T_SMIMEA = 53, T_CDS = 59, T_CDNSKEY = 60, T_ZONEMD = 63,
	T_ANY = 255, T_CAA = 257,
};
#define CLASS_IN 1
#define CLASS_CH 3
#define QTYPE_ANY_OVER_TCP 0 /* runtime/zonedata.h: ZB_KEY_ANY_OVER_TCP */


/* One record's data. Names are kept as ids; `raw` holds the rest, in wire order around them:
 * MX raw(2) name; SRV raw(6) name; SOA name name2 raw(20); NS CNAME PTR DNAME name; others
 * raw. SVCB and HTTPS are raw whole, their TargetName in `name` besides (additional data). */
struct rdata {
	uint32_t raw;      /* offset in the rdata arena */
	uint16_t raw_len;
	uint16_t spare;    /* zero: an image (image.c) holds records octet for octet */
	name_t name, name2;
	uint32_t next;     /* the next record of its RRset */
};

/* An RRset; RRSIG records form one per type they cover (RFC 4034 §3: the signatures of an
 * RRset go out with it), linked from the RRset they cover. */
struct rrset {
	name_t owner;
	uint16_t type;
	uint16_t covers;              /* RRSIG: the type covered; 0 otherwise */
	uint32_t ttl;
	uint32_t first, last, count;  /* records, in file order */
	uint32_t next;                /* the owner's next RRset, in file order */
	uint32_t sigs;                /* the RRSIG RRset that covers it, or NONE */
};

/* NSEC3 records and their signatures are not part of the tree (RFC 5155 §7.2.8): their
 * owners are kept in a view of their own, per zone (views.c). */
#define HASHED_VIEW(zone) ((zone) | 0x80000000u)

/* The types a zone holds, ascending: a handful, so a sorted array. */
typedef VEC(uint16_t) types_t;

/* A zone the build signs (the manifest's `sign` and `key` lines;
compiler/dnssec/signing.py). */ struct signing_key {
	uint32_t index;          /* the driver's number for it: its `key` line's, from 0 */
	const uint8_t *rdata;    /* the DNSKEY's */
	uint16_t len, tag;
	uint8_t algorithm;
	uint8_t ksk;             /* the SEP flag (RFC 4034 §2.1.1) */
	uint8_t signs;           /* else published only (a key rollover's next or last key) */
};

struct zone_signing {
	uint16_t denial;         /* T_NSEC or T_NSEC3 */
	uint8_t opt_out;
	uint8_t exact;           /* the times are SOURCE_DATE_EPOCH's: cached signatures must
				  * have them exactly */
	uint32_t inception, expiration;
	uint32_t reuse_left;     /* seconds: a cached signature is reused only with this much of
				  * its validity left at the inception (signing.py's reuse_left) */
	VEC(struct signing_key) keys;
	const char *write_to;    /* the signed zone as a zone file (signedtext.c), or NULL */
};

struct zone {
	name_t origin;
	const char *origin_text;  /* as the manifest gives it: the fast reader's origin */
	const char *path, *display;
	const char *records;  /* its records in wire form (records.c), or NULL: read `path` */
	const char *keep_records;  /* where its records go when it has no error, or NULL */
	uint32_t soa;        /* the apex SOA RRset */
	uint32_t neg_ttl;    /* min(SOA TTL, MINIMUM): RFC 2308 §3 */
	uint32_t file;       /* its zone file, in `files` */
	uint16_t unused_qtype;  /* a type it does not hold: its answer is every absent type's */
	types_t types;
	uint32_t rrsets_begin, rrsets_end;  /* its RRsets, made while its file was read */
	int over_image;  /* read over an image (read/image.c): an RRset's place among them need
			  * not be in its owner's file order, which its links are */
	struct zone_signing *sign;          /* NULL: the build does not sign it */
	uint32_t serial;                    /* its SOA's */
};

extern VEC(struct rdata) rdatas;
extern VEC(struct rrset) rrsets;
/* Where each RRset's first record is, parallel to `rrsets`: apart from them, for lines a
 * change adds or takes move those of every RRset after it (image.c), and these are a fifth
 * of the RRsets' octets. */
extern VEC(struct pos) rrset_pos;
static inline struct pos set_pos(const struct rrset *set) { return rrset_pos.v[set - rrsets.v]; }
uint32_t push_rrset(struct rrset set, struct pos pos);  /* its number */
extern VEC(struct zone) zones;
extern bytes_t rdata_raw;
extern VEC(name_t) nodes;  /* every name of every zone's tree */

int types_add(types_t *types, uint16_t type);  /* 1 when it was not there */
int types_has(const types_t *types, uint16_t type);
uint32_t add_zone(const char *origin, const char *path, const char *display);
void add_record(uint32_t zone, name_t owner, uint16_t type, uint32_t ttl, struct rdata rd,
		struct pos pos);
void add_first_signature(uint32_t zone, uint32_t covered, struct rdata rd, struct pos pos);
int same_rdata(const struct rdata *a, const struct rdata *b);  /* the same record data */
const char *why_single(uint16_t type);  /* a name holds one record of it: why; else NULL */
void check_zone(uint32_t zone, int lenient);
/* What filing the zone's RRsets made, made again from them in their order: the names'
 * existence, the tree's nodes, wildcards, the zone's types (image.c, once it changed them). */
void rederive_zone(uint32_t zone);
void assign_zones(void);  /* each name interned so far to the deepest zone above it */

/* ---- views.c ---- */

/* What a zone holds at a name: its RRsets (a list by `next`, file order) and flags; a name
 * in a child zone's namespace holds the parent's records there too (views.c). */
uint32_t *rrsets_head(uint32_t zone, name_t name);
void views_expect(size_t count);  /* room for `count` more names held by another zone */
size_t views_count(void);  /* names held by another zone than their own */
uint32_t first_rrset(uint32_t zone, name_t name);
uint32_t rrset_in(uint32_t zone, name_t name, uint16_t type);   /* NONE when absent */
/* The RRset of a type and, for RRSIG, of the type it covers. */
uint32_t rrset_covering(uint32_t zone, name_t name, uint16_t type, uint16_t covers);
uint32_t rrset_at(name_t name, uint16_t type);  /* in the name's own (deepest) zone */
uint8_t flags_in(uint32_t zone, name_t name);
void set_flags_in(uint32_t zone, name_t name, uint8_t flags);
int in_zone(uint32_t zone, name_t name);  /* at or below the zone's apex */
/* The zone of the set above a zone's apex NAME that has a cut there, or NONE. */
uint32_t delegating_zone(name_t name);
/* Below a cut or a DNAME of the zone: glue, or occluded (RFC 6672 §2.4), not the zone's
 * authoritative data. */
int occluded(uint32_t zone, name_t name);
void release_records(void);  /* after the answers: none of the above is read again */

/* ---- zonefile.c, readzone.c ---- */

int parse_name(const char *text, size_t len, name_t origin, name_t *out);
void read_zone_file(uint32_t zone);

/* ---- image.c ---- */

struct lexer;
void image_files(const char *out, const char *earlier);  /* the manifest's; "": none */
void image_before_read(uint32_t zone);
void image_line(uint32_t record, uint32_t line);  /* as the reader files each record */
void image_keep(uint32_t zone, struct lexer *lx);  /* the zone read: its image out (its
						   * mapped text taken over) */
void image_written(void);  /* once its writer no longer reads the records (release_records) */
/* The zone's records from the earlier build's image and its file's changes since: 1, or 0
 * (nothing done: read the file). */
int image_read_zone(uint32_t zone);
size_t image_left_over(void);  /* records taken out by image_read_zone, linked from nothing */
/* After image_read_zone read over an image made beside the state whose content's digest is
 * `state` (reuse_earlier_content), in a zone the build does not sign: the names the records
 * taken out and put in name, and those new (patch_name_states); else NULL. */
const name_t *image_changed_names(uint64_t state, size_t *n);
/* After image_read_zone read over an image: node_hash's of the names it read or made (the
 * first `n`; signing makes more); else NULL. */
const uint64_t *image_name_hashes(size_t *n);
/* After image_read_zone read `zone` over an image whose build said nothing (no error, no
 * warning): what its checks look at again (zones.c's check_zone); else 0. */
struct recheck {
	const name_t *names;   /* named by the records taken out and put in, their owners */
	size_t n;
	const name_t *lost;    /* owners that lost an address record or gained a CNAME */
	size_t nlost;
	name_t first_new;      /* names from this id on are new to the zone */
	int cut_made;          /* a name there before became a cut */
};
int image_recheck(uint32_t zone, struct recheck *r);
/* After image_read_zone read over an image: the first name new to this build (the names
 * from it on are, each interned after its parent: names.c's name_child); else NONE. */
name_t image_new_from(void);
/* The build's state written, its content's digest this (0: none): into the image it made. */
void image_beside_state(uint64_t state);
void image_reset(void);

/* ---- records.c ---- */

void read_records(uint32_t zone, const char *path);
void write_records(uint32_t zone, const char *path);  /* the zone's, in the same form */

/* ---- chainmake.c, signer.c ---- */

struct signer_files {
	const char *requests, *signed_path;  /* to the driver and back (signing.py) */
	const char *cache;                   /* of earlier builds' signatures, or NULL */
};

void add_denial(uint32_t zone);  /* DNSKEY, CDS, CDNSKEY, NSEC3PARAM, the chain */
/* After the zone's checks: everything signing adds, the signatures last. */
void sign_zone(uint32_t zone, const struct signer_files *f);
void signer_finish(const struct signer_files *f);  /* this build's cache, for the driver */
void signer_written(void);  /* ...once it is written (a thread of its own writes it) */
/* A zone the build signed, every record, as a zone file at `path` (--write-signed): how
 * many records. */
size_t write_signed_text(uint32_t zone, const char *path);
/* Whether the driver signed, in this build, the octets `data` (RFC 4034 §3.1.8.1: what an
 * RRSIG signs) with this DNSKEY and got this signature. */
/* Whether an RRSIG record was taken from the cache by its trail (signer.c): verified by the
 * build that made the cache, and not looked up again. */
int signer_trusted(uint32_t rdata);
int signer_made(const uint8_t *data, size_t len, const uint8_t *key, size_t key_len,
		const uint8_t *signature, size_t signature_len, bytes_t *scratch);
/* Where a caller other than the driver (tests/fuzz) signs: what f->requests asks, into
 * f->signed_path, in compiler/dnssec/signing.py's formats. NULL: the driver, on stdin and
stderr. */ extern void (*signing_driver)(const struct signer_files *f, size_t asked);

/* ---- denial.c ---- */

struct child_gap {
	uint32_t label;  /* in `labels`: length, then the lowercased octets */
	uint32_t after;  /* the chain index covering names after its subtree */
};
struct child_gaps {
	struct child_gap *v;
	size_t n, cap;
	bytes_t labels;
	uint32_t before;  /* the chain index covering names before the first child */
};

void build_chains(void);  /* every zone's, once the zones are read and checked */
/* What a zone's chain check read, digested, when it found nothing; else 0 (chaincheck.c). */
uint64_t chain_checked(uint32_t zone);
size_t chains_kept(void);  /* zones whose chain was not checked again: as checked before */
uint16_t chain_kind(uint32_t zone);  /* T_NSEC, T_NSEC3, or 0 when unsigned */
int any_chain(void);                 /* a zone of the set is signed: its nodes have DO twins */
size_t chain_length(uint32_t zone);
uint32_t chain_rrset(uint32_t zone, uint32_t index);
const uint8_t *chain_hash(uint32_t zone, uint32_t index);
/* NSEC3: whether answers may name its entries by key (runtime/zonedata.h, struct
 * zb_entry_key): no two hashes alike in their first 8 octets. */
int chain_keyed(uint32_t zone);
int nsec3_starts_page(const uint8_t *hash);
void chain_parameters(uint32_t zone, uint16_t *iterations, const uint8_t **salt,
		      uint8_t *salt_len);
int canonical_cmp(const uint8_t *a, const uint8_t *b);  /* lowercased wire names */
uint32_t nsec_at_or_before(uint32_t zone, const uint8_t *key);
uint32_t nsec3_at_or_before(uint32_t zone, const uint8_t hash[20], int *match);
void name_hash(uint32_t zone, const uint8_t *key, size_t len, uint8_t out[20]);
void nsec_children(uint32_t zone, name_t encloser, struct child_gaps *out);

/* ---- digestindex.c ---- */

/* An ascending array of `n` digests of `width` octets, each at the start of a record of
 * `stride` octets (the digests alone: stride == width), and where each value of their first
 * `bits` bits begins in it. */
struct digest_index {
	const uint8_t *digests;
	size_t n, width, stride;
	unsigned bits;
	uint32_t *start;  /* 2^bits + 1 */
	size_t start_bytes;
};
void digest_index_build(struct digest_index *x, const uint8_t *digests, size_t n, size_t width);
void digest_index_of_records(struct digest_index *x, const uint8_t *records, size_t n,
			     size_t width, size_t stride);
void digest_index_free(struct digest_index *x);
void digests_sort(uint8_t *digests, size_t n, size_t width);  /* ascending, in place; width <= 64 */
/* What digest_rank(digest) will read, fetched ahead: stage 0 its place in the table, stage 1
 * (once that is in the cache) the digest there. */
void digest_index_prefetch(const struct digest_index *x, const uint8_t *digest, int stage);
/* How many of the digests are at or before `digest`; *equal: the last of them is it. */
size_t digest_rank(const struct digest_index *x, const uint8_t *digest, int *equal);

/* ---- sha256.c, canonical.c ---- */

#define SHA256_LEN 32
void sha256(const uint8_t *data, size_t len, uint8_t out[SHA256_LEN]);
/* Which block sha256 uses (the SHA extensions where the processor has them); tests make it
 * take the portable one. */
int sha256_uses_extensions(void);
void sha256_portable_only(void);
/* A record's RDATA uncompressed, appended to `out`: as spelled, or in canonical form (RFC
 * 4034 §6.2). */
void rdata_wire(uint16_t type, const struct rdata *rd, bytes_t *out, int canonical);
/* Append what an RRSIG (its RDATA) signs over `set` (RFC 4034 §3.1.8.1); the length of its
 * fields before the signature, or 0 (nothing appended) when its labels exceed the owner's. */
size_t signed_data(const struct rrset *set, const uint8_t *rrsig, size_t rrsig_len,
		   bytes_t *out);

/* ---- signatures.c, chaincheck.c ---- */

struct signature_check {
	int64_t now;          /* seconds since 1970 */
	uint32_t warning;     /* seconds: signatures expiring sooner are worth a warning */
	const char *out;      /* where the signatures to verify go (signatures.c) */
	const char *cache;    /* the digests of those verified before, or NULL */
	int lenient;          /* --lenient: findings a validator gets past are warnings (compile.c
			       * sets it from compile_options) */
};
uint16_t dnskey_tag(const uint8_t *rdata, size_t len);  /* RFC 4034 Appendix B */
/* The zone signs it: every RRset at its authoritative names but a cut's NS (RFC 4035 §2.2). */
int signable(uint32_t zone, const struct rrset *set);
/* The earliest expiration of each zone's signatures (seconds since 1970; 0: unsigned). */
extern int64_t *zone_expiry;
/* The signatures to verify written out; how many, and how many found in the cache. */
void check_signatures(const struct signature_check *c, size_t *to_verify, size_t *in_cache);
void check_chains(void);  /* each signed zone's NSEC or NSEC3 chain: complete and true */

/* ---- response.c ---- */

struct entry {
	name_t owner;
	uint32_t rrset;
	uint32_t ttl;
};
typedef VEC(struct entry) entries_t;

#define MAX_PROVED 4
/* NSEC3 entries a response names by hash (runtime/zonedata.h, struct zb_answer_denial). */
#define MAX_KEYS 6
#define KEY_LEN 12  /* struct zb_entry_key */

struct response {
	int rcode, aa;
	int dnssec;  /* DO set: signatures and denial proofs (RFC 4035 §3.1); the caller's */
	entries_t answer, authority, additional, optional;
	/* The denial chain entries in the authority section (proofs.c), the first MAX_PROVED;
	 * and whether the responder adds the query name's own (its body says where). */
	uint32_t proved[MAX_PROVED];
	size_t nproved;
	int dynamic_proof;
	uint32_t proof_also;  /* an NSEC3 entry's RRset + 1 the responder adds with it, or 0 */
	/* The NSEC3 entries of the question's zone (key_zone) in the authority section, the
	 * first MAX_KEYS: named by their page and place, the responder adds them from the
	 * chain, where each is stored once, instead of a copy in every answer (proofs.c). */
	uint8_t keys[MAX_KEYS][KEY_LEN];
	uint32_t nkeys, key_zone;
	/* A CNAME the responder completes for a name below a DNAME (RFC 6672 §3.3): the query
	 * name's labels in front of the DNAME owner, then its target. It follows the answer
	 * section's first `dname_position` RRsets, the last of them the DNAME (dname_rrset). */
	uint32_t dname_rrset;   /* NONE: no synthesis */
	size_t dname_position;
	/* The image of the name the query name is below (the lookup's closest node, or the
	 * DNAME owner itself: then the target), which the responder's denial search starts
	 * from when it exists; NONE when it would pass 255 octets. */
	name_t dname_image;
};

#define RCODE_NXDOMAIN 3
#define RCODE_YXDOMAIN 6

#define OWNER_QNAME (NONE - 1)  /* the question's own name: a pointer to offset 12 */
/* The query name rewritten by a DNAME: the synthesized CNAME's target, which the responder
 * completes; a pointer to it. */
#define OWNER_DNAME_IMAGE (NONE - 2)

/* An RRset in a section, and with DNSSEC its signatures after it, at `ttl` (NONE: their own). */
void add_signed(struct response *r, entries_t *section, name_t owner, uint32_t rrset,
		uint32_t ttl);
/* An RRset and its signatures after it, with DNSSEC or without: ANY's (RRSIG is a type). */
void add_with_signatures(entries_t *section, name_t owner, uint32_t rrset);

/* ---- proofs.c ---- */

void prove_nodata(struct response *r, uint32_t zone, name_t name);
void prove_nxdomain(struct response *r, uint32_t zone, name_t name, name_t encloser);
void prove_wildcard(struct response *r, uint32_t zone, name_t name, name_t wildcard,
		    int nodata);

/* What the proofs of a node's answers read of an NSEC3 chain, for a build over this one
 * (layout/proofuse.c): each entry read, by its hash's first 61 bits, and how. */
#define PROOF_COVER 1u  /* it covered the name looked up: its next hash decides */
#define PROOF_WHOLE 2u  /* written whole into the answer: its octets decide */
#define PROOF_ALSO 4u   /* named by its offset in the data (zb_answer_denial.also) */
#define PROOF_HOW 7u
struct proof_use {
	uint64_t entry;  /* the hash's first 8 octets, big-endian, the low 3 bits the PROOF_ flags */
	uint32_t node;
};
struct proof_log {
	VEC(struct proof_use) uses;
	size_t from;  /* the node's first */
	uint32_t node;
};
/* The log this thread's proofs read into (NULL: none), and the node they answer for next. */
void proofs_log_to(struct proof_log *log);
void proofs_log_node(struct proof_log *log, uint32_t node);

/* ---- resolve.c ---- */

void resolve(struct response *r, uint32_t zone, name_t start, name_t encloser, uint16_t qtype,
	     int minimal, int every_rrset);
name_t miss_wildcard(name_t encloser);
name_t miss_image(name_t node);
enum node_kind { NODE_DATA, NODE_DELEGATED, NODE_BELOW_DNAME };
enum node_kind node_location(name_t name, name_t *at);
uint32_t redirect(name_t name);
void redirects_fill(struct name *v, size_t n);  /* every name's memo at once */
void redirects_again(void);  /* every memo worked out again (a cut came or went) */
int under_cut(name_t name);  /* below a cut of its zone: no node of its own */
uint32_t any_rrset(uint32_t first);  /* of a name's RRsets, the one ANY over UDP gets */

/* ---- dname.c ---- */

/* A name below a DNAME owner, and its image: the name with the owner replaced by the
 * target (RFC 6672 §2.2), and the CNAME from one to the other; cname NONE when the image
 * would pass 255 octets. */
struct dname_image {
	name_t name, image;
	uint32_t cname;
};

void add_dname_images(void);  /* before names_seal: see dname.c */
const struct dname_image *dname_image(name_t name);
void dname_readers(name_t image, const struct dname_image **first, size_t *n);

/* ---- wire.c, bodies.c ---- */

struct body {
	uint8_t header[10];
	uint16_t base_len, data_len, nfixups, trunc_len, trunc_arcount;
	/* DNAME synthesis (runtime/zonedata.h, struct zb_answer); dname_split 0: none. With
	 * dname_owner_len 0, an alias's CNAME part, dname_split its length (aliases.c). */
	uint16_t dname_split;
	uint8_t dname_owner_len, dname_max_prefix;
	/* A denial of the query name the responder adds (proofs.c): where, the chain entries
	 * the body holds already (0: none; NSEC, index + 1; NSEC3, the body offset + 1 of the
	 * owner's first label), and an NSEC3 one it adds besides (its RRset + 1, or 0). And
	 * `proof_keys` NSEC3 entries it adds by their page and place, there too (response.keys). */
	uint8_t dynamic_proof : 1, proof_keys : 3;
	/* Its octets hold an SOA record, or a signature over one: a rebuild that bumps the
	 * serial alone patches these answers in the regions it copies (reuse.c). */
	uint8_t holds_soa : 1;
	uint8_t arena;     /* of the table that made it (merging does not copy): arenas[arena] */
	uint16_t proof_at;
	union {  /* an alias's body has no denial: the fields are its target's */
		struct {
			uint32_t proof_skip[2];
			uint32_t proof_also;
		};
		struct {
			name_t alias_target;   /* the CNAME's target, a node of the zone */
			uint32_t alias_at;     /* body offset of the CNAME's target */
			uint32_t alias_run;    /* 1: the target's answers with DNSSEC */
		};
	};
	uint32_t overflow; /* the body for a name too long (YXDOMAIN), or NONE */
	/* Offset in the arena: data_len octets, then nfixups uint16, then with proof_keys the
	 * zone (a uint32) and the keys (KEY_LEN octets each): the body's trailer. */
	uint32_t data;
};  /* 48 octets, no padding: a million signed names make 8 million */

/* The octets after a body's data in its arena: its fixups, then the keys' zone and keys. */
static inline size_t body_trailer(const struct body *b)
{
	return 2u * b->nfixups + (b->proof_keys ? 4u + (size_t)KEY_LEN * b->proof_keys : 0);
}

/* A body's octets are records (RFC 1035 §4.1.3), their names compressed against a question
 * that is not there: a name ends at the root label or at a pointer, which is not followed.
 * The offset past the name at `at`, and past the record there, in `len` octets; 0 where
 * none ends there. */
static inline size_t body_name_end(const uint8_t *d, size_t len, size_t at)
{
	while (at < len) {
		uint8_t label = d[at];
		if (label == 0)
			return at + 1;
		if ((label & 0xC0) == 0xC0)
			return at + 2 <= len ? at + 2 : 0;
		if (label & 0xC0)
			return 0;
		at += 1u + label;
	}
	return 0;
}

static inline size_t body_record_end(const uint8_t *d, size_t len, size_t at)
{
	at = body_name_end(d, len, at);
	if (!at || at + 10 > len)  /* TYPE, CLASS, TTL, RDLENGTH */
		return 0;
	size_t end = at + 10 + ((size_t)d[at + 8] << 8 | d[at + 9]);
	return end <= len ? end : 0;
}

#define MAX_ARENAS 32
#define NO_ARENA 0xFF  /* a body staged, not yet interned */
extern const bytes_t *arenas[MAX_ARENAS];

static inline const uint8_t *body_data(const struct body *b)
{
	return arenas[b->arena]->v + b->data;
}

struct body_table {
	VEC(struct body) list;
	bytes_t arena;
	uint8_t arena_index;  /* in arenas */
	struct spill_out *spilled;  /* the arena is a file's (spill.c), being written; or NULL */
	size_t let_go;     /* its octets before this are let go from memory */
	uint64_t *hashes;  /* per body */
	struct body_slot { uint32_t tag, id; } *slots;  /* id NONE when empty */
	size_t nslots;     /* a power of two */
	/* Bodies staged for intern_staged (bodies.c): .data is an offset in staged_bytes. */
	VEC(struct body) staged;
	VEC(uint64_t) staged_hashes;
	bytes_t staged_bytes;
};

extern struct body_table bodies;  /* the set's: the first thread's, the others merged in */

void body_table_init(struct body_table *t);
void body_table_expect(struct body_table *t, size_t more);  /* presize for more bodies */
void body_table_free(struct body_table *t);  /* all but the arena, which bodies use */
void body_table_done(struct body_table *t);  /* no more bodies: its arena is all readable */
void body_table_seal(struct body_table *t);  /* ...and its index goes */
void body_table_unindex(struct body_table *t);  /* its slots go; merging reads the rest */
uint32_t intern_body(struct body_table *t, const uint8_t header[10], uint16_t base_len,
		     const uint8_t *data, uint16_t data_len, const uint16_t *fixups,
		     uint16_t nfixups, uint16_t trunc_len, uint16_t trunc_arcount);
/* Two steps for many bodies: stage them (the result is an index among the staged), then
 * intern_staged puts each one's id at ids[index] and empties the stage. A staged body's
 * `overflow` is the index of one staged before it, or NONE. */
uint32_t stage_body(struct body_table *t, const struct body *fields, const uint8_t *data,
		    const uint16_t *fixups);
void intern_staged(struct body_table *t, uint32_t *ids);
void merge_bodies(struct body_table *into, const struct body_table *from, uint32_t *map);

/* ---- spill.c ---- */

void spill_beside(const char *out_path);  /* the file goes in the output's directory */
int reserve_spilled(bytes_t *b);  /* an arena in a file's shared mapping; 0: in memory */
/* An arena in a file, appended to with spill_put and read with spill_at until spill_close,
 * after which b->v holds every octet; NULL: the arena is in memory, bytes_put it. Before
 * the pieces of one body are put, spill_room says their total: a body is read back from
 * one place, the buffer or the file. */
struct spill_out *spill_open(bytes_t *b);
void spill_room(struct spill_out *s, const bytes_t *b, size_t n);
void spill_put(struct spill_out *s, bytes_t *b, const void *p, size_t n);
const uint8_t *spill_at(const struct spill_out *s, const bytes_t *b, size_t at);
void spill_close(struct spill_out *s, const bytes_t *b);  /* flushed; NULL: nothing */
void spill_let_go(const bytes_t *b, size_t from, size_t to);  /* whole pages, a spilled one's */

struct wire;  /* one thread's serializer */
struct wire *wire_new(void);
void wire_free(struct wire *w);
uint32_t serialize(struct wire *w, struct body_table *t, const struct response *r,
		   name_t base);  /* stages the body (see stage_body); NONE: over 65535 octets */
size_t wire_oversize(const struct wire *w);
/* The length of the body serialize would make (no DNAME in `r`). */
size_t serialized_length(struct wire *w, const struct response *r, name_t base);
/* Stages an alias's CNAME part, the first `n` RRsets of r->answer, with `behind` octets of
 * its target's body to follow it (aliases.c); NONE when its target is not written whole or
 * the pointers behind could pass 14 bits. */
uint32_t serialize_alias(struct wire *w, struct body_table *t, const struct response *r,
			 size_t n, name_t base, name_t target, size_t behind);

/* ---- aliases.c ---- */

/* The body of the answer `r` (resolve's for `name`, a node not a wildcard, and qtype) as an
 * alias's composed one, staged, when it is one; NONE otherwise. `scratch` is the caller's
 * second response. */
uint32_t compose_alias(struct wire *w, struct body_table *t, const struct response *r,
		       struct response *scratch, uint32_t zone, name_t name, uint16_t qtype,
		       int minimal);
static inline int body_is_alias(const struct body *b)
{
	return b->dname_split && !b->dname_owner_len;
}

/* ---- changes.c ---- */

#define KEY_SEED 0x6b6579     /* zb_hash's seed for a lowercased wire-format name */

/* A name's state, for the next build over this one (layout/reuse.c writes them). */
enum { STATE_CUT = 1, STATE_DNAME = 2, STATE_ORIGIN = 4, STATE_WILDCARD = 8, STATE_EXISTS = 16 };
struct name_state {
	uint64_t key, parent;  /* a digest of its key, and of its parent's (0: the root) */
	uint64_t digest;       /* of its records in every zone, in file order, and its spelling */
	uint32_t flags;        /* STATE_* */
	name_t name;           /* this build's */
};
extern VEC(struct name_state) name_states;  /* by key */
/* The earlier build's states in a mapping of their own, copied on write (reuse.c): `v`,
 * inside `base` .. `base` + `len`; all NULL: none. */
struct states_copy {
	struct name_state *v;
	void *base;
	size_t len;
};
/* This build's, every name of a zone: 0 when two keys hash alike. */
int compute_name_states(void);
/* The same from an earlier build's (`old`, by key, over the records before a change) and the
 * names the records the change took out and put in name (owners, targets) and names new
 * since: those, with their ancestors, made again; the rest copied, their `name` 0 (a name
 * whose state differs is among those made again, and so are the ancestors changes_reach
 * looks up). */
int patch_name_states(const struct name_state *old, size_t nold, const name_t *changed,
		      size_t nchanged, struct states_copy copy);
/* A name's key digested, memoized in MEMO (one per name, zeroed): the states' keys. */
uint64_t name_key_digest(uint64_t *memo, name_t id);
/* A zone's SOA RRset but for its serial, digested (after compute_name_states); 0: none. */
uint64_t soa_state(uint32_t zone);
/* Per name, whether a change since the earlier build (its states OLD, by key) reaches its
 * answers (a set with a DNAME never comes here, nor a signed zone whose chain changed:
 * reuse.c). */
uint8_t *changes_reach(const struct name_state *old, size_t nold, size_t *count);
/* What changes_reach follows (who names each name), made ahead: it reads the
 * records only, so it runs beside the names' states. */
void changes_prepare(void);
/* Who names each name, over the image of a zone (image.c): the lists it kept of its first
 * `n` names (not copied: they stay the image's until changes_reset), and the pairs (a name,
 * an owner naming it) of the records put in since. A record taken out since may still be
 * in the lists: an owner reached for nothing, laid out again as a full build lays it out. */
void named_by_since(const uint32_t *start, const uint32_t *item, size_t n,
		    const uint32_t *pairs, size_t npairs);
/* Who names each name, as a CSR over the first n names (the records name none after them)
 * from the first `nsets` RRsets, for the image of a set of one zone (on its writer's thread,
 * which the zone's range is not set for yet): taken over by the caller. */
void named_by_lists(size_t n, uint32_t nsets, uint32_t **start, uint32_t **item);
/* The owners whose records name a name (after changes_reach), in two parts (0, 1). */
void names_named_by(name_t id, int part, const uint32_t **first, const uint32_t **end);
void changes_reset(void);
void reuse_reset(void);

/* ---- answers.c ---- */

struct node_answers {
	uint32_t default_body, miss_body;  /* miss_body NONE when miss_wildcard answers */
	name_t miss_wildcard;
	uint32_t types, ntypes;   /* in `typed`, sorted by qtype */
	/* For names below the node, the answers that differ from miss_body by type: a DNAME
	 * synthesis whose chain goes on to the type asked for (RFC 6672 §3.3). In `typed`. */
	uint32_t miss_types, miss_ntypes;
};

struct typed_body {
	uint16_t qtype;
	uint32_t body;
};

extern VEC(struct node_answers) node_answers;  /* parallel to `nodes` */
/* With DO set (RFC 3225): parallel to `nodes` when a zone is signed, else empty. */
extern VEC(struct node_answers) signed_answers;
extern VEC(struct typed_body) typed;

/* Each thread's bodies in a table of its own; only the nodes MAKE marks when not NULL (the
 * others' answers are left empty: reuse.c copies their regions). */
void build_answers(int minimal, const uint8_t *make);
void merge_answers(void);         /* ...all in one table, renumbered */

/* ---- denialdata.c ---- */

extern bytes_t denial_region;     /* runtime/zonedata.h's denial structs, at offsets of its own */
extern uint32_t *denial_of_node;  /* per node: its DO twin's denial, in the region, or NONE */
void build_denial_region(void);   /* while the records are there; once a compile */
void denial_relocate(uint32_t base);
uint32_t denial_entry_at(uint32_t rrset);  /* an NSEC3 RRset's entry in the region */
uint32_t denial_chain_at(uint32_t zone);   /* a zone's struct zb_chain in the region */

/* ---- phash.c ---- */

/* A group of the perfect hash: its slots and pilots among all groups'. */
struct phash_group {
	uint32_t first_slot, first_bucket;
	uint32_t nslots, nbuckets;
};

struct phash {
	uint64_t seed;
	uint32_t ngroups, group_mask;       /* runtime/hash.h: zb_group_of */
	struct phash_group *groups;
	uint64_t *digests;                  /* per group: its keys' hashes digested, any order */
	uint32_t nslots, nbuckets;          /* all groups' */
	uint16_t *pilots;                   /* every group's in turn */
	uint32_t *slots;                    /* every group's in turn: key index, or NONE */
	uint64_t *hashes;                   /* per key, under `seed` */
	uint32_t *members, *member_start;   /* per group, its keys (indexes), in turn */
	/* Per group: where its slots wait to be worked out from the earlier build's pilots
	 * (phash_place), those pilots; else NULL, and its slots and pilots are above. */
	const uint8_t **deferred;
};

/* An earlier build's group: its slot count and pilots (`nbuckets` of them, little-endian). */
struct phash_before {
	uint32_t nslots, nbuckets;
	const uint8_t *pilots;
};
/* Group `g` as an earlier build placed it with this seed, when its keys' digest was this:
 * 1 and *out, or 0 (layout/reuse.c's reuse_phash_before). */
typedef int (*phash_before_fn)(uint32_t g, uint64_t seed, uint64_t digest,
			       struct phash_before *out);

/* Names a group holds on average: a region of a few pages, and a table of groups that
 * stays in a core's caches (a million names: 4,000 groups, 32 KiB). */
#define PHASH_KEYS_PER_GROUP 256
/* `before`: NULL, or where to find the groups an earlier build placed (a group whose keys are
 * the same is placed as it was). */
void build_phash(struct phash *ph, const uint8_t *keys, const uint32_t *key_off, uint32_t n,
		 phash_before_fn before);
/* The same from each key's hash under the first seed (node_hash's), without the keys: 0
 * (nothing made) where that seed places not every group, which build_phash then tries the
 * next seeds for. */
int build_phash_hashed(struct phash *ph, uint64_t *hashes, uint32_t n,
		       phash_before_fn before);  /* `hashes` (malloc'd) taken over when made */
/* Group g's slots (and pilots) worked out where they wait for it: before anything reads
 * them, for each group the layout writes. */
void phash_place(struct phash *ph, uint32_t g);
/* Where key `key` lies, whether or not its group's slots were worked out. */
void phash_key_place(const struct phash *ph, uint32_t key, uint32_t *group, uint32_t *slot);
void phash_free(struct phash *ph);
/* Where a key goes, as the responder finds it (runtime/hash.h): its group, and its slot
 * there; whether the slot holds that key is for the caller to see. */
uint32_t phash_slot(const struct phash *ph, const uint8_t *key, size_t len, uint32_t *group);

/* ---- sharing.c ---- */

/* What a layout thread keeps from region to region to find the answers whose octets
 * another holds: runs of records by the hash of their octets, the bodies longest first. */
struct spot {
	uint64_t key;
	uint32_t k;            /* the body's index in the region; NONE: a free slot */
	uint16_t off, len;
};
struct sharing {
	struct spot *spots;
	size_t cap;
	VEC(uint32_t) used;    /* the slots taken, to free them for the next region */
	VEC(uint64_t) order;
};
/* For the `n` bodies `ids` of a region: host[k], the index among them of the body whose
 * octets from host_off[k] on are ids[k]'s (that one keeps its own), or NONE. */
void share_bodies(struct sharing *s, const uint32_t *ids, size_t n, uint32_t *host,
		  uint32_t *host_off);
void sharing_free(struct sharing *s);

/* ---- layout.c ---- */

/* A CH answer: its body, and where the layout put it (the driver knows its name). */
struct chaos {
	uint32_t body;
	uint32_t offset;   /* set by write_layout */
};

struct layout_info {
	uint64_t size;
	uint32_t groups_off, ngroups, group_mask, nslots, nanswers;
	uint32_t signed_nodes;  /* runtime/zonedata.h */
};

/* Where everything goes (the chaos answers' offsets too), then the blob itself. */
void plan_layout(const struct phash *ph, const uint32_t *key_off, struct chaos *chaos,
		 size_t nchaos, struct layout_info *info);
/* Into PATH from AT: a new file where AT is 0; else an existing one, the server linked with a
 * placeholder for its data (compiler/toolchain/cc.py), its data's place AT a multiple of
 * the page size, the octets around it the driver's; its first KEPT octets there the earlier
 * build's data as it lay in its own server (the rest zeros). */
void write_layout(const char *path, uint64_t at, uint64_t kept, const struct phash *ph,
		  const uint8_t *keys, unsigned max_labels);
/* The denial region's offsets made absolute for the place every layout gives it, which it
 * returns: early in a build over an earlier build, to compare the two (reuse.c). */
uint32_t place_denial_region(void);

/* ---- reuse.c ---- */

/* The manifest's `state NEW OLD_STATE OLD_BLOB AT LEN`: where this build's state goes, and the
 * earlier build's (empty: none), its blob LEN octets of OLD_BLOB from AT (LEN 0: the whole
 * file; a server holds its data after its code). */
void reuse_files(const char *state_out, const char *state_in, const char *blob_in,
		 uint64_t blob_at, uint64_t blob_len);
int reuse_wanted(void);
int reuse_has_earlier(void);  /* an earlier build's state was named: one may be built over */
void reuse_decides(const void *data, size_t len);  /* what but the records decides the output */
/* Once the manifest is read: the earlier build mapped, if this core made it from this
 * manifest; then its chain_checked of a zone (0: none). */
void reuse_early(void);
uint64_t reuse_early_digest(void);  /* the manifest's settings and the core, as reuse_early saw them */
uint64_t reuse_earlier_chain(uint32_t zone);
/* Where the earlier build put the zone's NSEC3 chain in its denial region (NONE: none, or
 * no earlier build to build over). */
uint32_t reuse_earlier_chain_at(uint32_t zone);
/* After the checks, when a state is wanted: this build's name states (made again from the
 * earlier build's where `changed` is not NULL: patch_name_states); 1 when an earlier build
 * can be built over. */
int reuse_prepare(const name_t *changed, size_t nchanged);
/* The earlier build's state's digest of its content (0: none that this build can read), and
 * this build's once written (0: none): what an image says it was made beside. */
uint64_t reuse_earlier_content(void);
uint64_t reuse_state_written(void);
void reuse_group_digests(const struct phash *ph);
int reuse_phash_before(uint32_t g, uint64_t seed, uint64_t digest, struct phash_before *out);
/* The nodes whose answers to make (NULL: all), once the perfect hash is made. */
uint8_t *reuse_plan(const struct phash *ph, size_t *reached_names, uint32_t *groups_reused);
/* A group's region from the earlier blob: its size, its octets and answers; NONE: lay out. */
uint32_t reused_region(uint32_t g, const uint8_t **octets, uint32_t *nanswers);
/* Where a reused group's region lies in the earlier blob's file, to copy it from there: 0
 * when the group is not reused, or the file cannot be copied from. */
int reused_file(uint32_t g, int *fd, int64_t *at);
/* A copied region, now at DEST: the zones' new serials written in (only a serial changed). */
void reuse_patch(uint32_t g, uint8_t *dest);
/* Group g's region, laid out, holds at `at` from its start the answer of body `b`: noted
 * where it holds an SOA or is an alias's (reuse.c's sites). Each group's by one thread at a
 * time. */
void reuse_site(uint32_t g, uint32_t at, const struct body *b);
void reuse_layout(const uint32_t *at, const uint32_t *size, const uint32_t *nanswers,
		  uint32_t ngroups);
void write_state(const uint8_t *blob, uint64_t blob_len, uint32_t groups_off, uint64_t seed);

/* ---- proofuse.c ---- */

/* A read of an NSEC3 entry by the answers of a group's region, as the state keeps it. */
struct state_proof {
	uint64_t entry;  /* struct proof_use's */
	uint32_t group, spare;
};
/* The first 61 bits of a hash (the low 3 bits zero, for the PROOF_ flags): a read's entry. */
uint64_t proof_entry(const uint8_t *hash);
/* Whether the answers log their proofs' reads: a state is kept, and zones have chains,
 * each an NSEC3 chain. */
int proofs_logged(void);
void proof_uses_take(struct proof_log *log);  /* a thread's log, after the answers */
/* Per group of this build, 1 where a read the earlier state keeps (`old`, in order) finds
 * otherwise in this build's chains (its denial region placed at `base`) than in the earlier
 * data's; NULL where that cannot be told (a full build). */
uint8_t *proofs_unstable(const struct state_proof *old, size_t nold, const uint8_t *blob,
			 uint64_t blob_len, uint64_t old_denial_len, uint32_t base, uint32_t ngroups);
/* The reads for this build's state, in order: the earlier ones of the groups `reused` (NULL:
 * none), this build's of the others. */
struct state_proof *proofs_for_state(const struct state_proof *old, size_t nold,
				     const uint8_t *reused, uint32_t nreused,
				     const struct phash *ph, size_t *n);
void proofs_reset(void);

/* ---- compile.c ---- */

struct compile_options {
	int minimal;  /* minimal-responses: no optional additional records */
	int lenient;  /* the checks the peers let operators switch off are warnings */
	struct signature_check signatures;  /* .out NULL: the signatures are not verified */
	struct signer_files signer;
};

/* What compile_set leaves for write_layout: the hash keys (each node's lowercased wire-format
 * name), the perfect hash over them, and the plan of the layout. */
struct compiled {
	bytes_t keys;          /* of the nodes at key_off, */
	uint32_t *key_off;
	int keys_made;         /* once made (every node's, or those the layout writes) */
	unsigned max_labels;
	/* The first `gathered` nodes' (the cut filter's: nodes may come after, a DNAME's
	 * images), their most labels and over an image their hashes (NULL: none gathered). */
	size_t gathered;
	uint64_t *node_hashes;
	struct phash ph;
	struct layout_info info;
	int prepare;  /* changes_prepare beside the names' states */
	int denial;   /* and the denial region (denialdata.c) after it */
};

/* The zones listed (add_zone), their set compiled up to the layout's plan: 0, or EXIT_ERRORS
 * with the diagnostics printed. */
int compile_set(const struct compile_options *o, struct chaos *chaos, size_t nchaos,
		struct compiled *c);
void compiled_free(struct compiled *c);
/* Every stage's memory given back, for another compile in the same process. */
void core_reset(void);
void names_reset(void);
void zones_reset(void);
void views_reset(void);
void dname_reset(void);
void chains_reset(size_t nzones);
void chains_checked_reset(void);
void denial_region_reset(void);
void answers_reset(void);
void bodies_reset(void);
void signatures_reset(void);
void signer_reset(void);
void spill_reset(void);
void diagnostics_reset(void);
void reading_reset(void);

#endif

