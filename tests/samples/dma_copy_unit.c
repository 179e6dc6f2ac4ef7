// pkg-config: doca-common doca-dma doca-argp
/*
 * Unit checks of the DMA Copy application's parts that need no peer process and no export:
 * CRC32C, chunking, the control protocol (encoding, decoding, malformed input), the socket channel
 * (garbage, a closed peer, a silent peer) and the command line. Built by dma_copy_test.sh together
 * with the sources of samples/dma_copy except the main file.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

#include "dma_copy.h"
#include "dma_copy_checksum.h"
#include "dma_copy_proto.h"
#include "sample_common.h"

DOCA_LOG_REGISTER(DMA_COPY::UNIT);

static int failures;

#define CHECK(condition)                                                                                               \
	do {                                                                                                           \
		if (!(condition)) {                                                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);                  \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

/* --- CRC32C --- */

static void test_crc32c(void)
{
	uint8_t zeros[32] = {0};
	uint8_t ones[32];
	uint8_t ascending[32];
	uint8_t data[1000];

	/* The check value of CRC-32C, and the iSCSI test vectors of RFC 3720, appendix B.4. */
	CHECK(dma_copy_crc32c(0, "123456789", 9) == 0xE3069283u);
	CHECK(dma_copy_crc32c(0, NULL, 0) == 0);
	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		ascending[i] = (uint8_t)i;
	CHECK(dma_copy_crc32c(0, zeros, sizeof(zeros)) == 0x8A9136AAu);
	CHECK(dma_copy_crc32c(0, ones, sizeof(ones)) == 0x62A8AB43u);
	CHECK(dma_copy_crc32c(0, ascending, sizeof(ascending)) == 0x46DD794Eu);

	/* Any split, at any alignment, gives the one-shot value. */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131u + 7u);
	const uint32_t one_shot = dma_copy_crc32c(0, data, sizeof(data));
	for (size_t split = 0; split <= sizeof(data); split += 7) {
		const uint32_t first = dma_copy_crc32c(0, data, split);

		CHECK(dma_copy_crc32c(first, data + split, sizeof(data) - split) == one_shot);
	}
	/* One flipped bit changes it. */
	data[500] ^= 0x10;
	CHECK(dma_copy_crc32c(0, data, sizeof(data)) != one_shot);
}

/* --- Chunking --- */

static void test_chunks(void)
{
	const uint64_t mib = 1024 * 1024;
	uint64_t offset;
	uint64_t len;
	uint64_t sum = 0;

	CHECK(dma_copy_num_chunks(0, mib) == 0);
	CHECK(dma_copy_num_chunks(1, mib) == 1);
	dma_copy_chunk_range(1, mib, 0, &offset, &len);
	CHECK(offset == 0 && len == 1);
	CHECK(dma_copy_num_chunks(3 * mib, mib) == 3);
	dma_copy_chunk_range(3 * mib, mib, 2, &offset, &len);
	CHECK(offset == 2 * mib && len == mib);
	CHECK(dma_copy_num_chunks(3 * mib + 5, mib) == 4);
	dma_copy_chunk_range(3 * mib + 5, mib, 3, &offset, &len);
	CHECK(offset == 3 * mib && len == 5);
	CHECK(dma_copy_num_chunks(10, 1) == 10);
	CHECK(dma_copy_num_chunks(UINT64_MAX, mib) == UINT64_MAX / mib + 1);
	CHECK(dma_copy_num_chunks(UINT64_MAX, UINT64_MAX) == 1);

	/* The chunks tile the transfer exactly: contiguous, none empty, summing to the total. */
	for (uint64_t i = 0, expected = 0; i < dma_copy_num_chunks(1000003, 4096); i++) {
		dma_copy_chunk_range(1000003, 4096, i, &offset, &len);
		CHECK(offset == expected && len > 0 && len <= 4096);
		expected += len;
		sum += len;
	}
	CHECK(sum == 1000003);
}

/* --- Protocol encoding and decoding --- */

static size_t encode(const struct dma_copy_msg *msg, uint8_t *buf, size_t cap)
{
	size_t len = 0;

	CHECK(dma_copy_msg_encode(msg, buf, cap, &len) == DOCA_SUCCESS);
	return len;
}

static void test_proto_round_trip(void)
{
	static uint8_t buf[DMA_COPY_PROTO_MAX_MESSAGE];
	static uint8_t blob[DMA_COPY_PROTO_MAX_BLOB];
	struct dma_copy_msg in;
	struct dma_copy_msg out;
	size_t len;

	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_HELLO};
	in.u.hello.direction = DMA_COPY_DPU_TO_HOST;
	in.u.hello.file_size = 0x0102030405060708ull;
	in.u.hello.crc32c = 0xdeadbeef;
	len = encode(&in, buf, sizeof(buf));
	CHECK(len == DMA_COPY_PROTO_HEADER_SIZE + 24);
	/* The wire format is little-endian, byte for byte: magic "SDMC", version 1, type 1. */
	CHECK(memcmp(buf, "SDMC\x01\x00\x01\x00\x18\x00\x00\x00", 12) == 0);
	CHECK(buf[12 + 8] == 0x08 && buf[12 + 15] == 0x01);
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS);
	CHECK(out.type == DMA_COPY_MSG_HELLO && out.u.hello.direction == DMA_COPY_DPU_TO_HOST &&
	      out.u.hello.file_size == in.u.hello.file_size && out.u.hello.crc32c == 0xdeadbeef);

	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_HELLO_ACK};
	in.u.hello_ack.file_size = 12345;
	in.u.hello_ack.crc32c = 77;
	len = encode(&in, buf, sizeof(buf));
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS);
	CHECK(out.u.hello_ack.file_size == 12345 && out.u.hello_ack.crc32c == 77);

	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i ^ (i >> 8));
	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_EXPORT};
	in.u.export_desc.addr = 0x7f0012345000ull;
	in.u.export_desc.len = 5 * 1024 * 1024;
	in.u.export_desc.blob = blob;
	in.u.export_desc.blob_len = sizeof(blob); /* the largest allowed */
	len = encode(&in, buf, sizeof(buf));
	CHECK(len == DMA_COPY_PROTO_MAX_MESSAGE);
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS);
	CHECK(out.u.export_desc.addr == in.u.export_desc.addr && out.u.export_desc.len == in.u.export_desc.len &&
	      out.u.export_desc.blob_len == sizeof(blob) && memcmp(out.u.export_desc.blob, blob, sizeof(blob)) == 0);

	in.u.export_desc.blob = NULL; /* an empty file: no descriptor */
	in.u.export_desc.blob_len = 0;
	in.u.export_desc.len = 0;
	len = encode(&in, buf, sizeof(buf));
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS);
	CHECK(out.u.export_desc.blob == NULL && out.u.export_desc.blob_len == 0);

	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_PROGRESS};
	in.u.progress.bytes_done = 42;
	len = encode(&in, buf, sizeof(buf));
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS && out.u.progress.bytes_done == 42);

	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_DONE};
	in.u.done.status = DOCA_ERROR_TIME_OUT;
	in.u.done.crc32c = 0xffffffff;
	in.u.done.bytes = UINT64_MAX;
	in.u.done.elapsed_ns = 987654321;
	len = encode(&in, buf, sizeof(buf));
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS);
	CHECK(out.u.done.status == DOCA_ERROR_TIME_OUT && out.u.done.crc32c == 0xffffffff &&
	      out.u.done.bytes == UINT64_MAX && out.u.done.elapsed_ns == 987654321);

	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_VERDICT};
	in.u.verdict.status = DOCA_ERROR_UNEXPECTED;
	len = encode(&in, buf, sizeof(buf));
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS &&
	      out.u.verdict.status == DOCA_ERROR_UNEXPECTED);

	in = (struct dma_copy_msg){.type = DMA_COPY_MSG_ERROR};
	in.u.error.status = DOCA_ERROR_NOT_SUPPORTED;
	in.u.error.text = "no export";
	in.u.error.text_len = 9;
	len = encode(&in, buf, sizeof(buf));
	CHECK(dma_copy_msg_decode(buf, len, &out, NULL) == DOCA_SUCCESS);
	CHECK(out.u.error.status == DOCA_ERROR_NOT_SUPPORTED && out.u.error.text_len == 9 &&
	      memcmp(out.u.error.text, "no export", 9) == 0);
}

static void test_proto_encode_limits(void)
{
	static uint8_t buf[DMA_COPY_PROTO_MAX_MESSAGE + 16];
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_EXPORT};
	size_t len;

	msg.u.export_desc.blob = buf;
	msg.u.export_desc.blob_len = DMA_COPY_PROTO_MAX_BLOB + 1;
	CHECK(dma_copy_msg_encode(&msg, buf, sizeof(buf), &len) == DOCA_ERROR_INVALID_VALUE);
	msg.u.export_desc.blob = NULL;
	msg.u.export_desc.blob_len = 4;
	CHECK(dma_copy_msg_encode(&msg, buf, sizeof(buf), &len) == DOCA_ERROR_INVALID_VALUE);
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_HELLO};
	CHECK(dma_copy_msg_encode(&msg, buf, DMA_COPY_PROTO_HEADER_SIZE + 23, &len) == DOCA_ERROR_NO_MEMORY);
	msg.type = (enum dma_copy_msg_type)99;
	CHECK(dma_copy_msg_encode(&msg, buf, sizeof(buf), &len) == DOCA_ERROR_INVALID_VALUE);
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_ERROR};
	msg.u.error.text = (const char *)buf;
	msg.u.error.text_len = DMA_COPY_PROTO_MAX_TEXT + 1;
	CHECK(dma_copy_msg_encode(&msg, buf, sizeof(buf), &len) == DOCA_ERROR_INVALID_VALUE);
}

/* Decoding a copy of good[0..len) with one byte changed must give `expected`. */
static void check_mutation(const uint8_t *good, size_t len, size_t at, uint8_t value, doca_error_t expected)
{
	uint8_t copy[256];
	struct dma_copy_msg msg;
	const char *reason = NULL;

	memcpy(copy, good, len);
	copy[at] = value;
	CHECK(dma_copy_msg_decode(copy, len, &msg, &reason) == expected);
	CHECK(expected == DOCA_SUCCESS || reason != NULL);
}

static void test_proto_malformed(void)
{
	uint8_t good[256];
	uint8_t export_msg[256];
	uint8_t noise[256];
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_HELLO};
	const char *reason = NULL;
	size_t len;
	size_t export_len;
	uint32_t state = 12345;

	msg.u.hello.direction = DMA_COPY_HOST_TO_DPU;
	msg.u.hello.file_size = 100;
	len = encode(&msg, good, sizeof(good));

	check_mutation(good, len, 0, 'X', DOCA_ERROR_INVALID_VALUE);                  /* magic */
	check_mutation(good, len, 4, 2, DOCA_ERROR_UNSUPPORTED_VERSION);              /* version 2 */
	check_mutation(good, len, 4, 0, DOCA_ERROR_UNSUPPORTED_VERSION);              /* version 0 */
	check_mutation(good, len, 6, 0, DOCA_ERROR_INVALID_VALUE);                    /* type 0 */
	check_mutation(good, len, 6, 99, DOCA_ERROR_INVALID_VALUE);                   /* unknown type */
	check_mutation(good, len, 6, DMA_COPY_MSG_VERDICT, DOCA_ERROR_INVALID_VALUE); /* another type's length */
	check_mutation(good, len, 8, 23, DOCA_ERROR_INVALID_VALUE);                   /* wrong length for HELLO */
	check_mutation(good, len, 11, 0xff, DOCA_ERROR_INVALID_VALUE);                /* huge length */
	check_mutation(good, len, 12 + 4, 1, DOCA_ERROR_INVALID_VALUE);               /* reserved field */
	check_mutation(good, len, 12 + 20, 1, DOCA_ERROR_INVALID_VALUE);              /* reserved field */

	/* Every truncation, and one byte too many, is refused. */
	for (size_t cut = 0; cut < len; cut++)
		CHECK(dma_copy_msg_decode(good, cut, &msg, &reason) == DOCA_ERROR_INVALID_VALUE);
	CHECK(dma_copy_msg_decode(good, len + 1, &msg, &reason) == DOCA_ERROR_INVALID_VALUE);

	/* EXPORT whose blob length disagrees with the payload length. */
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_EXPORT};
	msg.u.export_desc.blob = "descriptor";
	msg.u.export_desc.blob_len = 10;
	export_len = encode(&msg, export_msg, sizeof(export_msg));
	check_mutation(export_msg, export_len, 12 + 16, 11, DOCA_ERROR_INVALID_VALUE);
	check_mutation(export_msg, export_len, 12 + 19, 0x80, DOCA_ERROR_INVALID_VALUE);
	/* A payload length over the blob limit is refused from the header alone. */
	{
		uint8_t header[DMA_COPY_PROTO_HEADER_SIZE];
		uint32_t payload_len = 0;

		memcpy(header, export_msg, sizeof(header));
		header[8] = 0xff;
		header[9] = 0xff;
		header[10] = 0xff;
		header[11] = 0xff;
		CHECK(dma_copy_msg_check_header(header, &payload_len, &reason) == DOCA_ERROR_INVALID_VALUE);
		CHECK(payload_len == 0);
	}
	/* ERROR whose text length disagrees with the payload. */
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_ERROR};
	msg.u.error.text = "abc";
	msg.u.error.text_len = 3;
	export_len = encode(&msg, export_msg, sizeof(export_msg));
	check_mutation(export_msg, export_len, 12 + 4, 2, DOCA_ERROR_INVALID_VALUE);

	/* Random bytes: never accepted as a message by chance, never a crash. */
	for (int round = 0; round < 20000; round++) {
		const size_t noise_len = 1 + (size_t)(state % sizeof(noise));

		for (size_t i = 0; i < noise_len; i++) {
			state = state * 1103515245u + 12345u;
			noise[i] = (uint8_t)(state >> 16);
		}
		CHECK(dma_copy_msg_decode(noise, noise_len, &msg, &reason) != DOCA_SUCCESS);
	}
}

/* --- The channel over a socket pair --- */

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* A channel on one end of a fresh socket pair; *peer gets the other end. */
static void open_pair(struct dma_copy_channel *channel, int *peer)
{
	int fds[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
	CHECK(dma_copy_channel_init(channel, fds[0], 1, "test peer") == DOCA_SUCCESS);
	*peer = fds[1];
}

static void test_channel(void)
{
	struct dma_copy_channel channel;
	struct dma_copy_channel peer_channel;
	struct dma_copy_msg msg;
	struct timespec start;
	int peer;

	/* A round trip, with PROGRESS skipped by expect. */
	open_pair(&channel, &peer);
	CHECK(dma_copy_channel_init(&peer_channel, peer, 1, "test side") == DOCA_SUCCESS);
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_PROGRESS};
	CHECK(dma_copy_send(&peer_channel, &msg) == DOCA_SUCCESS);
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_VERDICT};
	CHECK(dma_copy_send(&peer_channel, &msg) == DOCA_SUCCESS);
	CHECK(dma_copy_expect(&channel, DMA_COPY_MSG_VERDICT, &msg) == DOCA_SUCCESS);
	/* An unexpected type is a protocol error. */
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_DONE};
	CHECK(dma_copy_send(&peer_channel, &msg) == DOCA_SUCCESS);
	CHECK(dma_copy_expect(&channel, DMA_COPY_MSG_HELLO, &msg) == DOCA_ERROR_INVALID_VALUE);
	/* The peer's ERROR hands back its status. */
	dma_copy_send_error(&peer_channel, DOCA_ERROR_NOT_SUPPORTED, "export not supported\n\x1b[31m");
	CHECK(dma_copy_expect(&channel, DMA_COPY_MSG_EXPORT, &msg) == DOCA_ERROR_NOT_SUPPORTED);
	/* An ERROR without a meaningful status still fails. */
	dma_copy_send_error(&peer_channel, DOCA_SUCCESS, "odd");
	CHECK(dma_copy_expect(&channel, DMA_COPY_MSG_EXPORT, &msg) == DOCA_ERROR_CONNECTION_ABORTED);
	/* The peer closes: the receiver learns it at once, and sending fails instead of raising SIGPIPE. */
	dma_copy_channel_close(&peer_channel);
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(dma_copy_recv(&channel, &msg) == DOCA_ERROR_CONNECTION_RESET);
	CHECK(seconds_since(&start) < 0.5);
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_VERDICT};
	CHECK(dma_copy_send(&channel, &msg) == DOCA_ERROR_CONNECTION_RESET);
	dma_copy_channel_close(&channel);

	/* Garbage is refused after the header, without waiting for its "payload". */
	open_pair(&channel, &peer);
	CHECK(write(peer, "GET / HTTP/1.1\r\n", 16) == 16);
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(dma_copy_recv(&channel, &msg) == DOCA_ERROR_INVALID_VALUE);
	CHECK(seconds_since(&start) < 0.5);
	dma_copy_channel_close(&channel);
	close(peer);

	/* A good header announcing more than it sends, then silence: a timeout, not a hang. */
	open_pair(&channel, &peer);
	CHECK(write(peer, "SDMC\x01\x00\x01\x00\x18\x00\x00\x00\x01\x00", 14) == 14);
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(dma_copy_recv(&channel, &msg) == DOCA_ERROR_TIME_OUT);
	CHECK(seconds_since(&start) >= 0.9 && seconds_since(&start) < 3.0);
	/* ... and the same message cut short by a close. */
	close(peer);
	dma_copy_channel_close(&channel);
	open_pair(&channel, &peer);
	CHECK(write(peer, "SDMC\x01\x00\x01", 7) == 7);
	close(peer);
	CHECK(dma_copy_recv(&channel, &msg) == DOCA_ERROR_CONNECTION_RESET);
	dma_copy_channel_close(&channel);

	/* A silent peer: a timeout. */
	open_pair(&channel, &peer);
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(dma_copy_recv(&channel, &msg) == DOCA_ERROR_TIME_OUT);
	CHECK(seconds_since(&start) >= 0.9 && seconds_since(&start) < 3.0);
	dma_copy_channel_close(&channel);
	close(peer);
}

/* --- The command line --- */

static doca_error_t parse(struct dma_copy_config *config, char **argv)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	return dma_copy_parse_args(argc, argv, config);
}

static void test_args(void)
{
	struct dma_copy_config config;

	char *full[] = {"dma_copy",
			"--role",
			"dpu",
			"-f",
			"/tmp/x",
			"--direction=dpu-to-host",
			"-s",
			"/tmp/s.sock",
			"-p",
			"03:00.1",
			"--chunk-size",
			"4096",
			"-q",
			"3",
			"-t",
			"5",
			NULL};
	CHECK(parse(&config, full) == DOCA_SUCCESS);
	CHECK(config.role == DMA_COPY_ROLE_DPU && config.direction == DMA_COPY_DPU_TO_HOST);
	CHECK(strcmp(config.file, "/tmp/x") == 0 && strcmp(config.socket_path, "/tmp/s.sock") == 0);
	CHECK(strcmp(config.pci_addr, "03:00.1") == 0 && config.chunk_size == 4096 && config.inflight == 3);
	CHECK(config.timeout_seconds == 5);

	/* Defaults; the device follows the role. */
	char *host[] = {"dma_copy", "-r", "host", "-f", "/tmp/x", NULL};
	CHECK(parse(&config, host) == DOCA_SUCCESS);
	CHECK(config.role == DMA_COPY_ROLE_HOST && config.direction == DMA_COPY_HOST_TO_DPU);
	CHECK(strcmp(config.pci_addr, DMA_COPY_DEFAULT_HOST_PCI_ADDR) == 0);
	CHECK(strcmp(config.socket_path, DMA_COPY_DEFAULT_SOCKET) == 0);
	CHECK(config.chunk_size == DMA_COPY_DEFAULT_CHUNK_SIZE && config.inflight == DMA_COPY_DEFAULT_INFLIGHT);
	CHECK(config.timeout_seconds == DMA_COPY_DEFAULT_TIMEOUT_SECONDS);
	char *dpu[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", NULL};
	CHECK(parse(&config, dpu) == DOCA_SUCCESS);
	CHECK(strcmp(config.pci_addr, DMA_COPY_DEFAULT_DPU_PCI_ADDR) == 0);

	/* Refused. doca_argp prints the reason and the usage on stderr. */
	char *no_role[] = {"dma_copy", "-f", "/tmp/x", NULL};
	char *no_file[] = {"dma_copy", "-r", "host", NULL};
	char *bad_role[] = {"dma_copy", "-r", "switch", "-f", "/tmp/x", NULL};
	char *bad_direction[] = {"dma_copy", "-r", "host", "-f", "/tmp/x", "-d", "sideways", NULL};
	char *zero_chunk[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "-c", "0", NULL};
	char *negative_chunk[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "-c", "-5", NULL};
	char *zero_inflight[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "-q", "0", NULL};
	char *zero_timeout[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "-t", "0", NULL};
	char *unknown[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "--speed", "9", NULL};
	char *positional[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "extra", NULL};
	char long_socket[200];
	char *too_long_socket[] = {"dma_copy", "-r", "dpu", "-f", "/tmp/x", "-s", long_socket, NULL};

	memset(long_socket, 'a', sizeof(long_socket) - 1);
	long_socket[sizeof(long_socket) - 1] = '\0';
	fprintf(stderr, "--- the usage errors below are expected\n");
	CHECK(parse(&config, no_role) != DOCA_SUCCESS);
	CHECK(parse(&config, no_file) != DOCA_SUCCESS);
	CHECK(parse(&config, bad_role) != DOCA_SUCCESS);
	CHECK(parse(&config, bad_direction) != DOCA_SUCCESS);
	CHECK(parse(&config, zero_chunk) != DOCA_SUCCESS);
	CHECK(parse(&config, negative_chunk) != DOCA_SUCCESS);
	CHECK(parse(&config, zero_inflight) != DOCA_SUCCESS);
	CHECK(parse(&config, zero_timeout) != DOCA_SUCCESS);
	CHECK(parse(&config, unknown) != DOCA_SUCCESS);
	CHECK(parse(&config, positional) != DOCA_SUCCESS);
	CHECK(parse(&config, too_long_socket) != DOCA_SUCCESS);
	fprintf(stderr, "--- end of expected usage errors\n");
}

int main(void)
{
	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	test_crc32c();
	test_chunks();
	test_proto_round_trip();
	test_proto_encode_limits();
	test_proto_malformed();
	test_channel();
	test_args();
	if (failures != 0) {
		fprintf(stderr, "dma_copy unit checks: %d failed\n", failures);
		return EXIT_FAILURE;
	}
	printf("dma_copy unit checks: all passed\n");
	return EXIT_SUCCESS;
}
