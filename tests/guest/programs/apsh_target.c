// apsh_target: a process with known, checkable features for App Shield's test guest. It gives
// itself a command name, starts three named threads, leaves a marker on the heap, maps an
// anonymous read+write+execute page that starts with code (bait for injection detection), maps a
// file at a non-zero offset, opens sockets, writes what it did to an info file and sleeps.
//
// Usage: apsh_target --comm NAME --info FILE [--tcp-port N] [--udp-port N] [--tcp6-port N]
//                    [--map-file PATH] [--uid N --gid N] [--patch-on-usr1] [MARKER...]
// With --uid/--gid it drops to those ids once its sockets are open. With --patch-on-usr1, SIGUSR1
// makes it overwrite a byte of its own code (a function it never calls): its executable pages no
// longer match the file, as attestation should notice.
// Arguments that do not start with "--" are markers for command-line checks and are ignored.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { THREAD_COUNT = 3, PAGE = 4096 };

static const char HEAP_MARKER[] = "APSH_HEAP_MARKER_5e1f0d2c";
static const char RWX_MARKER[] = "APSH_RWX_MARKER_9b7c3e41";
// nop; nop; ret: the RWX page is callable code.
static const unsigned char RWX_CODE[] = {0x90, 0x90, 0xc3};

struct options {
	const char *comm;
	const char *info_path;
	const char *map_file;
	int tcp_port;
	int udp_port;
	int tcp6_port;
	long uid; // -1: keep
	long gid;
	int patch_on_usr1;
};

struct thread_slot {
	int index;
	pid_t tid;
	pthread_mutex_t *lock;
	pthread_cond_t *started;
};

static void die(const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	fputs("apsh_target: ", stderr);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(1);
}

// Never called: SIGUSR1 (--patch-on-usr1) overwrites its first byte.
__attribute__((noinline, used)) static void apsh_patch_victim(void)
{
	__asm__ volatile("nop");
}

static void patch_own_text(int signo)
{
	(void)signo;
	const uintptr_t address = (uintptr_t)apsh_patch_victim;
	void *page = (void *)(address & ~(uintptr_t)(PAGE - 1));
	// mprotect is async-signal-safe; the page becomes a private copy that differs from the file.
	if (mprotect(page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
		*(volatile unsigned char *)address ^= 0xff;
		mprotect(page, PAGE, PROT_READ | PROT_EXEC);
	}
}

static int parse_port(const char *text)
{
	char *end = NULL;
	long value = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || value < 1 || value > 65535)
		die("bad port number '%s' (1..65535)", text);
	return (int)value;
}

static long parse_id(const char *text)
{
	char *end = NULL;
	long value = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || value < 0 || value > 65534)
		die("bad uid/gid '%s' (0..65534)", text);
	return value;
}

static struct options parse_options(int argc, char **argv)
{
	struct options opts = {.uid = -1, .gid = -1};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0)
			continue; // a marker
		if (strcmp(arg, "--patch-on-usr1") == 0) {
			opts.patch_on_usr1 = 1;
			continue;
		}
		if (i + 1 >= argc)
			die("option %s needs a value", arg);
		const char *value = argv[++i];
		if (strcmp(arg, "--comm") == 0)
			opts.comm = value;
		else if (strcmp(arg, "--info") == 0)
			opts.info_path = value;
		else if (strcmp(arg, "--map-file") == 0)
			opts.map_file = value;
		else if (strcmp(arg, "--tcp-port") == 0)
			opts.tcp_port = parse_port(value);
		else if (strcmp(arg, "--udp-port") == 0)
			opts.udp_port = parse_port(value);
		else if (strcmp(arg, "--tcp6-port") == 0)
			opts.tcp6_port = parse_port(value);
		else if (strcmp(arg, "--uid") == 0)
			opts.uid = parse_id(value);
		else if (strcmp(arg, "--gid") == 0)
			opts.gid = parse_id(value);
		else
			die("unknown option %s", arg);
	}
	if (!opts.comm || !opts.info_path)
		die("usage: apsh_target --comm NAME --info FILE [--tcp-port N] [--udp-port N] [--tcp6-port N] "
		    "[--map-file PATH] [--uid N --gid N] [--patch-on-usr1] [MARKER...]");
	if ((opts.uid < 0) != (opts.gid < 0))
		die("--uid and --gid go together");
	if (strlen(opts.comm) > 15)
		die("--comm '%s' is longer than the kernel's 15 characters", opts.comm);
	return opts;
}

static void *thread_main(void *arg)
{
	struct thread_slot *slot = arg;
	char name[16];
	snprintf(name, sizeof name, "apsh_thr_%d", slot->index);
	prctl(PR_SET_NAME, name);
	pthread_mutex_lock(slot->lock);
	slot->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_signal(slot->started);
	pthread_mutex_unlock(slot->lock);
	for (;;)
		pause();
	return NULL;
}

static int bound_socket(int family, int type, const char *address, int port)
{
	int fd = socket(family, type, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	int rc;
	if (family == AF_INET6) {
		struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
		inet_pton(AF_INET6, address, &sa.sin6_addr);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
		rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	} else {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		inet_pton(AF_INET, address, &sa.sin_addr);
		rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	}
	if (rc != 0)
		die("bind %s port %d: %s", address, port, strerror(errno));
	if (type == SOCK_STREAM && listen(fd, 8) != 0)
		die("listen %s port %d: %s", address, port, strerror(errno));
	return fd;
}

// A client connected to our own listener, and the accepted end: one ESTABLISHED pair.
static void connect_loopback_pair(int listener, int port, FILE *info)
{
	int client = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (client < 0 || connect(client, (struct sockaddr *)&sa, sizeof sa) != 0)
		die("connect 127.0.0.1:%d: %s", port, strerror(errno));
	int accepted = accept(listener, NULL, NULL);
	if (accepted < 0)
		die("accept: %s", strerror(errno));
	struct sockaddr_in local;
	socklen_t len = sizeof local;
	getsockname(client, (struct sockaddr *)&local, &len);
	fprintf(info, "tcp_pair=127.0.0.1:%d 127.0.0.1:%d\n", ntohs(local.sin_port), port);
}

int main(int argc, char **argv)
{
	struct options opts = parse_options(argc, argv);
	if (prctl(PR_SET_NAME, opts.comm) != 0)
		die("prctl(PR_SET_NAME): %s", strerror(errno));
	if (opts.patch_on_usr1 && signal(SIGUSR1, patch_own_text) == SIG_ERR)
		die("signal(SIGUSR1): %s", strerror(errno));

	char tmp_path[4096];
	snprintf(tmp_path, sizeof tmp_path, "%s.tmp", opts.info_path);
	FILE *info = fopen(tmp_path, "w");
	if (!info)
		die("cannot write %s: %s", tmp_path, strerror(errno));
	fprintf(info, "pid=%d\ncomm=%s\n", getpid(), opts.comm);

	// Small enough to come from the brk heap rather than its own mapping.
	char *heap_marker = malloc(256);
	if (!heap_marker)
		die("malloc failed");
	snprintf(heap_marker, 256, "%s", HEAP_MARKER);
	fprintf(info, "heap_marker=0x%lx\n", (unsigned long)(uintptr_t)heap_marker);

	unsigned char *rwx = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rwx == MAP_FAILED)
		die("mmap RWX: %s", strerror(errno));
	memcpy(rwx, RWX_CODE, sizeof RWX_CODE);
	memcpy(rwx + sizeof RWX_CODE, RWX_MARKER, sizeof RWX_MARKER);
	((void (*)(void))(uintptr_t)rwx)(); // it is code: run it once
	fprintf(info, "rwx=0x%lx-0x%lx\n", (unsigned long)(uintptr_t)rwx, (unsigned long)(uintptr_t)rwx + PAGE);

	if (opts.map_file) {
		int fd = open(opts.map_file, O_RDONLY);
		if (fd < 0)
			die("open %s: %s", opts.map_file, strerror(errno));
		// Offset one page in, so readers must report the file offset, not 0.
		void *mapped = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, PAGE);
		if (mapped == MAP_FAILED)
			die("mmap %s at offset %d: %s", opts.map_file, PAGE, strerror(errno));
		close(fd);
		// Touch it: an untouched file page has no page-table entry for readers to follow.
		if (((const volatile char *)mapped)[0] != 'A')
			die("%s does not hold the expected page at offset %d", opts.map_file, PAGE);
		fprintf(info, "file_map=0x%lx-0x%lx %d %s\n", (unsigned long)(uintptr_t)mapped,
			(unsigned long)(uintptr_t)mapped + PAGE, PAGE, opts.map_file);
	}

	if (opts.tcp_port) {
		int listener = bound_socket(AF_INET, SOCK_STREAM, "0.0.0.0", opts.tcp_port);
		fprintf(info, "tcp_listen=0.0.0.0:%d\n", opts.tcp_port);
		connect_loopback_pair(listener, opts.tcp_port, info);
	}
	if (opts.udp_port) {
		bound_socket(AF_INET, SOCK_DGRAM, "127.0.0.1", opts.udp_port);
		fprintf(info, "udp_bound=127.0.0.1:%d\n", opts.udp_port);
	}
	if (opts.tcp6_port) {
		bound_socket(AF_INET6, SOCK_STREAM, "::", opts.tcp6_port);
		fprintf(info, "tcp6_listen=[::]:%d\n", opts.tcp6_port);
	}

	if (opts.uid >= 0) {
		// Group first: once the uid is dropped, the gid can no longer change.
		if (setgroups(0, NULL) != 0 || setresgid((gid_t)opts.gid, (gid_t)opts.gid, (gid_t)opts.gid) != 0 ||
		    setresuid((uid_t)opts.uid, (uid_t)opts.uid, (uid_t)opts.uid) != 0)
			die("cannot switch to uid %ld gid %ld: %s", opts.uid, opts.gid, strerror(errno));
		fprintf(info, "uid=%ld\ngid=%ld\n", opts.uid, opts.gid);
	}

	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t started = PTHREAD_COND_INITIALIZER;
	struct thread_slot slots[THREAD_COUNT];
	for (int i = 0; i < THREAD_COUNT; i++) {
		slots[i] = (struct thread_slot){.index = i, .tid = 0, .lock = &lock, .started = &started};
		pthread_t thread;
		if (pthread_create(&thread, NULL, thread_main, &slots[i]) != 0)
			die("pthread_create failed");
	}
	pthread_mutex_lock(&lock);
	for (int i = 0; i < THREAD_COUNT; i++) {
		while (slots[i].tid == 0)
			pthread_cond_wait(&started, &lock);
		fprintf(info, "thread=%d apsh_thr_%d\n", slots[i].tid, i);
	}
	pthread_mutex_unlock(&lock);

	// The rename tells /init that every feature above is in place.
	if (fclose(info) != 0 || rename(tmp_path, opts.info_path) != 0)
		die("cannot write %s: %s", opts.info_path, strerror(errno));
	for (;;)
		pause();
}
