// softdpu apsh pstree: the process list as a parent/child tree, in every output format
// (table_output.hpp). docs/apsh-cli.md describes the output.
#pragma once

#include "table_output.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace softdpu::cli {

struct TreeProcess {
	uint32_t pid;
	uint32_t ppid;
	std::string comm;
};

struct TreeOptions {
	std::vector<uint32_t> roots;     // the subtrees to show; empty: the whole tree
	bool fold_kernel_threads = true; // kthreadd's (pid 2) descendants as one count
	bool unicode = true;             // box-drawing characters in the table, else ASCII
};

// A process whose parent is not in the list (pid 0 for init and kthreadd) is a root; children
// come in pid order. Every process is shown once, also those whose parent links form a loop
// (a corrupt or hostile guest): the walk is iterative and never follows a link twice.
// The table draws the tree ("comm(pid)" per line); JSON nests the children of each process in
// its "children"; JSON lines and CSV give one row per process in the table's order, with its depth.
// Folded kernel threads: kthreadd's row has their number in "folded_kernel_threads", the table
// shows one line "[N kernel threads]" under it.
void print_process_tree(const std::vector<TreeProcess> &processes, const TreeOptions &options, OutputFormat format,
			std::FILE *out = stdout);

} // namespace softdpu::cli
