// softdpu apsh pstree (process_tree.hpp).
#include "process_tree.hpp"

#include <algorithm>
#include <unordered_map>

namespace softdpu::cli {

namespace {

constexpr uint32_t kKthreadd = 2;
// The table's drawing and the JSON's indentation stop growing at this depth (each line would
// otherwise be as long as the tree is deep: quadratic output for a hostile guest's long chain);
// deeper table lines carry their depth, "[depth N]".
constexpr size_t kMaxDrawnDepth = 64;

struct Node {
	const TreeProcess *process;
	std::vector<size_t> children; // indexes, in pid order
	uint64_t folded = 0;          // descendants folded into this node
};

// One line of the tree, in pre-order.
struct Row {
	size_t node;
	size_t depth;
	std::string branch;      // the drawing before the name ("│ └─")
	std::string fold_branch; // the drawing before "[N kernel threads]"
};

struct Glyphs {
	const char *tee, *corner, *bar, *blank;
};

class Tree {
public:
	Tree(const std::vector<TreeProcess> &processes, const TreeOptions &options) : options_(options)
	{
		std::vector<const TreeProcess *> sorted;
		sorted.reserve(processes.size());
		for (const TreeProcess &process : processes)
			sorted.push_back(&process);
		std::stable_sort(sorted.begin(), sorted.end(),
				 [](const TreeProcess *a, const TreeProcess *b) { return a->pid < b->pid; });
		for (const TreeProcess *process : sorted) {
			if (index_.emplace(process->pid, nodes_.size()).second) // a pid listed twice: once
				nodes_.push_back({process, {}, 0});
		}
		for (size_t i = 0; i < nodes_.size(); ++i) {
			const TreeProcess &process = *nodes_[i].process;
			auto parent = index_.find(process.ppid);
			if (parent != index_.end() && process.ppid != process.pid)
				nodes_[parent->second].children.push_back(i); // pid order: i grows
		}
		visited_.assign(nodes_.size(), false);
	}

	// The rows of the tree in pre-order: the chosen roots, or every process without a parent,
	// then (whole tree only) what parent loops left unreached, each from its lowest pid.
	std::vector<Row> walk(const Glyphs &glyphs)
	{
		std::vector<Row> rows;
		if (!options_.roots.empty()) {
			std::vector<uint32_t> roots = options_.roots;
			std::sort(roots.begin(), roots.end());
			for (uint32_t pid : roots)
				if (auto it = index_.find(pid); it != index_.end())
					walk_from(it->second, glyphs, rows);
			return rows;
		}
		for (size_t i = 0; i < nodes_.size(); ++i) {
			const TreeProcess &process = *nodes_[i].process;
			if (process.ppid == process.pid || !index_.contains(process.ppid))
				walk_from(i, glyphs, rows);
		}
		for (size_t i = 0; i < nodes_.size(); ++i)
			if (!visited_[i])
				walk_from(i, glyphs, rows);
		return rows;
	}

	const Node &node(size_t index) const { return nodes_[index]; }

private:
	void walk_from(size_t root, const Glyphs &glyphs, std::vector<Row> &rows)
	{
		struct Pending {
			size_t node;
			size_t depth;
			std::string lead; // the drawing of the ancestors' columns
			bool last;
		};
		std::vector<Pending> stack{{root, 0, "", true}};
		while (!stack.empty()) {
			Pending pending = std::move(stack.back());
			stack.pop_back();
			if (visited_[pending.node])
				continue;
			visited_[pending.node] = true;
			const bool root_row = pending.depth == 0;
			Row row{pending.node, pending.depth,
				root_row ? "" : pending.lead + (pending.last ? glyphs.corner : glyphs.tee), ""};
			if (pending.depth > kMaxDrawnDepth)
				row.branch += "[depth " + std::to_string(pending.depth) + "] ";
			const std::string child_lead = root_row || pending.depth >= kMaxDrawnDepth
							   ? pending.lead
							   : pending.lead + (pending.last ? glyphs.blank : glyphs.bar);
			Node &node = nodes_[pending.node];
			if (options_.fold_kernel_threads && node.process->pid == kKthreadd) {
				node.folded = fold(pending.node);
				if (node.folded > 0)
					row.fold_branch = child_lead + glyphs.corner;
			}
			rows.push_back(std::move(row));
			if (node.folded > 0)
				continue;
			std::vector<size_t> children;
			for (size_t child : node.children)
				if (!visited_[child])
					children.push_back(child);
			for (size_t i = children.size(); i-- > 0;)
				stack.push_back({children[i], pending.depth + 1, child_lead, i + 1 == children.size()});
		}
	}

	// Marks every descendant of `index` visited and returns their number.
	uint64_t fold(size_t index)
	{
		uint64_t count = 0;
		std::vector<size_t> stack(nodes_[index].children);
		while (!stack.empty()) {
			const size_t next = stack.back();
			stack.pop_back();
			if (visited_[next])
				continue;
			visited_[next] = true;
			++count;
			stack.insert(stack.end(), nodes_[next].children.begin(), nodes_[next].children.end());
		}
		return count;
	}

	const TreeOptions &options_;
	std::vector<Node> nodes_;
	std::unordered_map<uint32_t, size_t> index_;
	std::vector<bool> visited_;
};

std::string display_name(const TreeProcess &process)
{
	return (process.comm.empty() ? "?" : process.comm) + "(" + std::to_string(process.pid) + ")";
}

// JSON with the children nested, written line by line from the pre-order rows (no recursion:
// a guest's parent links may be arbitrarily deep).
void print_nested_json(const Tree &tree, const std::vector<Row> &rows, std::FILE *out)
{
	if (rows.empty()) {
		std::fprintf(out, "[]\n");
		return;
	}
	auto indent = [](size_t level) { return std::string(2 * std::min(level, kMaxDrawnDepth), ' '); };
	std::string text = "[";
	for (size_t i = 0; i < rows.size(); ++i) {
		const Node &node = tree.node(rows[i].node);
		const OrderedJson fields = {{"pid", node.process->pid},
					    {"ppid", node.process->ppid},
					    {"comm", node.process->comm},
					    {"folded_kernel_threads", node.folded}};
		std::string head = fields.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
		head.pop_back(); // the closing brace: the children follow
		const size_t depth = rows[i].depth;
		text += '\n';
		text += indent(depth + 1);
		text += head;
		text += ",\"children\":[";
		const bool has_next = i + 1 < rows.size();
		const size_t next_depth = has_next ? rows[i + 1].depth : 0;
		if (has_next && next_depth == depth + 1) {
			std::fprintf(out, "%s", text.c_str());
			text.clear();
			continue; // its children follow
		}
		text += "]}";
		// Close the ancestors whose subtrees end here: depths depth-1 down to next_depth.
		for (size_t level = depth; level-- > (has_next ? next_depth : 0);) {
			text += '\n';
			text += indent(level + 1);
			text += "]}";
		}
		if (has_next)
			text += ",";
		std::fprintf(out, "%s", text.c_str());
		text.clear();
	}
	std::fprintf(out, "\n]\n");
}

} // namespace

void print_process_tree(const std::vector<TreeProcess> &processes, const TreeOptions &options, OutputFormat format,
			std::FILE *out)
{
	static constexpr Glyphs kUnicode{"├─", "└─", "│ ", "  "};
	static constexpr Glyphs kAscii{"|-", "`-", "| ", "  "};
	Tree tree(processes, options);
	const std::vector<Row> rows = tree.walk(options.unicode ? kUnicode : kAscii);
	if (format == OutputFormat::table) {
		for (const Row &row : rows) {
			const Node &node = tree.node(row.node);
			std::fprintf(out, "%s%s\n", row.branch.c_str(), display_name(*node.process).c_str());
			if (node.folded > 0)
				std::fprintf(out, "%s[%llu kernel thread%s]\n", row.fold_branch.c_str(),
					     static_cast<unsigned long long>(node.folded), node.folded == 1 ? "" : "s");
		}
		return;
	}
	if (format == OutputFormat::json) {
		print_nested_json(tree, rows, out);
		return;
	}
	Table table{{{"PID", "pid", true},
		     {"PPID", "ppid", true},
		     {"DEPTH", "depth", true},
		     {"COMM", "comm"},
		     {"FOLDED", "folded_kernel_threads", true}},
		    {}};
	for (const Row &row : rows) {
		const Node &node = tree.node(row.node);
		table.add({node.process->pid, node.process->ppid, row.depth, node.process->comm, node.folded});
	}
	print_table(table, format, out);
}

} // namespace softdpu::cli
