/*
 * loadgen.c - the benchmark's load generator: UDP DNS queries in batches (sendmmsg), answers
 * in batches (recvmmsg), from several sockets so that SO_REUSEPORT can spread them, pinned to
 * one CPU. dnsperf tops out near 270k queries/s on this machine; this does not.
 *
 *   loadgen ADDRESS PORT QUERYFILE [--seconds S] [--rate QPS] [--window N] [--batch N]
 *                                   [--sockets N] [--cpu N] [--count N] [--linger S]
 *                                   [--tally 1] [--edns 1|2] [--cookie HEX]
 *                                   [--source A.B.C.D]
 *
 * Without --rate it keeps `window` queries outstanding (saturation); with it, it sends at that
 * rate. --count sends exactly that many and waits for the answers (for instruction counts);
 * --linger is how long it waits for answers after the last query (default: 60 s with --count,
 * else 0.3 s). Prints one line: sent answered lost seconds qps mean_us p99_us. With --tally,
 * answers are also counted by their last four octets (the swap test's A record, which tells
 * which zone set answered), in the order received: tally=HEX:N,... switches=N last=HEX.
 * --edns 1 adds an OPT record (1232 octets) to every query, --edns 2 one with DO set;
 * --cookie puts a COOKIE option with those octets in it (RFC 7873; with --edns 1 or 2).
 * --source binds socket s to A.B.C.(D+s): on loopback, clients of one prefix. The line also
 * says bytes_out= and bytes_in= (DNS messages sent and received), for amplification.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_SOCKETS 64
#define MAX_BATCH 256
#define HIST_US 100000 /* latencies up to 100 ms, in 1 µs buckets */

struct query { uint8_t wire[360]; uint16_t len; }; /* a name, OPT and COOKIE */

static struct query *queries;
static int edns; /* 0: none; 1: an OPT record; 2: with DO set (RFC 3225) */
static uint8_t cookie[40];
static size_t cookie_len;
static size_t nqueries;
static uint64_t sent_at[MAX_SOCKETS][65536]; /* ns; 0: not outstanding */
static uint16_t next_id[MAX_SOCKETS];
static uint64_t histogram[HIST_US + 1];

#define TALLY_MAX 8
static struct { uint32_t value; uint64_t count; } tally[TALLY_MAX];
static unsigned ntally;
static uint64_t switches; /* answers whose value differs from the one received before */
static uint32_t last_value;

/* Count an answer by its last four octets. */
static void tally_answer(const uint8_t *answer, unsigned len)
{
	uint32_t value = len < 16 ? 0 : (uint32_t)answer[len - 4] << 24 |
					 (uint32_t)answer[len - 3] << 16 |
					 (uint32_t)answer[len - 2] << 8 | answer[len - 1];
	unsigned i = 0;
	while (i < ntally && tally[i].value != value)
		i++;
	if (i == ntally && ntally < TALLY_MAX)
		tally[ntally++].value = value;
	if (i < ntally)
		tally[i].count++;
	if (value != last_value && (ntally > 1 || tally[0].count > 1))
		switches++;
	last_value = value;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int qtype_of(const char *text)
{
	static const struct { const char *name; int value; } types[] = {
		{ "A", 1 }, { "NS", 2 }, { "CNAME", 5 }, { "SOA", 6 }, { "PTR", 12 }, { "MX", 15 },
		{ "TXT", 16 }, { "AAAA", 28 }, { "SRV", 33 }, { "DS", 43 }, { "ANY", 255 } };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(text, types[i].name) == 0)
			return types[i].value;
	return strncasecmp(text, "TYPE", 4) == 0 ? atoi(text + 4) : -1;
}

static int encode(const char *name, int qtype, struct query *q)
{
	uint8_t *p = q->wire + 12;
	memset(q->wire, 0, 12);
	q->wire[5] = 1; /* QDCOUNT; RD clear */
	while (*name && strcmp(name, ".") != 0) {
		const char *dot = strchr(name, '.');
		size_t len = dot ? (size_t)(dot - name) : strlen(name);
		if (len == 0 || len > 63 || p + len + 17 > q->wire + sizeof(q->wire))
			return -1;
		*p++ = (uint8_t)len;
		memcpy(p, name, len);
		p += len;
		name += len + (dot ? 1 : 0);
	}
	*p++ = 0;
	*p++ = (uint8_t)(qtype >> 8);
	*p++ = (uint8_t)qtype;
	*p++ = 0;
	*p++ = 1;
	if (edns) { /* RFC 6891 §6.1.2: root owner, type 41, the size as class, DO in the TTL */
		static const uint8_t opt[11] = { 0, 0, 41, 1232 >> 8, 1232 & 0xFF, 0, 0, 0, 0, 0, 0 };
		memcpy(p, opt, sizeof(opt));
		if (edns == 2)
			p[7] = 0x80;
		p += sizeof(opt);
		if (cookie_len) { /* RDLENGTH, then the option: code 10, length, octets */
			p[-2] = (uint8_t)((4 + cookie_len) >> 8);
			p[-1] = (uint8_t)(4 + cookie_len);
			*p++ = 0;
			*p++ = 10;
			*p++ = 0;
			*p++ = (uint8_t)cookie_len;
			memcpy(p, cookie, cookie_len);
			p += cookie_len;
		}
		q->wire[11] = 1; /* ARCOUNT */
	}
	q->len = (uint16_t)(p - q->wire);
	return 0;
}

static void load(const char *path)
{
	FILE *f = fopen(path, "r");
	char name[300], type[32];
	size_t cap = 1024;
	if (!f) {
		perror(path);
		exit(1);
	}
	queries = malloc(cap * sizeof(*queries));
	while (fscanf(f, "%299s %31s", name, type) == 2) {
		if (nqueries == cap)
			queries = realloc(queries, (cap *= 2) * sizeof(*queries));
		int qtype = qtype_of(type);
		if (qtype < 0 || encode(name, qtype, &queries[nqueries]) != 0) {
			fprintf(stderr, "loadgen: bad query line: %s %s\n", name, type);
			exit(1);
		}
		nqueries++;
	}
	fclose(f);
	if (!nqueries) {
		fprintf(stderr, "loadgen: no queries in %s\n", path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double seconds = 5, rate = 0, linger = -1;
	const char *source = NULL;
	long window = 512, batch = 32, nsockets = 4, cpu = 1, count = 0, tallying = 0;
	static uint8_t sendbuf[MAX_BATCH][360], recvbuf[MAX_BATCH][4096];
	static struct iovec siov[MAX_BATCH], riov[MAX_BATCH];
	static struct mmsghdr smsg[MAX_BATCH], rmsg[MAX_BATCH];

	if (argc < 4) {
		fprintf(stderr, "usage: loadgen ADDRESS PORT QUERYFILE [options]\n");
		return 2;
	}
	for (int i = 4; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--window")) window = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--batch")) batch = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--sockets")) nsockets = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu")) cpu = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--count")) count = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--linger")) linger = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--tally")) tallying = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--edns")) edns = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--source")) source = argv[i + 1];
		else if (!strcmp(argv[i], "--cookie")) {
			const char *hex = argv[i + 1];
			for (cookie_len = 0; hex[2 * cookie_len] && cookie_len < sizeof(cookie);
			     cookie_len++)
				sscanf(hex + 2 * cookie_len, "%2hhx", &cookie[cookie_len]);
		}
		else { fprintf(stderr, "loadgen: unknown option %s\n", argv[i]); return 2; }
	}
	if (batch < 1 || batch > MAX_BATCH || nsockets < 1 || nsockets > MAX_SOCKETS) {
		fprintf(stderr, "loadgen: --batch 1..%d, --sockets 1..%d\n", MAX_BATCH, MAX_SOCKETS);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	load(argv[3]);

	struct sockaddr_in server = { .sin_family = AF_INET,
				      .sin_port = htons((uint16_t)atoi(argv[2])) };
	inet_pton(AF_INET, argv[1], &server.sin_addr);
	struct pollfd fds[MAX_SOCKETS];
	for (long s = 0; s < nsockets; s++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		int size = 4 << 20;
		/* Past net.core.rmem_max when allowed (root): answers must not be lost here. */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) != 0)
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		if (source) {
			struct sockaddr_in from = { .sin_family = AF_INET };
			inet_pton(AF_INET, source, &from.sin_addr);
			from.sin_addr.s_addr = htonl(ntohl(from.sin_addr.s_addr) + (uint32_t)s);
			if (bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0) {
				perror("loadgen: bind");
				return 1;
			}
		}
		if (fd < 0 || connect(fd, (struct sockaddr *)&server, sizeof(server)) != 0) {
			perror("loadgen: socket");
			return 1;
		}
		fds[s] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	for (long i = 0; i < batch; i++) {
		siov[i].iov_base = sendbuf[i];
		smsg[i].msg_hdr = (struct msghdr){ .msg_iov = &siov[i], .msg_iovlen = 1 };
		riov[i] = (struct iovec){ recvbuf[i], sizeof(recvbuf[i]) };
		rmsg[i].msg_hdr = (struct msghdr){ .msg_iov = &riov[i], .msg_iovlen = 1 };
	}

	uint64_t sent = 0, answered = 0, lost = 0, latency_sum = 0, bytes_out = 0, bytes_in = 0;
	size_t next = 0;
	long sock = 0;
	uint64_t start = now_ns(), stop = start + (uint64_t)(seconds * 1e9), end, last_sent = 0;
	uint64_t linger_ns = (uint64_t)((linger >= 0 ? linger : count ? 60 : 0.3) * 1e9);
	for (;;) {
		uint64_t t = now_ns();
		int sending = count ? sent < (uint64_t)count : t < stop;
		if (!sending && (sent == answered + lost || t > last_sent + linger_ns))
			break;
		long want = 0;
		if (sending) {
			if (rate > 0)
				want = (long)((double)(t - start) * rate / 1e9) - (long)sent;
			else
				want = window - (long)(sent - answered - lost);
			if (count && want > count - (long)sent)
				want = count - (long)sent;
			if (want > batch)
				want = batch;
		}
		if (want > 0) {
			for (long i = 0; i < want; i++) {
				const struct query *q = &queries[next];
				next = (next + 1) % nqueries;
				uint16_t id = next_id[sock]++;
				if (sent_at[sock][id]) { /* never answered before its ID came round */
					lost++;
				}
				sent_at[sock][id] = t;
				memcpy(sendbuf[i], q->wire, q->len);
				sendbuf[i][0] = (uint8_t)(id >> 8);
				sendbuf[i][1] = (uint8_t)id;
				siov[i].iov_len = q->len;
			}
			int n = sendmmsg(fds[sock].fd, smsg, (unsigned)want, 0);
			if (n < 0)
				n = 0;
			for (long i = n; i < want; i++) { /* not sent after all */
				next_id[sock]--;
				sent_at[sock][next_id[sock]] = 0;
			}
			sent += (uint64_t)n;
			for (int i = 0; i < n; i++)
				bytes_out += siov[i].iov_len;
			last_sent = t;
			sock = (sock + 1) % nsockets;
		}
		int ready = poll(fds, (nfds_t)nsockets, want > 0 || rate > 0 ? 0 : 1);
		if (ready <= 0)
			continue;
		uint64_t received_at = now_ns();
		for (long s = 0; s < nsockets; s++) {
			if (!(fds[s].revents & POLLIN))
				continue;
			int n = recvmmsg(fds[s].fd, rmsg, (unsigned)batch, MSG_DONTWAIT, NULL);
			for (int i = 0; i < n; i++) {
				bytes_in += rmsg[i].msg_len;
				if (rmsg[i].msg_len < 12)
					continue;
				uint16_t id = (uint16_t)(recvbuf[i][0] << 8 | recvbuf[i][1]);
				if (!sent_at[s][id])
					continue;
				uint64_t us = (received_at - sent_at[s][id]) / 1000;
				histogram[us > HIST_US ? HIST_US : us]++;
				latency_sum += us;
				sent_at[s][id] = 0;
				answered++;
				if (tallying)
					tally_answer(recvbuf[i], rmsg[i].msg_len);
			}
		}
	}
	end = now_ns();
	lost = sent - answered;
	double elapsed = (double)((count ? end : stop) - start) / 1e9;
	uint64_t p99 = 0, seen = 0;
	for (uint64_t us = 0; us <= HIST_US; us++) {
		seen += histogram[us];
		if (seen * 100 >= answered * 99) {
			p99 = us;
			break;
		}
	}
	printf("sent=%llu answered=%llu lost=%llu seconds=%.3f qps=%.0f mean_us=%.1f p99_us=%llu "
	       "bytes_out=%llu bytes_in=%llu\n",
	       (unsigned long long)sent, (unsigned long long)answered, (unsigned long long)lost,
	       elapsed, (double)answered / elapsed,
	       answered ? (double)latency_sum / (double)answered : 0.0, (unsigned long long)p99,
	       (unsigned long long)bytes_out, (unsigned long long)bytes_in);
	if (tallying) {
		printf("tally=");
		for (unsigned i = 0; i < ntally; i++)
			printf("%s%08x:%llu", i ? "," : "", tally[i].value,
			       (unsigned long long)tally[i].count);
		printf(" switches=%llu last=%08x\n", (unsigned long long)switches, last_value);
	}
	return 0;
}
