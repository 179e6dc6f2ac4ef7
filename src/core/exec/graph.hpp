// DOCA Graph: nodes (context tasks, user callbacks, sub-graphs) run in dependency order on a PE.
//
// A graph is frozen by start(): node order and predecessor counts are computed once, so running
// an instance only walks arrays. Instances own one NodeRun per node; everything an instance needs
// to run is allocated when it is created, so submitting and completing allocate nothing.
#pragma once

#include <doca_graph.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/exec/graph_hooks.hpp"
#include "core/exec/progressable.hpp"

struct doca_graph_node {
	enum class Kind : uint8_t { ctx, user, sub_graph };

	doca_graph *graph = nullptr;
	uint32_t index = 0;
	Kind kind = Kind::user;
	const doca_ctx *ctx = nullptr;
	doca_graph_user_node_cb_t user_cb = nullptr;
	doca_graph *sub_graph = nullptr;
	std::vector<uint32_t> successors;
	uint32_t num_predecessors = 0;
};

struct doca_graph_instance {
public:
	// Per-node state of one instance.
	struct NodeRun final : public softdpu::exec::GraphNodeRun {
		void task_completed(doca_task *task) noexcept override;

		doca_graph_instance *instance = nullptr;
		uint32_t index = 0;
		uint32_t deps_left = 0;
		doca_task *task = nullptr;
		void *cookie = nullptr;
		doca_graph_instance *sub_instance = nullptr;
	};

	explicit doca_graph_instance(doca_graph *graph);
	doca_graph *graph() const noexcept { return graph_; }
	bool submitted() const noexcept { return submitted_; }
	union doca_data user_data = {};

	doca_error_t set_ctx_node_data(doca_graph_node *node, doca_task *task) noexcept;
	doca_error_t set_user_node_data(doca_graph_node *node, void *cookie) noexcept;
	doca_error_t set_sub_graph_node_data(doca_graph_node *node, doca_graph_instance *sub) noexcept;
	doca_error_t submit() noexcept;

	// Runs one node that waits for the PE (user callbacks, busy contexts). False if none waits.
	bool run_one_ready() noexcept;
	bool has_ready() const noexcept { return !ready_.empty(); }
	bool in_active_list = false;

private:
	friend struct NodeRun;
	void launch(uint32_t index) noexcept;
	void node_done(uint32_t index, bool succeeded) noexcept;
	void finish() noexcept;

	doca_graph *graph_;
	std::vector<NodeRun> nodes_;
	std::vector<uint32_t> ready_; // capacity = node count, reserved at creation
	uint32_t in_flight_ = 0;
	uint32_t finished_ = 0;
	bool submitted_ = false;
	bool failed_ = false;
	// Set while this instance runs as a node of another graph's instance.
	doca_graph_instance *parent_ = nullptr;
	uint32_t parent_node_ = 0;
};

struct doca_graph : public softdpu::exec::Progressable {
public:
	explicit doca_graph(doca_pe *pe) noexcept : pe_(pe) {}
	~doca_graph() override;

	doca_pe *pe() const noexcept { return pe_; }
	bool started() const noexcept { return started_; }
	doca_error_t set_conf(doca_graph_completion_cb_t on_success, doca_graph_completion_cb_t on_error,
			      uint32_t num_instances) noexcept;
	union doca_data user_data = {};

	doca_error_t add_node(doca_graph_node::Kind kind, const doca_ctx *ctx, doca_graph_user_node_cb_t cb,
			      doca_graph *sub_graph, doca_graph_node **node) noexcept;
	doca_error_t add_dependency(doca_graph_node *from, doca_graph_node *to) noexcept;
	doca_error_t start() noexcept;
	doca_error_t stop() noexcept;
	doca_error_t create_instance(doca_graph_instance **instance) noexcept;
	void destroy_instance(doca_graph_instance *instance) noexcept;

	const std::vector<std::unique_ptr<doca_graph_node>> &nodes() const noexcept { return nodes_; }
	// True if `other` is this graph or is nested in it, at any depth.
	bool contains_graph(const doca_graph *other) const noexcept;

	// Progressable: runs user nodes and retries nodes whose context was busy.
	bool progress() override;
	bool has_pending_work() const override;
	size_t inflight() const override { return 0; } // graph tasks are counted by their contexts

private:
	friend struct doca_graph_instance;
	void mark_ready(doca_graph_instance *instance) noexcept;
	void report(doca_graph_instance *instance, bool failed) noexcept;
	bool reaches(uint32_t from, uint32_t to) const noexcept;

	doca_pe *pe_;
	bool started_ = false;
	doca_graph_completion_cb_t on_success_ = nullptr;
	doca_graph_completion_cb_t on_error_ = nullptr;
	uint32_t max_instances_ = 0;
	uint32_t live_instances_ = 0;
	std::vector<std::unique_ptr<doca_graph_node>> nodes_;
	std::vector<uint32_t> roots_;
	std::vector<doca_graph_instance *> active_; // instances with ready nodes; capacity = max_instances_
};
