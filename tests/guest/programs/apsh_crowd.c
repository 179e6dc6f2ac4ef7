// The crowd of App Shield's big test guest (tests/guest/boot --big N): PROCS processes in groups
// (the first process, group leaders of up to GROUP children each, their children), each running
// THREADS threads in all (itself included) that sleep forever, and each with a page of its own
// heap holding a marker. Prints "ready" (and creates --ready PATH) once every process and thread
// exists, then sleeps; the processes never exit.
//
// Usage: apsh_crowd --procs PROCS [--threads THREADS] [--group GROUP] [--ready PATH]
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "apsh_crowd: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

// Names this process crowd_INDEX, marks its heap and starts THREADS - 1 more threads (small
// stacks).
static void populate(int index, int threads)
{
	char name[32]; // the kernel keeps 15 characters
	snprintf(name, sizeof name, "crowd_%d", index);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	char *marker = malloc(4096);
	if (marker == NULL)
		die("malloc");
	snprintf(marker, 4096, "APSH_CROWD_MARKER_%d", index);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 1; i < threads; i++) {
		pthread_t thread;
		if (pthread_create(&thread, &attr, sleeper, NULL) != 0)
			die("pthread_create");
	}
}

// populate, then one byte on REPORT, then sleep forever.
static void become_member(int index, int threads, int report)
{
	populate(index, threads);
	if (write(report, "x", 1) != 1)
		die("write");
	close(report);
	sleeper(NULL);
}

int main(int argc, char **argv)
{
	int procs = 0, threads = 5, group = 50;
	const char *ready = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc)
			procs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--group") == 0 && i + 1 < argc)
			group = atoi(argv[++i]);
		else if (strcmp(argv[i], "--ready") == 0 && i + 1 < argc)
			ready = argv[++i];
		else {
			fprintf(stderr, "usage: apsh_crowd --procs N [--threads N] [--group N] [--ready PATH]\n");
			return 2;
		}
	}
	if (procs < 1 || threads < 1 || group < 1) {
		fprintf(stderr, "apsh_crowd: --procs, --threads and --group must be positive\n");
		return 2;
	}
	int pipe_fds[2];
	if (pipe(pipe_fds) != 0)
		die("pipe");
	// Process 0 is this one; processes 1.. are group leaders (children of this one) or members
	// (children of their leader).
	int index = 1;
	while (index < procs) {
		int leader = index;
		int members = procs - leader - 1 < group ? procs - leader - 1 : group;
		index += 1 + members;
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid > 0)
			continue;
		close(pipe_fds[0]);
		for (int m = 1; m <= members; m++) {
			pid_t child = fork();
			if (child < 0)
				die("fork");
			if (child == 0)
				become_member(leader + m, threads, pipe_fds[1]);
		}
		become_member(leader, threads, pipe_fds[1]);
	}
	close(pipe_fds[1]);
	populate(0, threads);
	// Everyone but this process reports once.
	char buffer[256];
	int reported = 0;
	while (reported < procs - 1) {
		ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("a crowd member did not report");
		reported += (int)n;
	}
	close(pipe_fds[0]);
	printf("apsh_crowd: %d processes, %d threads each, ready\n", procs, threads);
	fflush(stdout);
	if (ready != NULL) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die(ready);
		close(fd);
	}
	sleeper(NULL);
	return 0;
}
