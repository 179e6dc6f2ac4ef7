/*
 * The memif packet generator and packet sink (see memif_app.h). Both poll their queue on one
 * thread; the sink can also wait for interrupts.
 */
#define _GNU_SOURCE
#include "memif_app.h"
#include "memif_app_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int parse_verify(const char *prog, const char *arg, enum memif_app_verify *out)
{
	if (strcmp(arg, "full") == 0)
		*out = MEMIF_APP_VERIFY_FULL;
	else if (strcmp(arg, "header") == 0)
		*out = MEMIF_APP_VERIFY_HEADER;
	else if (strcmp(arg, "none") == 0)
		*out = MEMIF_APP_VERIFY_NONE;
	else {
		fprintf(stderr, "%s: bad --verify '%s' (expected full, header or none)\n", prog, arg);
		return -1;
	}
	return 0;
}

/* Control events (connect, disconnect) are looked at every few milliseconds: memif_poll_event is a
 * system call, and a busy-polling datapath makes none. */
#define SERVICE_PERIOD_S 0.005

/* A spin-wait hint while the ring is full or empty: the peer's cache line is then left alone for a
 * moment, so the peer's own index updates are not slowed by our reads. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* How long the generator waits after the ring had no room for a whole burst. Asking again at once
 * keeps pulling the receiver's tail index and the buffers it has just released over to this core,
 * which slows the receiver down: a DPDK receiver copying 1500-byte frames ran about a third slower
 * against a generator that polled a full ring flat out (docs/performance.md). */
#define RING_FULL_BACKOFF_S 5e-6

static void ring_full_backoff(void)
{
	double until = memif_app_now() + RING_FULL_BACKOFF_S;
	do
		cpu_relax();
	while (memif_app_now() < until);
}

/* Receives what is on rx queue 0 (one burst), feeds it to checker and returns the buffers.
 * Returns the number of buffers received, or -1 on an error (message printed). */
static int receive_burst(struct memif_app *app, memif_buffer_t *bufs, uint16_t burst, struct memif_app_checker *checker)
{
	uint16_t received = 0;
	int err = memif_rx_burst(app->conn, 0, bufs, burst, &received);
	if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_NOBUF) {
		if (!app->connected)
			return 0; /* the disconnect is reported by memif_app_service */
		fprintf(stderr, "%s: memif_rx_burst: %s\n", app->prog, memif_strerror(err));
		return -1;
	}
	for (uint16_t i = 0; i < received; i++)
		memif_app_checker_feed(checker, bufs[i].data, bufs[i].len, !(bufs[i].flags & MEMIF_BUFFER_FLAG_NEXT));
	if (received > 0) {
		err = memif_refill_queue(app->conn, 0, received, 0);
		if (err != MEMIF_ERR_SUCCESS) {
			fprintf(stderr, "%s: memif_refill_queue: %s\n", app->prog, memif_strerror(err));
			return -1;
		}
	}
	return received;
}

/* ------------------------------------------------------------------------------------------ */
/* Generator */

static const char gen_usage[] =
    "usage: %s [options]\n"
    "Sends numbered Ethernet frames with a checkable pattern on a memif interface (queue 0).\n\n"
    "  --size N          frame length in bytes, 32 to 16384 (default 64; larger than a buffer: chained)\n"
    "  --count N         frames to send (default 0: until --duration or a signal)\n"
    "  --duration S      stop sending after S seconds (default 0: no limit)\n"
    "  --rate PPS        frames per second (default 0: as fast as possible)\n"
    "  --burst N         frames per memif_tx_burst, 1 to 256 (default 32)\n"
    "  --echo            the peer reflects frames: receive and check them (count, order, content)\n"
    "  --window N        --echo: frames in flight at most (default 256, at most half a ring)\n"
    "  --verify MODE     --echo: full (default), header (sequence only) or none (count only)\n"
    "  --idle-timeout S  --echo: fail when no echo arrives for S seconds (default 3)\n"
    "  --interval S      print the rate every S seconds (default 0: only at the end)\n"
    "\n" MEMIF_APP_COMMON_USAGE;

struct gen_options {
	uint32_t size;
	uint64_t count;
	double duration;
	uint64_t rate;
	uint16_t burst;
	int echo;
	uint64_t window;
	enum memif_app_verify verify;
	double idle_timeout;
	double interval;
};

static int gen_parse(int argc, char **argv, struct gen_options *gen, struct memif_app_options *conn)
{
	static const struct option long_options[] = {{"size", required_argument, 0, 's'},
						     {"count", required_argument, 0, 'c'},
						     {"duration", required_argument, 0, 'd'},
						     {"rate", required_argument, 0, 'r'},
						     {"burst", required_argument, 0, 'b'},
						     {"echo", no_argument, 0, 'e'},
						     {"window", required_argument, 0, 'w'},
						     {"verify", required_argument, 0, 'v'},
						     {"idle-timeout", required_argument, 0, 'I'},
						     {"interval", required_argument, 0, 'i'},
						     MEMIF_APP_COMMON_LONG_OPTIONS,
						     {0, 0, 0, 0}};
	const char *prog = argv[0];
	uint64_t value;
	memset(gen, 0, sizeof(*gen));
	gen->size = 64;
	gen->burst = 32;
	gen->window = 256;
	gen->verify = MEMIF_APP_VERIFY_FULL;
	gen->idle_timeout = 3.0;
	memif_app_default_options(conn);
	optind = 0; /* callable more than once in a process (the CLI) */
	for (;;) {
		int opt = getopt_long(argc, argv, "h", long_options, NULL);
		if (opt == -1)
			break;
		int bad = 0;
		switch (opt) {
		case 's':
			bad = memif_app_parse_u64(prog, "--size", optarg, MEMIF_APP_FRAME_MIN, MEMIF_APP_MAX_FRAME,
						  &value);
			gen->size = (uint32_t)value;
			break;
		case 'c':
			bad = memif_app_parse_u64(prog, "--count", optarg, 0, UINT64_MAX / 2, &gen->count);
			break;
		case 'd':
			bad = memif_app_parse_seconds(prog, "--duration", optarg, &gen->duration);
			break;
		case 'r':
			bad = memif_app_parse_u64(prog, "--rate", optarg, 0, 1000000000, &gen->rate);
			break;
		case 'b':
			bad = memif_app_parse_u64(prog, "--burst", optarg, 1, MEMIF_APP_MAX_BURST, &value);
			gen->burst = (uint16_t)value;
			break;
		case 'e':
			gen->echo = 1;
			break;
		case 'w':
			bad = memif_app_parse_u64(prog, "--window", optarg, 1, 1 << 14, &gen->window);
			break;
		case 'v':
			bad = parse_verify(prog, optarg, &gen->verify);
			break;
		case 'I':
			bad = memif_app_parse_seconds(prog, "--idle-timeout", optarg, &gen->idle_timeout);
			break;
		case 'i':
			bad = memif_app_parse_seconds(prog, "--interval", optarg, &gen->interval);
			break;
		case 'h':
			printf(gen_usage, prog);
			return 1;
		default: {
			int common = memif_app_parse_common(conn, prog, opt, optarg);
			if (common == 0)
				break;
			if (common > 0)
				fprintf(stderr, gen_usage, prog);
			return -1;
		}
		}
		if (bad)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return -1;
	}
	return 0;
}

/* Buffers are claimed for writing (prefetch for write, every cache line) this many buffers before
 * they are filled. A receiver that reads whole frames (DPDK's copies them into mbufs) holds every
 * line of a buffer, and each line the generator then writes waits for that copy to be invalidated
 * on the other core; claimed ahead, those waits overlap with writing the buffers before. Against
 * testpmd's receive at 1500 bytes this gained about 15 % (docs/performance.md). */
#define PREFETCH_AHEAD 2

static void claim_for_writing(const memif_buffer_t *b, uint32_t size)
{
	uint32_t len = b->len < size ? b->len : size;
	for (uint32_t line = 0; line < len; line += 64)
		__builtin_prefetch((const uint8_t *)b->data + line, 1);
}

/* Fills the frames that memif_buffer_alloc returned in bufs[0, nbufs) (chains: NEXT on all but
 * the last buffer of a frame). Returns the number of frames, or -1 if a chain is too short. */
static int gen_fill(struct memif_app *app, memif_buffer_t *bufs, uint16_t nbufs, uint64_t first_seq, uint32_t size)
{
	int frames = 0;
	uint32_t offset = 0;
	for (uint16_t i = 1; i < PREFETCH_AHEAD && i < nbufs; i++)
		claim_for_writing(&bufs[i], size);
	for (uint16_t i = 0; i < nbufs; i++) {
		memif_buffer_t *b = &bufs[i];
		if (i + PREFETCH_AHEAD < nbufs)
			claim_for_writing(&bufs[i + PREFETCH_AHEAD], size);
		uint32_t len = size - offset < b->len ? size - offset : b->len;
		memif_app_frame_write(first_seq + (uint64_t)frames, size, offset, b->data, len);
		b->len = len;
		offset += len;
		if (!(b->flags & MEMIF_BUFFER_FLAG_NEXT)) {
			if (offset != size) {
				fprintf(stderr, "%s: memif_buffer_alloc gave %u of %u bytes for a frame\n", app->prog,
					offset, size);
				return -1;
			}
			frames++;
			offset = 0;
		}
	}
	if (offset != 0) {
		fprintf(stderr, "%s: memif_buffer_alloc returned an unterminated chain\n", app->prog);
		return -1;
	}
	return frames;
}

int memif_app_gen_main(int argc, char **argv)
{
	struct gen_options gen;
	struct memif_app_options conn;
	int parsed = gen_parse(argc, argv, &gen, &conn);
	if (parsed != 0)
		return parsed > 0 ? 0 : 2;
	const char *prog = argv[0];

	/* memif_buffer_alloc fills at most as many buffers as it is asked for (whole frames only). */
	size_t max_bufs = (size_t)gen.burst * MEMIF_APP_MAX_SEGMENTS;
	memif_buffer_t *tx_bufs = calloc(max_bufs, sizeof(*tx_bufs));
	memif_buffer_t *rx_bufs = calloc(MEMIF_APP_MAX_BURST, sizeof(*rx_bufs));
	if (tx_bufs == NULL || rx_bufs == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		free(tx_bufs);
		free(rx_bufs);
		return 1;
	}

	memif_app_install_signal_handlers();
	struct memif_app app;
	int status = 1;
	if (memif_app_open(&app, prog, &conn) != 0)
		goto out_free;
	if (memif_app_wait_connected(&app) != 0)
		goto out_close;
	uint16_t buffers_per_frame = memif_app_buffers_per_frame(&app, gen.size);
	if (buffers_per_frame > MEMIF_APP_MAX_SEGMENTS) {
		fprintf(stderr, "%s: a %u-byte frame needs more than %d buffers\n", prog, gen.size,
			MEMIF_APP_MAX_SEGMENTS);
		goto out_close;
	}

	if (gen.echo) {
		/* The reflector drops what its tx ring cannot take: keep what is in flight well within one
		 * ring (counted in buffers, since long frames are chained). */
		uint64_t ring_slots = 1u << (conn.log2_ring_size != 0 ? conn.log2_ring_size : 10);
		uint64_t limit = ring_slots / buffers_per_frame / 2;
		if (gen.window > limit)
			gen.window = limit > 0 ? limit : 1;
	}
	struct memif_app_checker echo;
	memif_app_checker_init(&echo, gen.verify, gen.size);
	uint64_t sent = 0, sent_bytes = 0;
	double start = memif_app_now(), now = start, last_echo = start, next_report = start + gen.interval;
	double next_service = start + SERVICE_PERIOD_S;
	uint64_t reported_sent = 0;
	unsigned iteration = 0;
	int failed = 0;
	for (;;) {
		int sending = !(gen.count != 0 && sent >= gen.count) &&
			      !(gen.duration > 0 && now - start >= gen.duration) && !memif_app_stop_requested;
		if (!sending && (!gen.echo || echo.frames >= sent || memif_app_stop_requested))
			break;

		uint64_t want = sending ? gen.burst : 0;
		if (gen.count != 0 && want > gen.count - sent)
			want = gen.count - sent;
		if (gen.rate != 0) {
			uint64_t allowed = (uint64_t)((now - start) * (double)gen.rate) + 1;
			want = allowed > sent ? (want < allowed - sent ? want : allowed - sent) : 0;
		}
		if (gen.echo) {
			uint64_t in_flight = sent - echo.frames;
			want = in_flight >= gen.window
				   ? 0
				   : (want < gen.window - in_flight ? want : gen.window - in_flight);
		}
		if (want > 0) {
			uint16_t nbufs = 0;
			int err = memif_buffer_alloc(app.conn, 0, tx_bufs, (uint16_t)(want * buffers_per_frame), &nbufs,
						     (uint16_t)gen.size);
			if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_NOBUF_RING && app.connected) {
				/* (a disconnect is reported by memif_app_service) */
				fprintf(stderr, "%s: memif_buffer_alloc: %s\n", prog, memif_strerror(err));
				failed = 1;
				break;
			}
			if (nbufs > 0) {
				int frames = gen_fill(&app, tx_bufs, nbufs, sent, gen.size);
				uint16_t tx = 0;
				if (frames < 0) {
					failed = 1;
					break;
				}
				err = memif_tx_burst(app.conn, 0, tx_bufs, nbufs, &tx);
				if (err != MEMIF_ERR_SUCCESS || tx != nbufs) {
					fprintf(stderr, "%s: memif_tx_burst sent %u of %u buffers: %s\n", prog, tx,
						nbufs, memif_strerror(err));
					failed = 1;
					break;
				}
				sent += (uint64_t)frames;
				sent_bytes += (uint64_t)frames * gen.size;
			}
			if (nbufs < want * buffers_per_frame && !gen.echo)
				ring_full_backoff();
		}
		if (gen.echo) {
			uint64_t before = echo.frames;
			if (receive_burst(&app, rx_bufs, MEMIF_APP_MAX_BURST, &echo) < 0) {
				failed = 1;
				break;
			}
			if (echo.frames != before)
				last_echo = now;
		}
		/* The clock every 16 rounds (or when waiting on it), control events every few ms: both
		 * cost more than an empty ring poll. */
		if ((++iteration & 15) == 0 || want == 0) {
			now = memif_app_now();
			if (now >= next_service) {
				next_service = now + SERVICE_PERIOD_S;
				if (memif_app_service(&app) != 0) {
					failed = 1;
					break;
				}
			}
			if (gen.echo && sent > echo.frames && now - last_echo > gen.idle_timeout) {
				fprintf(stderr, "%s: no echo for %.1f s; %" PRIu64 " frames outstanding\n", prog,
					gen.idle_timeout, sent - echo.frames);
				break;
			}
			if (gen.interval > 0 && now >= next_report) {
				printf("%s: t=%.1f tx_pps=%.0f sent=%" PRIu64 "\n", prog, now - start,
				       (double)(sent - reported_sent) / (now - next_report + gen.interval), sent);
				fflush(stdout);
				reported_sent = sent;
				next_report = now + gen.interval;
			}
		}
	}
	double elapsed = memif_app_now() - start;
	if (!gen.echo && !failed)
		memif_app_drain_tx(&app, 2.0);

	printf("%s: sent=%" PRIu64 " bytes=%" PRIu64 " seconds=%.3f pps=%.0f gbps=%.3f\n", prog, sent, sent_bytes,
	       elapsed, elapsed > 0 ? (double)sent / elapsed : 0.0,
	       elapsed > 0 ? (double)sent_bytes * 8e-9 / elapsed : 0.0);
	if (gen.echo) {
		memif_app_checker_finish(&echo, sent);
		char who[64];
		snprintf(who, sizeof(who), "%s: echo", prog);
		memif_app_checker_report(&echo, stdout, who);
		if (memif_app_checker_failed(&echo))
			failed = 1;
	}
	if (gen.count != 0 && sent != gen.count) {
		fprintf(stderr, "%s: sent %" PRIu64 " of %" PRIu64 " frames\n", prog, sent, gen.count);
		failed = 1;
	}
	status = failed ? 1 : 0;
out_close:
	memif_app_close(&app);
out_free:
	free(tx_bufs);
	free(rx_bufs);
	fflush(stdout);
	return status;
}

/* ------------------------------------------------------------------------------------------ */
/* Sink */

static const char sink_usage[] =
    "usage: %s [options]\n"
    "Receives frames on a memif interface (queue 0), checks count, order and content, and reports\n"
    "the rate and any loss.\n\n"
    "  --count N         frames expected; stop once received (default 0: until --duration or a signal)\n"
    "  --size N          expected frame length (default 0: any)\n"
    "  --verify MODE     full (default: sequence and pattern), header (sequence only) or none (count only,\n"
    "                    any frames, e.g. from testpmd txonly)\n"
    "  --duration S      stop after S seconds (default 0: no limit)\n"
    "  --idle-timeout S  stop when nothing arrives for S seconds after the first frame (default 3 with\n"
    "                    --count, else 0: never)\n"
    "  --interval S      print the rate every S seconds (default 0: only at the end)\n"
    "  --burst N         buffers per memif_rx_burst, 1 to 256 (default 256)\n"
    "\n" MEMIF_APP_COMMON_USAGE;

struct sink_state {
	struct memif_app_checker checker;
	memif_buffer_t *bufs;
	uint16_t burst;
	int failed;
	double first_frame, last_frame;
};

/* Interrupt mode: drain the queue whenever its eventfd fires. */
static int sink_on_interrupt(struct memif_app *app, uint16_t qid)
{
	struct sink_state *state = app->user;
	(void)qid;
	int received;
	do {
		received = receive_burst(app, state->bufs, state->burst, &state->checker);
		if (received < 0)
			state->failed = 1;
	} while (received == state->burst);
	return 0;
}

int memif_app_sink_main(int argc, char **argv)
{
	static const struct option long_options[] = {{"count", required_argument, 0, 'c'},
						     {"size", required_argument, 0, 's'},
						     {"verify", required_argument, 0, 'v'},
						     {"duration", required_argument, 0, 'd'},
						     {"idle-timeout", required_argument, 0, 'I'},
						     {"interval", required_argument, 0, 'i'},
						     {"burst", required_argument, 0, 'b'},
						     MEMIF_APP_COMMON_LONG_OPTIONS,
						     {0, 0, 0, 0}};
	const char *prog = argv[0];
	uint64_t count = 0, value = 0;
	uint32_t size = 0;
	enum memif_app_verify verify = MEMIF_APP_VERIFY_FULL;
	double duration = 0, idle_timeout = -1, interval = 0;
	uint16_t burst = MEMIF_APP_MAX_BURST;
	struct memif_app_options conn;
	memif_app_default_options(&conn);
	optind = 0;
	for (;;) {
		int opt = getopt_long(argc, argv, "h", long_options, NULL);
		if (opt == -1)
			break;
		int bad = 0;
		switch (opt) {
		case 'c':
			bad = memif_app_parse_u64(prog, "--count", optarg, 0, UINT64_MAX / 2, &count);
			break;
		case 's':
			bad = memif_app_parse_u64(prog, "--size", optarg, 0, MEMIF_APP_MAX_FRAME, &value);
			size = (uint32_t)value;
			break;
		case 'v':
			bad = parse_verify(prog, optarg, &verify);
			break;
		case 'd':
			bad = memif_app_parse_seconds(prog, "--duration", optarg, &duration);
			break;
		case 'I':
			bad = memif_app_parse_seconds(prog, "--idle-timeout", optarg, &idle_timeout);
			break;
		case 'i':
			bad = memif_app_parse_seconds(prog, "--interval", optarg, &interval);
			break;
		case 'b':
			bad = memif_app_parse_u64(prog, "--burst", optarg, 1, MEMIF_APP_MAX_BURST, &value);
			burst = (uint16_t)value;
			break;
		case 'h':
			printf(sink_usage, prog);
			return 0;
		default: {
			int common = memif_app_parse_common(&conn, prog, opt, optarg);
			if (common == 0)
				break;
			if (common > 0)
				fprintf(stderr, sink_usage, prog);
			return 2;
		}
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return 2;
	}
	if (idle_timeout < 0)
		idle_timeout = count != 0 ? 3.0 : 0.0;

	struct sink_state state;
	memset(&state, 0, sizeof(state));
	memif_app_checker_init(&state.checker, verify, size);
	state.burst = burst;
	state.bufs = calloc(burst, sizeof(*state.bufs));
	if (state.bufs == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}

	memif_app_install_signal_handlers();
	struct memif_app app;
	int status = 1;
	if (memif_app_open(&app, prog, &conn) != 0)
		goto out_free;
	app.user = &state;
	if (conn.interrupt)
		app.on_rx_interrupt = sink_on_interrupt;
	if (memif_app_wait_connected(&app) != 0)
		goto out_close;

	double start = memif_app_now(), now = start, next_report = start + interval;
	double next_service = start + SERVICE_PERIOD_S;
	uint64_t reported_frames = 0;
	unsigned iteration = 0;
	state.last_frame = start;
	while (!memif_app_stop_requested && !state.failed) {
		uint64_t before = state.checker.frames;
		int received = 0;
		if (conn.interrupt) {
			memif_poll_event(1); /* runs sink_on_interrupt */
			if (app.link_lost) {
				fprintf(stderr, "%s: the peer disconnected\n", prog);
				state.failed = 1;
				break;
			}
		} else {
			received = receive_burst(&app, state.bufs, burst, &state.checker);
			if (received < 0) {
				state.failed = 1;
				break;
			}
			if (received == 0)
				cpu_relax(); /* the ring is empty */
		}
		if (state.checker.frames != before) {
			if (before == 0)
				state.first_frame = memif_app_now();
			state.last_frame = now;
		}
		if (count != 0 && state.checker.frames >= count)
			break;
		if ((++iteration & 15) == 0 || conn.interrupt) {
			now = memif_app_now();
			if (state.checker.frames != before)
				state.last_frame = now;
			if (!conn.interrupt && now >= next_service) {
				next_service = now + SERVICE_PERIOD_S;
				if (memif_app_service(&app) != 0) {
					state.failed = 1;
					break;
				}
			}
			if (duration > 0 && now - start >= duration)
				break;
			if (idle_timeout > 0 && state.checker.frames > 0 && now - state.last_frame > idle_timeout)
				break;
			if (idle_timeout > 0 && count != 0 && state.checker.frames == 0 &&
			    now - start > idle_timeout + 10) {
				fprintf(stderr, "%s: no frame arrived\n", prog);
				break;
			}
			if (interval > 0 && now >= next_report) {
				printf("%s: t=%.1f rx_pps=%.0f frames=%" PRIu64 "\n", prog, now - start,
				       (double)(state.checker.frames - reported_frames) /
					   (now - next_report + interval),
				       state.checker.frames);
				fflush(stdout);
				reported_frames = state.checker.frames;
				next_report = now + interval;
			}
		}
	}
	double end = state.checker.frames > 0 ? memif_app_now() : start;
	if (count != 0 && state.checker.frames < count && state.checker.frames > 0)
		end = state.last_frame;
	double elapsed = state.checker.frames > 0 ? end - state.first_frame : 0.0;
	if (count != 0)
		memif_app_checker_finish(&state.checker, count);
	printf("%s: frames=%" PRIu64 " bytes=%" PRIu64 " seconds=%.3f pps=%.0f gbps=%.3f\n", prog, state.checker.frames,
	       state.checker.bytes, elapsed, elapsed > 0 ? (double)state.checker.frames / elapsed : 0.0,
	       elapsed > 0 ? (double)state.checker.bytes * 8e-9 / elapsed : 0.0);
	memif_app_checker_report(&state.checker, stdout, prog);
	int failed = state.failed || memif_app_checker_failed(&state.checker);
	/* A foreign source (--verify none) streams on: more than --count is fine there. */
	if (count != 0 &&
	    (state.checker.frames < count || (verify != MEMIF_APP_VERIFY_NONE && state.checker.frames != count))) {
		fprintf(stderr, "%s: received %" PRIu64 " of %" PRIu64 " frames\n", prog, state.checker.frames, count);
		failed = 1;
	}
	status = failed ? 1 : 0;
out_close:
	memif_app_close(&app);
out_free:
	free(state.bufs);
	fflush(stdout);
	return status;
}
