/*
 * One end of a packet link (docs/links.md) that sends back every frame it receives, unchanged and
 * in order: the peer of tests that must see a link's other end come and go (unit_dpdk_bridge kills
 * it with SIGKILL while the bridge's port is up, then starts it again). It finds its end through
 * softdpu/link.h and opens it with libmemif; it runs until it is killed, or --timeout seconds.
 *
 *   link_echo --name pf0vf1 [--timeout S]     (SOFTDPU_SIDE=host: connects to hpf0vf1's server)
 *
 * Prints "link_echo NAME: connected" once the link is up. Exit status 0 at the timeout, 1 on an
 * error (a frame in more than one buffer, a memif call failing, no connection within 30 s).
 */
#include <libmemif.h>
#include <softdpu/link.h>

#include "link_open.h"
#include "memif_app_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BURST 32

int main(int argc, char **argv)
{
	const char *name = NULL;
	double timeout_s = 120;
	for (int i = 1; i < argc; ++i) {
		if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout_s = strtod(argv[++i], NULL);
		else {
			fprintf(stderr, "usage: link_echo --name FUNCTION|REPRESENTOR [--timeout S]\n");
			return 2;
		}
	}
	if (name == NULL) {
		fprintf(stderr, "link_echo: --name is required\n");
		return 2;
	}
	char prog[128];
	snprintf(prog, sizeof(prog), "link_echo %s", name);

	struct softdpu_link link;
	uint8_t is_master = 0;
	doca_error_t status = softdpu_link_find(name, &link, &is_master);
	if (status != DOCA_SUCCESS) {
		fprintf(stderr, "%s: softdpu_link_find: %s\n", prog, doca_error_get_name(status));
		return 1;
	}
	if (is_master) {
		char dir[SOFTDPU_LINK_SOCKET_SIZE];
		status = softdpu_link_get_socket_dir(dir, sizeof(dir), 1);
		if (status != DOCA_SUCCESS) {
			fprintf(stderr, "%s: softdpu_link_get_socket_dir: %s\n", prog, doca_error_get_name(status));
			return 1;
		}
	}
	struct memif_app app;
	if (link_open_end(&app, prog, &link, name, is_master) != 0)
		return 1;
	printf("%s: connected\n", prog);
	fflush(stdout);

	int failed = 0;
	uint64_t echoed = 0;
	const double deadline = memif_app_now() + timeout_s;
	while (!failed && memif_app_now() < deadline) {
		memif_poll_event(0);
		if (app.link_lost || !app.connected) {
			fprintf(stderr, "%s: the link went down\n", prog);
			failed = 1;
			break;
		}
		memif_buffer_t rx[BURST];
		uint16_t n = 0;
		if (link_rx_burst(&app, prog, rx, BURST, &n) != 0) {
			failed = 1;
			break;
		}
		/* Each frame goes back before the next is looked at; the receive ring is refilled once
		 * all of them are sent, so nothing is dropped when the transmit ring is full. */
		for (uint16_t i = 0; i < n && !failed; ++i) {
			if (rx[i].flags & MEMIF_BUFFER_FLAG_NEXT) {
				fprintf(stderr, "%s: a frame came in more than one buffer\n", prog);
				failed = 1;
				break;
			}
			memif_buffer_t tx;
			uint16_t got = 0;
			int err = MEMIF_ERR_SUCCESS;
			while (!failed && got == 0) {
				err = memif_buffer_alloc(app.conn, 0, &tx, 1, &got, rx[i].len);
				if (err == MEMIF_ERR_NOBUF_RING) {
					memif_poll_event(0);
					if (app.link_lost || !app.connected || memif_app_now() > deadline)
						failed = 1;
				} else if (err != MEMIF_ERR_SUCCESS) {
					fprintf(stderr, "%s: memif_buffer_alloc: %s\n", prog, memif_strerror(err));
					failed = 1;
				}
			}
			if (failed)
				break;
			memcpy(tx.data, rx[i].data, rx[i].len);
			tx.len = rx[i].len;
			uint16_t sent = 0;
			err = memif_tx_burst(app.conn, 0, &tx, 1, &sent);
			if (err != MEMIF_ERR_SUCCESS || sent != 1) {
				fprintf(stderr, "%s: memif_tx_burst: %s\n", prog, memif_strerror(err));
				failed = 1;
				break;
			}
			++echoed;
		}
		if (n > 0 && !failed && link_refill(&app, prog, n) != 0)
			failed = 1;
	}
	printf("%s: echoed %llu frames\n", prog, (unsigned long long)echoed);
	memif_app_close(&app);
	return failed ? 1 : 0;
}
