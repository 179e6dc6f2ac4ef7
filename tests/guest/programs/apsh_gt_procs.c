// The per-process sections of the ground truth (tests/guest/initramfs/apsh-ground-truth) for the
// big guest, in one process instead of a few forks per guest process: under TCG a fork costs tens
// of milliseconds, which made the shell's loops take minutes with 1,000 processes. Prints exactly
// what the shell loops print (see the script for the formats):
//   apsh_gt_procs processes     the rows of the processes section
//   apsh_gt_procs threads       the rows of the threads section
//   apsh_gt_procs per-process   the maps, environ and fds sections of every user process
//   apsh_gt_procs net-pids      one pid per network namespace other than pid 1's
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

// The numeric entries of DIR in the order of the shell's glob (bytewise), as strings.
static int list_numeric(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	int count = 0, capacity = 0;
	char **names = NULL;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 256;
			names = realloc(names, (size_t)capacity * sizeof *names);
			if (names == NULL)
				abort();
		}
		names[count++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)count, sizeof *names, compare);
	*out = names;
	return count;
}

static void free_list(char **names, int count)
{
	for (int i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

// The whole file; NULL when it cannot be opened.
static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return NULL;
	size_t used = 0, capacity = 4096;
	char *data = malloc(capacity + 1);
	for (size_t n; data != NULL && (n = fread(data + used, 1, capacity - used, f)) > 0;) {
		used += n;
		if (used == capacity) {
			capacity *= 2;
			data = realloc(data, capacity + 1);
		}
	}
	fclose(f);
	if (data == NULL)
		abort();
	data[used] = 0;
	*size = used;
	return data;
}

// What "read -r var <file" leaves: the first line, surrounding blanks removed.
static void first_line(const char *path, char *out, size_t size)
{
	out[0] = 0;
	size_t n = 0;
	char *data = slurp(path, &n);
	if (data == NULL)
		return;
	char *line = data + strspn(data, " \t");
	line[strcspn(line, "\n")] = 0;
	size_t len = strlen(line);
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		line[--len] = 0;
	snprintf(out, size, "%s", line);
	free(data);
}

// The first word after KEY in a status file ("" when absent).
static void status_field(const char *status, const char *key, char *out, size_t size)
{
	out[0] = 0;
	size_t key_len = strlen(key);
	for (const char *line = status; line != NULL && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, key, key_len) != 0)
			continue;
		const char *v = line + key_len;
		v += strspn(v, " \t");
		size_t len = strcspn(v, " \t\n");
		snprintf(out, size, "%.*s", (int)len, v);
		return;
	}
}

static void print_uptime(void)
{
	char uptime[64];
	first_line("/proc/uptime", uptime, sizeof uptime);
	uptime[strcspn(uptime, " ")] = 0;
	printf("@@UPTIME %s\n", uptime);
}

static void processes(void)
{
	char **pids = NULL;
	int count = list_numeric("/proc", &pids);
	for (int i = 0; i < count; i++) {
		char path[64], comm[64], ppid[32], uid[32], gid[32], state[32], exe[4096] = "";
		snprintf(path, sizeof path, "/proc/%s/status", pids[i]);
		size_t n = 0;
		char *status = slurp(path, &n);
		if (status == NULL)
			continue;
		status_field(status, "PPid:", ppid, sizeof ppid);
		status_field(status, "Uid:", uid, sizeof uid);
		status_field(status, "Gid:", gid, sizeof gid);
		status_field(status, "State:", state, sizeof state);
		free(status);
		snprintf(path, sizeof path, "/proc/%s/comm", pids[i]);
		first_line(path, comm, sizeof comm);
		char *args = NULL;
		if (strcmp(pids[i], "2") != 0 && strcmp(ppid, "2") != 0) {
			snprintf(path, sizeof path, "/proc/%s/exe", pids[i]);
			ssize_t len = readlink(path, exe, sizeof exe - 1);
			exe[len > 0 ? len : 0] = 0;
			snprintf(path, sizeof path, "/proc/%s/cmdline", pids[i]);
			args = slurp(path, &n);
			if (args != NULL) {
				for (size_t k = 0; k < n; k++)
					args[k] = args[k] == 0 ? '\037' : args[k];
				while (n > 0 && args[n - 1] == '\n') // command substitution drops trailing newlines
					args[--n] = 0;
			}
		}
		printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", pids[i], ppid, uid, gid, state, comm, exe,
		       args != NULL ? args : "");
		free(args);
	}
	free_list(pids, count);
}

static void threads(void)
{
	char **pids = NULL;
	int count = list_numeric("/proc", &pids);
	for (int i = 0; i < count; i++) {
		char dir[64];
		snprintf(dir, sizeof dir, "/proc/%s/task", pids[i]);
		char **tids = NULL;
		int tid_count = list_numeric(dir, &tids);
		for (int t = 0; t < tid_count; t++) {
			char path[96], state[32], comm[64];
			snprintf(path, sizeof path, "%s/%s/status", dir, tids[t]);
			size_t n = 0;
			char *status = slurp(path, &n);
			if (status == NULL)
				continue;
			status_field(status, "State:", state, sizeof state);
			free(status);
			snprintf(path, sizeof path, "%s/%s/comm", dir, tids[t]);
			first_line(path, comm, sizeof comm);
			printf("%s\t%s\t%s\t%s\n", pids[i], tids[t], state, comm);
		}
		free_list(tids, tid_count);
	}
	free_list(pids, count);
}

static void per_process(void)
{
	char **pids = NULL;
	int count = list_numeric("/proc", &pids);
	for (int i = 0; i < count; i++) {
		char path[96];
		size_t n = 0;
		snprintf(path, sizeof path, "/proc/%s/maps", pids[i]);
		char *maps = slurp(path, &n);
		if (maps == NULL || n == 0) { // kernel threads have no maps
			free(maps);
			continue;
		}
		print_uptime();
		printf("@@BEGIN maps %s\n%s", pids[i], maps);
		free(maps);
		printf("@@END maps\n");

		print_uptime();
		printf("@@BEGIN environ %s\n", pids[i]);
		snprintf(path, sizeof path, "/proc/%s/environ", pids[i]);
		char *environ_data = slurp(path, &n);
		for (size_t k = 0; environ_data != NULL && k < n; k++)
			putchar(environ_data[k] == 0 ? '\n' : environ_data[k]);
		free(environ_data);
		printf("@@END environ\n");

		print_uptime();
		printf("@@BEGIN fds %s\n", pids[i]);
		snprintf(path, sizeof path, "/proc/%s/fd", pids[i]);
		char **fds = NULL;
		int fd_count = list_numeric(path, &fds);
		for (int f = 0; f < fd_count; f++) {
			char link[160], target[4096];
			snprintf(link, sizeof link, "%s/%s", path, fds[f]);
			ssize_t len = readlink(link, target, sizeof target - 1);
			if (len <= 0)
				continue;
			target[len] = 0;
			printf("%s\t%s\n", fds[f], target);
		}
		free_list(fds, fd_count);
		printf("@@END fds\n");
	}
	free_list(pids, count);
}

static void net_pids(void)
{
	char host[128];
	ssize_t len = readlink("/proc/1/ns/net", host, sizeof host - 1);
	host[len > 0 ? len : 0] = 0;
	char **seen = NULL;
	int seen_count = 0;
	char **pids = NULL;
	int count = list_numeric("/proc", &pids);
	for (int i = 0; i < count; i++) {
		char path[64], net[128];
		snprintf(path, sizeof path, "/proc/%s/ns/net", pids[i]);
		len = readlink(path, net, sizeof net - 1);
		if (len <= 0)
			continue;
		net[len] = 0;
		int known = strcmp(net, host) == 0;
		for (int s = 0; s < seen_count && !known; s++)
			known = strcmp(seen[s], net) == 0;
		if (known)
			continue;
		seen = realloc(seen, (size_t)(seen_count + 1) * sizeof *seen);
		if (seen == NULL)
			abort();
		seen[seen_count++] = strdup(net);
		printf("%s\n", pids[i]);
	}
	free_list(seen, seen_count);
	free_list(pids, count);
}

int main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";
	if (strcmp(what, "processes") == 0)
		processes();
	else if (strcmp(what, "threads") == 0)
		threads();
	else if (strcmp(what, "per-process") == 0)
		per_process();
	else if (strcmp(what, "net-pids") == 0)
		net_pids();
	else {
		fprintf(stderr, "usage: apsh_gt_procs processes|threads|per-process|net-pids\n");
		return 2;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
