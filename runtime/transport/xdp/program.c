/*
 * program.c - the XDP program (see program.h), written once by hand as BPF instructions: no
 * compiler for BPF in the build, no libbpf to read an object file, nothing but bpf().
 *
 * What it does, for every frame the interface receives:
 *
 *   EtherType after the MAC addresses; one 802.1Q or 802.1ad tag: the EtherType behind it
 *   IPv4: version 4, header length >= 20, protocol UDP, neither MF nor a fragment offset
 *   IPv6: version 6, next header UDP (an extension header, a fragment's included, is passed)
 *   UDP destination port == the server's port
 *     -> bpf_redirect_map(xsks, ctx->rx_queue_index, XDP_PASS)
 *   anything else, or a frame too short for the headers it claims -> XDP_PASS
 *
 * bpf_redirect_map returns its flags' low bits, XDP_PASS here, where the XSKMAP has no socket
 * at the frame's queue: a queue no worker reads stays with the kernel, as during start-up.
 * Lengths beyond the headers (IPv4 total length, UDP length) are the frame parser's to check;
 * what the program lets through it may still drop.
 *
 * The port is an immediate in the program, patched in before the load, not a value in an
 * array map: no map lookup per frame, no second map to create and hand over at a swap, and
 * the verifier sees a constant. A server that changes its port loads a new program and swaps
 * it into the link with BPF_LINK_UPDATE, which replaces it atomically.
 *
 * The licence: bpf_redirect_map is not one of the helpers restricted to GPL-compatible
 * programs (its bpf_func_proto has gpl_only false; the verifier would refuse the load
 * otherwise, and tests/transport/test_xdp_program.py loads it), so the program declares none.
 */
#define _GNU_SOURCE
#include "transport/xdp/program.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The instructions, as the kernel's own filter.h writes them. */
#define INSN(c, d, s, o, i) \
	{ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV_REG(d, s)        INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i)        INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i)        INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define ADD_REG(d, s)        INSN(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define AND_IMM(d, i)        INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define LSH_IMM(d, i)        INSN(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)
#define RSH_IMM(d, i)        INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define LOAD(size, d, s, o)  INSN(BPF_LDX | BPF_MEM | (size), d, s, o, 0)
/* A 16-bit field in network order to host order (a no-op on a big-endian host). */
#define FROM_BE16(d)         INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 16)
#define CALL(helper)         INSN(BPF_JMP | BPF_CALL, 0, 0, 0, helper)
#define EXIT()               INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* The 64-bit immediate load of a map's address, by its descriptor: two instruction slots. */
#define LOAD_MAP(d, fd)      INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
			     INSN(0, 0, 0, 0, 0)
/* Jumps name their target by its index; `here` is the jump's own. */
#define JUMP_IMM(here, op, d, i, target) \
	[here] = INSN(BPF_JMP | (op) | BPF_K, d, 0, (target) - (here) - 1, i)
#define JUMP_REG(here, op, d, s, target) \
	[here] = INSN(BPF_JMP | (op) | BPF_X, d, s, (target) - (here) - 1, 0)
#define GOTO(here, target)   [here] = INSN(BPF_JMP | BPF_JA, 0, 0, (target) - (here) - 1, 0)
/* Three instructions, here to here + 2: to AT_PASS unless `bytes` from r2 on are in the frame
 * (r4 = r2 + bytes; if r4 > data_end). The verifier allows a read only after such a check. */
#define NEEDS(here, bytes)   [here] = MOV_REG(R4, R2), [(here) + 1] = ADD_IMM(R4, bytes), \
			     JUMP_REG((here) + 2, BPF_JGT, R4, R3, AT_PASS)

enum { R0, R1, R2, R3, R4, R5, R6, R7, R8 };

/* Ethernet, the tag, IPv4 and IPv6 header fields, by their offsets from the frame's start
 * (r2: the frame's start, or 4 bytes on after a tag, so that one offset serves both). */
#define ETH_TYPE 12
#define TAG_TYPE 16
#define L3 14
#define IPV4_VERSION_IHL (L3 + 0)
#define IPV4_FRAGMENT (L3 + 6)
#define IPV4_PROTOCOL (L3 + 9)
#define IPV6_NEXT_HEADER (L3 + 6)
#define UDP_DEST_PORT 2

/* Targets of jumps, and the instructions patched at the load: the indexes below. */
enum {
	AT_TAG = 10,
	AT_NETWORK = 16,
	AT_IPV6 = 37,
	AT_UDP = 46,
	AT_PORT = 51,   /* the port's comparison: its immediate */
	AT_MAP = 52,    /* the XSKMAP's load: its descriptor */
	AT_PASS = 58,
	PROGRAM_LENGTH = AT_PASS + 2
};

static const struct bpf_insn program[] = {
	/* r6 = ctx, kept for its rx_queue_index at the call; r2 = data, r3 = data_end */
	[0] = MOV_REG(R6, R1),
	[1] = LOAD(BPF_W, R2, R1, offsetof(struct xdp_md, data)),
	[2] = LOAD(BPF_W, R3, R1, offsetof(struct xdp_md, data_end)),
	/* Ethernet: 14 bytes; r5 = the EtherType */
	NEEDS(3, L3),
	[6] = LOAD(BPF_H, R5, R2, ETH_TYPE),
	[7] = FROM_BE16(R5),
	/* 802.1Q or 802.1ad: 4 more bytes; r5 = the EtherType behind the tag, r2 moves on by 4 */
	JUMP_IMM(8, BPF_JEQ, R5, 0x8100, AT_TAG),
	JUMP_IMM(9, BPF_JNE, R5, 0x88a8, AT_NETWORK),
	NEEDS(10, L3 + 4),
	[13] = LOAD(BPF_H, R5, R2, TAG_TYPE),
	[14] = FROM_BE16(R5),
	[15] = ADD_IMM(R2, 4),
	/* IPv6 or IPv4; anything else (ARP, a second tag) to the kernel */
	JUMP_IMM(16, BPF_JEQ, R5, 0x86dd, AT_IPV6),
	JUMP_IMM(17, BPF_JNE, R5, 0x0800, AT_PASS),
	/* IPv4: 20 bytes; version 4 and r7 = the header length (IHL >= 5) */
	NEEDS(18, L3 + 20),
	[21] = LOAD(BPF_B, R7, R2, IPV4_VERSION_IHL),
	[22] = MOV_REG(R8, R7),
	[23] = RSH_IMM(R8, 4),
	JUMP_IMM(24, BPF_JNE, R8, 4, AT_PASS),
	[25] = AND_IMM(R7, 0x0f),
	JUMP_IMM(26, BPF_JLT, R7, 5, AT_PASS),
	/* protocol UDP */
	[27] = LOAD(BPF_B, R8, R2, IPV4_PROTOCOL),
	JUMP_IMM(28, BPF_JNE, R8, 17, AT_PASS),
	/* not a fragment: MF clear and offset 0 (DF may be set) */
	[29] = LOAD(BPF_H, R8, R2, IPV4_FRAGMENT),
	[30] = FROM_BE16(R8),
	[31] = AND_IMM(R8, 0x3fff),
	JUMP_IMM(32, BPF_JNE, R8, 0, AT_PASS),
	/* r2 = the UDP header (14 + IHL * 4 on; IHL <= 15, so the verifier knows the bound) */
	[33] = LSH_IMM(R7, 2),
	[34] = ADD_REG(R2, R7),
	[35] = ADD_IMM(R2, L3),
	GOTO(36, AT_UDP),
	/* IPv6: 40 bytes; version 6; next header UDP itself; r2 = the UDP header */
	NEEDS(37, L3 + 40),
	[40] = LOAD(BPF_B, R8, R2, L3),
	[41] = RSH_IMM(R8, 4),
	JUMP_IMM(42, BPF_JNE, R8, 6, AT_PASS),
	[43] = LOAD(BPF_B, R8, R2, IPV6_NEXT_HEADER),
	JUMP_IMM(44, BPF_JNE, R8, 17, AT_PASS),
	[45] = ADD_IMM(R2, L3 + 40),
	/* UDP: 8 bytes; the destination port is ours (patched in: AT_PORT) */
	NEEDS(46, 8),
	[49] = LOAD(BPF_H, R8, R2, UDP_DEST_PORT),
	[50] = FROM_BE16(R8),
	JUMP_IMM(51, BPF_JNE, R8, 0 /* the port */, AT_PASS),
	/* return bpf_redirect_map(&xsks (patched in: AT_MAP), ctx->rx_queue_index, XDP_PASS) */
	[52] = LOAD_MAP(R1, 0),
	[54] = LOAD(BPF_W, R2, R6, offsetof(struct xdp_md, rx_queue_index)),
	[55] = MOV_IMM(R3, XDP_PASS),
	[56] = CALL(BPF_FUNC_redirect_map),
	[57] = EXIT(),
	/* return XDP_PASS */
	[58] = MOV_IMM(R0, XDP_PASS),
	[59] = EXIT(),
};

_Static_assert(sizeof(program) / sizeof(program[0]) == PROGRAM_LENGTH,
	       "the program ends with the two instructions at AT_PASS");

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* The status of a failed bpf() call that is not particular to one step. */
static enum zb_xdp_status failure(int error)
{
	switch (error) {
	case EPERM:
	case EACCES:
		return ZB_XDP_NOT_PERMITTED;
	case ENOSYS:
		return ZB_XDP_UNSUPPORTED;
	default:
		return ZB_XDP_FAILED;
	}
}

static enum zb_xdp_status say(enum zb_xdp_status status, const char *ifname, const char *step,
			      int error, char *err, size_t err_len)
{
	switch (status) {
	case ZB_XDP_NOT_PERMITTED:
		snprintf(err, err_len, "%s: %s: %s: XDP needs CAP_BPF and CAP_NET_ADMIN (or "
			 "CAP_SYS_ADMIN)", ifname, step, strerror(error));
		break;
	case ZB_XDP_UNSUPPORTED:
		snprintf(err, err_len, "%s: %s: %s: the kernel lacks BPF (CONFIG_BPF_SYSCALL), "
			 "AF_XDP (CONFIG_XDP_SOCKETS) or XDP links (Linux 5.9)", ifname, step,
			 strerror(error));
		break;
	case ZB_XDP_BUSY:
		snprintf(err, err_len, "%s: %s: %s: another XDP program is attached to the "
			 "interface", ifname, step, strerror(error));
		break;
	default:
		snprintf(err, err_len, "%s: %s: %s", ifname, step, strerror(error));
	}
	return status;
}

static int create_map(void)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_XSKMAP;
	attr.key_size = sizeof(uint32_t);
	attr.value_size = sizeof(int);
	attr.max_entries = ZB_XDP_QUEUES_MAX;
	strcpy(attr.map_name, "zonebake_xsks");
	return (int)sys_bpf(BPF_MAP_CREATE, &attr);
}

static int load_program(const struct bpf_insn *insns, char *log, size_t log_size)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.expected_attach_type = BPF_XDP;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = PROGRAM_LENGTH;
	attr.license = (uintptr_t)"";
	strcpy(attr.prog_name, "zonebake_xdp");
	if (log) {
		attr.log_buf = (uintptr_t)log;
		attr.log_size = (uint32_t)log_size;
		attr.log_level = 1;
	}
	return (int)sys_bpf(BPF_PROG_LOAD, &attr);
}

/* The verifier's refusal: the load again with its log, the end of which (where the reason
 * is) goes into the message. */
static enum zb_xdp_status refused(const char *ifname, const struct bpf_insn *insns,
				  int error, char *err, size_t err_len)
{
	int n = snprintf(err, err_len, "%s: the kernel's verifier refused the XDP program (%s)",
			 ifname, strerror(error));
	size_t log_size = 1 << 20;
	char *log = calloc(1, log_size);
	if (!log)
		return ZB_XDP_REFUSED;
	int fd = load_program(insns, log, log_size);
	if (fd >= 0) { /* accepted this time: nothing to show */
		close(fd);
		free(log);
		return ZB_XDP_REFUSED;
	}
	size_t room = n >= 0 && (size_t)n + 2 < err_len ? err_len - (size_t)n - 2 : 0;
	size_t len = strnlen(log, log_size);
	while (len && log[len - 1] == '\n')
		len--;
	const char *tail = log;
	if (len > room) { /* the last lines that fit */
		tail = log + len - room;
		const char *line = memchr(tail, '\n', room);
		tail = line ? line + 1 : tail;
	}
	if (room)
		snprintf(err + n, err_len - (size_t)n, ":\n%.*s", (int)(log + len - tail), tail);
	free(log);
	return ZB_XDP_REFUSED;
}

static int create_link(int prog_fd, int ifindex, unsigned flags)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (uint32_t)prog_fd;
	attr.link_create.target_ifindex = (uint32_t)ifindex;
	attr.link_create.attach_type = BPF_XDP;
	attr.link_create.flags = flags;
	return (int)sys_bpf(BPF_LINK_CREATE, &attr);
}

static enum zb_xdp_status attach(struct zb_xdp_program *xdp, const char *ifname,
				 enum zb_xdp_mode mode, char *err, size_t err_len)
{
	struct bpf_insn insns[PROGRAM_LENGTH];
	memcpy(insns, program, sizeof(insns));
	insns[AT_PORT].imm = xdp->port;
	insns[AT_MAP].imm = xdp->map_fd;
	xdp->prog_fd = load_program(insns, NULL, 0);
	if (xdp->prog_fd < 0) {
		int error = errno;
		if (error == EACCES || error == EINVAL)
			return refused(ifname, insns, error, err, err_len);
		return say(failure(error), ifname, "loading the XDP program", error, err, err_len);
	}

	/* Native first, unless told otherwise; generic where the driver has no XDP of its own
	 * (EOPNOTSUPP) or refuses it for this interface (a veth: ENOSPC with fewer receive
	 * queues than its peer sends on, ERANGE/EINVAL with too large an MTU). Not where the
	 * interface is taken or gone, or XDP not permitted: the generic mode would be too. */
	xdp->native = mode != ZB_XDP_MODE_GENERIC;
	xdp->link_fd = create_link(xdp->prog_fd, xdp->ifindex,
				   xdp->native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
	if (xdp->link_fd < 0 && mode == ZB_XDP_MODE_AUTO &&
	    (errno == EOPNOTSUPP || errno == ENOSPC || errno == ERANGE || errno == EINVAL)) {
		xdp->native = 0;
		xdp->link_fd = create_link(xdp->prog_fd, xdp->ifindex, XDP_FLAGS_SKB_MODE);
	}
	if (xdp->link_fd >= 0)
		return ZB_XDP_OK;
	int error = errno;
	switch (error) {
	case EBUSY:
	case EEXIST:
		return say(ZB_XDP_BUSY, ifname, "attaching the XDP program", error, err, err_len);
	case ENODEV:
		return say(ZB_XDP_NO_INTERFACE, ifname, "attaching the XDP program", error, err,
			   err_len);
	case EINVAL:
		snprintf(err, err_len, "%s: attaching the XDP program by a link: %s: a kernel "
			 "before Linux 5.9 (no XDP links), or a driver that refuses XDP with this "
			 "MTU or these queues", ifname, strerror(error));
		return ZB_XDP_UNSUPPORTED;
	case EOPNOTSUPP:
		snprintf(err, err_len, "%s: attaching the XDP program: %s: the driver has no "
			 "native XDP (the generic mode would do)", ifname, strerror(error));
		return ZB_XDP_UNSUPPORTED;
	default:
		return say(failure(error), ifname, "attaching the XDP program", error, err,
			   err_len);
	}
}

enum zb_xdp_status zb_xdp_attach(struct zb_xdp_program *xdp, const char *ifname,
				 uint16_t port, enum zb_xdp_mode mode, char *err,
				 size_t err_len)
{
	*xdp = (struct zb_xdp_program){ .map_fd = -1, .prog_fd = -1, .link_fd = -1,
					.port = port };
	xdp->ifindex = (int)if_nametoindex(ifname);
	if (xdp->ifindex == 0) {
		int error = errno;
		if (error == ENODEV || error == ENXIO)
			return say(ZB_XDP_NO_INTERFACE, ifname, "no such interface", error, err,
				   err_len);
		return say(ZB_XDP_FAILED, ifname, "looking the interface up", error, err, err_len);
	}
	xdp->map_fd = create_map();
	if (xdp->map_fd < 0) {
		int error = errno;
		enum zb_xdp_status status = error == EINVAL ? ZB_XDP_UNSUPPORTED : failure(error);
		return say(status, ifname, "creating the XSKMAP", error, err, err_len);
	}
	enum zb_xdp_status status = attach(xdp, ifname, mode, err, err_len);
	if (status != ZB_XDP_OK)
		zb_xdp_detach(xdp);
	return status;
}

enum zb_xdp_status zb_xdp_steer(const struct zb_xdp_program *xdp, unsigned queue, int xsk_fd,
				char *err, size_t err_len)
{
	uint32_t key = queue, value = (uint32_t)xsk_fd;
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)xdp->map_fd;
	attr.key = (uintptr_t)&key;
	attr.value = (uintptr_t)&value;
	attr.flags = BPF_ANY;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &attr) == 0)
		return ZB_XDP_OK;
	int error = errno;
	char ifname[IF_NAMESIZE + 12];
	if (!if_indextoname((unsigned)xdp->ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "interface %d", xdp->ifindex);
	char step[64];
	snprintf(step, sizeof(step), "the XSKMAP's entry for queue %u", queue);
	if (error == E2BIG) {
		snprintf(err, err_len, "%s: %s: the XSKMAP has room for queues 0 to %d", ifname,
			 step, ZB_XDP_QUEUES_MAX - 1);
		return ZB_XDP_FAILED;
	}
	return say(failure(error), ifname, step, error, err, err_len);
}

void zb_xdp_detach(struct zb_xdp_program *xdp)
{
	int *fds[] = { &xdp->link_fd, &xdp->prog_fd, &xdp->map_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
