/*
 * One end of a packet link (docs/links.md), for the end-to-end link test: finds the link of a
 * function or representor through softdpu/link.h (socket, memif role, interface id, buffer size),
 * opens that end with libmemif, and exchanges numbered frames with the program on the other end:
 * it sends --count frames and receives --count frames, both at once. Frame n is n's length
 * (64 to 9000 bytes, both ends included) and content (memif_app_frame_write, MAC addresses too);
 * every frame received is compared byte for byte with what the peer must have sent, in order, and
 * must arrive in one buffer. A last, distinct frame tells the peer that everything was sent and
 * everything of its own arrived; each end leaves when it has sent and received that frame (or when
 * the peer leaves after it).
 *
 *   link_peer --name pf0 --count 20000      (the host end of PF0 <-> hpf0, SOFTDPU_SIDE=host)
 *   link_peer --name hpf0 --count 20000     (the DPU end, the representor pf0hpf)
 *   link_peer --name p0 --outside           (the outside end of uplink p0: connects to its socket)
 *
 * --linger S keeps the interface open up to S seconds after the end (it says so on a line of its
 * own), so that a forwarder between the two ends (not the link itself) still takes the last frames
 * from its ring before the link goes down, and may be stopped before its peers leave; the peer
 * leaves early, successfully, when the link goes down.
 *
 * Exit status 0 when every frame arrived intact and in order, 1 otherwise.
 */
#include <libmemif.h>
#include <softdpu/link.h>

#include "link_open.h"
#include "memif_app_common.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BURST 64
#define DONE_ETHERTYPE 0x88b6 /* distinct from the test frames' 0x88b5 */
static const uint8_t kDoneMark[4] = {'D', 'O', 'N', 'E'};

/* Frame n's length: 64 to 9000 bytes; every seventh is 9000, the next one 64. */
static uint32_t frame_length(uint64_t seq)
{
	if (seq % 7 == 0)
		return 9000;
	if (seq % 7 == 1)
		return 64;
	return 64 + (uint32_t)((seq * 2654435761u) % (9000 - 64 + 1));
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	uint64_t count = 10000;
	double timeout_s = 60;
	int outside = 0;
	double linger_s = 0;
	for (int i = 1; i < argc; ++i) {
		if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			count = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout_s = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--outside") == 0)
			outside = 1;
		else if (strcmp(argv[i], "--linger") == 0 && i + 1 < argc)
			linger_s = strtod(argv[++i], NULL);
		else {
			fprintf(stderr, "usage: link_peer --name FUNCTION|REPRESENTOR [--outside] [--count N] "
					"[--timeout S] [--linger S]\n");
			return 2;
		}
	}
	if (name == NULL || count == 0) {
		fprintf(stderr, "link_peer: --name and a positive --count are required\n");
		return 2;
	}
	char prog[128];
	snprintf(prog, sizeof(prog), "link_peer %s%s", name, outside ? " (outside)" : "");

	struct softdpu_link link;
	uint8_t is_master = 0;
	doca_error_t status = softdpu_link_find(name, &link, &is_master);
	if (status != DOCA_SUCCESS) {
		fprintf(stderr, "%s: softdpu_link_find: %s\n", prog, doca_error_get_name(status));
		return 1;
	}
	if (outside) {
		/* The other end of an uplink (or external) link: whoever attaches from outside connects. */
		if (strcmp(link.client.side, "outside") != 0) {
			fprintf(stderr, "%s: --outside: link %s has no outside end\n", prog, link.name);
			return 2;
		}
		is_master = 0;
	}
	if (is_master) {
		char dir[SOFTDPU_LINK_SOCKET_SIZE];
		status = softdpu_link_get_socket_dir(dir, sizeof(dir), 1);
		if (status != DOCA_SUCCESS) {
			fprintf(stderr, "%s: softdpu_link_get_socket_dir: %s\n", prog, doca_error_get_name(status));
			return 1;
		}
	}
	printf("%s: link %s, %s of %s, interface %u, %u-byte buffers\n", prog, link.name,
	       is_master ? "server" : "client", link.socket, link.interface_id, link.buffer_size);
	fflush(stdout);

	struct memif_app app;
	if (link_open_end(&app, prog, &link, name, is_master) != 0)
		return 1;

	static uint8_t expected[16384];
	uint64_t sent = 0, received = 0, sent_bytes = 0, received_bytes = 0;
	int done_sent = 0, peer_done = 0, failed = 0;
	const double deadline = memif_app_now() + timeout_s;
	while (!failed) {
		if (received == count && done_sent && peer_done)
			break;
		if (memif_app_now() > deadline) {
			fprintf(stderr, "%s: timed out: sent %" PRIu64 ", received %" PRIu64 " of %" PRIu64 " frames\n",
				prog, sent, received, count);
			failed = 1;
			break;
		}
		memif_poll_event(0); /* control events: connection, disconnection */
		if (app.link_lost || !app.connected) {
			/* The peer leaves once it has everything and our "done" frame; by then we have all of its
			 * frames too, or this is a failure. */
			if (received == count && done_sent)
				break;
			failed = 1;
			break;
		}
		/* Transmit: every buffer holds a whole frame of up to 9000 bytes. */
		/* "done" goes out once every frame is sent and every frame of the peer's has arrived: the
		 * peer may leave when it has it. */
		if (!done_sent && (sent < count || received == count)) {
			memif_buffer_t bufs[BURST];
			uint64_t left = count - sent;
			uint16_t want = left == 0 ? 1 : (uint16_t)(left < BURST ? left : BURST);
			uint16_t got = 0;
			int err = memif_buffer_alloc(app.conn, 0, bufs, want, &got, 9000);
			if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_NOBUF_RING) {
				fprintf(stderr, "%s: memif_buffer_alloc: %s\n", prog, memif_strerror(err));
				failed = 1;
				break;
			}
			for (uint16_t i = 0; i < got; ++i) {
				if (sent < count) {
					uint32_t len = frame_length(sent);
					memif_app_frame_write(sent, len, 0, bufs[i].data, len);
					bufs[i].len = len;
					sent_bytes += len;
					++sent;
				} else {
					memset(bufs[i].data, 0, 64);
					uint8_t *frame = bufs[i].data;
					frame[12] = DONE_ETHERTYPE >> 8;
					frame[13] = DONE_ETHERTYPE & 0xff;
					memcpy(frame + 14, kDoneMark, sizeof(kDoneMark));
					bufs[i].len = 64;
					done_sent = 1;
				}
			}
			if (got > 0) {
				uint16_t tx = 0;
				err = memif_tx_burst(app.conn, 0, bufs, got, &tx);
				if (err != MEMIF_ERR_SUCCESS || tx != got) {
					fprintf(stderr, "%s: memif_tx_burst: %s (%u of %u)\n", prog,
						memif_strerror(err), tx, got);
					failed = 1;
					break;
				}
			}
		}
		/* Receive and compare. */
		memif_buffer_t bufs[BURST];
		uint16_t n = 0;
		if (link_rx_burst(&app, prog, bufs, BURST, &n) != 0) {
			failed = 1;
			break;
		}
		for (uint16_t i = 0; i < n && !failed; ++i) {
			const uint8_t *data = bufs[i].data;
			uint32_t len = bufs[i].len;
			if (bufs[i].flags & MEMIF_BUFFER_FLAG_NEXT) {
				fprintf(stderr, "%s: frame %" PRIu64 " came in more than one buffer\n", prog, received);
				failed = 1;
			} else if (len >= 18 && data[12] == (DONE_ETHERTYPE >> 8) &&
				   data[13] == (DONE_ETHERTYPE & 0xff) &&
				   memcmp(data + 14, kDoneMark, sizeof(kDoneMark)) == 0) {
				if (received != count) {
					fprintf(stderr,
						"%s: the peer's done came after %" PRIu64 " of %" PRIu64 " frames\n",
						prog, received, count);
					failed = 1;
				}
				peer_done = 1;
			} else if (received >= count) {
				fprintf(stderr, "%s: a frame of %u bytes after all %" PRIu64 " frames\n", prog, len,
					count);
				failed = 1;
			} else {
				uint32_t want_len = frame_length(received);
				memif_app_frame_write(received, want_len, 0, expected, want_len);
				if (len != want_len || memcmp(data, expected, len) != 0) {
					uint32_t at = 0;
					while (at < len && at < want_len && data[at] == expected[at])
						++at;
					fprintf(stderr,
						"%s: frame %" PRIu64
						" differs: %u bytes (expected %u), first difference at "
						"byte %u\n",
						prog, received, len, want_len, at);
					failed = 1;
				}
				received_bytes += len;
				++received;
			}
		}
		if (n > 0 && link_refill(&app, prog, n) != 0)
			failed = 1;
	}
	if (!failed && linger_s > 0) {
		printf("%s: finished; lingering up to %g s\n", prog, linger_s);
		fflush(stdout);
	}
	for (const double until = memif_app_now() + linger_s; !failed && memif_app_now() < until;) {
		memif_buffer_t bufs[BURST];
		uint16_t n = 0;
		memif_poll_event(10); /* waits up to 10 ms for a control event */
		if (app.link_lost || !app.connected)
			break;
		if (memif_rx_burst(app.conn, 0, bufs, BURST, &n) == MEMIF_ERR_SUCCESS && n > 0) {
			fprintf(stderr, "%s: %u frames after the end\n", prog, n);
			failed = 1;
		}
	}
	printf("%s: sent %" PRIu64 " frames (%" PRIu64 " bytes), received %" PRIu64 " of %" PRIu64 " frames (%" PRIu64
	       " bytes)%s\n",
	       prog, sent, sent_bytes, received, count, received_bytes, failed ? "" : ", in order and unmodified");
	memif_app_close(&app);
	return failed ? 1 : 0;
}
