/*
 * memif ARP/ICMP responder (see memif_app.h): answers ARP requests and ICMP echo requests
 * ("ping") addressed to one IPv4 address. Frames may span chained buffers; they are reassembled
 * before they are answered. In ip mode the frames are bare IPv4 packets (no Ethernet header).
 */
#define _GNU_SOURCE
#include "memif_app.h"
#include "memif_app_common.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char responder_usage[] =
    "usage: %s [options]\n"
    "Answers ARP requests and ICMP echo requests for one IPv4 address on a memif interface.\n\n"
    "  --ip A.B.C.D      our address (default 192.168.1.2)\n"
    "  --mac MAC         our MAC address (default 02:fe:00:00:00:01)\n"
    "  --count N         exit after N replies (default 0: until --duration or a signal)\n"
    "  --duration S      exit after S seconds (default 0: no limit)\n"
    "  --poll            busy-poll the queue (default: sleep until the peer signals)\n"
    "\n" MEMIF_APP_COMMON_USAGE;

struct responder {
	struct memif_app *app;
	uint8_t mac[6];
	uint8_t ip[4];
	memif_buffer_t bufs[MEMIF_APP_MAX_BURST];
	memif_buffer_t tx_bufs[MEMIF_APP_MAX_SEGMENTS];
	uint8_t frame[MEMIF_APP_MAX_FRAME]; /* frame being reassembled */
	uint32_t frame_len;
	int frame_too_long;
	uint8_t reply[MEMIF_APP_MAX_FRAME];
	uint64_t arp_replies, icmp_replies, ignored, tx_failures;
	int failed;
};

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The Internet checksum (RFC 1071) of len bytes. */
static uint16_t inet_checksum(const uint8_t *data, uint32_t len)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += get_be16(data + i);
	if (len & 1)
		sum += (uint32_t)data[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Sends len bytes of r->reply as one frame (chained if needed). */
static void send_reply(struct responder *r, uint32_t len)
{
	uint16_t nbufs = 0;
	int err = MEMIF_ERR_SUCCESS;
	/* Ask for the buffers one frame needs; if the peer's buffers are smaller than ours, ask for
	 * one more at a time (fewer than two frames' worth, so never a second frame). */
	for (uint16_t want = memif_app_buffers_per_frame(r->app, len); nbufs == 0 && want <= MEMIF_APP_MAX_SEGMENTS;
	     want++) {
		err = memif_buffer_alloc(r->app->conn, 0, r->tx_bufs, want, &nbufs, (uint16_t)len);
		if (err != MEMIF_ERR_SUCCESS)
			break;
	}
	if (err != MEMIF_ERR_SUCCESS || nbufs == 0) {
		r->tx_failures++; /* ring full or link down: the peer will retry */
		return;
	}
	uint32_t offset = 0;
	for (uint16_t i = 0; i < nbufs; i++) {
		uint32_t n = len - offset < r->tx_bufs[i].len ? len - offset : r->tx_bufs[i].len;
		memcpy(r->tx_bufs[i].data, r->reply + offset, n);
		r->tx_bufs[i].len = n;
		offset += n;
	}
	uint16_t tx = 0;
	err = memif_tx_burst(r->app->conn, 0, r->tx_bufs, nbufs, &tx);
	if (err != MEMIF_ERR_SUCCESS || tx != nbufs || offset != len)
		r->tx_failures++;
}

static int answer_arp(struct responder *r, const uint8_t *f, uint32_t len)
{
	const uint8_t *arp = f + 14;
	if (len < 42 || get_be16(arp) != 1 || get_be16(arp + 2) != 0x0800 || arp[4] != 6 || arp[5] != 4 ||
	    get_be16(arp + 6) != 1 || memcmp(arp + 24, r->ip, 4) != 0)
		return 0;
	uint8_t *out = r->reply;
	memcpy(out, arp + 8, 6); /* to the requester's hardware address */
	memcpy(out + 6, r->mac, 6);
	put_be16(out + 12, 0x0806);
	uint8_t *reply = out + 14;
	put_be16(reply, 1);
	put_be16(reply + 2, 0x0800);
	reply[4] = 6;
	reply[5] = 4;
	put_be16(reply + 6, 2);
	memcpy(reply + 8, r->mac, 6);
	memcpy(reply + 14, r->ip, 4);
	memcpy(reply + 18, arp + 8, 10); /* target = the requester's MAC and IP */
	memset(out + 42, 0, 18);         /* pad to the 60-byte Ethernet minimum */
	send_reply(r, 60);
	r->arp_replies++;
	return 1;
}

/* l3 is the offset of the IPv4 header (14 with Ethernet, 0 in ip mode). */
static int answer_icmp(struct responder *r, const uint8_t *f, uint32_t len, uint32_t l3)
{
	if (len < l3 + 20)
		return 0;
	const uint8_t *ip = f + l3;
	uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	uint32_t total = get_be16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || total < ihl + 8 || l3 + total > len || ip[9] != 1 ||
	    memcmp(ip + 16, r->ip, 4) != 0 || (get_be16(ip + 6) & 0x3fff) != 0 /* fragments */ ||
	    inet_checksum(ip, ihl) != 0)
		return 0;
	const uint8_t *icmp = ip + ihl;
	uint32_t icmp_len = total - ihl;
	if (icmp[0] != 8 || icmp[1] != 0 || inet_checksum(icmp, icmp_len) != 0)
		return 0;

	uint8_t *out = r->reply;
	memcpy(out, f, l3 + total);
	if (l3 != 0) {
		memcpy(out, f + 6, 6);
		memcpy(out + 6, r->mac, 6);
	}
	uint8_t *out_ip = out + l3;
	memcpy(out_ip + 12, ip + 16, 4);
	memcpy(out_ip + 16, ip + 12, 4);
	out_ip[8] = 64; /* TTL */
	put_be16(out_ip + 10, 0);
	put_be16(out_ip + 10, inet_checksum(out_ip, ihl));
	uint8_t *out_icmp = out_ip + ihl;
	out_icmp[0] = 0; /* echo reply */
	put_be16(out_icmp + 2, 0);
	put_be16(out_icmp + 2, inet_checksum(out_icmp, icmp_len));
	send_reply(r, l3 + total);
	r->icmp_replies++;
	return 1;
}

static void handle_frame(struct responder *r, const uint8_t *f, uint32_t len)
{
	int answered = 0;
	if (r->app->options.mode == MEMIF_INTERFACE_MODE_IP)
		answered = answer_icmp(r, f, len, 0);
	else if (len >= 14 && get_be16(f + 12) == 0x0806)
		answered = answer_arp(r, f, len);
	else if (len >= 14 && get_be16(f + 12) == 0x0800)
		answered = answer_icmp(r, f, len, 14);
	if (!answered)
		r->ignored++;
}

/* Receives and answers one burst; returns the number of buffers received. */
static int responder_poll(struct responder *r)
{
	uint16_t received = 0;
	int err = memif_rx_burst(r->app->conn, 0, r->bufs, MEMIF_APP_MAX_BURST, &received);
	if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_NOBUF) {
		if (r->app->connected) {
			fprintf(stderr, "%s: memif_rx_burst: %s\n", r->app->prog, memif_strerror(err));
			r->failed = 1;
		}
		return 0;
	}
	for (uint16_t i = 0; i < received; i++) {
		const memif_buffer_t *b = &r->bufs[i];
		if (r->frame_len + b->len > sizeof(r->frame))
			r->frame_too_long = 1;
		else
			memcpy(r->frame + r->frame_len, b->data, b->len);
		r->frame_len += b->len;
		if (!(b->flags & MEMIF_BUFFER_FLAG_NEXT)) {
			if (r->frame_too_long)
				r->ignored++;
			else
				handle_frame(r, r->frame, r->frame_len);
			r->frame_len = 0;
			r->frame_too_long = 0;
		}
	}
	if (received > 0 && memif_refill_queue(r->app->conn, 0, received, 0) != MEMIF_ERR_SUCCESS &&
	    r->app->connected) {
		fprintf(stderr, "%s: memif_refill_queue failed\n", r->app->prog);
		r->failed = 1;
	}
	return received;
}

static int responder_on_interrupt(struct memif_app *app, uint16_t qid)
{
	(void)qid;
	struct responder *r = app->user;
	while (responder_poll(r) == MEMIF_APP_MAX_BURST)
		;
	return 0;
}

static int parse_mac(const char *arg, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(arg, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -1;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

int memif_app_responder_main(int argc, char **argv)
{
	static const struct option long_options[] = {{"ip", required_argument, 0, 'a'},
						     {"mac", required_argument, 0, 'm'},
						     {"count", required_argument, 0, 'c'},
						     {"duration", required_argument, 0, 'd'},
						     {"poll", no_argument, 0, 'p'},
						     MEMIF_APP_COMMON_LONG_OPTIONS,
						     {0, 0, 0, 0}};
	const char *prog = argv[0];
	struct responder *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	static const uint8_t default_mac[6] = {0x02, 0xfe, 0, 0, 0, 0x01};
	memcpy(r->mac, default_mac, 6);
	inet_pton(AF_INET, "192.168.1.2", r->ip);
	uint64_t count = 0;
	double duration = 0;
	int poll_mode = 0;
	struct memif_app_options conn;
	memif_app_default_options(&conn);
	optind = 0;
	int status = 2;
	for (;;) {
		int opt = getopt_long(argc, argv, "h", long_options, NULL);
		if (opt == -1)
			break;
		int bad = 0;
		switch (opt) {
		case 'a':
			if (inet_pton(AF_INET, optarg, r->ip) != 1) {
				fprintf(stderr, "%s: bad --ip '%s'\n", prog, optarg);
				bad = 1;
			}
			break;
		case 'm':
			if (parse_mac(optarg, r->mac) != 0) {
				fprintf(stderr, "%s: bad --mac '%s' (expected xx:xx:xx:xx:xx:xx)\n", prog, optarg);
				bad = 1;
			}
			break;
		case 'c':
			bad = memif_app_parse_u64(prog, "--count", optarg, 0, UINT64_MAX / 2, &count);
			break;
		case 'd':
			bad = memif_app_parse_seconds(prog, "--duration", optarg, &duration);
			break;
		case 'p':
			poll_mode = 1;
			break;
		case 'h':
			printf(responder_usage, prog);
			status = 0;
			goto out_free;
		default: {
			int common = memif_app_parse_common(&conn, prog, opt, optarg);
			if (common == 0)
				break;
			if (common > 0)
				fprintf(stderr, responder_usage, prog);
			goto out_free;
		}
		}
		if (bad)
			goto out_free;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		goto out_free;
	}
	conn.interrupt = !poll_mode;

	memif_app_install_signal_handlers();
	struct memif_app app;
	status = 1;
	if (memif_app_open(&app, prog, &conn) != 0)
		goto out_free;
	r->app = &app;
	app.user = r;
	app.on_rx_interrupt = responder_on_interrupt;
	if (memif_app_wait_connected(&app) != 0)
		goto out_close;
	if (!conn.quiet) {
		char address[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, r->ip, address, sizeof(address));
		fprintf(stderr, "%s: answering ARP and ping for %s\n", prog, address);
	}

	double start = memif_app_now();
	unsigned iteration = 0;
	while (!memif_app_stop_requested && !r->failed) {
		if (poll_mode)
			responder_poll(r);
		else
			memif_poll_event(1); /* runs responder_on_interrupt */
		if (count != 0 && r->arp_replies + r->icmp_replies >= count)
			break;
		if (app.link_lost) {
			/* Not an error: a server waits for the next client, a client reconnects by itself. */
			app.link_lost = 0;
			r->frame_len = 0;
			r->frame_too_long = 0;
		}
		if ((++iteration & 255) == 0 || !poll_mode) {
			if (poll_mode)
				memif_poll_event(0);
			if (duration > 0 && memif_app_now() - start >= duration)
				break;
		}
	}
	if (!r->failed && app.connected)
		memif_app_drain_tx(&app, 1.0);
	printf("%s: arp_replies=%" PRIu64 " icmp_replies=%" PRIu64 " ignored=%" PRIu64 " tx_failures=%" PRIu64 "\n",
	       prog, r->arp_replies, r->icmp_replies, r->ignored, r->tx_failures);
	status = r->failed ? 1 : 0;
out_close:
	memif_app_close(&app);
out_free:
	free(r);
	fflush(stdout);
	return status;
}
