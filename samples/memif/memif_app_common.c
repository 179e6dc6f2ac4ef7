/*
 * Shared parts of the memif example applications (see memif_app_common.h).
 */
#define _GNU_SOURCE
#include "memif_app_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t memif_app_stop_requested;

static void on_stop_signal(int signo)
{
	(void)signo;
	memif_app_stop_requested = 1;
}

void memif_app_install_signal_handlers(void)
{
	struct sigaction action;
	memset(&action, 0, sizeof(action));
	action.sa_handler = on_stop_signal; /* no SA_RESTART: blocking waits return early */
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
}

double memif_app_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void memif_app_default_options(struct memif_app_options *options)
{
	memset(options, 0, sizeof(*options));
	options->if_name = "memif0";
	options->mode = MEMIF_INTERFACE_MODE_ETHERNET;
	options->connect_timeout_s = 10.0;
}

int memif_app_parse_u64(const char *prog, const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long long value = strtoull(arg, &end, 0);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || value < min || value > max) {
		fprintf(stderr, "%s: bad %s '%s' (expected an integer from %" PRIu64 " to %" PRIu64 ")\n", prog, name,
			arg, min, max);
		return -1;
	}
	*out = value;
	return 0;
}

int memif_app_parse_seconds(const char *prog, const char *name, const char *arg, double *out)
{
	char *end = NULL;
	errno = 0;
	double value = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(value >= 0.0) || value > 1e6) {
		fprintf(stderr, "%s: bad %s '%s' (expected seconds, 0 to 1000000)\n", prog, name, arg);
		return -1;
	}
	*out = value;
	return 0;
}

int memif_app_parse_common(struct memif_app_options *options, const char *prog, int opt, const char *arg)
{
	uint64_t value;
	switch (opt) {
	case 0x100:
		if (strcmp(arg, "server") == 0 || strcmp(arg, "master") == 0)
			options->is_master = 1;
		else if (strcmp(arg, "client") == 0 || strcmp(arg, "slave") == 0)
			options->is_master = 0;
		else {
			fprintf(stderr, "%s: bad --role '%s' (expected server or client)\n", prog, arg);
			return -1;
		}
		return 0;
	case 0x101:
		if (arg[0] == '\0' || strlen(arg) > 107) {
			fprintf(stderr, "%s: bad --socket '%s' (1 to 107 characters)\n", prog, arg);
			return -1;
		}
		options->socket_path = arg;
		return 0;
	case 0x102:
		if (memif_app_parse_u64(prog, "--id", arg, 0, UINT32_MAX, &value) != 0)
			return -1;
		options->interface_id = (uint32_t)value;
		return 0;
	case 0x103:
		if (strlen(arg) > 24) {
			fprintf(stderr, "%s: --secret is longer than 24 bytes\n", prog);
			return -1;
		}
		options->secret = arg;
		return 0;
	case 0x104:
		if (arg[0] == '\0' || strlen(arg) > 32) {
			fprintf(stderr, "%s: bad --name '%s' (1 to 32 characters)\n", prog, arg);
			return -1;
		}
		options->if_name = arg;
		return 0;
	case 0x105:
		if (memif_app_parse_u64(prog, "--buffer-size", arg, 64, 32768, &value) != 0)
			return -1;
		if ((value & (value - 1)) != 0) {
			fprintf(stderr, "%s: --buffer-size %s is not a power of two\n", prog, arg);
			return -1;
		}
		options->buffer_size = (uint16_t)value;
		return 0;
	case 0x106:
		if (memif_app_parse_u64(prog, "--ring-log2", arg, 1, 14, &value) != 0)
			return -1;
		options->log2_ring_size = (uint8_t)value;
		return 0;
	case 0x107:
		if (strcmp(arg, "ethernet") == 0)
			options->mode = MEMIF_INTERFACE_MODE_ETHERNET;
		else if (strcmp(arg, "ip") == 0)
			options->mode = MEMIF_INTERFACE_MODE_IP;
		else if (strcmp(arg, "punt") == 0 || strcmp(arg, "punt-inject") == 0)
			options->mode = MEMIF_INTERFACE_MODE_PUNT_INJECT;
		else {
			fprintf(stderr, "%s: bad --mode '%s' (expected ethernet, ip or punt)\n", prog, arg);
			return -1;
		}
		return 0;
	case 0x108:
		return memif_app_parse_seconds(prog, "--connect-timeout", arg, &options->connect_timeout_s);
	case 0x109:
		options->interrupt = 1;
		return 0;
	case 0x10a:
		options->quiet = 1;
		return 0;
	default:
		return 1;
	}
}

static int on_connect(memif_conn_handle_t conn, void *private_ctx)
{
	struct memif_app *app = private_ctx;
	/* Post every receive buffer (a no-op on a master), then choose how we learn of packets. */
	int err = memif_refill_queue(conn, 0, UINT16_MAX, 0);
	if (err != MEMIF_ERR_SUCCESS)
		fprintf(stderr, "%s: memif_refill_queue: %s\n", app->prog, memif_strerror(err));
	err = memif_set_rx_mode(conn, app->options.interrupt ? MEMIF_RX_MODE_INTERRUPT : MEMIF_RX_MODE_POLLING, 0);
	if (err != MEMIF_ERR_SUCCESS)
		fprintf(stderr, "%s: memif_set_rx_mode: %s\n", app->prog, memif_strerror(err));
	app->connected = 1;
	if (!app->options.quiet)
		fprintf(stderr, "%s: connected\n", app->prog);
	return 0;
}

static int on_disconnect(memif_conn_handle_t conn, void *private_ctx)
{
	struct memif_app *app = private_ctx;
	(void)conn;
	if (app->connected) {
		app->link_lost = 1;
		if (!app->options.quiet)
			fprintf(stderr, "%s: disconnected\n", app->prog);
	}
	app->connected = 0;
	return 0;
}

static int on_interrupt(memif_conn_handle_t conn, void *private_ctx, uint16_t qid)
{
	struct memif_app *app = private_ctx;
	(void)conn;
	return app->on_rx_interrupt != NULL ? app->on_rx_interrupt(app, qid) : 0;
}

int memif_app_open(struct memif_app *app, const char *prog, const struct memif_app_options *options)
{
	app->prog = prog;
	app->options = *options;
	app->socket = NULL;
	app->conn = NULL;
	app->connected = 0;
	app->link_lost = 0;
	/* Set by the caller after opening, if at all: an interrupt that arrives before the queue is
	 * switched to polling must find NULL here, not stack garbage. */
	app->on_rx_interrupt = NULL;
	app->user = NULL;

	char app_name[32];
	snprintf(app_name, sizeof(app_name), "softdpu-%s", prog);
	int err = memif_init(NULL, app_name, NULL, NULL, NULL);
	if (err != MEMIF_ERR_SUCCESS) {
		fprintf(stderr, "%s: memif_init: %s\n", prog, memif_strerror(err));
		return 1;
	}
	if (options->socket_path != NULL) {
		err = memif_create_socket(&app->socket, options->socket_path, NULL);
		if (err != MEMIF_ERR_SUCCESS) {
			fprintf(stderr, "%s: memif_create_socket(%s): %s\n", prog, options->socket_path,
				memif_strerror(err));
			memif_cleanup();
			return 1;
		}
	}

	memif_conn_args_t args;
	memset(&args, 0, sizeof(args));
	args.socket = app->socket;
	if (options->secret != NULL)
		memcpy(args.secret, options->secret, strlen(options->secret)); /* length checked when parsed */
	args.num_s2m_rings = 1;
	args.num_m2s_rings = 1;
	args.buffer_size = options->buffer_size;
	args.log2_ring_size = options->log2_ring_size;
	args.is_master = (uint8_t)options->is_master;
	args.interface_id = options->interface_id;
	memcpy(args.interface_name, options->if_name, strlen(options->if_name));
	args.mode = options->mode;
	err = memif_create(&app->conn, &args, on_connect, on_disconnect, on_interrupt, app);
	if (err != MEMIF_ERR_SUCCESS) {
		fprintf(stderr, "%s: memif_create: %s\n", prog, memif_strerror(err));
		memif_app_close(app);
		return 1;
	}
	return 0;
}

int memif_app_wait_connected(struct memif_app *app)
{
	double deadline = memif_app_now() + app->options.connect_timeout_s;
	int last_err = MEMIF_ERR_SUCCESS;
	while (!app->connected) {
		if (memif_app_stop_requested) {
			fprintf(stderr, "%s: interrupted before the interface connected\n", app->prog);
			return 1;
		}
		if (memif_app_now() >= deadline) {
			fprintf(stderr, "%s: not connected within %.1f s%s%s\n", app->prog,
				app->options.connect_timeout_s, last_err != MEMIF_ERR_SUCCESS ? "; last error: " : "",
				last_err != MEMIF_ERR_SUCCESS ? memif_strerror(last_err) : "");
			return 1;
		}
		int err = memif_poll_event(1);
		if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_POLL_CANCEL && err != last_err) {
			last_err = err;
			if (!app->options.quiet)
				fprintf(stderr, "%s: while connecting: %s\n", app->prog, memif_strerror(err));
		}
	}
	return 0;
}

int memif_app_service(struct memif_app *app)
{
	memif_poll_event(0);
	if (app->link_lost) {
		fprintf(stderr, "%s: the peer disconnected\n", app->prog);
		return 1;
	}
	return 0;
}

uint16_t memif_app_buffers_per_frame(const struct memif_app *app, uint32_t frame_len)
{
	uint32_t buffer_size = app->options.buffer_size != 0 ? app->options.buffer_size : 2048;
	uint32_t buffers = (frame_len + buffer_size - 1) / buffer_size;
	return (uint16_t)(buffers == 0 ? 1 : buffers);
}

void memif_app_drain_tx(struct memif_app *app, double timeout_s)
{
	double deadline = memif_app_now() + timeout_s;
	char buffer[2048];
	while (app->connected && memif_app_now() < deadline) {
		memif_details_t details;
		memset(&details, 0, sizeof(details));
		if (memif_get_details(app->conn, &details, buffer, sizeof(buffer)) != MEMIF_ERR_SUCCESS ||
		    details.tx_queues_num == 0)
			break;
		const memif_queue_details_t *tx = &details.tx_queues[0];
		/* A client's tx ring is empty when the server's tail caught up with our head; a server's
		 * when the client has posted every slot back (head - tail == ring size). */
		uint16_t pending = (uint16_t)(tx->head - tx->tail);
		if (app->options.is_master ? pending == tx->ring_size : pending == 0)
			return;
		memif_poll_event(0);
		usleep(1000);
	}
}

void memif_app_close(struct memif_app *app)
{
	if (app->conn != NULL) {
		int err = memif_delete(&app->conn);
		if (err != MEMIF_ERR_SUCCESS)
			fprintf(stderr, "%s: memif_delete: %s\n", app->prog, memif_strerror(err));
	}
	if (app->socket != NULL) {
		int err = memif_delete_socket(&app->socket);
		if (err != MEMIF_ERR_SUCCESS)
			fprintf(stderr, "%s: memif_delete_socket: %s\n", app->prog, memif_strerror(err));
	}
	memif_cleanup();
}

/* pattern_table[i] = i mod 256: frame byte k of sequence s is pattern_table[(s + k) & 255], and a
 * run of up to 256 bytes can be copied or compared straight from the table. */
static const uint8_t *pattern_table(void)
{
	static uint8_t table[512];
	static int ready;
	if (!ready) {
		for (int i = 0; i < 512; i++)
			table[i] = (uint8_t)i;
		ready = 1;
	}
	return table;
}

/* Little-endian fields of the frame header. On a little-endian host a plain copy (one load or
 * store); the byte loop elsewhere. */
static void put_le(uint8_t *dst, uint64_t value, int bytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(dst, &value, (size_t)bytes);
#else
	for (int i = 0; i < bytes; i++)
		dst[i] = (uint8_t)(value >> (8 * i));
#endif
}

static uint64_t get_le(const uint8_t *src, int bytes)
{
	uint64_t value = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&value, src, (size_t)bytes);
#else
	for (int i = bytes - 1; i >= 0; i--)
		value = (value << 8) | src[i];
#endif
	return value;
}

static void build_header(uint8_t header[MEMIF_APP_FRAME_HEADER], uint64_t seq, uint32_t frame_len)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
	memcpy(header, macs, sizeof(macs));
	header[12] = MEMIF_APP_ETHERTYPE >> 8;
	header[13] = MEMIF_APP_ETHERTYPE & 0xff;
	memcpy(header + 14, "SDPM", 4);
	put_le(header + 18, seq, 8);
	put_le(header + 26, frame_len, 4);
}

#if defined(__GNUC__)
/* Pattern bytes a vector at a time: dst[i] = first + i, each vector the previous plus its width.
 * Copying runs from the table instead was compiled inline as `rep movsq`, whose start-up cost
 * took about 80 % of a 1500-byte generator's time (docs/performance.md), and so does any
 * variable-length memcpy, so the end of the run is one more vector store that overlaps the last
 * full one (same bytes) instead of a short copy. Non-temporal stores were tried too: far slower
 * here, as the frames then go through memory. Returns the bytes left (only when len < width). */
#define MEMIF_APP_DEFINE_PATTERN_FILL(name, width, attributes)                                                         \
	attributes static uint32_t name(uint8_t *dst, uint32_t len, uint8_t first)                                     \
	{                                                                                                              \
		typedef uint8_t vector __attribute__((vector_size(width)));                                            \
		vector ramp;                                                                                           \
		for (int i = 0; i < (width); i++)                                                                      \
			ramp[i] = (uint8_t)i;                                                                          \
		if (len < (width))                                                                                     \
			return len;                                                                                    \
		vector bytes = ramp + first;                                                                           \
		uint32_t done = 0;                                                                                     \
		for (; len - done >= (width); done += (width), bytes += (width))                                       \
			memcpy(dst + done, &bytes, (width));                                                           \
		if (done < len) {                                                                                      \
			bytes = ramp + (uint8_t)(first + len - (width));                                               \
			memcpy(dst + len - (width), &bytes, (width));                                                  \
		}                                                                                                      \
		return 0;                                                                                              \
	}
MEMIF_APP_DEFINE_PATTERN_FILL(pattern_fill_16, 16, )
#if defined(__x86_64__)
/* Half the stores where the CPU has AVX2: at 1500 bytes the generator's time per frame is mostly
 * the store count (measured: about 45 ns with 16-byte stores, 25 ns with 32-byte ones). */
MEMIF_APP_DEFINE_PATTERN_FILL(pattern_fill_32, 32, __attribute__((target("avx2"))))
#endif

static int pattern_narrow_stores; /* memif_app_frame_use_narrow_stores */

static uint32_t pattern_fill(uint8_t *dst, uint32_t len, uint8_t first)
{
#if defined(__x86_64__)
	if (!pattern_narrow_stores && __builtin_cpu_supports("avx2")) {
		return pattern_fill_32(dst, len, first);
	}
#endif
	return pattern_fill_16(dst, len, first);
}
#endif

void memif_app_frame_use_narrow_stores(int narrow)
{
#if defined(__GNUC__)
	pattern_narrow_stores = narrow;
#else
	(void)narrow;
#endif
}

void memif_app_frame_write(uint64_t seq, uint32_t frame_len, uint32_t offset, uint8_t *dst, uint32_t len)
{
	if (offset == 0 && len >= MEMIF_APP_FRAME_HEADER) {
		build_header(dst, seq, frame_len); /* fixed-size stores, no copy of a variable length */
		dst += MEMIF_APP_FRAME_HEADER;
		offset = MEMIF_APP_FRAME_HEADER;
		len -= MEMIF_APP_FRAME_HEADER;
	} else if (offset < MEMIF_APP_FRAME_HEADER) {
		uint8_t header[MEMIF_APP_FRAME_HEADER];
		build_header(header, seq, frame_len);
		uint32_t n = MEMIF_APP_FRAME_HEADER - offset < len ? MEMIF_APP_FRAME_HEADER - offset : len;
		memcpy(dst, header + offset, n);
		dst += n;
		offset += n;
		len -= n;
	}
#if defined(__GNUC__)
	uint32_t left = pattern_fill(dst, len, (uint8_t)(seq + offset));
	if (left == 0) {
		return;
	}
#endif
	const uint8_t *table = pattern_table();
	while (len > 0) {
		uint32_t n = len < 256 ? len : 256;
		memcpy(dst, table + ((seq + offset) & 255), n);
		dst += n;
		offset += n;
		len -= n;
	}
}

void memif_app_checker_init(struct memif_app_checker *checker, enum memif_app_verify verify, uint32_t expected_len)
{
	memset(checker, 0, sizeof(*checker));
	checker->verify = verify;
	checker->expected_len = expected_len;
}

static void checker_error(struct memif_app_checker *checker, const char *fmt, uint64_t a, uint64_t b)
{
	if (checker->first_error[0] == '\0')
		snprintf(checker->first_error, sizeof(checker->first_error), fmt, a, b);
}

/* frame_bad values */
enum { FRAME_OK, FRAME_CORRUPT, FRAME_FOREIGN };

static void checker_complete(struct memif_app_checker *checker)
{
	uint32_t len = checker->offset;
	checker->frames++;
	checker->bytes += len;
	if (checker->expected_len != 0 && len != checker->expected_len) {
		checker->corrupt++;
		checker_error(checker, "frame %" PRIu64 " has %" PRIu64 " bytes", checker->frames - 1, len);
		return;
	}
	if (checker->verify == MEMIF_APP_VERIFY_NONE)
		return;
	if (len < MEMIF_APP_FRAME_HEADER || checker->frame_bad == FRAME_FOREIGN) {
		checker->foreign++;
		checker_error(checker, "frame %" PRIu64 " (%" PRIu64 " bytes) is not a test frame", checker->frames - 1,
			      len);
		return;
	}
	uint64_t seq = get_le(checker->header + 18, 8);
	uint32_t declared = (uint32_t)get_le(checker->header + 26, 4);
	if (declared != len) {
		checker->frame_bad = FRAME_CORRUPT;
		checker_error(checker, "sequence %" PRIu64 ": length field %" PRIu64 " differs", seq, declared);
	}
	if (checker->frame_bad == FRAME_CORRUPT)
		checker->corrupt++;
	if (seq == checker->next_seq) {
		checker->next_seq++;
	} else if (seq > checker->next_seq) {
		checker_error(checker, "sequence %" PRIu64 " arrived when %" PRIu64 " was expected", seq,
			      checker->next_seq);
		checker->lost += seq - checker->next_seq;
		checker->next_seq = seq + 1;
	} else {
		checker_error(checker, "sequence %" PRIu64 " arrived after %" PRIu64 " (reordered or duplicated)", seq,
			      checker->next_seq - 1);
		checker->reordered++;
	}
}

/* The common case of --verify header: a whole frame in one buffer. Checks the header in place
 * (the same checks as the general path below, without copying it). */
static void checker_feed_whole_frame_header(struct memif_app_checker *checker, const uint8_t *data, uint32_t len)
{
	static const uint8_t magic[6] = {MEMIF_APP_ETHERTYPE >> 8, MEMIF_APP_ETHERTYPE & 0xff, 'S', 'D', 'P', 'M'};
	if (memcmp(data + 12, magic, sizeof(magic)) != 0)
		checker->frame_bad = FRAME_FOREIGN;
	else
		memcpy(checker->header + 18, data + 18, MEMIF_APP_FRAME_HEADER - 18); /* sequence, length */
	checker->offset = len;
	checker_complete(checker);
	checker->offset = 0;
	checker->frame_bad = FRAME_OK;
}

void memif_app_checker_feed(struct memif_app_checker *checker, const uint8_t *data, uint32_t len, int last)
{
	if (checker->verify == MEMIF_APP_VERIFY_HEADER && last && checker->offset == 0 &&
	    len >= MEMIF_APP_FRAME_HEADER) {
		checker_feed_whole_frame_header(checker, data, len);
		return;
	}
	if (checker->verify != MEMIF_APP_VERIFY_NONE) {
		uint32_t header_bytes = 0; /* bytes of this buffer that belong to the header */
		if (checker->offset < MEMIF_APP_FRAME_HEADER) {
			uint32_t n = MEMIF_APP_FRAME_HEADER - checker->offset;
			header_bytes = n < len ? n : len;
			memcpy(checker->header + checker->offset, data, header_bytes);
			checker->offset += header_bytes;
			if (checker->offset == MEMIF_APP_FRAME_HEADER &&
			    (checker->header[12] != (MEMIF_APP_ETHERTYPE >> 8) ||
			     checker->header[13] != (MEMIF_APP_ETHERTYPE & 0xff) ||
			     memcmp(checker->header + 14, "SDPM", 4) != 0))
				checker->frame_bad = FRAME_FOREIGN;
		}
		uint32_t pos = header_bytes;
		if (checker->verify == MEMIF_APP_VERIFY_FULL && checker->frame_bad == FRAME_OK && pos < len) {
			uint64_t seq = get_le(checker->header + 18, 8);
			const uint8_t *table = pattern_table();
			uint32_t offset = checker->offset;
			while (pos < len) {
				uint32_t n = len - pos < 256 ? len - pos : 256;
				if (memcmp(data + pos, table + ((seq + offset) & 255), n) != 0) {
					checker->frame_bad = FRAME_CORRUPT;
					checker_error(checker,
						      "sequence %" PRIu64 ": payload differs near byte %" PRIu64, seq,
						      offset);
					break;
				}
				pos += n;
				offset += n;
			}
		}
		checker->offset += len - header_bytes;
	} else {
		checker->offset += len;
	}
	if (last) {
		checker_complete(checker);
		checker->offset = 0;
		checker->frame_bad = FRAME_OK;
	}
}

void memif_app_checker_finish(struct memif_app_checker *checker, uint64_t total)
{
	if (checker->verify == MEMIF_APP_VERIFY_NONE) {
		if (checker->frames < total)
			checker->lost += total - checker->frames;
		return;
	}
	if (checker->next_seq < total) {
		checker_error(checker, "%" PRIu64 " frames from sequence %" PRIu64 " on never arrived",
			      total - checker->next_seq, checker->next_seq);
		checker->lost += total - checker->next_seq;
	}
}

int memif_app_checker_failed(const struct memif_app_checker *checker)
{
	return checker->lost != 0 || checker->reordered != 0 || checker->corrupt != 0 || checker->foreign != 0;
}

void memif_app_checker_report(const struct memif_app_checker *checker, FILE *out, const char *who)
{
	fprintf(out,
		"%s: frames=%" PRIu64 " bytes=%" PRIu64 " lost=%" PRIu64 " reordered=%" PRIu64 " corrupt=%" PRIu64
		" foreign=%" PRIu64 "\n",
		who, checker->frames, checker->bytes, checker->lost, checker->reordered, checker->corrupt,
		checker->foreign);
	if (checker->first_error[0] != '\0')
		fprintf(out, "%s: first error: %s\n", who, checker->first_error);
}
