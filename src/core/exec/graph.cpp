#include "core/exec/graph.hpp"

#include <algorithm>
#include <new>

#include "common/sdk_log.hpp"
#include "core/exec/ctx.hpp"
#include "core/exec/pe.hpp"

// ---------------------------------------------------------------- doca_graph

doca_graph::~doca_graph()
{
	if (pe_ != nullptr)
		pe_->disconnect(this);
}

doca_error_t doca_graph::set_conf(doca_graph_completion_cb_t on_success, doca_graph_completion_cb_t on_error,
				  uint32_t num_instances) noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	on_success_ = on_success;
	on_error_ = on_error;
	max_instances_ = num_instances;
	return DOCA_SUCCESS;
}

bool doca_graph::contains_graph(const doca_graph *other) const noexcept
{
	if (other == this)
		return true;
	return std::any_of(nodes_.begin(), nodes_.end(), [other](const auto &node) {
		return node->kind == doca_graph_node::Kind::sub_graph && node->sub_graph->contains_graph(other);
	});
}

doca_error_t doca_graph::add_node(doca_graph_node::Kind kind, const doca_ctx *ctx, doca_graph_user_node_cb_t cb,
				  doca_graph *sub_graph, doca_graph_node **node) noexcept
{
	if (started_) {
		SDK_LOG_ERR("failed to create graph node: graph is started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (kind == doca_graph_node::Kind::sub_graph) {
		if (!sub_graph->started()) {
			SDK_LOG_ERR("failed to create graph node: the sub-graph must be started first");
			return DOCA_ERROR_BAD_STATE;
		}
		if (sub_graph->contains_graph(this)) {
			SDK_LOG_ERR("failed to create graph node: the graph would contain itself");
			return DOCA_ERROR_NOT_PERMITTED;
		}
	}
	try {
		auto created = std::make_unique<doca_graph_node>();
		created->graph = this;
		created->index = static_cast<uint32_t>(nodes_.size());
		created->kind = kind;
		created->ctx = ctx;
		created->user_cb = cb;
		created->sub_graph = sub_graph;
		nodes_.push_back(std::move(created));
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	*node = nodes_.back().get();
	return DOCA_SUCCESS;
}

bool doca_graph::reaches(uint32_t from, uint32_t to) const noexcept
{
	// Depth-first search over successors; graphs are small and this runs only while building.
	std::vector<uint32_t> stack{from};
	std::vector<bool> seen(nodes_.size(), false);
	while (!stack.empty()) {
		const uint32_t at = stack.back();
		stack.pop_back();
		if (at == to)
			return true;
		if (seen[at])
			continue;
		seen[at] = true;
		for (uint32_t next : nodes_[at]->successors)
			stack.push_back(next);
	}
	return false;
}

doca_error_t doca_graph::add_dependency(doca_graph_node *from, doca_graph_node *to) noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	if (from->graph != this || to->graph != this) {
		SDK_LOG_ERR("failed to add graph dependency: node belongs to another graph");
		return DOCA_ERROR_INVALID_VALUE;
	}
	auto &successors = from->successors;
	if (std::find(successors.begin(), successors.end(), to->index) != successors.end())
		return DOCA_SUCCESS;
	try {
		if (reaches(to->index, from->index)) {
			SDK_LOG_ERR("failed to add graph dependency: it would form a cycle");
			return DOCA_ERROR_NOT_PERMITTED;
		}
		successors.push_back(to->index);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	++to->num_predecessors;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph::start() noexcept
{
	if (started_)
		return DOCA_SUCCESS;
	const bool has_ctx_node = std::any_of(
	    nodes_.begin(), nodes_.end(), [](const auto &node) { return node->kind != doca_graph_node::Kind::user; });
	if (!has_ctx_node) {
		SDK_LOG_ERR("failed to start graph: it has no context node");
		return DOCA_ERROR_BAD_STATE;
	}
	if (on_success_ == nullptr || on_error_ == nullptr || max_instances_ == 0) {
		SDK_LOG_ERR("failed to start graph: doca_graph_set_conf was not called");
		return DOCA_ERROR_BAD_STATE;
	}
	try {
		// Kahn's algorithm: every node must be reachable in dependency order (no cycle).
		std::vector<uint32_t> deps_left(nodes_.size());
		std::vector<uint32_t> order;
		roots_.clear();
		for (const auto &node : nodes_) {
			deps_left[node->index] = node->num_predecessors;
			if (node->num_predecessors == 0) {
				roots_.push_back(node->index);
				order.push_back(node->index);
			}
		}
		for (size_t i = 0; i < order.size(); ++i)
			for (uint32_t next : nodes_[order[i]]->successors)
				if (--deps_left[next] == 0)
					order.push_back(next);
		if (order.size() != nodes_.size()) {
			SDK_LOG_ERR("failed to start graph: its dependencies form a cycle");
			return DOCA_ERROR_NOT_PERMITTED;
		}
		active_.clear();
		active_.reserve(max_instances_);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph::stop() noexcept
{
	if (!started_)
		return DOCA_SUCCESS;
	if (live_instances_ != 0) {
		SDK_LOG_ERR("failed to stop graph: %u instances still exist", live_instances_);
		return DOCA_ERROR_IN_USE;
	}
	started_ = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph::create_instance(doca_graph_instance **instance) noexcept
{
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	if (live_instances_ >= max_instances_) {
		SDK_LOG_ERR("failed to create graph instance: the graph is configured for %u", max_instances_);
		return DOCA_ERROR_NO_MEMORY;
	}
	auto *created = new (std::nothrow) doca_graph_instance(this);
	if (created == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	++live_instances_;
	*instance = created;
	return DOCA_SUCCESS;
}

void doca_graph::destroy_instance(doca_graph_instance *instance) noexcept
{
	if (instance->in_active_list)
		active_.erase(std::find(active_.begin(), active_.end(), instance));
	--live_instances_;
	delete instance;
}

void doca_graph::mark_ready(doca_graph_instance *instance) noexcept
{
	if (!instance->in_active_list) {
		instance->in_active_list = true;
		active_.push_back(instance); // never reallocates: capacity is max_instances_
	}
}

void doca_graph::report(doca_graph_instance *instance, bool failed) noexcept
{
	(failed ? on_error_ : on_success_)(instance, instance->user_data, user_data);
}

bool doca_graph::progress()
{
	bool progressed = false;
	for (size_t i = 0; i < active_.size();) {
		doca_graph_instance *instance = active_[i];
		if (!instance->has_ready()) {
			instance->in_active_list = false;
			active_[i] = active_.back();
			active_.pop_back();
			continue;
		}
		// Callbacks may destroy the instance or resubmit it; look it up again next round.
		progressed |= instance->run_one_ready();
		++i;
	}
	return progressed;
}

bool doca_graph::has_pending_work() const
{
	return std::any_of(active_.begin(), active_.end(), [](const auto *instance) { return instance->has_ready(); });
}

// ---------------------------------------------------------------- doca_graph_instance

doca_graph_instance::doca_graph_instance(doca_graph *graph) : graph_(graph)
{
	const auto &graph_nodes = graph->nodes();
	nodes_.resize(graph_nodes.size());
	for (size_t i = 0; i < nodes_.size(); ++i) {
		nodes_[i].instance = this;
		nodes_[i].index = static_cast<uint32_t>(i);
	}
	ready_.reserve(nodes_.size());
}

doca_error_t doca_graph_instance::set_ctx_node_data(doca_graph_node *node, doca_task *task) noexcept
{
	if (submitted_)
		return DOCA_ERROR_BAD_STATE;
	if (node->graph != graph_ || node->kind != doca_graph_node::Kind::ctx || task->ctx != node->ctx) {
		SDK_LOG_ERR("failed to set graph node data: node of another graph, not a context node, or task of "
			    "another context");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	nodes_[node->index].task = task;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance::set_user_node_data(doca_graph_node *node, void *cookie) noexcept
{
	if (submitted_)
		return DOCA_ERROR_BAD_STATE;
	if (node->graph != graph_ || node->kind != doca_graph_node::Kind::user)
		return DOCA_ERROR_NOT_PERMITTED;
	nodes_[node->index].cookie = cookie;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance::set_sub_graph_node_data(doca_graph_node *node, doca_graph_instance *sub) noexcept
{
	if (submitted_)
		return DOCA_ERROR_BAD_STATE;
	if (node->graph != graph_ || node->kind != doca_graph_node::Kind::sub_graph ||
	    sub->graph() != node->sub_graph || sub->submitted())
		return DOCA_ERROR_NOT_PERMITTED;
	nodes_[node->index].sub_instance = sub;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance::submit() noexcept
{
	if (submitted_)
		return DOCA_ERROR_IN_USE;
	const auto &graph_nodes = graph_->nodes();
	for (const auto &node : graph_nodes) {
		const NodeRun &run = nodes_[node->index];
		const bool missing = (node->kind == doca_graph_node::Kind::ctx && run.task == nullptr) ||
				     (node->kind == doca_graph_node::Kind::sub_graph && run.sub_instance == nullptr);
		if (missing) {
			SDK_LOG_ERR("failed to submit graph instance: node %u has no data", node->index);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (run.task != nullptr && run.task->state != doca_task::State::owned) {
			SDK_LOG_ERR("failed to submit graph instance: the task of node %u is submitted or freed",
				    node->index);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	for (auto &run : nodes_)
		run.deps_left = graph_nodes[run.index]->num_predecessors;
	submitted_ = true;
	failed_ = false;
	in_flight_ = 0;
	finished_ = 0;
	ready_.clear();
	for (uint32_t root : graph_->roots_)
		launch(root);
	return DOCA_SUCCESS;
}

void doca_graph_instance::launch(uint32_t index) noexcept
{
	++in_flight_;
	NodeRun &run = nodes_[index];
	switch (graph_->nodes()[index]->kind) {
	case doca_graph_node::Kind::ctx:
		run.task->graph_run = &run;
		if (run.task->ctx->submit(run.task) != DOCA_SUCCESS) {
			// The context cannot take it now: retry from the graph's progress.
			run.task->graph_run = nullptr;
			ready_.push_back(index);
			graph_->mark_ready(this);
		}
		break;
	case doca_graph_node::Kind::user:
		ready_.push_back(index);
		graph_->mark_ready(this);
		break;
	case doca_graph_node::Kind::sub_graph:
		run.sub_instance->parent_ = this;
		run.sub_instance->parent_node_ = index;
		if (run.sub_instance->submit() != DOCA_SUCCESS) {
			run.sub_instance->parent_ = nullptr;
			node_done(index, false);
		}
		break;
	}
}

bool doca_graph_instance::run_one_ready() noexcept
{
	if (ready_.empty())
		return false;
	const uint32_t index = ready_.back();
	ready_.pop_back();
	const doca_graph_node &node = *graph_->nodes()[index];
	NodeRun &run = nodes_[index];
	if (node.kind == doca_graph_node::Kind::user) {
		node_done(index, failed_ ? false : node.user_cb(run.cookie) == DOCA_SUCCESS);
		return true;
	}
	// A context node whose context was busy.
	run.task->graph_run = &run;
	if (run.task->ctx->submit(run.task) == DOCA_SUCCESS)
		return true;
	run.task->graph_run = nullptr;
	if (run.task->ctx->is_running()) {
		ready_.push_back(index);
		return false;
	}
	// The context left the running state: it will not take the task any more.
	node_done(index, false);
	return true;
}

void doca_graph_instance::NodeRun::task_completed(doca_task *completed) noexcept
{
	completed->graph_run = nullptr;
	instance->node_done(index, completed->status == DOCA_SUCCESS);
}

void doca_graph_instance::node_done(uint32_t index, bool succeeded) noexcept
{
	--in_flight_;
	++finished_;
	if (!succeeded)
		failed_ = true;
	if (!failed_) {
		for (uint32_t next : graph_->nodes()[index]->successors)
			if (--nodes_[next].deps_left == 0)
				launch(next);
	}
	// A failed instance launches nothing new; it ends once what was running has finished.
	if (in_flight_ == 0 && (failed_ || finished_ == nodes_.size()))
		finish();
}

void doca_graph_instance::finish() noexcept
{
	submitted_ = false;
	ready_.clear();
	if (parent_ != nullptr) {
		doca_graph_instance *parent = parent_;
		parent_ = nullptr;
		parent->node_done(parent_node_, !failed_);
		return;
	}
	graph_->report(this, failed_);
}
