// TEMPORARY STUB (issue 21, helper h1): stands in for the work-queue engine (engine.cpp, written by
// another helper) only so that libmlx5 links on this branch. It registers queues and executes
// nothing: no WQE runs and no CQE is written. DROP THIS FILE WHEN engine.cpp IS MERGED.
#include "mlx5/wq/engine.hpp"

#include <cerrno>
#include <new>

namespace softdpu::mlx5::wq {

class Cq {
public:
	CqConfig config;
};

class Qp {
public:
	QpConfig config;
};

Engine &Engine::instance() noexcept
{
	static Engine engine;
	return engine;
}

Cq *Engine::add_cq(const CqConfig &config) noexcept
{
	if (config.buffer == nullptr || config.doorbell == nullptr || config.backing == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	auto *cq = new (std::nothrow) Cq{config};
	if (cq == nullptr)
		errno = ENOMEM;
	return cq;
}

Qp *Engine::add_qp(const QpConfig &config) noexcept
{
	if (config.backing == nullptr || config.doorbell == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	auto *qp = new (std::nothrow) Qp{config};
	if (qp == nullptr)
		errno = ENOMEM;
	return qp;
}

void Engine::remove_qp(Qp *qp) noexcept
{
	delete qp;
}

void Engine::remove_cq(Cq *cq) noexcept
{
	delete cq;
}

void Engine::set_cq_event(Cq *cq, void (*on_event)(void *arg), void *arg) noexcept
{
	cq->config.on_event = on_event;
	cq->config.event_arg = arg;
}

void Engine::reset_qp(Qp * /*qp*/) noexcept {}

} // namespace softdpu::mlx5::wq
