/*
 * reflector.c - the benchmark's floor: a bare recvmmsg/sendmmsg UDP echo that sends every
 * datagram straight back. No DNS server can answer faster on this path than the kernel lets
 * this do; the difference to it is a server's own work.
 *   reflector ADDRESS PORT [BATCH]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_BATCH 256

int main(int argc, char **argv)
{
	static unsigned char buffers[MAX_BATCH][2048];
	static struct sockaddr_in peers[MAX_BATCH];
	static struct iovec iovs[MAX_BATCH];
	static struct mmsghdr msgs[MAX_BATCH];
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int batch = argc > 3 ? atoi(argv[3]) : 64;

	if (argc < 3 || batch < 1 || batch > MAX_BATCH) {
		fprintf(stderr, "usage: reflector ADDRESS PORT [BATCH]\n");
		return 2;
	}
	inet_pton(AF_INET, argv[1], &addr.sin_addr);
	addr.sin_port = htons((unsigned short)atoi(argv[2]));
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		perror("reflector: bind");
		return 1;
	}
	for (;;) {
		for (int i = 0; i < batch; i++) {
			iovs[i] = (struct iovec){ buffers[i], sizeof(buffers[i]) };
			msgs[i].msg_hdr = (struct msghdr){ .msg_name = &peers[i],
							   .msg_namelen = sizeof(peers[i]),
							   .msg_iov = &iovs[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(fd, msgs, (unsigned)batch, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++)
			iovs[i].iov_len = msgs[i].msg_len;
		sendmmsg(fd, msgs, (unsigned)n, 0);
	}
}
