// pkg-config: doca-common
/*
 * A misbehaving peer for the DMA Copy negative tests: plays the DPU or the host just far enough to
 * break the protocol in one chosen way. Usage: dma_copy_fake_peer <mode> <socket path>
 *
 *   dpu-close    listen, accept, read HELLO, close          (a DPU that dies)
 *   dpu-garbage  listen, accept, read HELLO, send garbage   (not a DMA Copy DPU)
 *   dpu-silent   listen, accept, read HELLO, say nothing    (a DPU that hangs)
 *   host-garbage connect, send garbage
 *   host-version connect, send a HELLO of protocol version 2
 *   host-vanish  connect, send HELLO (host-to-dpu, 4096 bytes), read HELLO_ACK, close
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dma_copy.h"
#include "dma_copy_proto.h"

static const char garbage[] = "this is not the DMA Copy protocol, just some noise\n";

static int listen_and_accept(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int listener = socket(AF_UNIX, SOCK_STREAM, 0);
	int fd;

	strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
	unlink(path);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 1) != 0) {
		perror("fake peer: listen");
		return -1;
	}
	fd = accept(listener, NULL, NULL);
	close(listener);
	unlink(path);
	return fd;
}

static int connect_with_retry(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	const struct timespec pause = {.tv_nsec = 50 * 1000 * 1000};

	strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
	for (int attempt = 0; attempt < 200; attempt++) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		nanosleep(&pause, NULL);
	}
	perror("fake peer: connect");
	return -1;
}

/* Reads one whole message through the real channel code (the fake is wrong on purpose, not by accident). */
static int read_message(int fd, enum dma_copy_msg_type type)
{
	struct dma_copy_channel channel;
	struct dma_copy_msg msg;
	int ok;

	if (dma_copy_channel_init(&channel, dup(fd), 10, "peer under test") != DOCA_SUCCESS)
		return -1;
	ok = dma_copy_expect(&channel, type, &msg) == DOCA_SUCCESS ? 0 : -1;
	dma_copy_channel_close(&channel);
	return ok;
}

static int send_all(int fd, const void *data, size_t len)
{
	return send(fd, data, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static int send_hello(int fd, uint16_t version)
{
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_HELLO};
	uint8_t buf[64];
	size_t len;

	msg.u.hello.direction = DMA_COPY_HOST_TO_DPU;
	msg.u.hello.file_size = 4096;
	if (dma_copy_msg_encode(&msg, buf, sizeof(buf), &len) != DOCA_SUCCESS)
		return -1;
	buf[4] = (uint8_t)version;
	buf[5] = (uint8_t)(version >> 8);
	return send_all(fd, buf, len);
}

int main(int argc, char **argv)
{
	const char *mode;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s <mode> <socket path>\n", argv[0]);
		return 2;
	}
	mode = argv[1];
	if (strncmp(mode, "dpu-", 4) == 0) {
		fd = listen_and_accept(argv[2]);
		if (fd < 0 || read_message(fd, DMA_COPY_MSG_HELLO) != 0)
			return 1;
		if (strcmp(mode, "dpu-close") == 0) {
			close(fd);
		} else if (strcmp(mode, "dpu-garbage") == 0) {
			send_all(fd, garbage, sizeof(garbage));
			sleep(5); /* keep the connection open: the host must notice the garbage, not a close */
		} else if (strcmp(mode, "dpu-silent") == 0) {
			sleep(30); /* longer than the host's timeout in the test */
		} else {
			fprintf(stderr, "fake peer: unknown mode %s\n", mode);
			return 2;
		}
		return 0;
	}
	fd = connect_with_retry(argv[2]);
	if (fd < 0)
		return 1;
	if (strcmp(mode, "host-garbage") == 0) {
		send_all(fd, garbage, sizeof(garbage));
		sleep(5);
	} else if (strcmp(mode, "host-version") == 0) {
		send_hello(fd, 2);
		sleep(5);
	} else if (strcmp(mode, "host-vanish") == 0) {
		if (send_hello(fd, DMA_COPY_PROTO_VERSION) != 0 || read_message(fd, DMA_COPY_MSG_HELLO_ACK) != 0)
			return 1;
		close(fd);
	} else {
		fprintf(stderr, "fake peer: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
