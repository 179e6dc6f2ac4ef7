// The link between a task and the graph instance it runs in: when set, the task's completion
// goes to the graph instead of the task's callbacks.
#pragma once

struct doca_task;

namespace softdpu::exec {

class GraphNodeRun {
public:
	virtual void task_completed(doca_task *task) noexcept = 0;

protected:
	~GraphNodeRun() = default;
};

} // namespace softdpu::exec
