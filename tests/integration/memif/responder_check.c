/*
 * Checks the memif ARP/ICMP responder from the other end of the interface: sends ARP requests
 * and ICMP echo requests (up to 9000-byte frames, so chained buffers both ways) and verifies
 * every reply field by field; requests that must stay unanswered (another address, a bad
 * checksum) get no reply.
 *
 *   memif_responder_check --socket PATH --ip A.B.C.D --mac MAC [connection options]
 *
 * Exit status 0 when every check passed.
 */
#define _GNU_SOURCE
#include "memif_app_common.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint8_t our_mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01};
static const uint8_t our_ip[4] = {192, 168, 1, 1};

struct check {
	struct memif_app app;
	uint8_t peer_mac[6], peer_ip[4];
	memif_buffer_t bufs[MEMIF_APP_MAX_BURST];
	uint8_t frame[MEMIF_APP_MAX_FRAME], rx[MEMIF_APP_MAX_FRAME];
	uint32_t rx_len;
	int failures;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t checksum(const uint8_t *data, uint32_t len)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += be16(data + i);
	if (len & 1)
		sum += (uint32_t)data[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void fail(struct check *c, const char *what)
{
	fprintf(stderr, "FAIL: %s\n", what);
	c->failures++;
}

static int send_frame(struct check *c, uint32_t len)
{
	memif_buffer_t tx[MEMIF_APP_MAX_SEGMENTS];
	uint16_t n = 0;
	int err = memif_buffer_alloc(c->app.conn, 0, tx, memif_app_buffers_per_frame(&c->app, len), &n, (uint16_t)len);
	if (err != MEMIF_ERR_SUCCESS || n == 0) {
		fprintf(stderr, "memif_buffer_alloc(%u bytes) gave %u buffers: %s\n", len, n, memif_strerror(err));
		return -1;
	}
	uint32_t offset = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint32_t chunk = len - offset < tx[i].len ? len - offset : tx[i].len;
		memcpy(tx[i].data, c->frame + offset, chunk);
		tx[i].len = chunk;
		offset += chunk;
	}
	uint16_t sent = 0;
	err = memif_tx_burst(c->app.conn, 0, tx, n, &sent);
	if (err != MEMIF_ERR_SUCCESS || sent != n || offset != len) {
		fprintf(stderr, "memif_tx_burst: %s\n", memif_strerror(err));
		return -1;
	}
	return 0;
}

/* Waits up to timeout_s for one whole frame into c->rx; returns its length, 0 on timeout. */
static uint32_t receive_frame(struct check *c, double timeout_s)
{
	double deadline = memif_app_now() + timeout_s;
	uint32_t len = 0;
	while (memif_app_now() < deadline) {
		uint16_t got = 0;
		memif_rx_burst(c->app.conn, 0, c->bufs, 1, &got); /* one buffer at a time: stop at a frame's end */
		if (got == 0) {
			memif_poll_event(0);
			usleep(200);
			continue;
		}
		if (len + c->bufs[0].len <= sizeof(c->rx))
			memcpy(c->rx + len, c->bufs[0].data, c->bufs[0].len);
		len += c->bufs[0].len;
		int more = c->bufs[0].flags & MEMIF_BUFFER_FLAG_NEXT;
		memif_refill_queue(c->app.conn, 0, 1, 0);
		if (!more)
			return len;
	}
	return 0;
}

static uint32_t build_arp_request(struct check *c, const uint8_t target_ip[4])
{
	uint8_t *f = c->frame;
	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, our_mac, 6);
	put16(f + 12, 0x0806);
	put16(f + 14, 1);
	put16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, 1);
	memcpy(f + 22, our_mac, 6);
	memcpy(f + 28, our_ip, 4);
	memcpy(f + 38, target_ip, 4);
	return 60;
}

static uint32_t build_echo_request(struct check *c, const uint8_t dst_ip[4], uint32_t frame_len, uint16_t seq)
{
	uint8_t *f = c->frame;
	memcpy(f, c->peer_mac, 6);
	memcpy(f + 6, our_mac, 6);
	put16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	uint32_t total = frame_len - 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)total);
	put16(ip + 4, seq);
	ip[8] = 64;
	ip[9] = 1;
	memcpy(ip + 12, our_ip, 4);
	memcpy(ip + 16, dst_ip, 4);
	put16(ip + 10, checksum(ip, 20));
	uint8_t *icmp = ip + 20;
	icmp[0] = 8;
	icmp[1] = 0;
	put16(icmp + 2, 0);
	put16(icmp + 4, 0x1234);
	put16(icmp + 6, seq);
	for (uint32_t i = 8; i < total - 20; i++)
		icmp[i] = (uint8_t)(i * 7 + seq);
	put16(icmp + 2, checksum(icmp, total - 20));
	return frame_len;
}

static void check_arp(struct check *c)
{
	if (send_frame(c, build_arp_request(c, c->peer_ip)) != 0)
		return fail(c, "could not send the ARP request");
	uint32_t len = receive_frame(c, 3.0);
	const uint8_t *r = c->rx;
	if (len < 42)
		return fail(c, "no ARP reply");
	if (memcmp(r, our_mac, 6) != 0 || memcmp(r + 6, c->peer_mac, 6) != 0 || be16(r + 12) != 0x0806)
		fail(c, "ARP reply: wrong Ethernet header");
	if (be16(r + 14) != 1 || be16(r + 16) != 0x0800 || r[18] != 6 || r[19] != 4 || be16(r + 20) != 2)
		fail(c, "ARP reply: wrong hardware/protocol fields or operation");
	if (memcmp(r + 22, c->peer_mac, 6) != 0 || memcmp(r + 28, c->peer_ip, 4) != 0)
		fail(c, "ARP reply: wrong sender MAC or IP");
	if (memcmp(r + 32, our_mac, 6) != 0 || memcmp(r + 38, our_ip, 4) != 0)
		fail(c, "ARP reply: wrong target MAC or IP");
}

static void check_echo(struct check *c, uint32_t frame_len, uint16_t seq)
{
	char what[96];
	uint32_t len = build_echo_request(c, c->peer_ip, frame_len, seq);
	if (send_frame(c, len) != 0)
		return fail(c, "could not send an echo request");
	uint32_t got = receive_frame(c, 3.0);
	snprintf(what, sizeof(what), "echo reply for a %u-byte frame (sequence %u)", frame_len, seq);
	if (got == 0) {
		fprintf(stderr, "FAIL: no %s\n", what);
		c->failures++;
		return;
	}
	const uint8_t *r = c->rx, *q = c->frame;
	const uint8_t *rip = r + 14, *ricmp = r + 34;
	const char *problem = NULL;
	if (got != len)
		problem = "length differs";
	else if (memcmp(r, our_mac, 6) != 0 || memcmp(r + 6, c->peer_mac, 6) != 0 || be16(r + 12) != 0x0800)
		problem = "wrong Ethernet header";
	else if (checksum(rip, 20) != 0)
		problem = "bad IPv4 header checksum";
	else if (memcmp(rip + 12, c->peer_ip, 4) != 0 || memcmp(rip + 16, our_ip, 4) != 0 || rip[9] != 1)
		problem = "wrong IPv4 addresses or protocol";
	else if (checksum(ricmp, len - 34) != 0)
		problem = "bad ICMP checksum";
	else if (ricmp[0] != 0 || ricmp[1] != 0 || be16(ricmp + 4) != 0x1234 || be16(ricmp + 6) != seq)
		problem = "wrong ICMP type, code, identifier or sequence";
	else if (memcmp(ricmp + 8, q + 42, len - 42) != 0)
		problem = "payload differs";
	if (problem != NULL) {
		fprintf(stderr, "FAIL: %s: %s\n", what, problem);
		c->failures++;
	}
}

static void check_no_reply(struct check *c, uint32_t len, const char *what)
{
	if (send_frame(c, len) != 0)
		return fail(c, "could not send a frame");
	if (receive_frame(c, 0.3) != 0) {
		fprintf(stderr, "FAIL: unexpected reply to %s\n", what);
		c->failures++;
	}
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {{"ip", required_argument, 0, 'a'},
						     {"mac", required_argument, 0, 'm'},
						     MEMIF_APP_COMMON_LONG_OPTIONS,
						     {0, 0, 0, 0}};
	struct check *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return 1;
	struct memif_app_options options;
	memif_app_default_options(&options);
	inet_pton(AF_INET, "192.168.1.2", c->peer_ip);
	static const uint8_t default_mac[6] = {0x02, 0xfe, 0, 0, 0, 0x01};
	memcpy(c->peer_mac, default_mac, 6);
	int opt;
	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		unsigned m[6];
		if (opt == 'a' && inet_pton(AF_INET, optarg, c->peer_ip) == 1)
			continue;
		if (opt == 'm' && sscanf(optarg, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6) {
			for (int i = 0; i < 6; i++)
				c->peer_mac[i] = (uint8_t)m[i];
			continue;
		}
		if (opt != 'a' && opt != 'm' && memif_app_parse_common(&options, argv[0], opt, optarg) == 0)
			continue;
		fprintf(stderr, "usage: %s --socket PATH [--ip A.B.C.D] [--mac MAC] [connection options]\n", argv[0]);
		free(c);
		return 2;
	}
	if (memif_app_open(&c->app, "responder-check", &options) != 0) {
		free(c);
		return 1;
	}
	int status = 1;
	if (memif_app_wait_connected(&c->app) == 0) {
		check_arp(c);
		static const uint32_t sizes[] = {60, 98, 1000, 1514, 2048, 2049, 4000, 9014};
		for (uint16_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			check_echo(c, sizes[i], (uint16_t)(100 + i));
		for (uint16_t i = 0; i < 200; i++) /* many small pings: the rings wrap */
			check_echo(c, 64 + (i % 64), i);
		uint8_t other_ip[4] = {10, 9, 8, 7};
		check_no_reply(c, build_arp_request(c, other_ip), "an ARP request for another address");
		check_no_reply(c, build_echo_request(c, other_ip, 98, 7), "a ping to another address");
		uint32_t len = build_echo_request(c, c->peer_ip, 98, 8);
		c->frame[14 + 20 + 2] ^= 0x55; /* corrupt the ICMP checksum */
		check_no_reply(c, len, "a ping with a bad ICMP checksum");
		check_echo(c, 98, 9); /* still answering */
		printf("responder check: %d failure(s)\n", c->failures);
		status = c->failures == 0 ? 0 : 1;
	}
	memif_app_close(&c->app);
	free(c);
	return status;
}
