/*
 * Shared by the link test programs (link_peer, link_echo). link_open_end opens one end of a packet
 * link with libmemif as softdpu/link.h describes it (socket, interface id, buffer size, ring size;
 * is_master: serve) and waits up to 30 s for the other end. 0 when connected; 1 otherwise (memif_app
 * says why on stderr), with nothing left open. link_rx_burst and link_refill receive on queue 0 and
 * give the received buffers back: 0 when done, 1 (said on stderr) when libmemif failed.
 */
#ifndef SOFTDPU_TESTS_LINK_OPEN_H
#define SOFTDPU_TESTS_LINK_OPEN_H

#include <softdpu/link.h>

#include "memif_app_common.h"

#include <stdint.h>
#include <stdio.h>

static inline int link_open_end(struct memif_app *app, const char *prog, const struct softdpu_link *link,
				const char *name, uint8_t is_master)
{
	struct memif_app_options options;
	memif_app_default_options(&options);
	options.is_master = is_master;
	options.socket_path = link->socket;
	options.interface_id = link->interface_id;
	options.if_name = name;
	options.buffer_size = (uint16_t)link->buffer_size;
	options.log2_ring_size = link->log2_ring_size;
	options.connect_timeout_s = 30;
	options.quiet = 1;
	if (memif_app_open(app, prog, &options) != 0)
		return 1;
	if (memif_app_wait_connected(app) != 0) {
		memif_app_close(app);
		return 1;
	}
	return 0;
}

/* Up to max frames from queue 0 into bufs (*n of them); having none is no failure. */
static inline int link_rx_burst(struct memif_app *app, const char *prog, memif_buffer_t *bufs, uint16_t max,
				uint16_t *n)
{
	*n = 0;
	int err = memif_rx_burst(app->conn, 0, bufs, max, n);
	if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_NOBUF) {
		fprintf(stderr, "%s: memif_rx_burst: %s\n", prog, memif_strerror(err));
		return 1;
	}
	return 0;
}

/* Gives the n buffers link_rx_burst received back to queue 0. */
static inline int link_refill(struct memif_app *app, const char *prog, uint16_t n)
{
	int err = memif_refill_queue(app->conn, 0, n, 0);
	if (err != MEMIF_ERR_SUCCESS) {
		fprintf(stderr, "%s: memif_refill_queue: %s\n", prog, memif_strerror(err));
		return 1;
	}
	return 0;
}

#endif
