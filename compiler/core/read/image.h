/*
 * image.h - between image.c (a zone's records as read, kept for the next build) and
 * changedlines.c (the lines that changed since, read into them).
 */
#ifndef IMAGE_H
#define IMAGE_H

#include "read/lexed.h"

typedef VEC(uint32_t) lines_t;

/* The text an image was read from, and the file's now: what changed. */
struct change {
	size_t start, old_end, new_end;  /* [start, old_end) of the image's text became
					  * [start, new_end) of the file's */
	uint32_t first_line, old_end_line, new_end_line;  /* their lines: [first, end) */
};

/* 0 when the change is not one changedlines.c reads (image.c's rules). */
int find_change(const char *old, size_t old_len, const char *now, size_t now_len,
		const struct span *spans, size_t nspans, size_t head_end, struct change *c);
/* The spans of the file now: the image's outside the change, moved with it, and those of
 * the lines read. */
void spans_now(const struct span *old, size_t n, const struct change *c,
	       const struct region *in, struct head *h);
/* Whether filing the lines read among the records that stay (`removed`: those of the old
 * lines) would say anything (zones.c's add_record): then the file is read whole, and says
 * it. */
int files_quietly(uint32_t zone, const struct region *in, const uint8_t *removed);

struct patch {
	uint32_t zone;
	uint32_t nsets;          /* the image's RRsets: those after them are new */
	uint32_t *sets;          /* per record: its RRset, NONE when taken out */
	uint8_t *touched;        /* per RRset: its records changed */
	VEC(name_t) owners;      /* of the RRsets touched */
	VEC(name_t) named;       /* by the records taken out (owners, targets), then by those
				  * put in */
	lines_t *lines;          /* per record: its line (0: taken out) */
	int shape;               /* an RRset came, went, or has another first record */
	name_t first_new;        /* names from this id on are the new lines' own */
	size_t first_moved;      /* records before this one lie before the change */
	VEC(name_t) lost;        /* owners of address records taken out, of CNAMEs put in */
	int cut_made;            /* a name from before the change owns NS now, and did not */
	int cut_changed;         /* a name is a cut now, and was not, or the other way */
	int cut_lost;            /* a name was a cut, and is not */
};

/* The records of the old lines taken out, those read put in, all after moved by the lines
 * the change added or took. */
void apply_change(struct patch *p, const struct change *c, const struct region *in,
		  const uint8_t *removed, size_t nimage);

int image_forbidden_type(uint16_t type);  /* a zone holding it keeps no image */
/* Before the RRsets are put back in file order (changedlines.c): what that renumbers from
 * the change on, the names' first RRsets and the records' RRsets, copied in at once. */
void image_copy_renumbered(void);

#endif
